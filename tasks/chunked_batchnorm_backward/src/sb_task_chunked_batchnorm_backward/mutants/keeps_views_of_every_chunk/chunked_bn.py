"""Batch norm over a batch that arrives one micro-batch at a time."""
import numpy as np


class ChunkedBatchNorm:
    """Remembers the chunks it is handed (the caller's own arrays, never modified) and reads
    the whole batch back from them when it needs whole-batch sums."""

    def __init__(self, gamma, beta, eps=1e-5):
        self.gamma = np.asarray(gamma, dtype=np.float64)
        self.beta = np.asarray(beta, dtype=np.float64)
        self.eps = eps
        self._xs = []       # the caller's chunks of pass 1, as handed (views, no copy)
        self._pairs = []    # the caller's (x, dy) chunks of pass 3

    def forward_accumulate(self, x):
        self._xs.append(x)

    def _statistics(self):
        batch = np.concatenate(self._xs).astype(np.float64)
        mean = batch.mean(axis=0)
        var = ((batch - mean) ** 2).mean(axis=0)
        return mean, 1.0 / np.sqrt(var + self.eps), batch.shape[0]

    def forward_apply(self, x):
        mean, inv_std, _ = self._statistics()
        return (np.asarray(x, dtype=np.float64) - mean) * inv_std * self.gamma + self.beta

    def backward_accumulate(self, x, dy):
        self._pairs.append((x, dy))

    def _sums(self):
        mean, inv_std, _ = self._statistics()
        sum_dy = np.zeros_like(mean)
        sum_dy_xhat = np.zeros_like(mean)
        for x, dy in self._pairs:
            dy = np.asarray(dy, dtype=np.float64)
            sum_dy = sum_dy + dy.sum(axis=0)
            sum_dy_xhat = sum_dy_xhat + (dy * ((np.asarray(x, dtype=np.float64) - mean) * inv_std)).sum(axis=0)
        return sum_dy, sum_dy_xhat

    def backward_apply(self, x, dy):
        mean, inv_std, n = self._statistics()
        sum_dy, sum_dy_xhat = self._sums()
        x_hat = (np.asarray(x, dtype=np.float64) - mean) * inv_std
        dy = np.asarray(dy, dtype=np.float64)
        return self.gamma * inv_std * (dy - sum_dy / n - x_hat * (sum_dy_xhat / n))

    def grad_gamma(self):
        return self._sums()[1]

    def grad_beta(self):
        return self._sums()[0]
