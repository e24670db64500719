import math

import numpy as np
import pytest

from loss import token_loss

# The promised accuracy: every element within TOL * (1 + |exact|) of the exact value.
TOL = {np.float32: 1e-5, np.float64: 1e-10}
REDUCTIONS = ["mean", "sum", "none"]
DTYPES = [np.float32, np.float64]


def oracle(logits, labels, ignore_index=-100, label_smoothing=0.0, reduction="mean", z_loss=0.0):
    """The specification in Python floats, one position at a time."""
    vocab = logits.shape[1]
    per, counted = [], 0
    for row, y in zip(logits.astype(np.float64).tolist(), labels.tolist()):
        if y == ignore_index:
            per.append(0.0)
            continue
        counted += 1
        top = max(row)
        log_total = math.log(math.fsum(math.exp(v - top) for v in row))
        minus_logp = [(top - v) + log_total for v in row]
        lse = top + log_total
        smooth = math.fsum(minus_logp) / vocab
        per.append((1 - label_smoothing) * minus_logp[y] + label_smoothing * smooth + z_loss * lse * lse)
    if reduction == "none":
        return np.array(per)
    total = math.fsum(per)
    if reduction == "sum":
        return total
    return total / counted if counted else 0.0


def make_case(seed, dtype, n, vocab, scale=3.0, ignored=0.3, ignore_index=-100):
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal((n, vocab)) * scale).astype(dtype)
    labels = rng.integers(0, vocab, n)
    labels[rng.random(n) < ignored] = ignore_index
    return logits, labels


def check(logits, labels, **options):
    dtype = logits.dtype.type
    before = (logits.copy(), labels.copy())
    got = token_loss(logits, labels, **options)
    assert np.array_equal(logits, before[0]) and np.array_equal(labels, before[1])
    want = np.asarray(oracle(logits, labels, **options))
    if options.get("reduction", "mean") == "none":
        assert isinstance(got, np.ndarray) and got.shape == want.shape
    else:
        assert isinstance(got, np.generic) and np.ndim(got) == 0
    assert got.dtype == dtype
    got = np.asarray(got, dtype=np.float64)
    assert np.all(np.isfinite(got))
    assert np.all(np.abs(got - want) <= TOL[dtype] * (1 + np.abs(want)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_matches_the_oracle(dtype, reduction):
    # (label_smoothing, z_loss): neither, each alone, both, and smoothing alone at its maximum
    options = [(0.0, 0.0), (0.1, 0.0), (0.0, 1e-3), (0.3, 2e-3), (1.0, 0.0)]
    for seed, (eps, z) in enumerate(options):
        for vocab in (9, 1):
            logits, labels = make_case(seed, dtype, 7, vocab)
            check(logits, labels, label_smoothing=eps, z_loss=z, reduction=reduction)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ignore_index", [-1, 0, 6, 1000])
def test_any_ignore_index(dtype, ignore_index):
    logits, labels = make_case(ignore_index + 5, dtype, 10, 6, ignored=0.4, ignore_index=ignore_index)
    for reduction in REDUCTIONS:
        check(logits, labels.astype(np.int32), ignore_index=ignore_index, label_smoothing=0.2,
              z_loss=1e-3, reduction=reduction)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nothing_counted(dtype):
    logits, _ = make_case(3, dtype, 4, 5)
    for reduction in REDUCTIONS:
        check(logits, np.full(4, -100), label_smoothing=0.2, z_loss=1e-3, reduction=reduction)
        assert np.all(token_loss(logits, np.full(4, -100), reduction=reduction) == 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_large_logits(dtype):
    bound = 1e38 if dtype == np.float32 else 1e300  # the stated largest magnitude
    for seed, scale in enumerate([1e3, 1e4, bound / 10]):
        logits, labels = make_case(seed, np.float64, 5, 6, scale=scale)
        logits = np.clip(logits, -bound, bound).astype(dtype)
        for reduction in REDUCTIONS:
            check(logits, labels, label_smoothing=0.1, reduction=reduction)
    # rows of very different scales, and a label far below its row's max
    mixed = np.array([[1e4, -3e3, 2.0], [0.5, -0.5, 1.5], [-2e3, -2.1e3, -1.9e3]], dtype=dtype)
    check(mixed, np.array([1, 0, 2]), reduction="none")
    check(mixed, np.array([1, 0, 2]), label_smoothing=0.5, reduction="none")
    # rows tied at large magnitudes: a small exact loss (log 4) beside a huge logsumexp
    tied = np.array([[bound] * 4, [-bound] * 4, [1e12] * 4], dtype=dtype)
    check(tied, np.array([0, 3, 1]), label_smoothing=0.1, reduction="none")


@pytest.mark.parametrize("dtype", DTYPES)
def test_invalid_labels(dtype):
    logits, _ = make_case(4, dtype, 3, 5)
    for labels, ignore_index in [([0, 5, 1], -100), ([0, -1, 1], -100), ([0, -100, 1], -1)]:
        with pytest.raises(ValueError):
            token_loss(logits, np.array(labels), ignore_index=ignore_index)
    check(logits, np.array([0, 7, 1]), ignore_index=7)  # an ignore_index beyond V is just ignored


@pytest.mark.parametrize("reduction", ["avg", "MEAN", None])
def test_invalid_reduction(reduction):
    logits, labels = make_case(5, np.float32, 3, 5)
    with pytest.raises(ValueError):
        token_loss(logits, labels, reduction=reduction)
