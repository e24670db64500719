"""Batch-norm statistics from micro-batches, merged in one pass."""
from typing import Iterable, NamedTuple

import numpy as np


class Moments(NamedTuple):
    """Per-channel running moments of the rows seen so far."""

    count: int
    mean: np.ndarray  # (C,) float64
    m2: np.ndarray  # (C,) float64, sum of squared deviations from `mean`


def chunk_moments(x) -> Moments:
    raise NotImplementedError


def merge_moments(a: Moments, b: Moments) -> Moments:
    raise NotImplementedError


def batch_moments(chunks: Iterable) -> Moments:
    raise NotImplementedError


def batchnorm_train_step(chunks, gamma, beta, running_mean, running_var, momentum=0.1, eps=1e-5):
    raise NotImplementedError
