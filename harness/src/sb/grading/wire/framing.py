"""A frame: a header (JSON length, buffer count, each buffer's length), a JSON document
and raw buffers, each bounded."""

import json
import os
import struct

from .protocol import ProtocolError, WorkerGone


MAX_JSON_BYTES = 16 << 20
MAX_BUFFER_BYTES = 512 << 20
MAX_BUFFERS = 100_000
SMALL_FRAME_BYTES = 1 << 16  # joined into one write; larger buffers are written as they are, uncopied

_HEAD = struct.Struct(">II")
_LEN = struct.Struct(">Q")


class FrameReader:
    """Frames from one descriptor. A small frame arrives whole in one read and a read may
    bring the start of the next, so what is read goes to a buffer first: one system call
    per small frame instead of one per part (each wakes the reading thread). A part too
    large for the buffer is read straight into chunks of its own.

    Resumable: the thread reading may be one a signal's handler interrupts (a judge thread
    waiting for its answer reads the wire itself), so whatever was read is kept here, never
    in a local, and the next call goes on from there. `in_read` says the reader is waiting
    for bytes, so an exception out of it then is the interruption's, not the frame's."""

    CHUNK = 1 << 16

    def __init__(self, fd):
        self.fd = fd
        self.pending = bytearray()
        self.large = []  # the chunks of a part too large for the buffer, read so far
        self.parts = []  # the frame so far: (JSON length, buffer count), lengths, document, buffers
        self.in_read = False

    def next(self):
        parts = self.parts
        if not parts:
            json_len, count = _HEAD.unpack(self._take(_HEAD.size))
            if json_len > MAX_JSON_BYTES or count > MAX_BUFFERS:
                raise ProtocolError(f"frame too large: {json_len} bytes of JSON, {count} buffers")
            parts.append((json_len, count))
        json_len, count = parts[0]
        if len(parts) == 1:
            lengths = [length for (length,) in _LEN.iter_unpack(self._take(_LEN.size * count))]
            if sum(lengths) > MAX_BUFFER_BYTES:
                raise ProtocolError(f"frame too large: {sum(lengths)} bytes of buffers")
            parts.append(lengths)
        if len(parts) == 2:
            parts.append(_document(self._take(json_len)))
        lengths = parts[1]
        while len(parts) - 3 < count:
            parts.append(self._take(lengths[len(parts) - 3]))
        self.parts = []
        return parts[2], parts[3:]

    def _take(self, n):
        if self.large or (len(self.pending) < n and n - len(self.pending) > self.CHUNK):
            return self._take_large(n)
        while len(self.pending) < n:
            self.pending += self._read(self.CHUNK)
        data = bytes(self.pending[:n])
        del self.pending[:n]
        return data

    def _take_large(self, n):
        if not self.large:
            self.large.append(bytes(self.pending))
            self.pending.clear()
        have = sum(len(chunk) for chunk in self.large)
        while have < n:
            chunk = self._read(min(n - have, 1 << 20))
            self.large.append(chunk)
            have += len(chunk)
        data, self.large = b"".join(self.large), []
        return data

    def _read(self, n):
        self.in_read = True  # left set when the read raises
        chunk = os.read(self.fd, n)
        self.in_read = False
        if not chunk:
            raise WorkerGone("the wire was closed")
        return chunk


def _document(data):
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise ProtocolError(f"a frame that is not JSON: {exc}") from None
    except RecursionError:
        raise ProtocolError("a frame nested too deeply to read") from None
    if not isinstance(doc, dict):
        raise ProtocolError("a frame that is not a JSON object")
    return doc


def frame_bytes(doc, buffers):
    """The frame's parts, to be written in order; a small frame is one part (one write)."""
    body = json.dumps(doc, separators=(",", ":")).encode()
    size = sum(len(b) for b in buffers)
    if len(body) > MAX_JSON_BYTES or size > MAX_BUFFER_BYTES:
        raise ProtocolError("message too large to send")
    head = _HEAD.pack(len(body), len(buffers)) + b"".join(_LEN.pack(len(b)) for b in buffers)
    if len(head) + len(body) + size <= SMALL_FRAME_BYTES:
        return [b"".join([head, body, *buffers])]
    return [head, body, *buffers]
