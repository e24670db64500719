"""Open-loop levels: each request sent at its scheduled instant, whatever the earlier ones are doing.

Plain-HTTP sends come from a sender process (sb.speed.sender) that sleeps until each
instant: in the measuring process they would wait for the interpreter lock while the event
loop reads streamed tokens, and a late send changes the load the server sees (a late read
does not change a timestamp: the kernel stamped it). TLS sends, and systems without
SOCK_SEQPACKET, keep the schedule in the event loop.
"""

from __future__ import annotations

import array
import asyncio
import math
import os
import pickle
import socket
import struct
import subprocess
import sys
from pathlib import Path
from time import perf_counter_ns

from sb.speed.client import Pool, RawResponse, closed_before_reply, send_one

SPIN_NS = 1_500_000          # the event loop spins the last 1.5 ms before a send: epoll sleeps in whole ms
LEAD_NS = 50_000_000         # the schedule starts this long after the sender process is ready
MAX_FDS = 200                # sockets per lending message to the sender process
WRITE = struct.Struct("<iiqi")   # the sender's report: request, connection id, written at, errno
SPARE_CONNECTIONS = 4


class SenderFailed(Exception):
    """The sender process ended before it had sent every request of the level."""


async def run_level(pool: Pool, requests: list, offsets: list, timeout_s: float, expected_e2e_s: float) -> tuple:
    """(raws, due times in ns, the sender process's CPU seconds) of one open-loop level.

    The connections it expects to need (rate x the slowest request so far x 1.5, and a few
    spare) are opened first; more are opened as they run low.
    """
    rate = len(offsets) / max(offsets[-1], 1e-3) if len(offsets) > 1 else 1.0
    await pool.ensure(min(len(requests), math.ceil(rate * expected_e2e_s * 1.5) + SPARE_CONNECTIONS))
    ctl = _control_pair() if all(conn.lendable for conn in pool.idle if conn.usable) else None
    if ctl is not None:
        return await Lender(pool, requests, offsets, timeout_s).run(*ctl)
    running = [True]
    spare = asyncio.create_task(_keep_spare(pool, SPARE_CONNECTIONS, running))
    try:
        tasks, due = await _send_from_loop(pool, requests, offsets, timeout_s)
        raws = await asyncio.gather(*tasks)
    finally:
        running[0] = False
        await spare
    return list(raws), due, 0.0


async def _send_from_loop(pool: Pool, requests: list, offsets: list, timeout_s: float) -> tuple:
    """The schedule kept by the event loop; the write is synchronous (Connection.begin), only the wait is a task."""
    tasks, due = [], []
    start = perf_counter_ns()
    for request, offset in zip(requests, offsets):
        when = start + round(offset * 1e9)
        await _wait_until(when)
        taken = pool.take()
        conn, reused = taken if taken is not None else await pool.acquire()
        raw = conn.begin(request)
        due.append(when)
        tasks.append(asyncio.create_task(_finish(pool, conn, raw, reused, request, timeout_s)))
    return tasks, due


class Lender:
    """One open-loop level sent by the sender process: this side lends it connections and reads the responses.

    Each connection is lent while idle; the sender reports which one it wrote each request
    to, and when; this side then parses that connection's response (`Connection.adopt`) and
    lends it again once the response has ended. Spare connections are opened as the lent
    ones run low, so a scheduled send rarely finds none (if it does, it waits, in its lag).
    """

    def __init__(self, pool: Pool, requests: list, offsets: list, timeout_s: float):
        self.pool, self.requests, self.timeout_s = pool, requests, timeout_s
        self.offsets_ns = [round(offset * 1e9) for offset in offsets]
        self.loop = asyncio.get_running_loop()
        self.raws = [RawResponse(done=self.loop.create_future()) for _ in requests]
        self.tasks: list = [None] * len(requests)
        self.conns: dict = {}           # id -> Connection, every one lent during the level
        self.ids: dict = {}             # Connection -> id
        self.free = 0                   # lent and not yet written to
        self.start_ns = 0
        self.ready = self.loop.create_future()
        self.sent = self.loop.create_future()
        self.opening = False
        self.sender_cpu_s = 0.0

    async def run(self, parent: socket.socket, child: socket.socket) -> tuple:
        process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("sender.py")), str(child.fileno())],
                                   stdin=subprocess.PIPE, pass_fds=[child.fileno()])
        assert process.stdin is not None  # stdin=PIPE
        child.close()
        self.ctl = parent
        watch = asyncio.ensure_future(asyncio.to_thread(os.wait4, process.pid, 0))
        watch.add_done_callback(self._exited)
        try:
            process.stdin.write(pickle.dumps({"offsets_ns": self.offsets_ns, "requests": self.requests}))
            process.stdin.close()
            parent.setblocking(False)
            self.loop.add_reader(parent, self._readable)
            self._lend([conn for conn, _ in iter(self.pool.take, None)])
            await self.ready
            self.start_ns = perf_counter_ns() + LEAD_NS
            self._send(b"S" + struct.pack("<q", self.start_ns))
            await self.sent
            raws = await asyncio.gather(*self.tasks)
        finally:
            self.loop.remove_reader(parent)
            parent.close()                     # the sender sees its end closed and exits
            await self._reap(process, watch)
        for conn in self.conns.values():
            self.pool.release(conn)
        return list(raws), [self.start_ns + offset for offset in self.offsets_ns], self.sender_cpu_s

    async def _reap(self, process, watch) -> None:
        """Wait for the sender to exit (killed after 5 s) and keep its CPU time: the client's cost includes it."""
        try:
            await asyncio.wait_for(asyncio.shield(watch), 5)
        except asyncio.TimeoutError:
            process.kill()
        _, status, usage = await watch
        process.returncode = os.waitstatus_to_exitcode(status)
        self.sender_cpu_s = usage.ru_utime + usage.ru_stime

    def _exited(self, watch) -> None:
        """The sender process ended: before it reported every send, that is an error of the run."""
        code = os.waitstatus_to_exitcode(watch.result()[1])
        for future in (self.ready, self.sent):
            if not future.done():
                future.set_exception(SenderFailed(f"the open-loop sender process exited early (code {code})"))

    def _send(self, message: bytes, fds=()) -> None:
        """One message to the sender; a full buffer is waited out (briefly: the sender reads before each send)."""
        try:
            _send_message(self.ctl, message, fds)
        except BlockingIOError:
            self.ctl.setblocking(True)
            try:
                _send_message(self.ctl, message, fds)
            finally:
                self.ctl.setblocking(False)

    def _lend(self, conns: list) -> None:
        """Lend new connections (their sockets go across), in batches the kernel accepts."""
        for start in range(0, len(conns), MAX_FDS):
            batch = conns[start:start + MAX_FDS]
            for conn in batch:
                self.ids[conn] = cid = len(self.conns)
                self.conns[cid] = conn
            self._send(b"N" + _ids(self.ids[c] for c in batch), [c.fileno() for c in batch])
            self.free += len(batch)

    def _readable(self) -> None:
        while True:
            try:
                message = self.ctl.recv(64)
            except (BlockingIOError, InterruptedError):
                return
            kind = message[:1]
            if kind == b"R" and not self.ready.done():
                self.ready.set_result(None)
            elif kind == b"D" and not self.sent.done():
                self.sent.set_result(None)
            elif kind == b"W":
                self._written(*WRITE.unpack(message[1:]))
            elif not message:                      # the sender closed its end: it has exited
                self.loop.remove_reader(self.ctl)
                return

    def _written(self, i: int, cid: int, written_ns: int, error: int) -> None:
        self.free -= 1
        conn, raw = self.conns[cid], self.raws[i]
        if error:
            raw.t_written_ns, raw.t_end_ns = written_ns, perf_counter_ns()
            raw.error, raw.keep_alive = f"connection closed: {os.strerror(error)}", False
        else:
            conn.adopt(raw, written_ns)
        self.tasks[i] = self.loop.create_task(self._finish(i, conn, raw))
        if self.free < SPARE_CONNECTIONS and not self.opening and not self.sent.done():
            self.opening = True
            self.loop.create_task(self._open_spare())

    async def _finish(self, i: int, conn, raw):
        raw = await conn.complete(raw, self.timeout_s)
        if conn.usable:
            self._send(b"F" + _ids([self.ids[conn]]))
            self.free += 1
        else:
            self._send(b"G" + _ids([self.ids[conn]]))
        if raw.status is None and (raw.error or "").startswith("connection closed"):
            # sent again: its lag counts from the schedule
            return await send_one(self.pool, self.requests[i], self.timeout_s)
        return raw

    async def _open_spare(self) -> None:
        try:
            fresh = await self.pool.open(SPARE_CONNECTIONS)
            if self.sent.done():
                self.pool.idle.extend(fresh)
            else:
                self._lend(fresh)
        finally:
            self.opening = False


def _control_pair():
    """(parent, child) message sockets for the sender process, or None where the system has none.

    SOCK_SEQPACKET: messages keep their boundaries and the sockets they carry, and, unlike
    a datagram pair, the queue is bounded by the buffer, not by ten messages.
    """
    try:
        return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    except (AttributeError, OSError):
        return None


def _send_message(ctl: socket.socket, message: bytes, fds) -> None:
    try:
        socket.send_fds(ctl, [message], list(fds)) if fds else ctl.send(message)
    except (BrokenPipeError, ConnectionResetError):
        pass                       # the sender has gone: `Lender._exited` reports it


def _ids(values) -> bytes:
    return array.array("i", values).tobytes()


async def _finish(pool: Pool, conn, raw, reused: bool, request: bytes, timeout_s: float):
    raw = await conn.complete(raw, timeout_s)
    pool.release(conn)
    if closed_before_reply(raw, reused):          # sent again: its lag counts from the schedule, as it should
        return await send_one(pool, request, timeout_s)
    return raw


async def _keep_spare(pool: Pool, spare: int, running: list) -> None:
    """Open connections in the background so a scheduled send finds one waiting; ends when `running[0]` is False."""
    while running[0]:
        if len(pool.idle) < spare:
            await pool.ensure(spare)
        await asyncio.sleep(0.005)


async def _wait_until(when_ns: int) -> None:
    """Sleep until shortly before `when_ns`, then spin: asyncio's timers round to whole milliseconds."""
    while (left := when_ns - perf_counter_ns()) > SPIN_NS:
        await asyncio.sleep((left - SPIN_NS) / 1e9)
    while perf_counter_ns() < when_ns:
        pass
