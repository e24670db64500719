"""A minimal asyncio HTTP/1.1 client for streamed chat completions, built for timing.

Why not a general HTTP library: the clock must start when the request is fully written
(a library's own queueing would be charged to the server), and each read must be stamped
with when it arrived, not when a busy client got round to it. Every read goes through
recvmsg with the kernel's receive timestamp (SO_TIMESTAMPNS, converted to the
`perf_counter_ns` clock); TLS is decrypted in memory (ssl.MemoryBIO) after that read, so an
HTTPS endpoint's tokens carry the kernel's stamps too. The read
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
from dataclasses import dataclass, field
from time import perf_counter_ns, time_ns
from urllib.parse import urlsplit

from sb.speed.stamps import SO_TIMESTAMPNS, kernel_stamp


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
class _Tls:
    """A TLS client session over memory buffers: bytes read from the socket in, bytes to send out."""
    session: ssl_module.SSLObject
    incoming: ssl_module.MemoryBIO
    outgoing: ssl_module.MemoryBIO


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
    read_lag_ns: int = 0        # the longest a read of it waited after its kernel stamp (sb.speed.stamps)
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


_CMSG_SPACE = socket.CMSG_SPACE(16)
# Every read lands in this one buffer and is copied out at its length. recvmsg(262144) would
# allocate 256 KiB per read, over malloc's mmap threshold: an mmap, page faults and a munmap
# for each token, 60-70 us of CPU per read on the development VM, a third of one stream's cost.
# One buffer serves every socket: reads run one at a time, on the event loop's thread.
_READ_BUFFER = bytearray(262144)
_READ_VIEW = memoryview(_READ_BUFFER)
_READ_BUFFERS = [_READ_BUFFER]


_REARM_NS = 100_000_000     # a lone stream's read may outlive its deadline by this much at most


class _ReceiveTimeout:
    """A deadline for blocking reads, kept in the kernel (SO_RCVTIMEO) rather than by a poll per read.

    The kernel's timeout bounds each read from when it starts, so it is set to the time left
    and set again only once `_REARM_NS` has passed since: a read then ends at most that long
    after the deadline, and keeping the deadline costs a system call a tenth of a second,
    not one per token. Where the option is refused, Python's socket timeout does the same
    at a poll per read.
    """

    def __init__(self, sock: socket.socket, deadline_ns: int):
        self.sock, self.deadline_ns = sock, deadline_ns
        self.set_at: int | None = None
        self.kernel = True

    def arm(self) -> bool:
        """Whether time is left; if so, a blocking read started now ends by the deadline plus `_REARM_NS`."""
        now = perf_counter_ns()
        left = self.deadline_ns - now
        if left <= 0:
            return False
        if not self.kernel:
            self.sock.settimeout(left / 1e9)
        elif self.set_at is None or now - self.set_at >= _REARM_NS:
            self._set(left)
            self.set_at = now
        return True

    def _set(self, timeout_ns: int) -> None:
        seconds, rest = divmod(max(timeout_ns, 1000), 1_000_000_000)
        try:
            self.sock.settimeout(None)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", seconds, rest // 1000))
        except (OSError, AttributeError):
            self.kernel = False
            self.sock.settimeout(timeout_ns / 1e9)

    def disarm(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 0, 0))


class _StampedSocket:
    """Reads through recvmsg, stamped with the kernel's receive time (SO_TIMESTAMPNS).

    The stamp says when the bytes reached this machine's socket, not when this event loop got
    round to them, so with 32 busy streams one stream's parsing never delays another's
    timestamp. It plays both parts a `Connection` needs: protocol (parser, lost) and transport.
    Where the kernel gives no stamp, the read is stamped on arrival in the loop.

    With `tls` (a session over memory buffers, already past its handshake) each read is
    decrypted here: what a read completes carries that read's stamp. Before this, TLS went
    through asyncio's own SSL transport, stamped when the loop got to it: against a local
    HTTPS server on a busy machine that was a median TTFT error of 17 ms, against 0.1 ms plain.
    """

    def __init__(self, sock: socket.socket, tls: _Tls | None = None):
        self.sock, self.transport, self.tls = sock, self, tls
        self.parser: _ResponseParser | None = None
        self.early: list = []          # reads that came before the parser (a request another process wrote)
        self.lost = False
        self.loop = asyncio.get_running_loop()
        with contextlib.suppress(OSError):           # not Linux: reads are stamped in the loop
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.loop.add_reader(sock, self._readable)

    def _readable(self) -> None:
        now, wall = perf_counter_ns(), time_ns()
        try:
            size, ancillary, _, _ = self.sock.recvmsg_into(_READ_BUFFERS, _CMSG_SPACE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            return self._lose(exc)
        if not size:
            return self._lose(None)
        self._feed(kernel_stamp(ancillary, now, wall), _READ_VIEW[:size].tobytes(), now)

    def _feed(self, stamp: int, data: bytes, read_ns: int | None = None) -> None:
        if self.tls is not None and not (data := self._decrypt(self.tls, data)):
            return
        if self.parser is not None:
            raw = self.parser.raw
            if read_ns is not None:
                raw.read_lag_ns = max(raw.read_lag_ns, read_ns - stamp)
            self.parser.feed(max(stamp, raw.t_written_ns), data)
        else:
            self.early.append((stamp, data))

    def read_alone(self, raw: RawResponse, deadline_ns: int) -> None:
        """Read until `raw` has ended (or the deadline), blocking on the socket instead of the event loop.

        Only for a request nothing else runs beside (a closed-loop level of one stream). There
        every token is its own wakeup, and each wakeup's own work is what the client costs.
        So this loop does the least per read (no epoll, no selector bookkeeping, no callback
        dispatch, no parsing): it keeps each read with its kernel stamp and parses them
        together once the chunked body's last chunk (`0 CRLF CRLF`) has come; a TLS read is
        decrypted as it comes. Same stamps, same parser, so the same figures; on the busy
        development VM, interleaved runs gave 0.10-0.11 ms CPU per token this way against
        0.15-0.17 through the event loop, over a floor of 0.07 for a bare blocking read.

        The deadline is the kernel's receive timeout (SO_RCVTIMEO), re-armed at most every
        `_REARM_NS`, not Python's socket timeout: that one polls before every read, one more
        system call per token (0.10 ms per token against 0.087 with the kernel's timeout and
        0.083 for the bare read, interleaved, /tmp micro-benchmark in the commit message).
        """
        parser, sock, done = self.parser, self.sock, raw.done
        assert parser is not None and done is not None, "read_alone needs the request begun"
        reads: list = []            # (time read, ancillary, data), not yet parsed
        self.loop.remove_reader(sock)
        timeout = _ReceiveTimeout(sock, deadline_ns)
        try:
            while not done.done():
                if not timeout.arm():
                    return
                try:
                    size, ancillary, _, _ = sock.recvmsg_into(_READ_BUFFERS, _CMSG_SPACE)
                except (BlockingIOError, TimeoutError):
                    continue                # the armed timeout ran out: arm() decides whether time is left
                except OSError as exc:
                    self._feed_reads(reads)
                    return self._lose(exc)
                if not size:
                    self._feed_reads(reads)
                    return self._lose(None)
                data = _READ_VIEW[:size].tobytes()
                reads.append((perf_counter_ns(), time_ns(), ancillary, data))
                if parser.mode != "chunked" or self.tls is not None or data.endswith(b"0\r\n\r\n"):
                    self._feed_reads(reads)
        finally:
            self._feed_reads(reads)
            if not self.lost:
                timeout.disarm()
                sock.setblocking(False)
                self.loop.add_reader(sock, self._readable)

    def _decrypt(self, tls: _Tls, data: bytes) -> bytes:
        """What the TLS records completed by this read hold (empty: none complete yet); b"" also after close_notify."""
        tls.incoming.write(data)
        plain = []
        while True:
            try:
                plain.append(tls.session.read(262144))
            except (ssl_module.SSLWantReadError, ssl_module.SSLZeroReturnError):
                return b"".join(plain)
            except ssl_module.SSLError as exc:         # a corrupt record: the connection is done
                self._lose(exc)
                return b""

    def _feed_reads(self, reads: list) -> None:
        for now, wall, ancillary, data in reads:
            self._feed(kernel_stamp(ancillary, now, wall), data, now)
        reads.clear()

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
        if self.tls is not None:
            self.tls.session.write(data)
            data = self.tls.outgoing.read()
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

    def __init__(self, protocol: _StampedSocket):
        self.protocol = protocol
        self.used = False

    @property
    def usable(self) -> bool:
        return not self.protocol.lost

    def close(self) -> None:
        if self.protocol.transport is not None:
            self.protocol.transport.close()
        self.protocol.lost = True

    async def send(self, request: bytes, timeout_s: float, alone: bool = False) -> RawResponse:
        """Write the prepared request and wait for the whole response; `alone`: see `_StampedSocket.read_alone`."""
        raw = self.begin(request)
        read = alone and self.protocol.parser is not None
        if read:
            self.protocol.read_alone(raw, perf_counter_ns() + round(timeout_s * 1e9))
        return await self.complete(raw, timeout_s, waited=read)

    def begin(self, request: bytes) -> RawResponse:
        """Write the prepared request now, synchronously; the clock starts once the kernel has all of it.

        Synchronous so an open-loop scheduler sends at the scheduled instant, not one event
        loop turn later. A request the kernel takes in one send() is stamped just before that
        call: the send wakes the server, which on a busy machine may run before this process
        takes a stamp after it, and that preemption is then charged to nobody. A larger
        request is stamped when the transport's buffer has drained (in `complete`).
        """
        raw = RawResponse()
        done = raw.done = asyncio.get_running_loop().create_future()
        if self.protocol.lost:
            raw.error, raw.keep_alive = "connection closed: by the server", False
            raw.t_written_ns = raw.t_end_ns = perf_counter_ns()
            return raw
        self.protocol.parser = _ResponseParser(raw, done)
        before = perf_counter_ns()
        self.protocol.transport.write(request)
        raw.t_written_ns = before
        return raw

    @property
    def lendable(self) -> bool:
        """Plain-HTTP connections can be written by another process; a TLS session belongs to this one."""
        return self.protocol.tls is None

    def fileno(self) -> int:
        return self.protocol.sock.fileno()

    def adopt(self, raw: RawResponse, written_ns: int) -> None:
        """Take over a request the sender process wrote at `written_ns`: parse its response from now on.

        Bytes that arrived before this call (the sender's report crossed the server's first
        reply) were kept with their kernel stamps and are fed first.
        """
        raw.t_written_ns = written_ns
        done = raw.done
        assert done is not None, "an adopted request was made with its future"
        parser = self.protocol.parser = _ResponseParser(raw, done)
        early, self.protocol.early = self.protocol.early, []
        for stamp, data in early:
            parser.feed(max(stamp, written_ns), data)
        if self.protocol.lost and not done.done():
            parser.finish(perf_counter_ns(), "connection closed: by the server")

    async def complete(self, raw: RawResponse, timeout_s: float, waited: bool = False) -> RawResponse:
        """Wait for the response `begin` asked for (`waited`: already waited for); close the
        connection if it cannot be reused."""
        if self.protocol.parser is None or self.protocol.parser.raw is not raw:
            if raw.error:                                # begin found the connection closed, or the send failed
                self.close()
            return raw
        done = self.protocol.parser.done            # raw.done, which begin or adopt gave the parser
        transport = self.protocol.transport
        while transport.get_write_buffer_size():        # only for a request larger than the socket buffer
            await asyncio.sleep(0)
            raw.t_written_ns = perf_counter_ns()
        try:
            await asyncio.wait_for(done, 0 if waited else timeout_s)
        except asyncio.TimeoutError:
            raw.error = f"no complete response in {timeout_s:g}s"
            raw.t_end_ns, raw.keep_alive = perf_counter_ns(), False
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


async def _handshake(loop, sock: socket.socket, context, host: str) -> _Tls:
    """A TLS client session over memory buffers, its handshake done on `sock`; certificate and host verified."""
    incoming, outgoing = ssl_module.MemoryBIO(), ssl_module.MemoryBIO()
    tls = _Tls(context.wrap_bio(incoming, outgoing, server_hostname=host), incoming, outgoing)
    while True:
        try:
            tls.session.do_handshake()
        except ssl_module.SSLWantReadError:
            await loop.sock_sendall(sock, tls.outgoing.read())
            data = await loop.sock_recv(sock, 65536)
            if not data:
                raise ConnectionResetError("the server closed the connection during the TLS handshake") from None
            tls.incoming.write(data)
            continue
        await loop.sock_sendall(sock, tls.outgoing.read())
        return tls


class Pool:
    """Idle keep-alive connections to one endpoint, opened ahead of a level so no level pays a connect."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.idle: list[Connection] = []
        self.ssl = ssl_module.create_default_context() if endpoint.tls else None

    async def _open(self) -> Connection:
        loop = asyncio.get_running_loop()
        sock = await _connect_plain(loop, self.endpoint.host, self.endpoint.port)
        try:
            tls = None if self.ssl is None else await _handshake(loop, sock, self.ssl, self.endpoint.host)
        except BaseException:
            sock.close()
            raise
        return Connection(_StampedSocket(sock, tls))

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


async def send_one(pool: Pool, request: bytes, timeout_s: float, alone: bool = False) -> RawResponse:
    """One request; sent again once, on a new connection, if a reused one was closed before any reply byte.

    `alone`: nothing else runs on the event loop meanwhile, so the response may be read
    blocking (`_StampedSocket.read_alone`).
    """
    conn, reused = await pool.acquire()
    raw = await conn.send(request, timeout_s, alone)
    pool.release(conn)
    if closed_before_reply(raw, reused):
        return await send_one(pool, request, timeout_s, alone)
    return raw


def closed_before_reply(raw, reused: bool) -> bool:
    return reused and raw.status is None and (raw.error or "").startswith("connection closed")
