"""Softmax backward as a Metal kernel: one threadgroup per row, any threadgroup size."""
import torch

SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

kernel void softmax_backward_rows(
    device const float* y [[buffer(0)]],
    device const float* dy [[buffer(1)]],
    device float* dx [[buffer(2)]],
    constant long& n_cols [[buffer(3)]],
    uint row [[threadgroup_position_in_grid]],
    uint lane [[thread_position_in_threadgroup]],
    uint group_size [[threads_per_threadgroup]])
{
    // TODO: dx[row, :] = y[row, :] * (dy[row, :] - sum(dy[row, :] * y[row, :])) (see prompt.md)
}
"""


def softmax_backward(y: torch.Tensor, dy: torch.Tensor, threadgroup_size: int) -> torch.Tensor:
    """dx of shape (n_rows, n_cols), computed by softmax_backward_rows (see prompt.md)."""
    raise NotImplementedError
