"""The wire's frames (sb/grading/wire/framing.py): read from a buffer that may hold several
frames or part of one, written in one part when small; every bound still checked before
what it bounds is read."""

from __future__ import annotations

import os
import threading

import pytest

from sb.grading.wire.framing import MAX_JSON_BYTES, SMALL_FRAME_BYTES, FrameReader, frame_bytes
from sb.grading.wire.protocol import ProtocolError, WorkerGone


def _frame(doc: dict, buffers: list) -> bytes:
    return b"".join(frame_bytes(doc, buffers))


@pytest.fixture
def pipe():
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        try:
            os.close(fd)
        except OSError:
            pass


def _write_all(fd: int, data: bytes, step: int | None = None) -> threading.Thread:
    """`data` written on a thread (a pipe holds less than a large frame), `step` bytes a write."""
    def write():
        view = memoryview(data)
        while view:
            written = os.write(fd, view[:step] if step else view)
            view = view[written:]
        os.close(fd)
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_several_frames_in_one_read_come_out_one_by_one_in_order(pipe):
    read_fd, write_fd = pipe
    frames = [({"n": i, "text": "x" * i}, [bytes([i]) * i]) for i in range(5)]
    _write_all(write_fd, b"".join(_frame(doc, bufs) for doc, bufs in frames)).join()
    reader = FrameReader(read_fd)
    assert [reader.next() for _ in frames] == [(doc, bufs) for doc, bufs in frames]
    with pytest.raises(WorkerGone):
        reader.next()


def test_a_frame_arriving_a_byte_at_a_time_is_read_whole(pipe):
    read_fd, write_fd = pipe
    doc, buffers = {"op": "call", "args": [1, 2.5, "é"]}, [b"\x00\x01\x02", b""]
    thread = _write_all(write_fd, _frame(doc, buffers) * 2, step=1)
    reader = FrameReader(read_fd)
    assert reader.next() == (doc, buffers) and reader.next() == (doc, buffers)
    thread.join()


def test_a_buffer_larger_than_a_read_follows_bytes_already_read(pipe):
    read_fd, write_fd = pipe
    big = os.urandom(3 * FrameReader.CHUNK + 17)  # read straight into its own bytes, after what was buffered
    thread = _write_all(write_fd, _frame({"small": 1}, [b"ab"]) + _frame({"big": 1}, [big, b"tail"]))
    reader = FrameReader(read_fd)
    assert reader.next() == ({"small": 1}, [b"ab"])
    assert reader.next() == ({"big": 1}, [big, b"tail"])
    thread.join()


def test_a_frame_claiming_too_much_json_is_refused_before_it_is_read(pipe):
    read_fd, write_fd = pipe
    import struct
    os.write(write_fd, struct.pack(">II", MAX_JSON_BYTES + 1, 0))  # and nothing else: a read would block
    with pytest.raises(ProtocolError, match="too large"):
        FrameReader(read_fd).next()


def test_a_frame_cut_short_is_the_peer_gone(pipe):
    read_fd, write_fd = pipe
    _write_all(write_fd, _frame({"op": "call"}, [b"12345"])[:-2]).join()
    with pytest.raises(WorkerGone):
        FrameReader(read_fd).next()


def test_a_small_frame_is_one_write_and_a_large_one_is_not_copied():
    assert len(frame_bytes({"op": "call"}, [b"x" * 100])) == 1
    large = b"y" * SMALL_FRAME_BYTES
    parts = frame_bytes({"op": "call"}, [large])
    assert len(parts) == 3 and parts[2] is large
