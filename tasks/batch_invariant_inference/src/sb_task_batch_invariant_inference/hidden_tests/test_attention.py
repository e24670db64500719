"""decode_attention(q, k_cache, v_cache, lengths): accuracy and per-request bit identity."""
import numpy as np
import pytest

from _bits import assert_same_bits, f32
from _oracle import attention64
from batch_invariant import decode_attention
from sb.judge import probe

# Cache lengths below, at and above numpy's 8-lane and 128-element summation blocks.
LENGTHS = [1, 2, 7, 8, 9, 31, 64, 127, 128, 129, 200, 333, 512]
GARBAGE = np.array([np.nan, np.inf, -np.inf, 3e38, -3e38, 0.0, 1e4], dtype=np.float32)


class Requests:
    """A pool of decode requests: each a query (H, D) and its own cache (L, H, D)."""

    def __init__(self, seed, heads, dim, lengths=LENGTHS):
        rng = np.random.default_rng(seed)
        self.rng, self.heads, self.dim = rng, heads, dim
        self.q = [f32(rng, (heads, dim)) for _ in lengths]
        self.k = [f32(rng, (n, heads, dim)) for n in lengths]
        self.v = [f32(rng, (n, heads, dim)) for n in lengths]
        self.lengths = list(lengths)

    def batch(self, ids, pad=0, garbage=True):
        """(q, k_cache, v_cache, lengths) for these requests, padded to T = max length + pad."""
        t = max(self.lengths[i] for i in ids) + pad
        shape = (len(ids), t, self.heads, self.dim)
        fill = self.rng.choice(GARBAGE, size=shape) if garbage else np.zeros(shape, np.float32)
        k_cache, v_cache = fill.copy(), self.rng.permutation(fill.ravel()).reshape(shape)
        for j, i in enumerate(ids):
            k_cache[j, :self.lengths[i]] = self.k[i]
            v_cache[j, :self.lengths[i]] = self.v[i]
        lengths = np.array([self.lengths[i] for i in ids], dtype=np.int64)
        return np.stack([self.q[i] for i in ids]), k_cache, v_cache, lengths

    def alone(self):
        """Each request served alone, with a cache exactly as long as its length."""
        return [decode_attention(*self.batch([i], garbage=False))[0] for i in range(len(self.lengths))]


def _assert_requests_match_alone(out, ids, alone, what):
    out = np.asarray(out)
    assert out.shape[0] == len(ids)
    for j, i in enumerate(ids):
        assert_same_bits(out[j], alone[i], f"{what}: batch slot {j} (request {i})")


@pytest.mark.parametrize("heads, dim", [(1, 64), (4, 32), (2, 128)])
def test_decode_attention_matches_float64(heads, dim):
    requests = Requests(500 + dim, heads, dim)
    ids = list(range(len(LENGTHS)))
    q, k_cache, v_cache, lengths = requests.batch(ids, pad=5)
    with np.errstate(invalid="ignore", over="ignore"):
        got = np.asarray(decode_attention(q, k_cache, v_cache, lengths))
    assert got.dtype == np.float32 and got.shape == q.shape
    want, bound = attention64(q, k_cache, v_cache, lengths)
    # The prompt's bound, (4 (D+2) S + 3 L + 16) 2**-24 max|v|, adds up the worst cases of
    # the float32 score sums (D terms, relative to S), the max subtraction and exp
    # (a few ulp), and the two length-L sums; it holds for any summation order. A missing
    # 1/sqrt(D), an off-by-one length or a leak of the padding are off by far more.
    err = np.abs(got.astype(np.float64) - want)
    assert np.all(np.isfinite(got)), "padding leaked into the output"
    assert np.all(err <= bound), f"max error {err.max()}"
    # Independent absolute check: outputs are weighted means of N(0, 1) values.
    assert err.max() <= 1e-4


@pytest.mark.parametrize("heads, dim", [(1, 64), (4, 32), (1, 128), (8, 16)])
def test_decode_attention_requests_do_not_depend_on_the_batch(heads, dim):
    requests = Requests(600 + heads * dim, heads, dim)
    alone = requests.alone()
    rng = requests.rng
    for size in (1, 2, 3, 5, 8, 16):
        for _ in range(2):
            ids = list(rng.integers(0, len(LENGTHS), size=size))
            pad = int(rng.integers(0, 40))
            with np.errstate(invalid="ignore", over="ignore"):
                out = decode_attention(*requests.batch(ids, pad=pad))
            _assert_requests_match_alone(out, ids, alone, f"batch of {size}, pad {pad}")


def test_decode_attention_alone_does_not_depend_on_padding():
    requests = Requests(700, 1, 64)
    alone = requests.alone()
    for i in range(len(LENGTHS)):
        for pad in (1, 9, 130):
            with np.errstate(invalid="ignore", over="ignore"):
                out = decode_attention(*requests.batch([i], pad=pad))
            _assert_requests_match_alone(out, [i], alone, f"request alone, pad {pad}")


def test_decode_attention_lengths_as_a_list_or_int32():
    requests = Requests(750, 2, 32)
    alone = requests.alone()
    ids = [0, 5, 9, 12, 3]
    q, k_cache, v_cache, lengths = requests.batch(ids, pad=3)
    with np.errstate(invalid="ignore", over="ignore"):
        as_list = decode_attention(q, k_cache, v_cache, [int(n) for n in lengths])
        as_int32 = decode_attention(q, k_cache, v_cache, lengths.astype(np.int32))
    _assert_requests_match_alone(as_list, ids, alone, "lengths as a list")
    _assert_requests_match_alone(as_int32, ids, alone, "lengths as int32")


@pytest.mark.parametrize("heads, dim", [(1, 64), (4, 32)])
def test_decode_attention_requests_do_not_depend_on_memory_layout(heads, dim):
    requests = Requests(800 + heads, heads, dim)
    alone = requests.alone()
    ids = [12, 0, 7, 9, 3, 10]
    q, k_cache, v_cache, lengths = requests.batch(ids, pad=11)
    for name, args in [("Fortran-ordered caches", (q, np.asfortranarray(k_cache), np.asfortranarray(v_cache))),
                       ("Fortran-ordered query", (np.asfortranarray(q), k_cache, v_cache))]:
        with np.errstate(invalid="ignore", over="ignore"):
            out = decode_attention(*args, lengths)
        _assert_requests_match_alone(out, ids, alone, name)


@pytest.mark.parametrize("views", [(None, "rows", "rows"), (None, "last", "last"), ("last", None, None),
                                   (None, "transposed", "transposed"), ("offset", "offset", "offset")])
def test_decode_attention_requests_do_not_depend_on_strided_views(views):
    requests = Requests(900, 1, 64)
    alone = requests.alone()
    ids = [9, 2, 11, 7]
    q, k_cache, v_cache, lengths = requests.batch(ids, pad=4, garbage=False)
    got = probe("_probe_views.py").call("decode_attention", [q, k_cache, v_cache, lengths], list(views) + [None])
    _assert_requests_match_alone(got, ids, alone, f"views {views}")


def test_decode_attention_at_the_largest_sizes_with_large_scores():
    heads, dim = 8, 128
    requests = Requests(1000, heads, dim, lengths=[1024, 700, 3])
    # Scores of order 100 (beyond exp's float32 range of ~88): the softmax must still be exact.
    requests.q = [q * np.float32(12) for q in requests.q]
    alone = requests.alone()
    ids = [1, 0, 2, 2]
    q, k_cache, v_cache, lengths = requests.batch(ids)
    with np.errstate(invalid="ignore", over="ignore"):
        got = np.asarray(decode_attention(q, k_cache, v_cache, lengths))
    _assert_requests_match_alone(got, ids, alone, "largest sizes")
    want, bound = attention64(q, k_cache, v_cache, lengths)
    # The prompt's bound again (it grows with the score magnitude S; see the float64 test).
    assert np.all(np.isfinite(got)), "non-finite output"
    assert np.all(np.abs(got.astype(np.float64) - want) <= bound)
