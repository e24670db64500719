"""Fused RMSNorm forward: one Triton program normalises one row."""
import torch
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride_x, stride_y, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    # int64 row offset: row * stride can pass 2**31 on a large activation.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    # Accumulate in float32 whatever the storage type: squares of float16 overflow at 256.
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    # n_cols is used only in arithmetic with tensors: when it equals 1 Triton passes it as a
    # compile-time constant (a plain int), which has no tensor methods such as .to().
    mean_square = tl.sum(x * x, axis=0) / n_cols
    inv_rms = 1.0 / tl.sqrt(mean_square + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * inv_rms * w
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D (n_rows, n_cols), got shape {tuple(x.shape)}")
    n_rows, n_cols = x.shape
    if weight.ndim != 1 or weight.shape[0] != n_cols:
        raise ValueError(f"weight must have shape ({n_cols},), got {tuple(weight.shape)}")
    if x.stride(1) != 1:
        raise ValueError("the elements of a row of x must be contiguous (x.stride(1) == 1)")
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block_size = min(triton.next_power_of_2(n_cols), 4096)
    rmsnorm_kernel[(n_rows,)](x, weight, y, x.stride(0), y.stride(0), n_cols, eps, BLOCK_SIZE=block_size)
    return y
