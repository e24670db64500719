"""Values of the kernel and its wrapper, against float64 RMSNorm computed here in numpy.

The solution runs in the worker (through _probe_rmsnorm.py, see _device.py); without CUDA
it runs under Triton's interpreter on CPU tensors. That checks the arithmetic, masking,
strides, broadcasting and layout of the kernel as written, not how it compiles:
test_cuda_compile.py covers compilation. Every expected value is computed here.
"""
from _device import DEVICE, RMS  # noqa: I001  (selects the worker's mode before the solution loads)

import numpy as np
import pytest
import torch

# float32: tl.sum reduces as a tree (numpy's pairwise sum under the interpreter, a shuffle
# tree on a GPU), so the mean square of n float32 squares is within ~log2(n) * 2**-24
# (< 1e-6 for n = 8192) relative; one sqrt, divide and two multiplies add a few 2**-24.
# 3e-5 leaves a 30x margin, and still sits far below every mistake tested (1/n vs 1/(n-1)
# is 0.1% even at n = 1025; a misplaced eps or a missing weight is far larger).
F32_TOL = dict(rtol=3e-5, atol=1e-6)
# float16 output: the inputs are exact in float64, so the error is the final rounding to
# float16 (half an ulp, 2**-11 relative); 2e-3 is a loose bound here, and the exact
# single rounding is checked separately in test_float16_result_is_rounded_once. atol
# covers outputs near zero, where float16's absolute spacing (<= 6e-8 .. 3e-5) matters.
F16_TOL = dict(rtol=2e-3, atol=1e-4)
TOL = {torch.float32: F32_TOL, torch.float16: F16_TOL}
DTYPES = [torch.float32, torch.float16]
DTYPE_IDS = ["float32", "float16"]


def make(shape, dtype, seed, scale=1.0, offset=0.0):
    gen = torch.Generator().manual_seed(seed)
    values = torch.randn(*shape, generator=gen, dtype=torch.float64) * scale + offset
    return values.to(dtype)


def rmsnorm_float64(x, weight, eps):
    """Independent reference: float64 numpy, from the very values the kernel received."""
    x64 = x.double().numpy()
    w64 = weight.double().numpy()
    inv_rms = 1.0 / np.sqrt(np.mean(x64 * x64, axis=1, keepdims=True) + eps)
    return x64 * inv_rms * w64[None, :]


def assert_close_to_float64(y, x, weight, eps):
    expected = rmsnorm_float64(x, weight, eps)
    got = y.double().numpy()
    np.testing.assert_allclose(got, expected, **TOL[x.dtype])


def run(x_base, n_cols, weight, eps=None):
    """rmsnorm(x_base[:, :n_cols], weight[, eps]) in the worker; its observations."""
    seen = RMS.call(x_base, n_cols, weight, eps)
    assert seen["type"] == "Tensor", f"rmsnorm returned a {seen['type']}, not a torch.Tensor"
    return seen


def rmsnorm_y(x, weight, eps=None):
    """y for a contiguous x, checked to have x's shape and dtype."""
    seen = run(x, x.shape[1], weight, eps)
    assert seen["shape"] == list(x.shape), f"output shape {seen['shape']} for input {list(x.shape)}"
    assert seen["dtype"] == x.dtype, f"output dtype {seen['dtype']} for a {x.dtype} input"
    return seen["y"]


# ---------------------------------------------------------------- values


@pytest.mark.parametrize("n_cols", [1, 5, 64, 300, 1025, 8192])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_matches_float64_rmsnorm(dtype, n_cols):
    x = make((7, n_cols), dtype, seed=n_cols)
    weight = make((n_cols,), dtype, seed=1000 + n_cols, scale=0.5, offset=1.0)
    y = rmsnorm_y(x, weight, eps=1e-6)
    assert_close_to_float64(y, x, weight, 1e-6)


@pytest.mark.parametrize("n_cols", [1, 33])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_a_single_row(dtype, n_cols):
    x = make((1, n_cols), dtype, seed=80 + n_cols)
    weight = make((n_cols,), dtype, seed=90 + n_cols, scale=0.5, offset=1.0)
    y = rmsnorm_y(x, weight, eps=1e-6)
    assert_close_to_float64(y, x, weight, 1e-6)


def test_each_row_is_normalised_by_its_own_rms():
    # Row r is scaled by 10**(r - 3): a mean square shared across rows, or taken from the
    # wrong row, is off by orders of magnitude.
    n_rows, n_cols = 7, 50
    scales = torch.tensor([10.0 ** (r - 3) for r in range(n_rows)], dtype=torch.float64)
    x = (make((n_rows, n_cols), torch.float64, seed=5) * scales[:, None]).to(torch.float32)
    weight = make((n_cols,), torch.float32, seed=6, scale=0.5, offset=1.0)
    y = rmsnorm_y(x, weight, eps=1e-6)
    assert_close_to_float64(y, x, weight, 1e-6)


def test_weight_is_per_column_and_shared_by_all_rows():
    # Every row is the same vector, so every output row must be the same too, and the
    # weight must scale column j by weight[j] in each of them.
    n_cols = 24
    x = make((n_cols,), torch.float32, seed=3).repeat(6, 1)
    weight = torch.linspace(-2.0, 3.0, n_cols, dtype=torch.float32)
    y = rmsnorm_y(x, weight, eps=1e-6)
    assert_close_to_float64(y, x, weight, 1e-6)
    for r in range(1, 6):
        assert torch.equal(y[r], y[0]), f"row {r} differs from row 0 for the same input"


def test_float16_input_accumulates_in_float32():
    # |x| in the hundreds: x*x overflows float16 (max 65504) although x itself and the
    # normalised output are ordinary float16 numbers.
    n_cols = 48
    x = make((4, n_cols), torch.float16, seed=11, scale=600.0)
    weight = make((n_cols,), torch.float16, seed=12, scale=0.25, offset=1.0)
    y = rmsnorm_y(x, weight, eps=1e-6)
    assert torch.isfinite(y).all(), "non-finite output for large float16 input"
    assert_close_to_float64(y, x, weight, 1e-6)


def test_float16_result_is_rounded_once():
    # All arithmetic in float32, one rounding to float16 at the store: each output is the
    # float16 nearest the float32 result. The float32 result's relative error here is at
    # most ~(n/2 + 6) * 2**-24 = 8e-6 for n = 256 (squares of float16 values are exact in
    # float32; the sum of 256 positive terms, halved by the sqrt; divide by 256 exact;
    # eps, sqrt, reciprocal, two multiplies, one rounding each; an approximate GPU rsqrt
    # adds ~2**-22), so it lies within DELTA = 2**-14 = 6.1e-5 relative of the float64
    # value, and rounds to the float16 of one end of that interval or the other. Rounding
    # x * inv_rms to float16 before the weight multiply (two roundings) misses that for a
    # large share of the elements.
    delta = 2.0 ** -14
    n_rows, n_cols = 6, 256
    x = make((n_rows, n_cols), torch.float16, seed=15)
    weight = make((n_cols,), torch.float16, seed=16, scale=0.3, offset=1.0)
    y = rmsnorm_y(x, weight, eps=1e-6).numpy()
    exact = rmsnorm_float64(x, weight, 1e-6)
    low = (exact * (1 - delta)).astype(np.float16)
    high = (exact * (1 + delta)).astype(np.float16)
    ok = (y == low) | (y == high)
    assert ok.all(), (f"{int((~ok).sum())} of {ok.size} float16 outputs are not the float16 rounding of "
                      f"the exact value (first at {np.argwhere(~ok)[0].tolist()}): rounded more than once?")


def test_eps_is_added_inside_the_square_root():
    # Rows whose mean square is comparable to eps, so where eps goes matters.
    n_cols = 40
    eps = 1e-2
    x = make((5, n_cols), torch.float32, seed=21, scale=0.08)
    weight = make((n_cols,), torch.float32, seed=22, scale=0.3, offset=1.0)
    y = rmsnorm_y(x, weight, eps=eps)
    assert_close_to_float64(y, x, weight, eps)


def test_default_eps_is_1e_minus_6():
    # Mean square ~1e-6, the size of the default eps: another default (1e-5, 1e-8, 0)
    # changes the output by 10% or more.
    n_cols = 32
    x = make((4, n_cols), torch.float32, seed=25, scale=1e-3)
    weight = make((n_cols,), torch.float32, seed=26, scale=0.3, offset=1.0)
    y = rmsnorm_y(x, weight)
    assert_close_to_float64(y, x, weight, 1e-6)


def test_all_zero_row_gives_zeros():
    n_cols = 16
    x = make((3, n_cols), torch.float32, seed=31)
    x[1] = 0.0
    weight = make((n_cols,), torch.float32, seed=32, offset=1.0)
    y = rmsnorm_y(x, weight, eps=1e-6)
    assert torch.isfinite(y).all(), "a zero row must not produce NaN or inf"
    assert (y[1] == 0).all()
    assert_close_to_float64(y, x, weight, 1e-6)


# ---------------------------------------------------------------- strides and layout


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_wrapper_reads_row_strided_input(dtype):
    # x is a column slice of a wider buffer: row r starts at r * 53, not r * 37.
    n_cols, stride = 37, 53
    base = make((6, stride), dtype, seed=41)
    x = base[:, :n_cols]
    weight = make((n_cols,), dtype, seed=42, offset=1.0)
    seen = run(base, n_cols, weight, 1e-6)
    assert seen["shape"] == [6, n_cols]
    assert_close_to_float64(seen["y"], x, weight, 1e-6)
    assert seen["contiguous"], "the output must be a new contiguous tensor, even for a strided x"
    assert torch.equal(seen["base_after"], base), "rmsnorm modified x (or the buffer x is a slice of)"


def launch(x_base, n_cols, weight, eps, block_size, stride_y, y_offset=16):
    """Launch rmsnorm_kernel directly; y lives in a NaN-filled flat buffer, at y_offset,
    with rows stride_y apart and a NaN tail of one BLOCK_SIZE after the last row.

    Returns (y, untouched): y as an (n_rows, n_cols) tensor, and whether every element of
    the buffer outside y is still NaN."""
    n_rows = x_base.shape[0]
    size = y_offset + n_rows * stride_y + block_size
    out = torch.full((size,), float("nan"), dtype=x_base.dtype)
    after = RMS.launch(x_base, n_cols, weight, out, y_offset, stride_y, eps, block_size)
    index = y_offset + torch.arange(n_rows)[:, None] * stride_y + torch.arange(n_cols)[None, :]
    inside = torch.zeros(size, dtype=torch.bool)
    inside[index.reshape(-1)] = True
    return after[index], bool(torch.isnan(after[~inside]).all())


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_kernel_uses_separate_input_and_output_row_strides(dtype):
    # Input rows 53 apart, output rows 40 apart inside a NaN-filled buffer, BLOCK_SIZE
    # twice the smallest power of two that holds a row.
    n_rows, n_cols, stride_x, stride_y = 5, 37, 53, 40
    eps = 1e-6
    x_base = make((n_rows, stride_x), dtype, seed=51)
    weight = make((n_cols,), dtype, seed=52, scale=0.5, offset=1.0)
    y, untouched = launch(x_base, n_cols, weight, eps, block_size=128, stride_y=stride_y)
    assert_close_to_float64(y, x_base[:, :n_cols], weight, eps)
    assert untouched, "the kernel wrote outside the n_cols elements of its rows of y"


@pytest.mark.parametrize("n_cols,block_size", [(1, 1), (1, 32), (37, 64), (37, 512), (64, 64), (64, 256)])
def test_kernel_result_does_not_depend_on_block_size(n_cols, block_size):
    n_rows, eps = 4, 1e-6
    x_base = make((n_rows, n_cols + 5), torch.float32, seed=60 + n_cols)
    weight = make((n_cols,), torch.float32, seed=70 + n_cols, scale=0.5, offset=1.0)
    y, untouched = launch(x_base, n_cols, weight, eps, block_size=block_size, stride_y=n_cols + 3)
    assert_close_to_float64(y, x_base[:, :n_cols], weight, eps)
    assert untouched, "the kernel wrote outside the n_cols elements of its rows of y"


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_output_is_a_new_tensor_like_x_and_x_is_unchanged(dtype):
    x = make((3, 10), dtype, seed=61)
    weight = make((10,), dtype, seed=62, offset=1.0)
    seen = run(x, 10, weight, 1e-6)
    assert seen["shape"] == [3, 10] and seen["dtype"] == dtype, (seen["shape"], seen["dtype"])
    assert seen["device"] == DEVICE, f"output on {seen['device']}, input on {DEVICE}"
    assert seen["contiguous"], "the output must be contiguous"
    assert not seen["shares_memory_with_x"], "the output must be a new tensor, not x's memory"
    assert torch.equal(seen["base_after"], x), "rmsnorm modified its input"
    assert_close_to_float64(seen["y"], x, weight, 1e-6)


# ---------------------------------------------------------------- argument validation


@pytest.mark.parametrize(
    "x_shape,w_shape",
    [((3, 10), (9,)), ((3, 10), (11,)), ((3, 10), (1, 10)), ((3, 10), (10, 1)), ((30,), (30,)),
     ((2, 3, 10), (10,))],
    ids=["weight-short", "weight-long", "weight-1x10", "weight-10x1", "x-1d", "x-3d"],
)
def test_bad_shapes_raise_value_error(x_shape, w_shape):
    x = make(x_shape, torch.float32, seed=71)
    weight = make(w_shape, torch.float32, seed=72, offset=1.0)
    with pytest.raises(ValueError):
        RMS.call_plain(x, weight)
