"""The judge's side of grading the solver's test_quantize.py: sb.solver_tests runs it once per
implementation of quantize.py (_good/NAME/quantize.py, _buggy/NAME/quantize.py), and a buggy
version counts as caught only when the run failed AND the judge's own record shows a call on
which that version behaves differently from the correct one. What is particular to this
task: two behaviours are alike only when exactly equal (the contract fixes every bit of q,
scale, zero_point and of dequantize's result, so correct implementations agree bit for bit),
except that the text of an exception is free; and the battery of calls over the documented
domain that the guards for the grader itself use."""
import functools
import itertools
import math
import pathlib
from fractions import Fraction

import numpy as np

from sb.solver_tests import SolverTests, behaviour, exact_form


def alike(a: tuple, b: tuple) -> bool:
    """The same exception type (its text is free), or exactly the same result (values,
    dtypes and shapes, bit for bit) and exactly the same arguments written."""
    if a[0] != b[0]:
        return False
    if a[0] == "raises":
        return a[1] == b[1]
    written_a, written_b = dict(a[2]), dict(b[2])
    if written_a.keys() != written_b.keys():
        return False
    if any(exact_form(written_a[key]) != exact_form(written_b[key]) for key in written_a):
        return False
    return exact_form(a[1]) == exact_form(b[1])


SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_quantize.py", module="quantize",
                    functions=("quantize", "dequantize"), alike=alike,
                    run_order_seed=0,  # chosen so that a buggy version runs first and the correct ones run far apart
                    max_calls=500,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="element_loop")
# The buggy version that must not depend on an earlier run: one that departs on many calls
# (the scale of nearly every float32 input), so that what a run records differs.
STANDALONE_BUGGY = ("scale_in_input_dtype",)


# ---------------------------------------------------------------------------------------
# An independent model of the contract: Python floats (IEEE float64) element by element.

def _limits(bits: int, symmetric: bool) -> tuple:
    if symmetric:
        return -(2 ** (bits - 1) - 1), 2 ** (bits - 1) - 1, np.int8 if bits <= 8 else np.int16
    return 0, 2**bits - 1, np.uint8 if bits <= 8 else np.uint16


def _round_half_even(v: float) -> int:
    below = math.floor(v)
    rest = v - below  # exact: v and its floor are within one binade
    if rest != 0.5:
        return below + (rest > 0.5)
    return below + (below % 2)


def model_quantize(x: np.ndarray, axis, symmetric: bool, bits: int) -> tuple:
    """The contract for a valid call: (q, scale, zero_point)."""
    qmin, qmax, dtype = _limits(bits, symmetric)
    channels = 1 if axis is None else x.shape[axis]
    q = np.zeros(x.shape, dtype=np.int64)
    scales, zero_points = [], []
    for c in range(channels):
        index = [slice(None)] * x.ndim
        if axis is not None:
            index[axis] = c
        values = [float(v) for v in np.asarray(x[tuple(index)]).ravel()]
        if symmetric:
            a = max(abs(v) for v in values)
            scale, zp = (a / qmax if a > 0 else 1.0), 0
        else:
            lo, hi = min(min(values), 0.0), max(max(values), 0.0)
            scale = (hi - lo) / qmax if hi > lo else 1.0
            zp = min(max(_round_half_even(-lo / scale), 0), qmax)
        block = np.vectorize(lambda v, s=scale, z=zp: min(max(_round_half_even(float(v) / s) + z, qmin), qmax),
                             otypes=[np.int64])(x[tuple(index)])
        q[tuple(index)] = block
        scales.append(scale)
        zero_points.append(zp)
    if axis is None:
        return q.astype(dtype), np.array(scales[0]), np.array(zero_points[0], dtype=np.int32)
    return q.astype(dtype), np.array(scales), np.array(zero_points, dtype=np.int32)


def model_dequantize(q, scale, zero_point, axis) -> np.ndarray:
    out = np.zeros(q.shape)
    for index in itertools.product(*(range(n) for n in q.shape)):
        c = () if axis is None else (index[axis],)
        out[index] = (int(q[index]) - int(zero_point[c])) * float(scale[c])
    return out


# ---------------------------------------------------------------------------------------
# Guards for the grader itself, over a battery of calls on the documented domain.

def _valid_inputs() -> list:
    """(x, axis, symmetric, bits) over the documented domain, every region of it."""
    rng = np.random.default_rng(20261203)
    cases = []
    shapes = [(7,), (3, 5), (4, 1), (1, 6), (2, 3, 4), (3, 2, 2, 2)]
    for dtype, shape, symmetric in itertools.product((np.float32, np.float64), shapes, (True, False)):
        x = (rng.standard_normal(shape) * 3).astype(dtype)
        for axis in [None] + list(range(-len(shape), len(shape))):
            for bits in (2, 8, 9, 16):
                cases.append((x, axis, symmetric, bits))
    for dtype, sign in itertools.product((np.float32, np.float64), (1, -1)):  # one-signed channels
        x = (sign * (rng.random((3, 4)) + 0.5)).astype(dtype)
        cases += [(x, axis, False, bits) for axis in (None, 0, 1) for bits in (4, 8, 16)]
    for dtype in (np.float32, np.float64):  # an all-zero channel among others, and an all-zero tensor
        x = rng.standard_normal((3, 4)).astype(dtype)
        x[1] = 0
        cases += [(x, axis, s, 8) for axis in (0, -2) for s in (True, False)]
        cases += [(np.zeros((2, 3), dtype), axis, s, b) for axis in (None, 1) for s in (True, False) for b in (3, 8)]
    ties = np.arange(-127, 128) + 0.5  # scale 1 exactly (max |x| = 127): x / scale is every tie
    for dtype in (np.float32, np.float64):
        cases.append((np.append(ties[(ties > -127) & (ties < 127)], 127.0).astype(dtype), None, True, 8))
        for lo in (-100.0, -101.0, -2.5, -3.5, -7.5):  # affine, scale 1: zero points even, odd, and tied
            x = np.concatenate([[lo, lo + 255.0], np.arange(lo + 0.5, lo + 255.0, 1.0)]).astype(dtype)
            cases.append((x, None, False, 8))
            cases.append((np.stack([x, x[::-1]]), 0, False, 8))
    for bits in (8, 12, 16):  # float32 values whose float64 quotient sits next to a tie
        qmax = 2 ** (bits - 1) - 1
        scale = 1.0 / qmax
        near = np.float32((np.arange(1, qmax, max(1, qmax // 300)) + 0.5) * scale)
        cases.append((np.append(near, np.float32(1.0)), None, True, bits))
        cases.append((np.append(near, np.float32(1.0)).astype(np.float64), None, True, bits))
    return cases


def _invalid_calls() -> list:
    x = np.linspace(-1.0, 2.0, 12).reshape(3, 4)
    calls = [("quantize", (x,), {"bits": b, "symmetric": s}) for b in (-1, 0, 1, 17, 32) for s in (True, False)]
    calls += [("quantize", (x,), {"axis": a}) for a in (-3, 2, 5)]
    for bad in (np.nan, np.inf, -np.inf):
        for dtype in (np.float32, np.float64):
            y = x.astype(dtype)
            y[1, 2] = bad
            calls += [("quantize", (y,), {"axis": a, "symmetric": s}) for a in (None, 0) for s in (True, False)]
    return calls


@functools.lru_cache(maxsize=None)
def battery() -> list:
    """Calls of both functions over the documented domain, and calls that must raise."""
    calls = []
    for x, axis, symmetric, bits in _valid_inputs():
        calls.append(("quantize", (x,), {"axis": axis, "symmetric": symmetric, "bits": bits}))
        q, scale, zero_point = model_quantize(x, axis, symmetric, bits)
        calls.append(("dequantize", (q, scale, zero_point), {"axis": axis}))
    return calls + _invalid_calls()


@functools.lru_cache(maxsize=None)
def _battery_behaviour(kind: str, name: str, index: int) -> tuple:
    return behaviour(SUITE.load(kind, name), battery()[index])


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must behave differently from the correct one somewhere on the
    documented domain, or no test file could be asked to catch it."""
    return any(not alike(_battery_behaviour("buggy", name, i), _battery_behaviour("good", SUITE.reference, i))
               for i in range(len(battery())))


def _model_behaviour(call: tuple) -> tuple:
    name, args, kwargs = call
    if name == "dequantize":
        return ("returns", model_dequantize(*args, kwargs["axis"]), [])
    x, axis, symmetric, bits = args[0], kwargs.get("axis"), kwargs.get("symmetric", True), kwargs.get("bits", 8)
    if not 2 <= bits <= 16 or (axis is not None and not -x.ndim <= axis < x.ndim) or not np.isfinite(x).all():
        return ("raises", "ValueError", "")
    return ("returns", model_quantize(x, axis, symmetric, bits), [])


def _round_trip_within_half_a_step(call: tuple) -> bool:
    """|dequantize(quantize(x)) - x| <= (0.5 + 1e-9) * scale, checked in exact rationals."""
    name, (x,), kwargs = call
    q, scale, zero_point = model_quantize(x, kwargs["axis"], kwargs["symmetric"], kwargs["bits"])
    back = model_dequantize(q, scale, zero_point, kwargs["axis"])
    axis = kwargs["axis"]
    for index in itertools.product(*(range(n) for n in x.shape)):
        step = Fraction(float(scale[() if axis is None else (index[axis],)]))
        if abs(Fraction(float(back[index])) - Fraction(float(x[index]))) > step * (Fraction(1, 2) + Fraction(1, 10**9)):
            return False
    return True


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> bool:
    """Every correct implementation does exactly what the independent model does on every
    battery call, and the model keeps the round-trip promise on every valid input."""
    for index, call in enumerate(battery()):
        want = _model_behaviour(call)
        if any(not alike(_battery_behaviour("good", name, index), want) for name in SUITE.good):
            return False
    return all(_round_trip_within_half_a_step(call) for call in battery()
               if call[0] == "quantize" and _model_behaviour(call)[0] == "returns")
