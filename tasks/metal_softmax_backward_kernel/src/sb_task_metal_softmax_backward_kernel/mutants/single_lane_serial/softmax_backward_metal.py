"""Softmax backward as a Metal kernel: one threadgroup per row, any threadgroup size."""
import functools

import torch

SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

// The largest threadgroup the caller may dispatch.
constant constexpr uint MAX_GROUP = 1024;

// dx = y * (dy - sum(dy * y)) for one row per threadgroup.
kernel void softmax_backward_rows(
    device const float* y [[buffer(0)]],
    device const float* dy [[buffer(1)]],
    device float* dx [[buffer(2)]],
    constant long& n_cols [[buffer(3)]],
    uint row [[threadgroup_position_in_grid]],
    uint lane [[thread_position_in_threadgroup]],
    uint group_size [[threads_per_threadgroup]])
{
    // One lane does the whole row; the others have nothing to do.
    if (lane != 0) {
        return;
    }
    long start = (long)row * n_cols;
    float dot = 0.0f;
    for (long j = 0; j < n_cols; ++j) {
        dot += dy[start + j] * y[start + j];
    }
    for (long j = 0; j < n_cols; ++j) {
        dx[start + j] = y[start + j] * (dy[start + j] - dot);
    }
}
"""

@functools.lru_cache(maxsize=1)
def _library():
    # Compiled on first use, never at import: the module must import where there is no MPS.
    return torch.mps.compile_shader(SOURCE)


def softmax_backward(y: torch.Tensor, dy: torch.Tensor, threadgroup_size: int) -> torch.Tensor:
    if y.ndim != 2 or dy.shape != y.shape:
        raise ValueError("y and dy must both be (n_rows, n_cols)")
    if not 1 <= threadgroup_size <= 1024:
        raise ValueError("threadgroup_size must be between 1 and 1024")
    n_rows, n_cols = y.shape
    y = y.to(torch.float32).contiguous()
    dy = dy.to(torch.float32).contiguous()
    dx = torch.empty_like(y)
    _library().softmax_backward_rows(y, dy, dx, n_cols,
                                     threads=n_rows * threadgroup_size, group_size=threadgroup_size)
    return dx
