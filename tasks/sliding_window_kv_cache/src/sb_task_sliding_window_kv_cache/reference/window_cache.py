"""A bounded key/value cache for sliding-window attention with attention sinks."""
import numpy as np


def apply_rotary(x, positions, base=10000.0):
    """Rotate channel i with channel i + D/2 by the angle position * base ** (-2 i / D)."""
    d = x.shape[-1]
    half = d // 2
    theta = base ** (-2.0 * np.arange(half) / d)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * theta
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)


class SlidingWindowCache:
    def __init__(self, n_heads, head_dim, window, num_sinks, max_rewind=0, rope_base=10000.0):
        self.n_heads = n_heads
        self.head_dim = head_dim
        self.window = window
        self.num_sinks = num_sinks
        self.max_rewind = max_rewind
        self.rope_base = rope_base
        self._k = np.zeros((n_heads, 0, head_dim))
        self._v = np.zeros((n_heads, 0, head_dim))
        self._pos = np.zeros(0, dtype=np.int64)
        self._seen = 0
        self._rewindable = 0

    def step(self, q, k, v):
        q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
        qpos = np.arange(self._seen, self._seen + q.shape[1], dtype=np.int64)
        keys = np.concatenate([self._k, apply_rotary(k, qpos, self.rope_base)], axis=1)
        values = np.concatenate([self._v, v], axis=1)
        kpos = np.concatenate([self._pos, qpos])
        # Every query attends before anything is dropped: the chunk's own keys are all here.
        out = _attend(apply_rotary(q, qpos, self.rope_base), keys, values, qpos, kpos,
                      self.window, self.num_sinks)
        self._seen += q.shape[1]
        self._rewindable = min(self.max_rewind, q.shape[1])
        self._keep(keys, values, kpos)
        return out

    def rewind(self, n):
        self._seen -= n
        self._rewindable = 0
        self._keep(self._k, self._v, self._pos)

    def state(self):
        return {"k": self._k.copy(), "v": self._v.copy(), "pos": self._pos.copy(),
                "seen": self._seen, "rewindable": self._rewindable}

    def load_state(self, state):
        self._k = np.array(state["k"], dtype=np.float64)
        self._v = np.array(state["v"], dtype=np.float64)
        self._pos = np.array(state["pos"], dtype=np.int64)
        self._seen = int(state["seen"])
        self._rewindable = int(state["rewindable"])

    def _keep(self, keys, values, kpos):
        """Keep exactly the keys a query of some later call could attend to.

        The next step starts at a length L anywhere from seen - rewindable to seen (a
        rewind may come first). A key j < L outside the sinks is seen by some query at
        position >= L only if L - window < j, i.e. L lies in [j + 1, j + window - 1]:
        an interval that is empty when window is 1."""
        shortest = self._seen - self._rewindable
        in_window = np.maximum(kpos + 1, shortest) <= np.minimum(kpos + self.window - 1, self._seen)
        sink = (kpos < self.num_sinks) & (kpos < self._seen)
        keep = in_window | sink
        self._k, self._v, self._pos = keys[:, keep], values[:, keep], kpos[keep]


def _attend(q, k, v, qpos, kpos, window, num_sinks):
    causal = kpos[None, :] <= qpos[:, None]
    visible = causal & ((qpos[:, None] - kpos[None, :] < window) | (kpos[None, :] < num_sinks))
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    scores = np.where(visible, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v
