"""Batch norm over a batch that arrives one micro-batch at a time."""
import numpy as np


class ChunkedBatchNorm:
    """Collects every chunk it is handed and computes whole-batch batch norm from them."""

    def __init__(self, gamma, beta, eps=1e-5):
        self.gamma = np.asarray(gamma, dtype=np.float64)
        self.beta = np.asarray(beta, dtype=np.float64)
        self.eps = eps
        self._xs = []       # every chunk of pass 1
        self._dys = []      # every dy of pass 3
        self._xhats = []    # x_hat of the same rows, pass 3
        self._stats = None

    def forward_accumulate(self, x):
        self._xs.append(np.array(x, dtype=np.float64, copy=True))
        self._stats = None

    def _statistics(self):
        if self._stats is None:
            batch = np.concatenate(self._xs)
            mean = batch.mean(axis=0)
            var = ((batch - mean) ** 2).mean(axis=0)
            self._stats = (mean, 1.0 / np.sqrt(var + self.eps), batch.shape[0])
        return self._stats

    def _normalise(self, x):
        mean, inv_std, _ = self._statistics()
        return (np.asarray(x, dtype=np.float64) - mean) * inv_std

    def forward_apply(self, x):
        return self._normalise(x) * self.gamma + self.beta

    def backward_accumulate(self, x, dy):
        self._xhats.append(self._normalise(x))
        self._dys.append(np.array(dy, dtype=np.float64, copy=True))

    def backward_apply(self, x, dy):
        _, inv_std, n = self._statistics()
        all_dy, all_xhat = np.concatenate(self._dys), np.concatenate(self._xhats)
        x_hat = self._normalise(x)
        dy = np.asarray(dy, dtype=np.float64)
        return self.gamma * inv_std * (dy - all_dy.mean(axis=0) - x_hat * (all_dy * all_xhat).mean(axis=0))

    def grad_gamma(self):
        return (np.concatenate(self._dys) * np.concatenate(self._xhats)).sum(axis=0)

    def grad_beta(self):
        return np.concatenate(self._dys).sum(axis=0)
