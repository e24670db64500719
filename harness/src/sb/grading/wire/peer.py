"""The peer: one side of the wire, serving the other's requests while it waits for an answer."""

import builtins
import os
import queue
import select
import sys
import threading

from .framing import FrameReader, frame_bytes
from .protocol import ProtocolError, WorkerGone, clip
from .proxies import Remote
from .reading import ROLE, ReadRole
from .values import Codec


WAIT_SLICE_MS = 50  # how long a waiting thread polls at a time: an exception put into it lands within this
MAX_CONVERSATIONS = 1024  # threads one side may open on the other (a task drives 50 at once)
# What loading a probe needs, bound when this module is imported: in the worker that is
# before the solution is, so a solution that rebinds builtins.exec or builtins.compile (or
# types.ModuleType) at import cannot take over how a probe is loaded. What a probe observes
# is still the solution's word (it runs in its process); sb validate counts those rules.
_exec, _compile, _ModuleType = builtins.exec, builtins.compile, type(sys)
ALLOWED_DUNDERS = frozenset({"__len__", "__iter__", "__next__", "__getitem__", "__setitem__", "__delitem__",
                             "__enter__", "__exit__", "__repr__", "__str__", "__bool__", "__call__"})


class Peer:
    """One side of the wire. `trusting=False` is the judge's policy towards requests from
    the worker: only calls, public attribute reads and container operations on objects the
    judge chose to hand over; never an import, a probe, or a private or dunder attribute."""

    def __init__(self, read_fd, write_fd, serves_imports, on_violation=None):
        self.read_fd, self.write_fd = read_fd, write_fd
        self.serves_imports = serves_imports
        self.codec = Codec(self)
        self.on_violation = on_violation
        self.handles, self.proxies = {}, {}
        self.next_handle, self.next_request = 1, 1
        self.lock = threading.RLock()
        self.write_lock = threading.Lock()
        self.queues = {}
        self.background = queue.SimpleQueue()  # SimpleQueue throughout: a hand-over costs a quarter less
        self.closed = None
        self.conversation_threads = {}
        self.local = threading.local()
        self.import_hook = None
        self.probe_sources = {}
        self.peer_prefix = "j" if serves_imports else "w"  # how the other side names its threads
        self.frames = FrameReader(read_fd)
        self.role = ReadRole()
        self.reading, self.reader = False, None
        self.abandoned = set()  # requests whose caller left before the answer came
        self.main_reads = True  # False from the first Python signal handler (watch_signal_handlers)
        self.threads_read, self.lost_place = True, False  # until a waiting thread is interrupted in a read

    # -- handles

    def export(self, value):
        with self.lock:
            handle = self.next_handle
            self.next_handle += 1
            self.handles[handle] = value
            self._reader_due()
            return handle

    def exported(self, handle):
        try:
            return self.handles[int(handle)]
        except (KeyError, ValueError, TypeError):
            raise ProtocolError(f"unknown handle {handle!r}") from None

    def proxy(self, handle, type_label, is_callable):
        with self.lock:
            found = self.proxies.get(handle)
            if found is None:
                found = Remote(self, handle, type_label, is_callable)
                self.proxies[handle] = found
            return found

    def truthy(self, remote):
        return self.serves_imports is False  # the judge asks the worker; the worker never asks the judge

    # -- sending

    def send(self, doc, value_fields):
        buffers = []
        for key, value in value_fields.items():
            doc[key] = self.codec.encode(value, buffers)
        parts = frame_bytes(doc, buffers)
        with self.write_lock:
            for part in parts:
                view = memoryview(part)
                while view:
                    written = os.write(self.write_fd, view)
                    view = view[written:]

    def conversation(self):
        current = getattr(self.local, "conversation", None)
        return current or f"{'w' if self.serves_imports else 'j'}{threading.get_ident()}"

    def request(self, op, **fields):
        if self.closed is not None:
            raise WorkerGone(self.closed)
        conv = self.conversation()
        mine = self._queue(conv)
        with self.lock:
            rid = self.next_request
            self.next_request += 1
        values = {k: fields.pop(k) for k in ("value", "args", "kwargs", "source") if k in fields}
        try:
            self.send({"kind": "request", "id": rid, "op": op, "conv": conv, **fields}, values)
        except ConnectionError as exc:  # the other side is gone; nobody may have been reading to see it
            self._close(f"the wire failed: {exc}")
            raise WorkerGone(self.closed) from None
        return self._wait(conv, mine, rid)

    def _queue(self, conv):
        with self.lock:
            found = self.queues.get(conv)
            if found is None:
                found = self.queues[conv] = queue.SimpleQueue()
            return found

    def _wait(self, conv, mine, rid):
        answered = False
        try:
            while True:
                message = self._next(mine, timeout=0.05)
                if message is None:
                    if self.closed is not None:
                        raise WorkerGone(self.closed)
                    self._serve_background()
                    continue
                doc, buffers = message
                if doc is None:
                    raise WorkerGone(self.closed or "the wire was closed")
                if doc.get("kind") == "request":
                    self.serve(doc, buffers)
                    continue
                if doc.get("id") != rid:
                    self._unexpected_answer(doc.get("id"), rid)
                    continue
                answered = True
                return self._result(doc, buffers)
        finally:
            if not answered:
                self.abandoned.add(rid)  # left by an exception (a signal's handler): its answer may still come

    def _unexpected_answer(self, got, rid):
        if type(got) is int and got in self.abandoned:
            self.abandoned.discard(got)  # the late answer to a request its caller stopped waiting for
        else:
            self._violation(f"an answer to request {got!r} while waiting for {rid}")

    def _serve_background(self):
        while True:
            try:
                doc, buffers = self.background.get_nowait()
            except queue.Empty:
                return
            self.serve(doc, buffers)

    def _result(self, doc, buffers):
        if "error" in doc:
            error = self._decode_or_violation(doc["error"], buffers)
            if not isinstance(error, BaseException):
                self._violation("an error answer that is not an exception")
                raise ProtocolError("malformed error answer")
            raise error
        return self._decode_or_violation(doc.get("value"), buffers)

    def _decode_or_violation(self, tree, buffers):
        try:
            return self.codec.decode(tree, buffers)
        except ProtocolError as exc:
            self._violation(str(exc))
            raise

    def _violation(self, text):
        if self.on_violation:
            self.on_violation(text)

    # -- receiving

    def start_reader(self):
        """Reading starts. The worker starts its reader thread now: a judge thread may call at
        any moment. The judge starts its own when it first hands the worker an object: until
        then the worker has nothing it may call, every message it may send answers a waiting
        judge thread, and that thread reads it itself (reading.py), unless it is the main thread
        and a signal handler is set (watch_signal_handlers). Returns the reader thread."""
        with self.lock:
            self.reading = True
            if self.serves_imports or self.handles or not self.main_reads:
                self._start_reader_thread()
            return self.reader

    def _reader_due(self):
        """From now on the reader thread reads (once reading has started at all)."""
        if self.reading:
            self._start_reader_thread()

    def _start_reader_thread(self):
        with self.lock:
            if self.reader is None:
                self.reader = threading.Thread(target=self._read_loop, name="sb-wire-reader", daemon=True)
                self.reader.start()

    def _read_loop(self):
        if not self.role.keep():
            return
        while (message := self._read_one()) is not None:
            doc, buffers, inbox = message
            inbox.put((doc, buffers))

    def _next(self, inbox, timeout):
        """This thread's next message: from its inbox or, while no other thread reads, off the
        wire by this thread itself. None when `timeout` passes first, or when what it read
        was a request nobody waits for (put aside for the waiting threads to serve)."""
        try:
            while True:
                try:
                    message = inbox.get_nowait()
                except queue.Empty:
                    message = self._read_for(inbox) if self._take_role(inbox) else self._sleep(inbox, timeout)
                if message is ROLE:
                    continue
                self.role.release(inbox)
                return message
        except BaseException:
            self.role.release(inbox)  # out of the queue, or the role handed on: nobody is left waiting on a thread gone
            raise

    def _take_role(self, inbox):
        if not self.threads_read or (not self.main_reads and threading.current_thread() is threading.main_thread()):
            return False
        return self.role.take(inbox)

    def watch_signal_handlers(self, signal):
        """A Python signal handler runs in the main thread and may raise anywhere in it, also
        halfway through reading a frame; from the first one set (or one set already), the main
        thread leaves reading to the reader thread, which no handler interrupts. `signal` is
        the module: its `signal` function is wrapped to tell (the judge calls this once)."""
        set_handler = signal.signal

        def signal_(signalnum, handler):
            if callable(handler) and handler is not signal.default_int_handler:
                self._main_stops_reading()
            return set_handler(signalnum, handler)
        signal.signal = signal_
        handlers = [signal.getsignal(number) for number in signal.valid_signals()]
        if any(callable(handler) and handler is not signal.default_int_handler for handler in handlers):
            self._main_stops_reading()

    def _main_stops_reading(self):
        self.main_reads = False
        self._reader_due()

    def _sleep(self, inbox, timeout):
        try:
            return inbox.get(timeout=timeout)
        except queue.Empty:
            return None

    def _read_for(self, inbox):
        """Messages off the wire, each taken to its inbox, until one for this thread's own.
        The thread waits for bytes in short polls, never inside a read: an exception a test
        puts into it (a signal's handler, an asynchronous exception from another thread,
        bounding a call) then lands between polls, with nothing read and lost; one that
        lands in a read anyway (a frame arriving in parts) leaves it to the reader thread."""
        try:
            while True:
                while not (self.frames.pending or _readable(self.read_fd, WAIT_SLICE_MS)):
                    pass
                try:
                    message = self._read_one()
                except BaseException:
                    self._read_interrupted()
                    raise
                if message is None:
                    return None, None  # closed: the reason is in self.closed
                doc, buffers, target = message
                if target is inbox:
                    return doc, buffers
                target.put((doc, buffers))
                if target is self.background:
                    return None
        finally:
            self.role.release(inbox)

    def _read_one(self):
        """The next frame and the inbox it goes to, or None once the wire is closed. In a
        waiting thread, an exception that is not the wire's is the thread's own and goes on."""
        try:
            doc, buffers = self.frames.next()
            return doc, buffers, self._inbox_for(doc)
        except (WorkerGone, ProtocolError, OSError) as exc:
            self._fail(exc)
        except Exception as exc:  # noqa: BLE001 - whatever else a frame made the reader thread raise: the peer's doing
            if threading.current_thread() is not self.reader:
                raise
            self._fail(exc)
        return None

    def _read_interrupted(self):
        """A waiting thread left a read part way: what it had read of a frame may be lost, so
        the wire may have lost its place. Only the reader thread reads from now on, and a
        frame that no longer parses closes the wire without blaming the worker."""
        self.threads_read, self.lost_place = False, True
        self._reader_due()

    def _fail(self, exc):
        if isinstance(exc, WorkerGone):
            self._close(str(exc))
        elif isinstance(exc, ProtocolError) and self.lost_place:
            self._close(f"the wire lost its place after a judge thread was interrupted reading it: {exc}")
        elif isinstance(exc, ProtocolError):
            self._violation(str(exc))
            self._close(f"protocol violation: {exc}")
        elif isinstance(exc, OSError):
            self._close(f"the wire failed: {exc}")
        else:  # whatever else a frame made the reader raise: the peer's doing
            self._violation(f"a frame the reader could not handle: {type(exc).__name__}")
            self._close(f"protocol violation: {type(exc).__name__}")

    def _close(self, reason):
        if self.closed is None:
            self.closed = reason
        self.role.close()
        with self.lock:
            queues = list(self.queues.values())
        for q in queues:
            q.put((None, None))
        if self.serves_imports:
            os._exit(0)  # the judge is gone: nothing left to answer

    def _inbox_for(self, doc):
        conv = doc.get("conv")
        if not isinstance(conv, str) or len(conv) > 64:
            raise ProtocolError("a message without a conversation")
        if doc.get("kind") == "request" and conv.startswith(self.peer_prefix):
            return self._conversation_thread(conv)
        with self.lock:
            target = self.queues.get(conv)
        if target is None:
            if doc.get("kind") != "request":
                raise ProtocolError(f"an answer for an unknown conversation {conv!r}")
            target = self.background
        return target

    def _conversation_thread(self, conv):
        """Each thread on the other side gets a thread here, so concurrent calls run
        concurrently and a call is served the moment it arrives, whatever this side's own
        threads are doing (a solution's thread reading the judge's clock while the test
        waits on an event, say). Bounded: a peer cannot make threads without end."""
        with self.lock:
            existing = self.queues.get(conv)
            if existing is not None:
                return existing
            if len(self.conversation_threads) >= MAX_CONVERSATIONS:
                raise ProtocolError(f"more than {MAX_CONVERSATIONS} conversations")
            inbox = self.queues[conv] = queue.SimpleQueue()
            self.conversation_threads[conv] = True
        thread = threading.Thread(target=self._conversation_loop, args=(conv, inbox), daemon=True)
        thread.start()
        return inbox

    def _conversation_loop(self, conv, inbox):
        self.local.conversation = conv
        while True:
            message = inbox.get()
            if message is ROLE:
                continue  # a hint left from a request this thread made while serving
            doc, buffers = message
            if doc is None:
                return
            if doc.get("kind") == "request":
                self.serve(doc, buffers)

    # -- serving

    def serve(self, doc, buffers):
        rid, conv = doc.get("id"), doc.get("conv")
        previous = getattr(self.local, "conversation", None)
        self.local.conversation = conv
        try:
            value = self._perform(doc, buffers)
            reply, fields = {"kind": "answer", "id": rid, "conv": conv}, {"value": value}
        except ProtocolError as exc:
            self._violation(str(exc))
            reply, fields = {"kind": "answer", "id": rid, "conv": conv}, {"error": ProtocolError(str(exc))}
        except BaseException as exc:  # noqa: BLE001 - the callee's failure is the caller's exception, whatever it is
            reply, fields = {"kind": "answer", "id": rid, "conv": conv}, {"error": _as_exception(exc)}
        finally:
            self.local.conversation = previous
        try:
            self.send(reply, fields)
        except ProtocolError as exc:
            self.send({"kind": "answer", "id": rid, "conv": conv}, {"error": ProtocolError(str(exc))})

    def _perform(self, doc, buffers):
        op = doc.get("op")
        decode = lambda key, default=None: self.codec.decode(doc.get(key, default), buffers)  # noqa: E731
        if op in ("import", "probe", "reload", "isinstance") and not self.serves_imports:
            raise ProtocolError(f"the worker may not ask the judge to {op}")
        if op == "import":
            return self.import_hook(str(doc["name"]))
        if op == "probe":
            return self._load_probe(str(doc["name"]), decode("source"))
        if op == "reload":
            return self.import_hook(None)
        target = self.exported(doc.get("handle"))
        name = doc.get("name")
        if op in ("getattr", "setattr", "delattr", "method") and not isinstance(name, str):
            raise ProtocolError("an attribute name that is not a string")
        if not self.serves_imports:
            _check_judge_policy(op, name)
        if op == "getattr":
            return getattr(target, name)
        if op == "setattr":
            setattr(target, name, decode("value"))
            return None
        if op == "delattr":
            delattr(target, name)
            return None
        if op == "call":
            args, kwargs = decode("args", []), decode("kwargs", {"dict": []})
            return target(*args, **kwargs)
        if op == "method":
            if name not in ALLOWED_DUNDERS:
                raise ProtocolError(f"method {name!r} is not allowed")
            method = getattr(type(target), name, None)
            if method is None:  # what Python itself raises: len() of a generator is a TypeError
                raise TypeError(f"{type(target).__name__!r} object does not support {name}")
            return method(target, *decode("args", []))
        if op == "isinstance":
            return isinstance(target, self.exported(doc.get("cls")))
        raise ProtocolError(f"unknown operation {op!r}")

    def _load_probe(self, name, source):
        """Trusted code the judge ships in: it exercises the solution here and returns data."""
        module = _ModuleType(f"sb_probe_{name}")
        module.__file__ = f"<probe {name}>"
        sys.modules[module.__name__] = module
        _exec(_compile(source, module.__file__, "exec"), module.__dict__)
        return module


FRAME_ATTRIBUTES = frozenset({"gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await",
                              "ag_frame", "ag_code", "ag_await", "f_globals", "f_locals", "f_back", "f_code",
                              "f_builtins", "tb_frame", "tb_next", "func_globals", "func_code"})
MUTATING_DUNDERS = frozenset({"__setitem__", "__delitem__"})


def _check_judge_policy(op, name):
    """What the worker may do to an object the judge handed over: call it and read its
    public data. Never a private name, never a way to a frame (a generator's frame holds
    the test's locals and globals), never a change."""
    if op in ("getattr", "setattr", "delattr") and (name.startswith("_") or name in FRAME_ATTRIBUTES):
        raise AttributeError(f"{name!r} is not readable from the solution's side")
    if op in ("setattr", "delattr") or (op == "method" and name in MUTATING_DUNDERS):
        raise AttributeError("the solution's side may not change the judge's objects")


def _as_exception(exc):
    if isinstance(exc, Exception):
        return exc
    return RuntimeError(f"{type(exc).__name__}: {clip(exc)}")


def _readable(fd, timeout_ms=0):
    """Whether bytes (or the end) wait on `fd`, polling up to `timeout_ms`."""
    if not hasattr(select, "poll"):  # a platform without poll(): select() serves for one low descriptor
        return bool(select.select([fd], [], [], timeout_ms / 1000)[0])
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(timeout_ms))
