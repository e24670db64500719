"""Batch-norm statistics from micro-batches, merged in one pass."""
from typing import Iterable, NamedTuple

import numpy as np


class Moments(NamedTuple):
    """Per-channel running moments of the rows seen so far."""

    count: int
    mean: np.ndarray  # (C,) float64
    m2: np.ndarray  # (C,) float64, sum of squared deviations from `mean`


def chunk_moments(x) -> Moments:
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=0)
    # Deviations from the chunk's own mean: E[x^2] - E[x]^2 would cancel every digit
    # when the data sit on a large common offset.
    m2 = ((x - mean) ** 2).sum(axis=0)
    return Moments(x.shape[0], mean, m2)


def merge_moments(a: Moments, b: Moments) -> Moments:
    count = a.count + b.count
    delta = b.mean - a.mean
    mean = a.mean + delta * (b.count / count)
    m2 = a.m2 + b.m2 + delta**2 * (a.count * b.count / count)
    return Moments(count, mean, m2)


def batch_moments(chunks: Iterable) -> Moments:
    # Read the iterable once, keep every chunk, then two stable passes over the whole batch.
    parts = [np.asarray(c, dtype=np.float64) for c in chunks]
    if not parts:
        raise ValueError("batch_moments needs at least one chunk")
    rows = np.concatenate(parts, axis=0)
    mean = rows.mean(axis=0)
    m2 = ((rows - mean) ** 2).sum(axis=0)
    return Moments(int(rows.shape[0]), mean, m2)


def batchnorm_train_step(chunks, gamma, beta, running_mean, running_var, momentum=0.1, eps=1e-5):
    chunks = [np.asarray(c, dtype=np.float64) for c in chunks]
    stats = batch_moments(chunks)
    if stats.count < 2:
        raise ValueError("batch norm in training needs at least two rows per channel")
    biased = stats.m2 / stats.count
    unbiased = stats.m2 / (stats.count - 1)
    inv_std = 1.0 / np.sqrt(biased + eps)
    outputs = [(c - stats.mean) * inv_std * gamma + beta for c in chunks]
    new_mean = (1.0 - momentum) * np.asarray(running_mean) + momentum * stats.mean
    new_var = (1.0 - momentum) * np.asarray(running_var) + momentum * unbiased
    return outputs, new_mean, new_var
