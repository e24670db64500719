"""Thread-safe counters over a store that only offers get and set."""
import threading


class Counters:
    def __init__(self, backend):
        self._backend = backend
        # One lock for every key: move and snapshot span several keys, and a
        # single lock makes them atomic without any lock-ordering deadlock.
        self._lock = threading.Lock()
        self._cache = {}

    def add(self, key, amount):
        with self._lock:
            value = self._cache.get(key, 0) + amount
            self._cache[key] = value
            self._backend.set(key, value)
            return value

    def get(self, key):
        with self._lock:
            return self._cache.get(key, 0)

    def take(self, key):
        with self._lock:
            value = self._cache.get(key, 0)
            self._cache[key] = 0
            self._backend.set(key, 0)
            return value

    def move(self, src, dst, amount):
        with self._lock:
            for key, delta in ((src, -amount), (dst, amount)):
                self._cache[key] = self._cache.get(key, 0) + delta
                self._backend.set(key, self._cache[key])

    def snapshot(self, keys):
        with self._lock:
            return {key: self._cache.get(key, 0) for key in keys}
