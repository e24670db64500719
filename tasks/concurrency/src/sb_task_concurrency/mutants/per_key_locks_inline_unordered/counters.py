"""Thread-safe counters over a store that only offers get and set."""
import threading
from collections import defaultdict


class Counters:
    def __init__(self, backend):
        self._backend = backend
        self._locks = defaultdict(threading.Lock)
        self._all = threading.Lock()

    def add(self, key, amount):
        with self._locks[key]:
            value = self._backend.get(key) + amount
            self._backend.set(key, value)
            return value

    def get(self, key):
        with self._locks[key]:
            return self._backend.get(key)

    def take(self, key):
        with self._locks[key]:
            value = self._backend.get(key)
            self._backend.set(key, 0)
            return value

    def move(self, src, dst, amount):
        with self._locks[src], self._locks[dst]:
            self._backend.set(src, self._backend.get(src) - amount)
            self._backend.set(dst, self._backend.get(dst) + amount)

    def snapshot(self, keys):
        with self._all:
            held = []
            try:
                for key in sorted(set(keys)):
                    self._locks[key].acquire()
                    held.append(key)
                return {key: self._backend.get(key) for key in keys}
            finally:
                for key in held:
                    self._locks[key].release()
