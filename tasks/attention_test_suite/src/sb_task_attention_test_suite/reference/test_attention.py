import itertools

import numpy as np
import pytest
import torch

from attention import attention

# The promised accuracy: every element within TOL * (1 + |exact|) of the exact value.
TOL = {np.float32: 1e-4, np.float64: 1e-9}
# batch, heads, key/value heads, queries, keys, key size, value size: grouped heads, fewer
# queries than keys, one query (decoding), more queries than keys, Dv unlike D.
SHAPES = [(2, 4, 2, 3, 6, 4, 5), (2, 6, 3, 1, 5, 8, 3), (2, 2, 1, 5, 3, 2, 4)]
MASKS = [None, "padding", "additive"]


def oracle(q, k, v, mask=None, causal=False):
    """The specification in float64 (default scale)."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    heads, q_len, d = q.shape[1:]
    group, k_len = heads // k.shape[1], k.shape[2]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    logits = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
    if mask is not None and mask.dtype == bool:
        logits = np.where(mask[:, None, None, :], logits, -np.inf)
    elif mask is not None:
        logits = logits + mask
    if causal:
        logits = np.where(np.arange(k_len) > np.arange(q_len)[:, None] + k_len - q_len, -np.inf, logits)
    top = logits.max(axis=-1, keepdims=True)
    top = np.where(np.isneginf(top), 0, top)
    weights = np.exp(logits - top)
    total = weights.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        lse = (top + np.log(total))[..., 0]
    return weights @ v / np.where(total == 0, 1, total), lse


def as_numpy(x):
    return x.numpy() if isinstance(x, torch.Tensor) else x


def make_case(kind, dtype, shape, mask_kind, seed, size=1.0):
    """q, k, v and a mask; the mask leaves batch row 0 (padding) or query 0 (additive) no key."""
    batch, heads, key_heads, q_len, k_len, d, dv = shape
    rng = np.random.default_rng(seed)
    shapes = [(batch, heads, q_len, d), (batch, key_heads, k_len, d), (batch, key_heads, k_len, dv)]
    arrays = [(rng.standard_normal(s) * size).astype(dtype) for s in shapes]
    mask = None
    if mask_kind == "padding":
        mask = rng.random((batch, k_len)) < 0.6
        mask[0] = False
    elif mask_kind == "additive":
        mask = (rng.standard_normal((q_len, k_len)) * 3).astype(dtype)
        mask[rng.random(mask.shape) < 0.3] = -np.inf
        mask[0] = -np.inf
    if kind == "torch":
        arrays = [torch.from_numpy(a) for a in arrays]
        mask = None if mask is None else torch.from_numpy(mask)
    return arrays, mask


def check_call(kind, dtype, arrays, mask, causal):
    out, lse = attention(*arrays, mask=mask, causal=causal)
    want = oracle(*map(as_numpy, arrays), mask=None if mask is None else as_numpy(mask), causal=causal)
    for got, exact in zip((out, lse), want):
        assert isinstance(got, torch.Tensor if kind == "torch" else np.ndarray)
        got = as_numpy(got)
        assert got.dtype == dtype and got.shape == exact.shape
        assert not np.isnan(got).any()
        assert np.array_equal(np.isneginf(got), np.isneginf(exact))
        finite = np.isfinite(exact)
        assert np.all(np.abs(got[finite] - exact[finite]) <= TOL[dtype] * (1 + np.abs(exact[finite])))


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_the_oracle(kind, dtype):
    for seed, (shape, mask_kind, causal) in enumerate(itertools.product(SHAPES, MASKS, [False, True])):
        arrays, mask = make_case(kind, dtype, shape, mask_kind, seed)
        check_call(kind, dtype, arrays, mask, causal)


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_logits_stay_accurate(kind, dtype):
    size = np.sqrt(np.finfo(dtype).maxexp)  # logits of the order of the overflow threshold and beyond
    arrays, mask = make_case(kind, dtype, SHAPES[0], None, seed=7, size=size)
    check_call(kind, dtype, arrays, mask, causal=True)


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("mask_kind", MASKS)
def test_arguments_are_not_modified(kind, mask_kind):
    arrays, mask = make_case(kind, np.float32, SHAPES[0], mask_kind, seed=8)
    given = arrays + ([] if mask is None else [mask])
    before = [as_numpy(x).copy() for x in given]
    attention(*arrays, mask=mask, causal=True)
    for old, new in zip(before, given):
        assert np.array_equal(old, as_numpy(new))
