"""Shared layer configurations and the comparison used by every numeric test.

Tolerances, checked per element as |got - want| <= ATOL * max|want| + RTOL * |want|:
- float64: 1e-10 and 1e-9. Both sides are float64 over at most a few dozen O(1) terms,
  so rounding is ~1e-14 of the largest entry.
- float32: 1e-5 and 1e-5. The solution rounds every step to float32 (eps 1.2e-7); over
  the sums here (at most 40 tokens, 8 experts, 6 features) the worst error measured was
  under 1e-6 of the largest entry, so 1e-5 leaves a tenfold margin. Every mistake the
  tests target changes some entry by more than 1e-3 of the largest entry.
The routing (experts, slots) is compared exactly: see _oracle.make_case for why the
inputs leave no comparison that float32 rounding could flip.
"""
import numpy as np

import _oracle

DTYPES = [np.float32, np.float64]
TOL = {np.float32: (1e-5, 1e-5), np.float64: (1e-10, 1e-9)}  # (ATOL, RTOL), see above

# name: (T, d, E, h, k, prototypes, copied router columns, capacity_factor, aux_coef, scale)
CASES = {
    "top1": (24, 6, 6, 4, 1, 4, [(0, 3)], 1.0, 0.05, 1.0),
    "top2_tight": (32, 6, 8, 5, 2, 5, [(0, 3), (2, 6)], 0.75, 0.1, 1.0),
    "top2_sharp": (32, 6, 8, 5, 2, 4, [(1, 5)], 1.0, 0.3, 2.0),
    "top2_flat": (40, 5, 8, 4, 2, 6, [(0, 7), (3, 4)], 1.15, 0.2, 0.5),
    "top3": (20, 5, 5, 3, 3, 4, [(1, 4)], 0.5, 0.1, 1.0),
    "k_equals_E": (12, 4, 3, 3, 3, 3, [], 0.5, 0.5, 1.0),
    "no_drops": (16, 4, 4, 3, 2, 3, [(0, 2)], 2.0, 0.1, 1.0),
    "minimum_capacity": (5, 4, 8, 3, 1, 2, [(0, 1)], 1.0, 0.1, 1.0),
    "paired_top1": (24, 5, 8, 3, 1, 5, [(0, 1), (2, 3), (4, 5), (6, 7)], 1.0, 0.2, 1.0),
    "paired_top3": (24, 5, 8, 3, 3, 5, [(0, 1), (2, 3), (4, 5), (6, 7)], 0.75, 0.2, 1.0),
    "many_experts": (30, 6, 20, 3, 3, 6, [(i, i + 10) for i in range(10)], 1.0, 0.1, 1.0),
    "large_logits": (24, 5, 8, 3, 2, 5, [(0, 3)], 0.75, 0.1, 1.0),
}
# Every logit of these cases is shifted by a large constant (see _oracle.make_case):
# exp of the raw logits overflows in float32 (beyond ~88) and in float64 (beyond ~709).
LOGIT_OFFSETS = {"large_logits": 800.0}


def case(name, dtype, seed=0):
    """(inputs, k, capacity_factor, aux_coef); inputs = (x, w_router, w_experts, b_experts, dy)."""
    T, d, E, h, k, protos, copied, cf, aux_coef, scale = CASES[name]
    inputs = _oracle.make_case(1000 * seed + sum(map(ord, name)), T, d, E, h, k, protos,
                               copied, dtype, scale, LOGIT_OFFSETS.get(name, 0.0))
    return inputs, k, cf, aux_coef


def assert_close(got, want, dtype, what):
    got = np.asarray(got)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    atol, rtol = TOL[dtype]
    bound = atol * np.abs(want).max() + rtol * np.abs(want)
    err = np.abs(got.astype(np.float64) - want)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert np.all(err <= bound), (
        f"{what}: at index {tuple(int(i) for i in worst)} got {got[worst]!r}, "
        f"expected {want[worst]!r} (|diff| {err[worst]:.3g} > allowed {bound[worst]:.3g})")
