"""A bounded key/value cache for sliding-window attention with attention sinks."""
import numpy as np


def apply_rotary(x, positions, base=10000.0):
    raise NotImplementedError


class SlidingWindowCache:
    def __init__(self, n_heads, head_dim, window, num_sinks, max_rewind=0, rope_base=10000.0):
        raise NotImplementedError

    def step(self, q, k, v):
        raise NotImplementedError

    def rewind(self, n):
        raise NotImplementedError

    def state(self):
        raise NotImplementedError

    def load_state(self, state):
        raise NotImplementedError
