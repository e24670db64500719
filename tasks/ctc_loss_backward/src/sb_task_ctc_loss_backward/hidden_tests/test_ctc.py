"""Hidden tests for the hand-written CTC loss and its gradient.

Expected values come from _ctc_oracle: exhaustive enumeration of every path for tiny T
and C, torch.nn.functional.ctc_loss in float64 (its gradient corrected to the prompt's
definition, see the oracle's docstring), and central finite differences of torch's
float64 forward loss. Never from the reference solution.

Tolerances (the prompt promises them; both sides computed in float64 from the same inputs):
- EXACT (atol 1e-11, rtol 1e-11) against enumeration: sums of at most 4**6 terms, O(1)
  values, roundoff ~1e-15; every targeted mistake moves some value by more than 1e-3.
- F64 (atol 1e-9, rtol 1e-9) against torch for longer inputs: two independent float64
  log-space recursions over up to 2000 steps on losses up to ~4e3 differ by ~1e-12
  relative; the prompt promises 1e-9.
- F32 (atol 1e-6, rtol 1e-6) for float32 inputs: the prompt promises agreement with the
  exact value within 1e-6; rounding a float64 result to float32 costs at most 6e-8
  relative, and a gradient entry is at most 1 in magnitude.
"""
import ast
import sys

import numpy as np
import pytest

from ctc import ctc_loss
from sb.judge import solution_source
from sb.source_checks import module_uses

import _ctc_oracle as oracle

EXACT = dict(atol=1e-11, rtol=1e-11)  # see module docstring
F64 = dict(atol=1e-9, rtol=1e-9)      # see module docstring
F32 = dict(atol=1e-6, rtol=1e-6)      # see module docstring
REDUCTIONS = ["none", "sum", "mean"]


def _log_softmax(z):
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def _inputs(seed, steps, input_lengths, classes, scale=1.5, pad="garbage"):
    """(T, N, C) float64 log-probabilities; steps at t >= input_lengths[n] hold padding:
    large unnormalised values ("garbage"), or nan and +-inf ("nonfinite")."""
    rng = np.random.default_rng(seed)
    batch = len(input_lengths)
    lp = _log_softmax(scale * rng.standard_normal((steps, batch, classes)))
    for n, length in enumerate(input_lengths):
        if pad == "garbage":
            lp[length:, n] = rng.uniform(5.0, 50.0, (steps - length, classes))
        else:
            lp[length:, n] = rng.choice([np.nan, np.inf, -np.inf], (steps - length, classes))
    return lp


def _padded(labels, classes, blank, width=None):
    """Padded (N, S) int64 targets whose padding is garbage: -1, an index past C, the blank."""
    width = width or max(len(x) for x in labels) + 2
    fills = np.array([-1, classes + 3, blank])
    out = np.resize(fills, (len(labels), width)).astype(np.int64)
    for n, lab in enumerate(labels):
        out[n, :len(lab)] = lab
    return out


def _call(lp, labels, input_lengths, classes, blank, reduction, zero_infinity=False,
          concatenated=False, dtype=np.float64):
    if concatenated:
        targets = np.array([c for lab in labels for c in lab], dtype=np.int32)
    else:
        targets = _padded(labels, classes, blank)
    loss, grad = ctc_loss(lp.astype(dtype), targets, np.array(input_lengths, dtype=np.int64),
                          np.array([len(x) for x in labels], dtype=np.int64), blank=blank,
                          reduction=reduction, zero_infinity=zero_infinity)
    return np.asarray(loss), np.asarray(grad)


def _check(got, want, tol, what):
    loss, grad = got
    want_loss, want_grad = want
    assert loss.shape == np.shape(want_loss), f"{what}: loss shape {loss.shape}"
    assert grad.shape == want_grad.shape, f"{what}: grad shape {grad.shape}"
    np.testing.assert_allclose(loss, want_loss, **tol, err_msg=f"{what}: loss")
    np.testing.assert_allclose(grad, want_grad, **tol, err_msg=f"{what}: gradient")


# Tiny batches, small enough to enumerate every path:
# (classes, blank, steps, input_lengths, labels)
TINY = {
    "repeated_labels": (3, 0, 6, [6, 5, 5, 4], [[1, 1], [2, 2, 1], [1, 1, 1], [2, 1, 2]]),
    "blank_last": (4, 3, 6, [6, 4, 5], [[0, 0, 2], [1, 0], [2, 2]]),
    "blank_in_the_middle": (4, 1, 5, [5, 5, 3], [[0, 2, 2], [3, 0, 3], [2]]),
    "empty_targets": (3, 0, 5, [5, 2, 1, 4], [[], [], [], [2, 2]]),
    "empty_targets_blank_not_zero": (3, 2, 4, [4, 1, 3], [[], [0], [1, 1]]),
    "just_enough_steps": (3, 0, 5, [5, 3, 4, 1], [[1, 1, 1], [2, 2], [1, 2, 1, 2], [1]]),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(TINY))
def test_matches_enumeration_of_all_paths(case, reduction):
    classes, blank, steps, lengths, labels = TINY[case]
    lp = _inputs(list(TINY).index(case), steps, lengths, classes)
    want = oracle.enumerate_batch(lp, labels, lengths, blank, reduction, False)
    _check(_call(lp, labels, lengths, classes, blank, reduction), want, EXACT, case)


# Sequence 0 of each batch has no alignment: its input is one step short of its labels
# plus the blanks its repeats need; the others are possible.
IMPOSSIBLE = {
    "repeat_needs_a_blank": (3, 0, 4, [2, 4], [[1, 1], [2, 1]]),
    "three_repeats": (4, 2, 5, [4, 5, 3], [[3, 3, 3], [0, 1], []]),
    "too_many_labels": (3, 1, 4, [2, 4], [[0, 2, 0], [2]]),
}


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(IMPOSSIBLE))
def test_sequence_without_alignment(case, reduction, zero_infinity):
    classes, blank, steps, lengths, labels = IMPOSSIBLE[case]
    lp = _inputs(7, steps, lengths, classes)
    want = oracle.enumerate_batch(lp, labels, lengths, blank, reduction, zero_infinity)
    loss, grad = _call(lp, labels, lengths, classes, blank, reduction, zero_infinity)
    assert not np.isnan(grad).any(), "the gradient holds nan"
    assert np.all(grad[:, 0] == 0.0), "a sequence with no alignment has zero gradient"
    _check((loss, grad), want, EXACT, case)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_zero_probability_entries(reduction):
    """-inf entries (probability 0) inside the valid steps, on labels and on the blank."""
    classes, blank, steps, lengths, labels = 4, 2, 6, [6, 5, 6], [[0, 0, 1], [3, 1], [1]]
    lp = _inputs(11, steps, lengths, classes)
    z = _log_softmax(np.random.default_rng(12).standard_normal((steps, 3, classes)))
    for t, n, c in [(0, 0, 1), (2, 0, 2), (3, 0, 3), (1, 1, 2), (4, 1, 3), (0, 2, 0), (5, 2, 2)]:
        z[t, n, c] = -np.inf
    z = _log_softmax(z)
    for n, length in enumerate(lengths):
        lp[:length, n] = z[:length, n]
    want = oracle.enumerate_batch(lp, labels, lengths, blank, reduction, False)
    _check(_call(lp, labels, lengths, classes, blank, reduction), want, EXACT, "-inf entries")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_concatenated_targets(reduction):
    classes, blank, steps, lengths, labels = 4, 1, 6, [6, 3, 5, 4], [[2, 2, 0], [], [3, 0, 3], [0]]
    lp = _inputs(21, steps, lengths, classes)
    want = oracle.enumerate_batch(lp, labels, lengths, blank, reduction, False)
    got = _call(lp, labels, lengths, classes, blank, reduction, concatenated=True)
    _check(got, want, EXACT, "concatenated targets")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_padding_steps_may_hold_nan_and_inf(reduction):
    classes, blank, steps, lengths, labels = 3, 0, 6, [3, 6, 1, 4], [[1], [2, 2], [], [1, 2]]
    lp = _inputs(31, steps, lengths, classes, pad="nonfinite")
    want = oracle.enumerate_batch(lp, labels, lengths, blank, reduction, False)
    loss, grad = _call(lp, labels, lengths, classes, blank, reduction)
    for n, length in enumerate(lengths):
        assert np.all(grad[length:, n] == 0.0), f"gradient at t >= input_lengths[{n}] must be 0"
    _check((loss, grad), want, EXACT, "non-finite padding")


def _random_batch(seed, steps, batch, classes, blank, max_labels):
    """Random lengths and labels with many repeats; some targets empty."""
    rng = np.random.default_rng(seed)
    others = [c for c in range(classes) if c != blank]
    labels, lengths = [], []
    for n in range(batch):
        size = int(rng.integers(0, max_labels + 1)) if n else 0
        lab = []
        while len(lab) < size:
            c = int(rng.choice(others[:3]))  # few symbols: repeats are common
            lab += [c] * int(rng.integers(1, 3))
        lab = lab[:size]
        need = len(lab) + sum(a == b for a, b in zip(lab, lab[1:]))
        lengths.append(int(rng.integers(max(need, 1), steps + 1)))
        labels.append(lab)
    lengths[-1] = steps
    return labels, lengths


# (steps, batch, classes, blank, max_labels)
MEDIUM = {
    "blank_zero": (40, 5, 7, 0, 14),
    "blank_last": (33, 4, 6, 5, 12),
    "blank_in_the_middle": (50, 3, 9, 4, 20),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(MEDIUM))
def test_matches_torch_ctc_loss(case, reduction, dtype):
    steps, batch, classes, blank, max_labels = MEDIUM[case]
    labels, lengths = _random_batch(len(case), steps, batch, classes, blank, max_labels)
    lp = _inputs(41, steps, lengths, classes).astype(dtype)
    want = oracle.torch_reference(lp, labels, lengths, blank, reduction, False)
    loss, grad = _call(lp, labels, lengths, classes, blank, reduction, dtype=lp.dtype)
    assert grad.dtype == lp.dtype and loss.dtype == lp.dtype, "results keep the input dtype"
    _check((loss, grad), want, F64 if dtype == "float64" else F32, case)


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_gradient_matches_finite_differences(reduction):
    """The gradient is d loss / d log_probs with each entry an independent variable."""
    classes, blank, steps, lengths, labels = 4, 3, 9, [9, 7], [[1, 1, 0], [2, 0]]
    lp = _inputs(51, steps, lengths, classes)
    want = oracle.finite_difference(lp, labels, lengths, blank, reduction)
    _, grad = _call(lp, labels, lengths, classes, blank, reduction)
    # central differences with h=1e-5 on O(10) losses: truncation ~h**2 * |f'''| ~ 1e-9,
    # roundoff ~1e-16 * 10 / h ~ 1e-10; every targeted mistake moves an entry by > 1e-3
    np.testing.assert_allclose(grad, want, atol=1e-7, rtol=0, err_msg="gradient")


LONG_LABELS = {"steps": 2000, "lengths": [2000, 1850, 1999], "sizes": [420, 300, 0]}


def _long_batch(blank, classes):
    rng = np.random.default_rng(61)
    labels = []
    for size in LONG_LABELS["sizes"]:
        lab = [int(c) for c in rng.choice([c for c in range(classes) if c != blank], size)]
        lab[10:14] = [lab[10]] * 4 if size else []
        labels.append(lab[:size])
    return labels


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_long_inputs_where_probabilities_underflow(dtype):
    """Loss of several thousand nats: exp(-loss) is 0 in float64."""
    classes, blank = 6, 5
    labels = _long_batch(blank, classes)
    steps, lengths = LONG_LABELS["steps"], LONG_LABELS["lengths"]
    lp = _inputs(62, steps, lengths, classes, scale=2.0).astype(dtype)
    want = oracle.torch_reference(lp, labels, lengths, blank, "none", False)
    assert np.all(want[0] > 1000.0), "the case must underflow linear-space probabilities"
    loss, grad = _call(lp, labels, lengths, classes, blank, "none", dtype=lp.dtype)
    assert grad.dtype == lp.dtype and loss.dtype == lp.dtype, "results keep the input dtype"
    _check((loss, grad), want, F64 if dtype == "float64" else F32, f"T=2000 {dtype}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_results_keep_the_input_dtype_and_shape(reduction, dtype):
    classes, blank, steps, lengths, labels = 3, 0, 4, [4, 3], [[1, 2], [2]]
    lp = _inputs(71, steps, lengths, classes).astype(dtype)
    loss, grad = _call(lp, labels, lengths, classes, blank, reduction, dtype=lp.dtype)
    want = oracle.enumerate_batch(lp.astype(np.float64), labels, lengths, blank, reduction, False)
    assert loss.dtype == np.dtype(dtype) and grad.dtype == np.dtype(dtype)
    assert loss.shape == ((2,) if reduction == "none" else ())
    _check((loss, grad), want, EXACT if dtype == "float64" else F32, "dtype")


def test_defaults_are_blank_zero_and_mean():
    """blank=0, reduction="mean", zero_infinity=False: the last sequence has no alignment."""
    classes, steps, lengths, labels = 3, 5, [5, 4, 2, 2], [[1, 1], [], [2], [2, 2]]
    lp = _inputs(81, steps, lengths, classes)
    loss, grad = ctc_loss(lp, _padded(labels, classes, 0), np.array(lengths),
                          np.array([len(x) for x in labels]))
    want = oracle.enumerate_batch(lp, labels, lengths, 0, "mean", False)
    _check((np.asarray(loss), np.asarray(grad)), want, EXACT, "defaults")


def test_numpy_and_standard_library_only():
    """A hand-written solution, read from its source (the call first: a stub is no solution)."""
    classes, blank, steps, lengths, labels = 3, 1, 4, [4], [[2, 0]]
    lp = _inputs(91, steps, lengths, classes)
    want = oracle.enumerate_batch(lp, labels, lengths, blank, "sum", False)
    _check(_call(lp, labels, lengths, classes, blank, "sum"), want, EXACT, "small case")
    source = solution_source("ctc.py")
    uses = module_uses(source, "torch", "ctc.py")
    assert not uses, "the solution must not use torch:\n" + "\n".join(uses)
    allowed = set(sys.stdlib_module_names) | {"numpy", "__future__"}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if not node.level else []
        else:
            continue
        for name in names:
            assert name.split(".")[0] in allowed, f"ctc.py imports {name}: numpy and the standard library only"
