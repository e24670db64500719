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


def _read_exact(fd, n):
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise WorkerGone("the wire was closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class FrameReader:
    """Frames from one descriptor. A small frame arrives whole in one read and a read may
    bring the start of the next, so what is read goes to a buffer first: one system call
    per small frame instead of one per part (each wakes the reading thread). A part too
    large for the buffer is read straight into its own bytes."""

    CHUNK = 1 << 16

    def __init__(self, fd):
        self.fd = fd
        self.pending = bytearray()

    def next(self):
        json_len, count = _HEAD.unpack(self._take(_HEAD.size))
        if json_len > MAX_JSON_BYTES or count > MAX_BUFFERS:
            raise ProtocolError(f"frame too large: {json_len} bytes of JSON, {count} buffers")
        lengths = [_LEN.unpack(self._take(_LEN.size))[0] for _ in range(count)]
        if sum(lengths) > MAX_BUFFER_BYTES:
            raise ProtocolError(f"frame too large: {sum(lengths)} bytes of buffers")
        try:
            doc = json.loads(self._take(json_len))
        except ValueError as exc:
            raise ProtocolError(f"a frame that is not JSON: {exc}") from None
        except RecursionError:
            raise ProtocolError("a frame nested too deeply to read") from None
        if not isinstance(doc, dict):
            raise ProtocolError("a frame that is not a JSON object")
        return doc, [self._take(n) for n in lengths]

    def _take(self, n):
        if len(self.pending) < n and n - len(self.pending) > self.CHUNK:
            head = bytes(self.pending)
            self.pending.clear()
            return head + _read_exact(self.fd, n - len(head))
        while len(self.pending) < n:
            chunk = os.read(self.fd, self.CHUNK)
            if not chunk:
                raise WorkerGone("the wire was closed")
            self.pending += chunk
        data = bytes(self.pending[:n])
        del self.pending[:n]
        return data


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
