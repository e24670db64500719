"""The wire between the judge and the solution's worker: data only, bounded, never pickle.

Standalone (the standard library only, numpy and torch when they are already importable):
the grader copies this package into both sandboxes, so neither side needs `sb` installed.
Its parts: protocol (the bound on text, the errors), framing, values (the codec and
exceptions), proxies (Remote), reading (which thread reads the wire) and the peer.

A frame is a header (JSON length, buffer count, each buffer's length), a JSON document and
raw buffers. Values cross by value when they are data (None, bool, int, float, complex,
str, bytes, list, tuple, dict, set, slices, numpy arrays and scalars, torch tensors,
dtypes, exceptions as type name and message); anything else crosses as a *handle*, a
number in the sending side's table, and the receiver gets a `Remote` proxy that forwards
calls, attribute reads and a few container operations. Nothing received is ever executed:
decoding builds plain values, arrays from raw bytes with an allow-listed dtype, and
exceptions as classes made here from names.

Each side serves the other's requests while it waits for an answer, per conversation (a
thread of the caller), so a solution may call back into a fake the judge handed it, and
concurrent calls from several judge threads run concurrently in the worker.
"""

from .framing import FrameReader, frame_bytes
from .peer import Peer
from .protocol import ProtocolError, RemoteError, WorkerGone
from .proxies import Remote
from .values import Codec, build_exception, describe_exception

__all__ = ["Codec", "FrameReader", "Peer", "ProtocolError", "Remote", "RemoteError", "WorkerGone", "build_exception",
           "describe_exception", "frame_bytes"]
