"""Who reads the wire (sb/grading/wire/reading.py): a judge thread waiting for its answer
reads it itself until the judge hands the worker an object, then a reader thread reads
for everyone (and the main thread stops reading once a signal handler is set); concurrent
judge threads each get their own answers either way; a waiting thread interrupted leaves
the wire whole and nobody stuck. A real worker process serves."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import types

import pytest

import sb
from sb.grading import wire

SOLUTION = textwrap.dedent("""
    import threading, time
    def double(x):
        return 2 * x
    def slow(x, seconds):
        time.sleep(seconds)
        return x
    def apply(callback, x):
        return callback(x) + 1
    box = []
    def put(x):
        box.append(x)
    def take(seconds):
        deadline = time.monotonic() + seconds
        while not box and time.monotonic() < deadline:
            time.sleep(0.005)
        return box.pop() if box else None
""")

WORKER = textwrap.dedent("""
    import sys, types
    sys.path.insert(0, sys.argv[2])
    from sb.grading import wire
    fd = int(sys.argv[1])
    module = types.ModuleType("solution")
    exec(sys.argv[3], module.__dict__)
    peer = wire.Peer(fd, fd, serves_imports=True)
    peer.import_hook = lambda name: module
    peer.start_reader().join()
""")


@pytest.fixture
def judge_side():
    """A judge-side peer talking to a real worker process; yields (peer, module, violations)."""
    mine, theirs = socket.socketpair()
    harness_src = os.path.dirname(os.path.dirname(sb.__file__))
    worker = subprocess.Popen([sys.executable, "-c", WORKER, str(theirs.fileno()), harness_src, SOLUTION],
                              pass_fds=(theirs.fileno(),))
    theirs.close()
    violations: list = []
    fd = mine.fileno()
    peer = wire.Peer(fd, fd, serves_imports=False, on_violation=violations.append)
    peer.start_reader()
    module = peer.request("import", name="solution")
    yield peer, module, violations
    mine.shutdown(socket.SHUT_RDWR)  # wakes this side's reader thread too, blocked on the socket
    mine.close()
    worker.wait(timeout=10)


def _reader_threads() -> list:
    return [t for t in threading.enumerate() if t.name == "sb-wire-reader"]


def test_a_judge_thread_reads_its_own_answers_until_it_hands_an_object_over(judge_side):
    peer, module, violations = judge_side
    assert peer.reader is None and not _reader_threads()
    assert [module.double(n) for n in range(20)] == [2 * n for n in range(20)]
    assert peer.reader is None  # still no reader: each answer was read by the thread that asked
    assert module.apply(lambda x: x * 10, 4) == 41  # a judge object handed over: the worker may call it
    assert peer.reader is not None and peer.reader.is_alive()
    assert [module.double(n) for n in range(5)] == [0, 2, 4, 6, 8]
    assert violations == []


@pytest.mark.parametrize("hand_over_first", [False, True])
def test_concurrent_judge_threads_each_get_their_own_answers(judge_side, hand_over_first):
    peer, module, violations = judge_side
    if hand_over_first:
        assert module.apply(lambda x: x, 1) == 2
    results: dict = {}

    def ask(n):
        results[n] = [module.slow(n * 100 + i, 0.002 * ((n + i) % 4)) for i in range(6)]
    threads = [threading.Thread(target=ask, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert results == {n: [n * 100 + i for i in range(6)] for n in range(8)}
    assert violations == []
    assert (peer.reader is not None) == hand_over_first


def test_one_judge_thread_waits_on_the_worker_while_another_thread_unblocks_it(judge_side):
    """The waiting thread holds the reading role, blocked on the wire, while the second
    thread's answer arrives: it reads that answer too and hands it over."""
    peer, module, violations = judge_side
    taken: list = []
    waiter = threading.Thread(target=lambda: taken.append(module.take(10)))
    waiter.start()
    time.sleep(0.1)
    module.put(7)
    waiter.join(timeout=30)
    assert taken == [7] and violations == []


class _Interrupted(Exception):
    pass


def _signal_module():
    """The signal module's functions on an object of their own, so the peer wraps this one's
    `signal` and not the test process's; it reports no handler set before (this process's
    own, left by other tests, would decide otherwise: an in-process `sb` command's, say)."""
    return types.SimpleNamespace(signal=signal.signal, getsignal=lambda number: signal.SIG_DFL,
                                 valid_signals=signal.valid_signals, default_int_handler=signal.default_int_handler)


def test_once_a_signal_handler_is_set_the_main_thread_leaves_reading_to_the_reader(judge_side):
    """A handler may raise anywhere in the main thread, also halfway through a frame: from the
    first one set, a reader thread reads. The handler's exception reaches the test, the late
    answer is dropped, not taken for a violation, and the next call gets its own answer."""
    peer, module, violations = judge_side
    signals = _signal_module()
    peer.watch_signal_handlers(signals)
    assert peer.reader is None  # no Python handler is set yet (SIGINT's own raises only to end the run)

    def interrupt(signum, frame):
        raise _Interrupted()
    previous = signals.signal(signal.SIGALRM, interrupt)
    assert peer.reader is not None and peer.reader.is_alive()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(_Interrupted):
            module.slow("late", 0.3)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert module.slow("next", 0.4) == "next"  # the late answer arrives while this one waits
    assert [module.double(n) for n in range(3)] == [0, 2, 4]
    assert violations == [] and peer.closed is None


def test_a_thread_waiting_its_turn_to_read_and_interrupted_leaves_the_queue(judge_side):
    """The main thread queues for the role another thread holds, and Ctrl-C's KeyboardInterrupt
    takes it away: the role must not later be handed to it, or nobody would read. The signal
    is sent only once the main thread is seen queued, inside a call far longer than that."""
    peer, module, violations = judge_side
    assert threading.current_thread() is threading.main_thread()  # where SIGINT's KeyboardInterrupt lands
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # an in-process `sb` command leaves its own
    try:
        _interrupted_while_queued(peer, module)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert violations == []


def _interrupted_while_queued(peer, module):
    answers: list = []
    other = threading.Thread(target=lambda: answers.extend(module.slow(n, 1.0 if n == 0 else 0.01) for n in range(4)))
    other.start()
    while peer.role.holder is None:  # the other thread holds the role, reading, before the main thread asks
        time.sleep(0.01)
    main_inbox = peer._queue(peer.conversation())

    def queued():
        with peer.role.lock:
            return main_inbox in peer.role.candidates

    def interrupt_once_queued():
        while not queued():  # (or reading: a loaded machine may run this thread only after the hand-over)
            with peer.role.lock:
                if peer.role.holder is main_inbox:
                    break
            time.sleep(0.005)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
    threading.Thread(target=interrupt_once_queued, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        module.slow("interrupted", 2.5)  # far longer than the other call: the signal lands inside it
    assert not queued() and peer.role.holder is not main_inbox
    other.join(timeout=20)
    assert answers == [0, 1, 2, 3]
    assert module.double(21) == 42


def test_a_handler_raising_just_after_a_read_loses_no_other_threads_answer(judge_side):
    """Were the main thread reading, a handler raising the moment os.read returned (the main
    thread waiting for the GIL a test thread holds in a long C call) would drop the bytes
    it read: here another thread's answer, which would then never come."""
    peer, module, violations = judge_side
    signals = _signal_module()
    peer.watch_signal_handlers(signals)

    def interrupt(signum, frame):
        raise _Interrupted()
    previous = signals.signal(signal.SIGALRM, interrupt)
    got: list = []
    other = threading.Thread(target=lambda: got.append(module.slow("other", 0.25)))
    threading.Timer(0.05, other.start).start()
    threading.Timer(0.2, lambda: sum(range(3 * 10**7))).start()  # holds the GIL about 0.4 s, in C
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.4)  # the other answer comes at ~0.3 s; the GIL is free at ~0.6 s
        with pytest.raises(_Interrupted):
            module.slow("main", 2.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    other.join(timeout=5)
    assert got == ["other"]
    assert module.slow("next", 0.0) == "next"
    assert violations == []


def test_an_exception_put_into_a_waiting_thread_reaches_it_and_the_wire_goes_on(judge_side):
    """Another thread may bound a call by putting an exception into the calling thread (as
    thread-based timeouts do): it lands while the caller waits for bytes, nothing read is
    lost, the late answer is dropped and every later call gets its own answer."""
    import ctypes
    peer, module, violations = judge_side
    outcome: list = []

    def call():
        try:
            outcome.append(module.slow("late", 1.5))
        except _Interrupted:
            outcome.append("interrupted")
    caller = threading.Thread(target=call)
    caller.start()
    while peer.role.holder is None:  # the caller holds the role, waiting for its answer
        time.sleep(0.01)
    started = time.monotonic()
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(caller.ident), ctypes.py_object(_Interrupted))
    caller.join(timeout=10)
    assert outcome == ["interrupted"] and time.monotonic() - started < 1.2  # not when the answer came
    assert module.slow("next", 2.0) == "next"  # the late answer arrives while this one waits
    assert [module.double(n) for n in range(3)] == [0, 2, 4]
    assert violations == [] and peer.closed is None


@pytest.mark.parametrize("with_poll", [True, False])  # macOS builds may lack select.poll
def test_a_waiting_thread_sees_bytes_arrive_with_or_without_poll(monkeypatch, with_poll):
    from sb.grading.wire import peer as peer_module
    if not with_poll:
        monkeypatch.delattr(peer_module.select, "poll", raising=False)
    read_fd, write_fd = os.pipe()
    try:
        started = time.monotonic()
        assert not peer_module._readable(read_fd, 50)
        assert time.monotonic() - started >= 0.04  # it waited its slice
        os.write(write_fd, b"x")
        assert peer_module._readable(read_fd, 50)
    finally:
        os.close(read_fd)
        os.close(write_fd)
