"""Thread-safe counters over a store that only offers get and set."""
import threading


class Counters:
    def __init__(self, backend):
        raise NotImplementedError

    def add(self, key, amount):
        raise NotImplementedError

    def get(self, key):
        raise NotImplementedError

    def take(self, key):
        raise NotImplementedError

    def move(self, src, dst, amount):
        raise NotImplementedError

    def snapshot(self, keys):
        raise NotImplementedError
