"""A frame: a header (JSON length, buffer count, each buffer's length), a JSON document
and raw buffers, each bounded."""

import json
import os
import struct

from .protocol import ProtocolError, WorkerGone


MAX_JSON_BYTES = 16 << 20
MAX_BUFFER_BYTES = 512 << 20
MAX_BUFFERS = 100_000

_HEAD = struct.Struct(">II")
_LEN = struct.Struct(">Q")


def _read_exact(fd, n):
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise WorkerGone("the wire was closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd):
    json_len, count = _HEAD.unpack(_read_exact(fd, _HEAD.size))
    if json_len > MAX_JSON_BYTES or count > MAX_BUFFERS:
        raise ProtocolError(f"frame too large: {json_len} bytes of JSON, {count} buffers")
    lengths = [_LEN.unpack(_read_exact(fd, _LEN.size))[0] for _ in range(count)]
    if sum(lengths) > MAX_BUFFER_BYTES:
        raise ProtocolError(f"frame too large: {sum(lengths)} bytes of buffers")
    try:
        doc = json.loads(_read_exact(fd, json_len))
    except ValueError as exc:
        raise ProtocolError(f"a frame that is not JSON: {exc}") from None
    except RecursionError:
        raise ProtocolError("a frame nested too deeply to read") from None
    if not isinstance(doc, dict):
        raise ProtocolError("a frame that is not a JSON object")
    return doc, [_read_exact(fd, n) for n in lengths]


def frame_bytes(doc, buffers):
    body = json.dumps(doc, separators=(",", ":")).encode()
    if len(body) > MAX_JSON_BYTES or sum(len(b) for b in buffers) > MAX_BUFFER_BYTES:
        raise ProtocolError("message too large to send")
    head = _HEAD.pack(len(body), len(buffers)) + b"".join(_LEN.pack(len(b)) for b in buffers)
    return [head, body, *buffers]
