"""A minimal asyncio HTTP/1.1 client for streamed chat completions, built for timing.

Why not a general HTTP library: the clock must start when the request is fully written
(a library's own queueing would be charged to the server), and each read must be stamped
with when it arrived, not when a busy client got round to it. Plain-HTTP reads go through
recvmsg with the kernel's receive timestamp (SO_TIMESTAMPNS, converted to the
`perf_counter_ns` clock); TLS reads are stamped on arrival in the event loop. The read
callback only strips the chunked framing and splits server-sent events; JSON is parsed
after the level ends, so one stream's parsing never delays another's timestamps.
Connections are kept alive and reused across requests and levels.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl as ssl_module
import struct
import time
from dataclasses import dataclass, field
from time import perf_counter_ns
from urllib.parse import urlsplit


@dataclass
class Endpoint:
    host: str
    port: int
    tls: bool
    path: str            # the chat completions path, e.g. /v1/chat/completions

    @classmethod
    def from_base_url(cls, base_url: str) -> "Endpoint":
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base URL must be http(s)://host[:port]/path, got {base_url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.hostname, port, parts.scheme == "https", parts.path.rstrip("/") + "/chat/completions")

    @property
    def host_header(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass
class RawResponse:
    """What arrived for one request: every server-sent event with the time of the read that completed it."""
    t_written_ns: int = 0
    t_end_ns: int = 0
    status: int | None = None
    headers: dict = field(default_factory=dict)
    events: list = field(default_factory=list)      # (t_ns, event bytes)
    error: str | None = None
    keep_alive: bool = True
    done: asyncio.Future | None = field(default=None, repr=False)


class _ResponseParser:
    """Incremental HTTP/1.1 response parser: head, then chunked, sized or close-delimited body."""

    def __init__(self, raw: RawResponse, done: asyncio.Future):
        self.raw, self.done = raw, done
        self.head = b""
        self.mode = "head"
        self.buf = b""
        self.left = 0
        self.sse = b""
        self.cr = b""

    def feed(self, t: int, data: bytes) -> None:
        if self.mode == "head":
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            data, self.head = self.head[end + 4:], self.head[:end]
            self._parse_head()
        if self.mode == "chunked":
            self._feed_chunked(t, data)
        elif self.mode == "sized":
            data = data[: self.left]
            self.left -= len(data)
            self._body(t, data)
            if self.left <= 0:
                self.finish(t)
        elif self.mode == "close":
            self._body(t, data)

    def _parse_head(self) -> None:
        lines = self.head.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        self.raw.status = int(rest.split(" ", 1)[0])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        self.raw.headers = headers
        self.raw.keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self.mode = "chunked"
        elif "content-length" in headers:
            self.mode, self.left = "sized", int(headers["content-length"])
            if self.left == 0:
                self.finish(perf_counter_ns())
        else:
            self.mode, self.raw.keep_alive = "close", False

    def _feed_chunked(self, t: int, data: bytes) -> None:
        buf = self.buf + data if self.buf else data
        while buf:
            if self.left > 0:
                piece, buf = buf[: self.left], buf[self.left:]
                self.left -= len(piece)
                self._body(t, piece)
                if self.left == 0:
                    self.left = -2          # the CRLF after the chunk data
                continue
            if self.left < 0:
                skip = min(-self.left, len(buf))
                buf, self.left = buf[skip:], self.left + skip
                continue
            end = buf.find(b"\r\n")
            if end < 0:
                break
            size = int(buf[:end].split(b";", 1)[0], 16)
            if size == 0:
                if buf.find(b"\r\n\r\n", end) >= 0 or buf[end + 2: end + 4] == b"\r\n":
                    self.finish(t)
                    buf = b""
                break
            buf, self.left = buf[end + 2:], size
        self.buf = buf

    def _body(self, t: int, data: bytes) -> None:
        data = self.cr + data
        self.cr = b""
        if data.endswith(b"\r"):
            data, self.cr = data[:-1], b"\r"
        self.sse += data.replace(b"\r\n", b"\n")
        while (end := self.sse.find(b"\n\n")) >= 0:
            self.raw.events.append((t, self.sse[:end]))
            self.sse = self.sse[end + 2:]

    def finish(self, t: int, error: str | None = None) -> None:
        if self.done.done():
            return
        if self.sse.strip():
            self.raw.events.append((t, self.sse))
        self.raw.t_end_ns = t
        if error and self.mode != "close":
            self.raw.error = error
        self.done.set_result(self.raw)


class _Protocol(asyncio.Protocol):
    def __init__(self):
        self.transport = None
        self.parser: _ResponseParser | None = None
        self.lost = False

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        t = perf_counter_ns()
        if self.parser is not None:
            self.parser.feed(t, data)

    def connection_lost(self, exc) -> None:
        self.lost = True
        if self.parser is not None:
            self.parser.finish(perf_counter_ns(), f"connection closed: {exc or 'by the server'}")


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)     # Linux


class _StampedSocket:
    """Plain-HTTP reads through recvmsg, stamped with the kernel's receive time (SO_TIMESTAMPNS).

    The stamp says when the bytes reached this machine's socket, not when this event loop got
    round to them, so with 32 busy streams one stream's parsing never delays another's
    timestamp. It plays both parts a `Connection` needs: protocol (parser, lost) and transport.
    Where the kernel gives no stamp, the read is stamped on arrival in the loop, as `_Protocol` does.
    """

    def __init__(self, sock: socket.socket):
        self.sock, self.transport = sock, self
        self.parser: _ResponseParser | None = None
        self.early: list = []          # reads that came before the parser (a request another process wrote)
        self.lost = False
        self.loop = asyncio.get_running_loop()
        self.offset = time.time_ns() - perf_counter_ns()
        with contextlib.suppress(OSError):           # not Linux: reads are stamped in the loop
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.loop.add_reader(sock, self._readable)

    def _readable(self) -> None:
        now = perf_counter_ns()
        try:
            data, ancillary, _, _ = self.sock.recvmsg(262144, socket.CMSG_SPACE(16))
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            return self._lose(exc)
        if not data:
            return self._lose(None)
        stamp = now
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
                seconds, nanoseconds = struct.unpack("qq", payload[:16])
                stamp = min(now, seconds * 1_000_000_000 + nanoseconds - self.offset)
        if self.parser is not None:
            self.parser.feed(max(stamp, self.parser.raw.t_written_ns), data)
        else:
            self.early.append((stamp, data))

    def _lose(self, exc) -> None:
        self.close()
        if self.parser is not None:
            self.parser.finish(perf_counter_ns(), f"connection closed: {exc or 'by the server'}")

    def write(self, data: bytes) -> None:
        error = self.send_now(data)
        if error is not None:
            self._lose(error)

    def send_now(self, data: bytes):
        """Send without touching the event loop; an OSError, or None."""
        self.offset = time.time_ns() - perf_counter_ns()
        sent = 0
        try:
            sent = self.sock.send(data)
        except BlockingIOError:
            pass
        except OSError as exc:
            return exc
        if sent < len(data):                  # a request larger than the socket buffer: rare, brief
            self.sock.setblocking(True)
            try:
                self.sock.sendall(data[sent:])
            except OSError as exc:
                return exc
            finally:
                self.sock.setblocking(False)
        return None

    def get_write_buffer_size(self) -> int:
        return 0

    def close(self) -> None:
        if not self.lost:
            self.lost = True
            self.loop.remove_reader(self.sock)
            self.sock.close()


class Connection:
    """One keep-alive connection; requests on it are strictly one after another."""

    def __init__(self, protocol: _Protocol):
        self.protocol = protocol
        self.used = False

    @property
    def usable(self) -> bool:
        return not self.protocol.lost

    def close(self) -> None:
        if self.protocol.transport is not None:
            self.protocol.transport.close()
        self.protocol.lost = True

    async def send(self, request: bytes, timeout_s: float) -> RawResponse:
        """Write the prepared request and wait for the whole response."""
        return await self.complete(self.begin(request), timeout_s)

    def begin(self, request: bytes) -> RawResponse:
        """Write the prepared request now, synchronously; the clock starts once the kernel has all of it.

        Synchronous so an open-loop scheduler sends at the scheduled instant, not one event
        loop turn later. A request the kernel takes in one send() is stamped just before that
        call: the send wakes the server, which on a busy machine may run before this process
        takes a stamp after it, and that preemption is then charged to nobody. A larger
        request is stamped when the transport's buffer has drained (in `complete`).
        """
        raw = RawResponse()
        raw.done = asyncio.get_running_loop().create_future()
        if self.protocol.lost:
            raw.error, raw.keep_alive = "connection closed: by the server", False
            raw.t_written_ns = raw.t_end_ns = perf_counter_ns()
            return raw
        self.protocol.parser = _ResponseParser(raw, raw.done)
        before = perf_counter_ns()
        self.protocol.transport.write(request)
        raw.t_written_ns = before
        return raw

    @property
    def lendable(self) -> bool:
        """Plain-HTTP connections can be written by another process; a TLS session belongs to this one."""
        return isinstance(self.protocol, _StampedSocket)

    def fileno(self) -> int:
        return self.protocol.sock.fileno()

    def adopt(self, raw: RawResponse, written_ns: int) -> None:
        """Take over a request the sender process wrote at `written_ns`: parse its response from now on.

        Bytes that arrived before this call (the sender's report crossed the server's first
        reply) were kept with their kernel stamps and are fed first.
        """
        raw.t_written_ns = written_ns
        parser = self.protocol.parser = _ResponseParser(raw, raw.done)
        early, self.protocol.early = self.protocol.early, []
        for stamp, data in early:
            parser.feed(max(stamp, written_ns), data)
        if self.protocol.lost and not raw.done.done():
            parser.finish(perf_counter_ns(), "connection closed: by the server")

    async def complete(self, raw: RawResponse, timeout_s: float) -> RawResponse:
        """Wait for the response `begin` asked for; close the connection if it cannot be reused."""
        if self.protocol.parser is None or self.protocol.parser.raw is not raw:
            if raw.error:                                # begin found the connection closed, or the send failed
                self.close()
            return raw
        transport = self.protocol.transport
        while transport.get_write_buffer_size():        # only for a request larger than the socket buffer
            await asyncio.sleep(0)
            raw.t_written_ns = perf_counter_ns()
        try:
            await asyncio.wait_for(raw.done, timeout_s)
        except asyncio.TimeoutError:
            raw.error, raw.t_end_ns, raw.keep_alive = f"no complete response in {timeout_s:g}s", perf_counter_ns(), False
        self.protocol.parser = None
        self.used = True
        if not raw.keep_alive or raw.error:
            self.close()
        return raw


async def _connect_plain(loop, host: str, port: int) -> socket.socket:
    error = None
    for family, kind, proto, _, address in await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, address)
        except OSError as exc:
            sock.close()
            error = exc
            continue
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    raise error or OSError(f"cannot resolve {host}")


class Pool:
    """Idle keep-alive connections to one endpoint, opened ahead of a level so no level pays a connect."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.idle: list[Connection] = []
        self.ssl = ssl_module.create_default_context() if endpoint.tls else None

    async def _open(self) -> Connection:
        loop = asyncio.get_running_loop()
        if self.ssl is None:
            sock = await _connect_plain(loop, self.endpoint.host, self.endpoint.port)
            return Connection(_StampedSocket(sock))
        _, protocol = await loop.create_connection(_Protocol, self.endpoint.host, self.endpoint.port, ssl=self.ssl)
        return Connection(protocol)

    async def open(self, n: int) -> list:
        """`n` new connections, opened side by side."""
        return list(await asyncio.gather(*(self._open() for _ in range(n))))

    async def ensure(self, n: int) -> None:
        """At least `n` usable idle connections. The list is only added to, never rebuilt, so a
        caller holding it sees every connection; `take` and `acquire` skip closed ones."""
        missing = n - sum(1 for c in self.idle if c.usable)
        if missing > 0:
            self.idle.extend(await self.open(missing))

    async def acquire(self) -> tuple:
        """(connection, whether it was used before): a reused one may have been closed by the server meanwhile."""
        return self.take() or (await self._open(), False)

    def take(self):
        """(an idle connection, whether it was used before), or None: never waits, for a scheduled send.

        An empty list is caught rather than checked first, so a concurrent taker cannot make it fail.
        """
        while True:
            try:
                conn = self.idle.pop()
            except IndexError:
                return None
            if conn.usable:
                return conn, conn.used

    def release(self, conn: Connection) -> None:
        if conn.usable:
            self.idle.append(conn)

    def close(self) -> None:
        for conn in self.idle:
            conn.close()
        self.idle = []


async def send_one(pool: Pool, request: bytes, timeout_s: float) -> RawResponse:
    """One request; sent again once, on a new connection, if a reused one was closed before any reply byte."""
    conn, reused = await pool.acquire()
    raw = await conn.send(request, timeout_s)
    pool.release(conn)
    if closed_before_reply(raw, reused):
        return await send_one(pool, request, timeout_s)
    return raw


def closed_before_reply(raw, reused: bool) -> bool:
    return reused and raw.status is None and (raw.error or "").startswith("connection closed")
