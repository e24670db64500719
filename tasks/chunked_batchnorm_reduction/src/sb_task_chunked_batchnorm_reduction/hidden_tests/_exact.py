"""Ground truth by brute force: correctly rounded sums (math.fsum) over the whole batch."""
import math

import numpy as np

C = 3


def exact_mean_m2(rows):
    """Per-column mean and sum of squared deviations of the concatenated rows."""
    rows = np.asarray(rows, dtype=np.float64)
    n = rows.shape[0]
    means = np.array([math.fsum(rows[:, j]) / n for j in range(rows.shape[1])])
    m2 = np.array([math.fsum((rows[:, j] - means[j]) ** 2) for j in range(rows.shape[1])])
    return means, m2


def make_rows(seed, n, offset=0.0):
    """Rows with per-channel scales 0.5, 1, 2 sitting on a common offset."""
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=C)
    return offset + centre + rng.normal(size=(n, C)) * np.array([0.5, 1.0, 2.0])


def split(rows, sizes):
    assert sum(sizes) == rows.shape[0]
    edges = np.cumsum([0] + list(sizes))
    return [rows[a:b] for a, b in zip(edges[:-1], edges[1:])]
