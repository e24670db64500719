"""A yielding store and a thread runner for the concurrency tests."""
import threading
import time

# Why races are near certain here, even on a single CPU:
# every get() and set() of this store sleeps briefly (get() both before and
# after it reads). A sleeping thread is not
# runnable, so the OS must run another of the (up to 49) other threads that a
# barrier released at the same instant, and the GIL is free while it sleeps. A
# read-modify-write that is not under one lock therefore has another thread start
# its own read-modify-write of the same key inside its window on practically
# every operation; across 1,000 operations on three keys, the chance that no
# update is lost is negligible. More CPUs only add true parallelism. A correct
# implementation is exact however the threads are scheduled, and no assertion
# depends on how long anything takes.
PAUSE_S = 0.0001


class YieldingStore:
    """A dict behind get/set that gives up the CPU inside every call."""

    def __init__(self):
        self.data = {}

    def get(self, key):
        time.sleep(PAUSE_S)
        value = self.data.get(key, 0)
        time.sleep(PAUSE_S)
        return value

    def set(self, key, value):
        time.sleep(PAUSE_S)
        self.data[key] = value


# A hang guard, not a timing check: every test here finishes in about a second
# even on a loaded machine,
# so a thread still running after this long is deadlocked.
HANG_GUARD_S = 30


def run_threads(targets):
    """Start every callable on its own real thread, release them together, join."""
    barrier = threading.Barrier(len(targets))
    errors = []

    def wrap(fn):
        def body():
            try:
                barrier.wait()
                fn()
            except BaseException as exc:  # reported by the assertion below
                errors.append(exc)
        return body

    threads = [threading.Thread(target=wrap(fn), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    give_up_at = time.monotonic() + HANG_GUARD_S
    for t in threads:
        t.join(max(0.0, give_up_at - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "threads deadlocked"
    assert not errors, f"{len(errors)} thread(s) raised, first: {errors[0]!r}"
