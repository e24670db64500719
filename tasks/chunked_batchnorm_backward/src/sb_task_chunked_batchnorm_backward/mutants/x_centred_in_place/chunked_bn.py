"""Batch norm over a batch that only ever arrives one micro-batch at a time."""
import numpy as np


class ChunkedBatchNorm:
    """One batch: forward accumulate, forward apply, backward accumulate, backward apply."""

    def __init__(self, gamma, beta, eps=1e-5):
        self.gamma = np.asarray(gamma, dtype=np.float64)
        self.beta = np.asarray(beta, dtype=np.float64)
        self.eps = eps
        channels = self.gamma.shape[0]
        self._count = 0
        self._mean = np.zeros(channels)
        self._m2 = np.zeros(channels)
        self._sum_dy = np.zeros(channels)
        self._sum_dy_xhat = np.zeros(channels)

    def forward_accumulate(self, x):
        x = np.asarray(x, dtype=np.float64)
        n = x.shape[0]
        mean = x.mean(axis=0)
        m2 = ((x - mean) ** 2).sum(axis=0)
        total = self._count + n
        delta = mean - self._mean
        self._mean = self._mean + delta * (n / total)
        self._m2 = self._m2 + m2 + delta**2 * (self._count * n / total)
        self._count = total

    def _normalise(self, x):
        inv_std = 1.0 / np.sqrt(self._m2 / self._count + self.eps)
        return (np.asarray(x, dtype=np.float64) - self._mean) * inv_std, inv_std

    def forward_apply(self, x):
        x = np.asarray(x, dtype=np.float64)
        _, inv_std = self._normalise(x)
        x -= self._mean
        x *= inv_std
        return x * self.gamma + self.beta

    def backward_accumulate(self, x, dy):
        x_hat, _ = self._normalise(x)
        dy = np.asarray(dy, dtype=np.float64)
        # The two whole-batch sums dx needs; no single chunk can supply them.
        self._sum_dy = self._sum_dy + dy.sum(axis=0)
        self._sum_dy_xhat = self._sum_dy_xhat + (dy * x_hat).sum(axis=0)

    def backward_apply(self, x, dy):
        x_hat, inv_std = self._normalise(x)
        dy = np.asarray(dy, dtype=np.float64)
        n = self._count
        return self.gamma * inv_std * (dy - self._sum_dy / n - x_hat * (self._sum_dy_xhat / n))

    def grad_gamma(self):
        return self._sum_dy_xhat.copy()

    def grad_beta(self):
        return self._sum_dy.copy()
