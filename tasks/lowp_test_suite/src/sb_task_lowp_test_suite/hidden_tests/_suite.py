"""The judge's side of grading the solver's test_lowp.py: sb.solver_tests runs it once per
implementation of lowp (_good/NAME/lowp.py, _buggy/NAME/lowp.py), and a buggy version counts
as caught only when the run failed AND the judge's own record shows a call on which that
version behaves differently from the correct one. The contract fixes every bit of every
result, so two behaviours are alike only when exactly alike (the default rule: the same
codes, dtype and shape, and the same arguments written). What is particular to this task:
an exact model of the three formats in rational arithmetic, and the battery of calls over
the documented domain that the guards for the grader itself use."""
import functools
import pathlib
import struct
from fractions import Fraction

import numpy as np

from sb.solver_tests import SolverTests, behaviour, exactly_alike

SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_lowp.py", module="lowp",
                    functions=("to_bf16", "to_e4m3fn", "to_e5m2"),
                    run_order_seed=0,  # chosen so that a buggy version runs first and the correct ones run far apart
                    max_calls=300,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="code_table")
# The run that must not depend on an earlier one: a buggy version that departs on inputs every
# test file meets (the top eighth of every e5m2 binade), so that what a run records differs.
STANDALONE_BUGGY = ("e5m2_carry_dropped",)

# name: (function, exponent bits, mantissa bits, largest finite code, infinity code or None, NaN code)
FORMATS = {
    "bf16": ("to_bf16", 8, 7, 0x7F7F, 0x7F80, 0x7FC0),
    "e4m3fn": ("to_e4m3fn", 4, 3, 0x7E, None, 0x7F),
    "e5m2": ("to_e5m2", 5, 2, 0x7B, 0x7C, 0x7E),
}


# ---------------------------------------------------------------------------------------
# The contract in exact rational arithmetic, one float32 bit pattern at a time.

def decode(code: int, exp_bits: int, man_bits: int) -> Fraction:
    """The value of a non-negative finite code, from the definition of the format."""
    bias = (1 << (exp_bits - 1)) - 1
    field, mantissa = code >> man_bits, code & ((1 << man_bits) - 1)
    if field == 0:
        return Fraction(mantissa) * Fraction(2) ** (1 - bias - man_bits)
    return Fraction((1 << man_bits) + mantissa) * Fraction(2) ** (field - bias - man_bits)


@functools.lru_cache(maxsize=None)
def code_of_value(fmt: str) -> dict:
    _, exp_bits, man_bits, largest = FORMATS[fmt][:4]
    return {decode(c, exp_bits, man_bits): c for c in range(largest + 1)}


def exact_code(bits: int, fmt: str, saturate: bool) -> int:
    """The code the contract gives float32 bit pattern `bits`: round the exact value to the
    nearest multiple of the format's spacing at its exponent (half to even), then overflow."""
    _, exp_bits, man_bits, largest, infinity, nan_code = FORMATS[fmt]
    sign_bit = (bits >> 31) << (exp_bits + man_bits)
    magnitude = bits & 0x7FFFFFFF
    if magnitude > 0x7F800000:
        return nan_code
    overflow = magnitude == 0x7F800000
    if not overflow:
        value = Fraction(struct.unpack("<f", struct.pack("<I", magnitude))[0])
        emin = 2 - (1 << (exp_bits - 1))
        exponent = emin
        if value:
            exponent = value.numerator.bit_length() - value.denominator.bit_length()
            exponent -= Fraction(2) ** exponent > value
        spacing = Fraction(2) ** (max(exponent, emin) - man_bits)
        rounded = round(value / spacing) * spacing  # Fraction rounds half to even
        overflow = rounded > decode(largest, exp_bits, man_bits)
    if overflow and saturate:
        return largest | sign_bit
    if overflow:
        return nan_code if infinity is None else infinity | sign_bit
    return code_of_value(fmt)[rounded] | sign_bit


# ---------------------------------------------------------------------------------------
# A battery of calls over the documented domain, for the guards below.

def _f32_bits(value: Fraction) -> int:
    """The float32 pattern of an exactly representable value (infinity beyond float32's range)."""
    if value > Fraction(np.finfo(np.float32).max.item()):
        return 0x7F800000
    return struct.unpack("<I", struct.pack("<f", float(value)))[0]


# Zeros, infinities, NaNs whose payload sits in the high, the low or both halves, float32
# subnormals (ties and neighbours for bfloat16 among them), and the largest float32.
SPECIAL = [0, 0x7F800000, 0x7F800001, 0x7F800002, 0x7F807FFF, 0x7F808000, 0x7F80FFFF, 0x7F810000,
           0x7FBFFFFF, 0x7FC00000, 0x7FC00001, 0x7FFF7FFF, 0x7FFF8000, 0x7FFFFFFF, 0x7F7FFFFF,
           0x00000001, 0x00007FFF, 0x00008000, 0x00008001, 0x00018000, 0x00400000, 0x007FFFFF,
           0x00800000, 0x3F7FFFFF, 0x3F800000, 0x3FFFFFFF]


@functools.lru_cache(maxsize=None)
def boundary_bits(fmt: str) -> np.ndarray:
    """Float32 patterns at, just below and just above every code's value and every point
    half way between neighbouring codes (the last one half way to where the next code would
    be), both signs (for bfloat16, the codes of a few mantissas at every exponent and of
    every mantissa at the lowest and highest exponents); plus zeros, infinities, NaNs of
    many payloads, float32 subnormals and random patterns."""
    _, exp_bits, man_bits, largest = FORMATS[fmt][:4]
    if fmt == "bf16":
        tops = np.array([t for t in range(0x8000) if t & 0x7F in (0, 1, 0x3F, 0x40, 0x7E, 0x7F)
                         or t >> 7 in (0, 1, 0xFE, 0xFF)], dtype=np.int64)
        lows = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=np.int64)
        near = ((tops[:, None] << 16) | lows[None, :]).ravel()
    else:
        values = [decode(c, exp_bits, man_bits) for c in range(largest + 2)]
        points = values + [(a + b) / 2 for a, b in zip(values, values[1:])]
        centres = np.array(sorted({_f32_bits(p) for p in points}), dtype=np.int64)
        near = np.concatenate([centres - 1, centres, centres + 1])
        near = near[(near >= 0) & (near <= 0x7F800000)]
    rng = np.random.default_rng(7)
    magnitudes = np.concatenate([near, SPECIAL, rng.integers(0, 0x7FFFFFFF, 4000)]).astype(np.uint32)
    return np.concatenate([magnitudes, magnitudes | np.uint32(0x80000000)])


@functools.lru_cache(maxsize=None)
def battery() -> list:
    calls = []
    for fmt, (function, *_rest) in FORMATS.items():
        x = boundary_bits(fmt).view(np.float32)
        calls.append((function, (x,), {}))
        for saturate in (False, True):
            calls.append((function, (x,), {"saturate": saturate}))
        shaped = x[:24].reshape(2, 3, 4)
        calls += [(function, (shaped,), {"saturate": True}), (function, (np.array(-2.5e-6, dtype=np.float32),), {}),
                  (function, (np.zeros((0, 3), np.float32),), {})]
    return calls


@functools.lru_cache(maxsize=None)
def _battery_behaviour(kind: str, name: str, index: int) -> tuple:
    return behaviour(SUITE.load(kind, name), battery()[index])


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must behave differently from the correct one somewhere on the
    documented domain, or no test file could be asked to catch it."""
    return any(not exactly_alike(_battery_behaviour("buggy", name, i), _battery_behaviour("good", SUITE.reference, i))
               for i in range(len(battery())))


def _model_codes(fmt: str, bits: np.ndarray, saturate: bool) -> np.ndarray:
    dtype = np.uint16 if fmt == "bf16" else np.uint8
    return np.array([exact_code(int(b), fmt, saturate) for b in bits], dtype=dtype)


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> bool:
    """Every correct implementation returns exactly the exact model's codes (float8 formats
    over their whole boundary set; bfloat16 over a sample of it, the model being slow), with
    the input's shape, and every one gives the same bits on every call of the battery."""
    rng = np.random.default_rng(11)
    for fmt, (function, *_rest) in FORMATS.items():
        bits = boundary_bits(fmt)
        if fmt == "bf16":
            special = np.array(SPECIAL, dtype=np.uint32)
            bits = np.concatenate([special, special | np.uint32(0x80000000), rng.choice(bits, 8000, replace=False)])
        for saturate in (False, True):
            want = _model_codes(fmt, bits, saturate)
            for name in SUITE.good:
                got = getattr(SUITE.load("good", name), function)(bits.view(np.float32), saturate=saturate)
                if got.dtype != want.dtype or not np.array_equal(got, want):
                    return False
    reference = [_battery_behaviour("good", SUITE.reference, i) for i in range(len(battery()))]
    return all(exactly_alike(_battery_behaviour("good", name, i), reference[i])
               for name in SUITE.good for i in range(len(battery())))
