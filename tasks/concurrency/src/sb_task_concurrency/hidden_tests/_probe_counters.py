"""Runs in the solution's process: real threads driving one Counters over a yielding store.

The judge writes each thread's plan (a list of operations); this file runs the plans on
real threads released together, and returns what every call returned, the store's
final contents and whether anything raised or stopped making progress. No expected
value and no oracle lives here: the judge checks the observations.

Why a race is near certain here, for a wrong answer, however the OS schedules:
- the store sleeps inside every get and set (get both before and after it reads), as
  the prompt allows, for a jittered time, so a read-modify-write of the store is always
  interrupted and other threads' calls land at every offset inside it;
- a tracer sleeps at every line the solution's own file executes, and at a seeded
  fraction of its bytecodes. A sleeping thread is off the CPU with the GIL free, so
  another released thread runs inside that gap. This turns every gap in a wrong
  answer (between releasing a lock and taking it again, between two lock
  acquisitions, between reading a value and writing it back) into a window that other
  threads do enter, instead of one a few nanoseconds wide that they almost never hit.
Sleeping never changes what a correct implementation computes: each yield is one of
the interleavings the OS could produce anyway.
"""

import random
import sys
import threading
import time

import counters
from counters import Counters

STORE_PAUSES_S = (0.00001, 0.00001, 0.00001, 0.00001, 0.0005)
TRACE_PAUSE_S = 0.00002
OPCODE_YIELD_P = 0.1
# A deadlock detector, not a timing check: a correct run completes an operation every
# few milliseconds even on a loaded machine, so ten seconds without any completed
# operation while threads are still running means they are stuck.
STALL_S = 10.0


class YieldingStore:
    """A dict behind get/set that gives up the CPU inside every call, for a jittered
    time: mostly short, one call in five long (seeded per thread). The jitter matters
    for gaps that sit just outside a lock (a read-back after releasing it, say): with
    equal pauses the next lock holder's write would never land inside such a gap."""

    def __init__(self, initial=None, seed=0):
        self.data = dict(initial or {})
        self._seed = seed
        self._local = threading.local()

    def _pause(self):
        rng = getattr(self._local, "rng", None)
        if rng is None:
            rng = self._local.rng = random.Random(f"store/{self._seed}/{threading.current_thread().name}")
        time.sleep(rng.choice(STORE_PAUSES_S))

    def get(self, key):
        self._pause()
        value = self.data.get(key, 0)
        self._pause()
        return value

    def set(self, key, value):
        self._pause()
        self.data[key] = value


class _Tracer:
    """sys.settrace for the worker threads: sleeps at the solution's lines and, with a
    seeded probability per thread, at its bytecodes."""

    def __init__(self, seed):
        self._file = counters.__file__
        self._seed = seed
        self._local = threading.local()
        self.yields = 0

    def _rng(self):
        rng = getattr(self._local, "rng", None)
        if rng is None:
            rng = self._local.rng = random.Random(f"{self._seed}/{threading.current_thread().name}")
        return rng

    def __call__(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename == self._file:
            frame.f_trace_opcodes = True
            return self._local_trace
        return None

    def _local_trace(self, frame, event, arg):
        if event == "line" or (event == "opcode" and self._rng().random() < OPCODE_YIELD_P):
            self.yields += 1
            time.sleep(TRACE_PAUSE_S)
        return self._local_trace


def _call(c, op):
    kind = op[0]
    if kind == "add":
        return c.add(op[1], op[2])
    if kind == "get":
        return c.get(op[1])
    if kind == "take":
        return c.take(op[1])
    if kind == "move":
        return c.move(op[1], op[2], op[3])
    if kind == "snapshot":
        return c.snapshot(list(op[1]))
    raise ValueError(f"unknown operation {kind!r}")


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def run(plans, initial=None, seed=0):
    """Run each plan on its own thread over one Counters on one YieldingStore.

    Returns results[i][j], what operation j of thread i returned (or "error: ..."),
    the type name of each returned value, the store's final contents, and whether the
    threads stopped making progress."""
    store = YieldingStore(initial, seed)
    c = Counters(store)
    n = len(plans)
    barrier = threading.Barrier(n)
    results = [[] for _ in range(n)]
    types = set()
    failures = []
    progress = [0]
    tracer = _Tracer(seed)

    def body(i):
        try:
            barrier.wait()
            for op in plans[i]:
                try:
                    value = _call(c, op)
                except Exception as exc:  # reported; the judge fails the test on it
                    value = f"error: {type(exc).__name__}: {exc}"
                types.add(type(value).__name__ if not isinstance(value, dict) else
                          "dict:" + ",".join(sorted({type(v).__name__ for v in value.values()})))
                results[i].append(_plain(value))
                progress[0] += 1
        except BaseException as exc:
            failures.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=body, args=(i,), name=f"t{i}", daemon=True) for i in range(n)]
    # A new thread installs the hook only after start() has returned, so the hook stays
    # set until the threads are done.
    threading.settrace(tracer)
    try:
        for t in threads:
            t.start()
        last, last_change = -1, time.monotonic()
        while any(t.is_alive() for t in threads):
            time.sleep(0.02)
            if progress[0] != last:
                last, last_change = progress[0], time.monotonic()
            elif time.monotonic() - last_change > STALL_S:
                break
    finally:
        threading.settrace(None)
    stuck = sum(t.is_alive() for t in threads)
    return {"results": results, "types": sorted(types), "store": _plain(dict(store.data)),
            "failures": failures, "stuck": stuck, "yields": tracer.yields}
