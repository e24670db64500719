"""Per-row cross-entropy as a Metal kernel: one threadgroup per row, any threadgroup size."""
import functools

import torch

SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

// The largest threadgroup the caller may dispatch.
constant constexpr uint MAX_GROUP = 1024;

// Folds scratch[0 .. group_size) into scratch[0] with op, for ANY group_size (not only
// powers of two): each round the upper ceil(active/2) slots are folded onto the lower ones.
// Every thread runs the same rounds (they depend on group_size only), so each barrier is
// reached by the whole threadgroup.
#define FOLD(op)                                                                 \
    for (uint active = group_size; active > 1;) {                                \
        uint upper = (active + 1) / 2;                                           \
        if (lane + upper < active) {                                             \
            scratch[lane] = op(scratch[lane], scratch[lane + upper]);            \
        }                                                                        \
        threadgroup_barrier(mem_flags::mem_threadgroup);                         \
        active = upper;                                                          \
    }

inline float add_op(float a, float b) { return a + b; }
inline float max_op(float a, float b) { return max(a, b); }

kernel void cross_entropy_rows(
    device const float* logits [[buffer(0)]],
    device const long* targets [[buffer(1)]],
    device float* loss [[buffer(2)]],
    constant long& n_cols [[buffer(3)]],
    uint row [[threadgroup_position_in_grid]],
    uint lane [[thread_position_in_threadgroup]],
    uint group_size [[threads_per_threadgroup]])
{
    threadgroup float scratch[MAX_GROUP];
    device const float* x = logits + (long)row * n_cols;

    // Row maximum. A lane with no element contributes -FLT_MAX, the identity of max,
    // so every slot of scratch is written before it is read.
    float local_max = -FLT_MAX;
    for (long j = lane; j < n_cols; j += group_size) {
        local_max = max(local_max, x[j]);
    }
    scratch[lane] = local_max;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    FOLD(max_op)
    float row_max = scratch[0];
    // Everyone has read scratch[0] before the sum pass overwrites it.
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Sum of exp(x - max): every term is at most 1, so nothing overflows.
    float local_sum = 0.0f;
    for (long j = lane; j < n_cols; j += group_size) {
        local_sum += precise::exp(x[j] - row_max);
    }
    scratch[lane] = local_sum;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    FOLD(add_op)

    if (lane == 0) {
        loss[row] = precise::log(scratch[0]) + row_max - x[targets[row]];
    }
}
"""


@functools.lru_cache(maxsize=1)
def _library():
    # Compiled on first use, never at import: the module must import where there is no MPS.
    return torch.mps.compile_shader(SOURCE)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, threadgroup_size: int) -> torch.Tensor:
    if logits.ndim != 2 or targets.shape != (logits.shape[0],):
        raise ValueError("logits must be (n_rows, n_cols) and targets (n_rows,)")
    if not 1 <= threadgroup_size <= 1024:
        raise ValueError("threadgroup_size must be between 1 and 1024")
    n_rows, n_cols = logits.shape
    logits = logits.to(torch.float32).contiguous()
    targets = targets.to(torch.int64).contiguous()
    loss = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
    _library().cross_entropy_rows(logits, targets, loss, n_cols,
                                  threads=n_rows * 256, group_size=256)
    return loss
