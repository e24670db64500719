"""Runs in the solution's process: threads that meet a key nobody has used, together.

A race in state the solution makes on a key's first use (a per-key lock created by an
unguarded check-then-set) has a window of a few bytecodes that holds no store call, so
the judge's delays cannot widen it, and the judge's threads cannot start calls together
closely enough to enter it: their calls reach this process one frame at a time. Here,
the threads wait on one barrier per round and call `add(key, 1)` the moment it opens,
and a tracer on each of them pauses it, now and then, between two bytecodes of the
solution's own code (Python may switch threads between any two; the tracer makes it
happen where the interpreter rarely does), so the threads interleave inside such a
window. It only widens windows: a solution that switches the tracer off is graded as
the judge-driven tests grade it.

This file holds no expected value: the keys and the number of threads come from the
judge, the store is the judge's (the solution got it as a facade), and the judge checks
the store's final contents and what each add returned.
"""
import os
import random
import sys
import threading
import time

# A pause at one bytecode in five, drawn per thread from a seeded generator: long enough
# (about ten wire round trips when idle) that the other released threads run meanwhile,
# at most PAUSES_PER_ADD per call, so that a correct solution's run stays short however
# much code it runs (8 threads x 20 rounds x 40 x 0.5 ms is under 4 s even serialised).
PAUSES_S = (0.0, 0.0, 0.0, 0.0, 0.0005)
PAUSES_PER_ADD = 40


def _solution_root(counters):
    module = sys.modules.get(type(counters).__module__)
    path = getattr(module, "__file__", None)
    return os.path.dirname(os.path.abspath(path)) + os.sep if path else os.getcwd() + os.sep


class _Pauser:
    """A thread's tracer: it traces only frames of the solution's files, opcode by opcode."""

    def __init__(self, root, seed):
        self.root, self.rng, self.left = root, random.Random(seed), 0

    def top(self, frame, event, arg):
        if not frame.f_code.co_filename.startswith(self.root):
            return None
        frame.f_trace_opcodes = True
        return self.local

    def local(self, frame, event, arg):
        if event == "opcode" and self.left > 0:
            pause = self.rng.choice(PAUSES_S)
            if pause:
                self.left -= 1
                time.sleep(pause)
        return self.local


def _observed(value):
    """What add returned, as data: an int, or a description of anything else."""
    return value if type(value) is int else f"not an int: {type(value).__name__}"


def add_together(counters, keys, n_threads, seed):
    """For each key in turn, n_threads threads released at once each call add(key, 1).
    Returns what every call returned ({"results": [per thread, per key]}) and what
    stopped a thread early ("failures")."""
    root = _solution_root(counters)
    barrier = threading.Barrier(n_threads)
    results = [[] for _ in range(n_threads)]
    failures = []

    def body(index):
        pauser = _Pauser(root, f"first-use/{seed}/{index}")
        sys.settrace(pauser.top)
        try:
            for key in keys:
                barrier.wait()
                pauser.left = PAUSES_PER_ADD
                try:
                    value = _observed(counters.add(key, 1))
                except Exception as exc:  # reported; the test fails on it
                    value = f"error: {type(exc).__name__}: {exc}"
                pauser.left = 0
                results[index].append(value)
        except BaseException as exc:
            failures.append(f"{type(exc).__name__}: {exc}")
            barrier.abort()  # the other threads stop at the next round instead of waiting
        finally:
            sys.settrace(None)

    threads = [threading.Thread(target=body, args=(i,), name=f"first-use-{i}", daemon=True)
               for i in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"results": [list(per) for per in results], "failures": list(failures)}
