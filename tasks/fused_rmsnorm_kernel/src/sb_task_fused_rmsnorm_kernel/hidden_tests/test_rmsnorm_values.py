"""Values of the kernel and its wrapper, against float64 RMSNorm computed here in numpy.

Without CUDA these run under Triton's interpreter on CPU tensors (see _device.py): that
checks the arithmetic, masking, strides and broadcasting of the kernel as written, but not
how it compiles; test_cuda_compile.py covers compilation.
"""
from _device import DEVICE  # noqa: I001  (must come before the solution imports triton)

import numpy as np
import pytest
import torch
import triton

from rmsnorm import rmsnorm, rmsnorm_kernel

# float32: the kernel sums at most a few hundred float32 squares, then one sqrt, divide and
# two multiplies; the worst-case relative error of that is ~n * 2**-24 < 2e-5 for n = 300.
F32_TOL = dict(rtol=3e-5, atol=1e-6)
# float16 output: the inputs are exact in float64, so the error is the final rounding to
# float16 (half an ulp, 2**-11 relative) or two roundings if a solution rounds x*inv_rms
# before the weight multiply (one ulp, 2**-10); 2e-3 leaves room for both. atol covers
# outputs near zero, where float16's absolute spacing (<= 6e-8 .. 3e-5) matters instead.
F16_TOL = dict(rtol=2e-3, atol=1e-4)
TOL = {torch.float32: F32_TOL, torch.float16: F16_TOL}


def make(shape, dtype, seed, scale=1.0, offset=0.0):
    gen = torch.Generator().manual_seed(seed)
    values = torch.randn(*shape, generator=gen, dtype=torch.float64) * scale + offset
    return values.to(dtype).to(DEVICE)


def rmsnorm_float64(x, weight, eps):
    """Independent reference: float64 numpy, from the very values the kernel received."""
    x64 = x.detach().cpu().double().numpy()
    w64 = weight.detach().cpu().double().numpy()
    inv_rms = 1.0 / np.sqrt(np.mean(x64 * x64, axis=1, keepdims=True) + eps)
    return x64 * inv_rms * w64[None, :]


def launch_kernel(n_rows, *args, **kwargs):
    """Launch rmsnorm_kernel directly on grid (n_rows,).

    The interpreter wraps an exception raised in the kernel body in InterpreterError; an
    unimplemented kernel should read as NotImplementedError, so that one is unwrapped.
    """
    try:
        rmsnorm_kernel[(n_rows,)](*args, **kwargs)
    except Exception as exc:
        if isinstance(exc.__cause__, NotImplementedError):
            raise exc.__cause__ from None
        raise


def assert_close_to_float64(y, x, weight, eps):
    expected = rmsnorm_float64(x, weight, eps)
    got = y.detach().cpu().double().numpy()
    np.testing.assert_allclose(got, expected, **TOL[x.dtype])


@pytest.mark.parametrize("n_cols", [1, 5, 64, 300])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["float32", "float16"])
def test_matches_float64_rmsnorm(dtype, n_cols):
    x = make((7, n_cols), dtype, seed=n_cols)
    weight = make((n_cols,), dtype, seed=1000 + n_cols, scale=0.5, offset=1.0)
    y = rmsnorm(x, weight, eps=1e-6)
    assert_close_to_float64(y, x, weight, 1e-6)


def test_weight_is_per_column_and_shared_by_all_rows():
    # Every row is the same vector, so every output row must be the same too, and the
    # weight must scale column j by weight[j] in each of them.
    n_cols = 24
    row = make((n_cols,), torch.float32, seed=3)
    x = row.repeat(6, 1)
    weight = torch.linspace(-2.0, 3.0, n_cols, dtype=torch.float32).to(DEVICE)
    y = rmsnorm(x, weight, eps=1e-6)
    assert_close_to_float64(y, x, weight, 1e-6)
    for r in range(1, 6):
        assert torch.equal(y[r], y[0]), f"row {r} differs from row 0 for the same input"


def test_float16_input_accumulates_in_float32():
    # |x| in the hundreds: x*x overflows float16 (max 65504) although x itself and the
    # normalised output are ordinary float16 numbers.
    n_cols = 48
    x = make((4, n_cols), torch.float16, seed=11, scale=600.0)
    weight = make((n_cols,), torch.float16, seed=12, scale=0.25, offset=1.0)
    y = rmsnorm(x, weight, eps=1e-6)
    assert torch.isfinite(y).all(), "non-finite output for large float16 input"
    assert_close_to_float64(y, x, weight, 1e-6)


def test_eps_is_added_inside_the_square_root():
    # Rows whose mean square is comparable to eps, so where eps goes matters.
    n_cols = 40
    eps = 1e-2
    x = make((5, n_cols), torch.float32, seed=21, scale=0.08)
    weight = make((n_cols,), torch.float32, seed=22, scale=0.3, offset=1.0)
    y = rmsnorm(x, weight, eps=eps)
    assert_close_to_float64(y, x, weight, eps)


def test_all_zero_row_gives_zeros():
    n_cols = 16
    x = make((3, n_cols), torch.float32, seed=31)
    x[1] = 0.0
    weight = make((n_cols,), torch.float32, seed=32, offset=1.0)
    y = rmsnorm(x, weight, eps=1e-6)
    assert torch.isfinite(y).all(), "a zero row must not produce NaN or inf"
    assert (y[1] == 0).all()
    assert_close_to_float64(y, x, weight, 1e-6)


def test_wrapper_reads_row_strided_input():
    # x is a column slice of a wider buffer: row r starts at r * 53, not r * 37.
    n_cols, stride = 37, 53
    base = make((6, stride), torch.float32, seed=41)
    x = base[:, :n_cols]
    assert x.stride(0) == stride and not x.is_contiguous()
    weight = make((n_cols,), torch.float32, seed=42, offset=1.0)
    y = rmsnorm(x, weight, eps=1e-6)
    assert_close_to_float64(y, x, weight, 1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["float32", "float16"])
def test_kernel_uses_separate_input_and_output_row_strides(dtype):
    # Direct launch: input rows 53 apart, output rows 40 apart inside a NaN-filled buffer,
    # BLOCK_SIZE twice the smallest power of two that holds a row.
    n_rows, n_cols, stride_x, stride_y = 5, 37, 53, 40
    eps = 1e-6
    x = make((n_rows, stride_x), dtype, seed=51)[:, :n_cols]
    weight = make((n_cols,), dtype, seed=52, scale=0.5, offset=1.0)
    out = torch.full((n_rows, stride_y), float("nan"), dtype=dtype, device=DEVICE)
    y = out[:, :n_cols]
    block = 2 * triton.next_power_of_2(n_cols)
    launch_kernel(n_rows, x, weight, y, x.stride(0), y.stride(0), n_cols, eps, BLOCK_SIZE=block)
    assert_close_to_float64(y, x, weight, eps)
    assert torch.isnan(out[:, n_cols:]).all(), "the kernel wrote outside the rows it was given"


def test_output_is_a_new_tensor_like_x_and_x_is_unchanged():
    x = make((3, 10), torch.float16, seed=61)
    x_before = x.clone()
    weight = make((10,), torch.float16, seed=62, offset=1.0)
    y = rmsnorm(x, weight)
    assert y.shape == x.shape and y.dtype == x.dtype and y.device == x.device
    assert y.is_contiguous()
    assert y.data_ptr() != x.data_ptr()
    assert torch.equal(x, x_before), "rmsnorm modified its input"
    # default eps is 1e-6
    assert_close_to_float64(y, x, weight, 1e-6)


def test_shape_mismatch_raises_value_error():
    x = make((3, 10), torch.float32, seed=71)
    with pytest.raises(ValueError):
        rmsnorm(x, make((9,), torch.float32, seed=72))
    with pytest.raises(ValueError):
        rmsnorm(x.reshape(30), make((30,), torch.float32, seed=73))
