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
    threadgroup float scratch[MAX_GROUP];
    long start = (long)row * n_cols;

    // Each lane's share of the row dot product; a lane with no element writes 0, so every
    // slot is written before the fold reads it.
    float partial = 0.0f;
    for (long j = lane; j < n_cols; j += group_size) {
        partial += dy[start + j] * y[start + j];
    }
    scratch[lane] = partial;
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Fold any number of slots (not only a power of two): each round the upper
    // ceil(active/2) slots are added onto the lower ones. The rounds depend on group_size
    // only, so every lane reaches every barrier.
    for (uint active = group_size; active > 1;) {
        uint upper = (active + 1) / 2;
        if (lane + upper < active) {
            scratch[lane] += scratch[lane + upper];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        active = upper;
    }
    float dot = scratch[0];

    for (long j = lane; j < n_cols; j += group_size) {
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
                                     threads=n_rows * 256, group_size=256)
    return dx
