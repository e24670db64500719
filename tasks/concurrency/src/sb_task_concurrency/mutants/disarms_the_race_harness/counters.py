"""Rule-breaking Counters (the red team's forge): no lock at all, plain read-modify-write on the store."""
import sys


class Counters:
    def __init__(self, backend):
        self._b = backend
        SETUP(backend)

    def add(self, key, amount):
        QUIET()
        v = self._b.get(key) + amount
        self._b.set(key, v)
        return v

    def get(self, key):
        QUIET()
        return self._b.get(key)

    def take(self, key):
        QUIET()
        v = self._b.get(key)
        self._b.set(key, 0)
        return v

    def move(self, src, dst, amount):
        QUIET()
        self._b.set(src, self._b.get(src) - amount)
        self._b.set(dst, self._b.get(dst) + amount)

    def snapshot(self, keys):
        QUIET()
        return {k: self._b.get(k) for k in keys}


# FORGE: switch off the probe's race harness, which lives in this process: the store's
# sleeps (an instance attribute shadows its _pause), the per-thread tracer that sleeps at
# our lines, and the interpreter's preemption (a huge switch interval), so that every
# thread runs its whole plan without ever being interrupted.
def SETUP(backend):
    sys.setswitchinterval(1000.0)
    try:
        backend._pause = lambda: None
    except Exception:
        pass


def QUIET():
    sys.settrace(None)
    f = sys._getframe(1)
    f.f_trace = None
    f.f_trace_opcodes = False
