"""The open-loop sender: a process of its own that writes each request to a socket at its scheduled instant.

Why a process: in the measuring process the sends would share the interpreter lock with
the event loop reading every streamed token, and on a busy machine the reader, preempted
while holding the lock, holds the sender up by milliseconds. Here the sender holds nothing
but the clock: it sleeps (clock_nanosleep) to shortly before each instant, spins the rest,
writes the prepared bytes to a connection the measuring process lent it, and reports the
write's time. Responses are read and stamped by the measuring process as usual; it lends a
connection back once its response has ended. Both processes read CLOCK_MONOTONIC
(`perf_counter_ns`), the same clock system-wide.

Run by `sb.speed.loadgen` as a script (`python PATH/sender.py FD`), never imported by it:
it imports nothing of `sb`, so it starts in tens of milliseconds. The job (the requests and
their offsets) comes pickled on stdin; everything else over the message socket FD (SOCK_SEQPACKET):

    parent -> sender   b"N" + ids (int32 each), the sockets as SCM_RIGHTS   connections lent
                       b"F" + ids                                           lent again, response ended
                       b"G" + ids                                           gone: closed, do not use
                       b"S" + start (int64 ns)                              the schedule's origin
    sender -> parent   b"R"                                                 ready
                       b"W" + request, id (int32), written (int64 ns), errno (int32)
                       b"D"                                                 every request sent
"""

from __future__ import annotations

import array
import errno
import os
import pickle
import select
import socket
import struct
import sys
import time
from time import perf_counter_ns

SPIN_NS = 200_000              # clock_nanosleep is precise; spin only the last 0.2 ms
WRITE = struct.Struct("<iiqi")
MAX_FDS = 200                  # sockets per lending message (the kernel's limit is 253)


def ids(payload: bytes) -> list:
    return list(array.array("i", payload))


def pack_ids(values) -> bytes:
    return array.array("i", values).tobytes()


class Sender:
    def __init__(self, ctl: socket.socket, job: dict):
        self.ctl, self.job = ctl, job
        self.socks: dict = {}          # id -> the lent socket (this process's descriptor)
        self.free: list = []           # ids ready for a request, most recently freed last
        self.start_ns = None

    def handle(self, message: bytes, fds: list) -> None:
        kind, payload = message[:1], message[1:]
        if kind == b"N":
            for cid, fd in zip(ids(payload), fds):
                self.socks[cid] = fd
                self.free.append(cid)
        elif kind == b"F":
            self.free.extend(cid for cid in ids(payload) if cid in self.socks)
        elif kind == b"G":
            gone = set(ids(payload))
            self.free = [cid for cid in self.free if cid not in gone]
            for cid in gone:
                fd = self.socks.pop(cid, None)
                if fd is not None:
                    os.close(fd)
        elif kind == b"S":
            self.start_ns = struct.unpack("<q", payload)[0]

    def receive(self, block: bool) -> None:
        """Handle every waiting message; with `block`, wait for at least one."""
        if block:
            self.wait_for_parent()
        while True:
            try:
                message, fds = receive_fds(self.ctl)
            except (BlockingIOError, InterruptedError):
                return
            if not message:
                raise SystemExit(0)            # the measuring process closed its end
            self.handle(message, fds)

    def wait_for_parent(self) -> None:
        """Block until a message comes; exit if the measuring process has gone meanwhile (no orphan)."""
        parent = os.getppid()
        while not select.select([self.ctl], [], [], 1.0)[0]:
            if os.getppid() != parent:
                raise SystemExit(1)

    def run(self) -> None:
        self.ctl.send(b"R")
        while self.start_ns is None:
            self.receive(block=True)
        for i, offset in enumerate(self.job["offsets_ns"]):
            sleep_until(self.start_ns + offset)
            self.receive(block=False)
            while not self.free:
                self.receive(block=True)
            cid = self.free.pop()
            written, error = write_all(self.socks[cid], self.job["requests"][i])
            self.ctl.send(b"W" + WRITE.pack(i, cid, written, error))
        self.ctl.send(b"D")


def receive_fds(ctl: socket.socket) -> tuple:
    """One waiting message and the sockets it carries, never blocking (socket.recv_fds ignores its flags)."""
    fds = array.array("i")
    message, ancillary, _, _ = ctl.recvmsg(65536, socket.CMSG_LEN(MAX_FDS * fds.itemsize), socket.MSG_DONTWAIT)
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
    return message, list(fds)


def sleep_until(when_ns: int) -> None:
    while (left := when_ns - perf_counter_ns()) > SPIN_NS:
        time.sleep((left - SPIN_NS) / 1e9)
    while perf_counter_ns() < when_ns:
        pass


def write_all(fd: int, data: bytes) -> tuple:
    """(the instant just before the first write, errno or 0); a full socket buffer is waited out."""
    written = perf_counter_ns()
    view = memoryview(data)
    try:
        while view:
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                select.select([], [fd], [], 5.0)
    except OSError as exc:
        return written, exc.errno or errno.EIO
    return written, 0


def main() -> None:
    ctl = socket.socket(fileno=int(sys.argv[1]))
    job = pickle.load(sys.stdin.buffer)
    Sender(ctl, job).run()


if __name__ == "__main__":
    main()
