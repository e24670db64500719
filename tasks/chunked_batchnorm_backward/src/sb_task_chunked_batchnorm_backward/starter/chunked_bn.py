"""Batch norm over a batch that only ever arrives one micro-batch at a time."""
import numpy as np


class ChunkedBatchNorm:
    """One batch: forward accumulate, forward apply, backward accumulate, backward apply."""

    def __init__(self, gamma, beta, eps=1e-5):
        raise NotImplementedError

    def forward_accumulate(self, x):
        raise NotImplementedError

    def forward_apply(self, x):
        raise NotImplementedError

    def backward_accumulate(self, x, dy):
        raise NotImplementedError

    def backward_apply(self, x, dy):
        raise NotImplementedError

    def grad_gamma(self):
        raise NotImplementedError

    def grad_beta(self):
        raise NotImplementedError
