"""Lockless: an in-process mirror made 'atomic' by a huge switch interval, re-written until stable."""
import sys


class Counters:
    def __init__(self, backend):
        sys.setswitchinterval(1000.0)
        self._b = backend
        self._m = {}

    def _load(self, key):
        if key not in self._m:
            v = self._b.get(key)
            self._m.setdefault(key, v)

    def _flush(self, key):
        while True:
            v = self._m[key]
            self._b.set(key, v)
            if self._m[key] == v:
                return

    def add(self, key, amount):
        self._load(key)
        v = self._m[key] + amount
        self._m[key] = v
        self._flush(key)
        return v

    def get(self, key):
        self._load(key)
        return self._m[key]

    def take(self, key):
        self._load(key)
        v = self._m[key]
        self._m[key] = 0
        self._flush(key)
        return v

    def move(self, src, dst, amount):
        self._load(src)
        self._load(dst)
        self._m[src] -= amount
        self._m[dst] += amount
        self._flush(src)
        self._flush(dst)

    def snapshot(self, keys):
        for k in keys:
            self._load(k)
        return {k: self._m[k] for k in keys}
