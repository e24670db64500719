"""Thread-safe counters over a store that only offers get and set."""
import threading
from contextlib import ExitStack


class Counters:
    def __init__(self, backend):
        self._backend = backend
        self._locks = {}
        self._locks_guard = threading.Lock()

    def _lock(self, key):
        with self._locks_guard:
            return self._locks.setdefault(key, threading.Lock())

    def add(self, key, amount):
        with self._lock(key):
            value = self._backend.get(key) + amount
            self._backend.set(key, value)
            return value

    def get(self, key):
        with self._lock(key):
            return self._backend.get(key)

    def take(self, key):
        with self._lock(key):
            value = self._backend.get(key)
            self._backend.set(key, 0)
            return value

    def move(self, src, dst, amount):
        first, second = sorted((src, dst))
        with self._lock(first), self._lock(second):
            self._backend.set(src, self._backend.get(src) - amount)
            self._backend.set(dst, self._backend.get(dst) + amount)

    def snapshot(self, keys):
        with ExitStack() as stack:
            for key in dict.fromkeys(keys):
                stack.enter_context(self._lock(key))
            return {key: self._backend.get(key) for key in keys}
