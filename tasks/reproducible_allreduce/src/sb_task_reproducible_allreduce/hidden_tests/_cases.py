"""Deterministic constructions of hard inputs (float32 shards), built in the judge."""
import numpy as np

F32 = np.float32
FLT_MAX = float(np.finfo(np.float32).max)


def ulp(t):
    """The spacing of float32 just above |t| (t a positive normal float32)."""
    t = F32(t)
    return float(np.nextafter(t, F32(np.inf)) - t)


def midpoint_columns(rng, n):
    """n columns (lists of floats) whose exact sum sits on, or within far less than a float64
    ulp of, a float32 rounding midpoint: t + ulp/2 (+ or - a tiny term, or exactly)."""
    columns = []
    for i in range(n):
        e = int(rng.integers(-90, 127))
        t = float(F32(np.ldexp(1.0 + rng.integers(0, 2**23) / 2**23, e)))
        half = ulp(t) / 2
        tiny_exp = int(rng.integers(max(-149, e - 120), e - 56))
        tiny = float(np.ldexp(1.0, tiny_exp)) * [1, -1, 0][i % 3]
        sign = 1.0 if rng.random() < 0.5 else -1.0
        column = [sign * t, sign * half] + ([tiny] if tiny else [])
        columns.append(column)
    return columns


def cancellation_columns(rng, n):
    """Columns where huge terms cancel exactly and what is left is small (or subnormal)."""
    columns = []
    for _ in range(n):
        big = [float(F32(rng.standard_normal() * np.ldexp(1.0, int(rng.integers(60, 127))))) for _ in range(3)]
        small = [float(F32(rng.standard_normal() * np.ldexp(1.0, int(rng.integers(-149, 20))))) for _ in range(2)]
        columns.append(big + [-b for b in big] + small)
    return columns


def wide_random_columns(rng, n, max_terms=9):
    """Random terms with exponents over the whole float32 range, mixed signs."""
    columns = []
    for _ in range(n):
        k = int(rng.integers(1, max_terms + 1))
        exps = rng.integers(-150, 126, k)
        columns.append([float(F32(rng.standard_normal() * np.ldexp(1.0, int(e)))) for e in exps])
    return columns


def to_shards(columns, rng, n_shards=None):
    """Scatter each column's terms over shards at random (zeros fill the rest), so the
    shards hold the same multiset of nonzero terms per element in shuffled positions."""
    width = max(len(c) for c in columns)
    k = n_shards or width
    assert k >= width
    out = np.zeros((k, len(columns)), dtype=F32)
    for j, column in enumerate(columns):
        rows = rng.permutation(k)[: len(column)]
        out[rows, j] = np.array(column, dtype=F32)
    return [row.copy() for row in out]


def exact_split(x):
    """Two float32 arrays a, b with a + b == x exactly (high bits, the rest)."""
    x = np.asarray(x, dtype=F32)
    finite = np.isfinite(x)
    high = (x.view(np.uint32) & np.uint32(0xFFFFF000)).view(F32)
    high = np.where(finite, high, x).astype(F32)
    low = np.where(finite, x.astype(np.float64) - high.astype(np.float64), 0.0).astype(F32)
    assert np.array_equal(high[finite].astype(np.float64) + low[finite], x[finite].astype(np.float64))
    return high, low
