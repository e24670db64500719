import math
import struct

import numpy as np
import pytest

from lowp import to_bf16, to_e4m3fn, to_e5m2

# name: (function, exponent bits, mantissa bits, largest finite code, infinity code or None,
# canonical NaN code, result dtype)
FORMATS = {
    "bf16": (to_bf16, 8, 7, 0x7F7F, 0x7F80, 0x7FC0, np.uint16),
    "e4m3fn": (to_e4m3fn, 4, 3, 0x7E, None, 0x7F, np.uint8),
    "e5m2": (to_e5m2, 5, 2, 0x7B, 0x7C, 0x7E, np.uint8),
}
NAMES = list(FORMATS)
# NaN payloads (OR-ed into the infinity pattern): only in the low 16 bits, the quiet bit
# alone, every bit set.
NAN_PAYLOADS = [1, 0x8000, 0xFFFF, 0x400000, 0x7FFFFF]
# Infinity, the largest float32, and float32 subnormals (a bfloat16 tie among them).
SPECIAL = [0x7F800000, 0x7F7FFFFF, 1, 0x8000, 0x8001, 0x7FFFFF]


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def bits_of(value):
    return struct.unpack("<I", struct.pack("<f", value))[0]


def as_f32(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


def value_of(code, exp_bits, man_bits):
    """The value of a non-negative finite code, from the definition of the format (exact in
    a Python float: at most 8 significant bits and exponents within float64's range)."""
    bias = 2 ** (exp_bits - 1) - 1
    field, mantissa = code >> man_bits, code % 2**man_bits
    if field == 0:
        return math.ldexp(mantissa, 1 - bias - man_bits)
    return math.ldexp(2**man_bits + mantissa, field - bias - man_bits)


CODE_OF_VALUE = {name: {value_of(c, f[1], f[2]): c for c in range(f[3] + 1)} for name, f in FORMATS.items()}


def expected(bits, name, saturate):
    """The contract for one float32 pattern: the exact value rounded to the nearest multiple
    of the format's spacing at its exponent, ties to even (every step is exact in float64)."""
    _, exp_bits, man_bits, largest, infinity, nan_code, _ = FORMATS[name]
    sign = (bits >> 31) << (exp_bits + man_bits)
    magnitude = bits & 0x7FFFFFFF
    if magnitude > 0x7F800000:
        return nan_code
    if magnitude < 0x7F800000:
        value = f32(magnitude)
        emin = 2 - 2 ** (exp_bits - 1)
        exponent = math.frexp(value)[1] - 1 if value else emin
        spacing = math.ldexp(1.0, max(exponent, emin) - man_bits)
        rounded = round(value / spacing) * spacing  # round() on a float: half to even
        if rounded <= value_of(largest, exp_bits, man_bits):
            return CODE_OF_VALUE[name][rounded] | sign
    if saturate:
        return largest | sign
    return nan_code if infinity is None else infinity | sign


def check(name, bits, saturate):
    function, *_, dtype = FORMATS[name]
    got = function(as_f32(bits), saturate=saturate)
    want = np.array([expected(b, name, saturate) for b in bits], dtype=dtype)
    assert isinstance(got, np.ndarray) and got.dtype == dtype and got.shape == want.shape
    wrong = np.flatnonzero(got != want)
    assert wrong.size == 0, [(hex(bits[i]), hex(got[i]), hex(want[i])) for i in wrong[:10]]


def with_both_signs(magnitudes):
    return [m for m in magnitudes] + [m | 0x80000000 for m in magnitudes]


def boundary_patterns(name):
    """Float32 patterns at, one step below and one step above every code's value and every
    point half way between neighbouring codes (the last half way to the value a next code
    would have); for bfloat16 a selection of codes, with float32 subnormals among them."""
    _, exp_bits, man_bits, largest = FORMATS[name][:4]
    if name == "bf16":
        tops = {t for t in range(0x7F80) if t % 128 in (0, 1, 0x7F) or t >> 7 in (0, 0xFE)}
        return with_both_signs([t << 16 | low for t in sorted(tops) for low in (0, 1, 0x7FFF, 0x8000, 0x8001)])
    values = [value_of(c, exp_bits, man_bits) for c in range(largest + 2)]
    points = values + [(a + b) / 2 for a, b in zip(values, values[1:])]
    centres = sorted({bits_of(p) for p in points})
    return with_both_signs(sorted({c + d for c in centres for d in (-1, 0, 1) if c + d >= 0}))


@pytest.mark.parametrize("saturate", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_codes_at_and_around_every_boundary(name, saturate):
    check(name, boundary_patterns(name), saturate)


@pytest.mark.parametrize("saturate", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_every_nan_gives_the_canonical_code(name, saturate):
    check(name, with_both_signs([0x7F800000 | payload for payload in NAN_PAYLOADS]), saturate)


@pytest.mark.parametrize("saturate", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_infinities_and_float32_extremes(name, saturate):
    check(name, with_both_signs(SPECIAL), saturate)


@pytest.mark.parametrize("name", NAMES)
def test_random_bit_patterns(name):
    bits = [int(b) for b in np.random.default_rng(2024).integers(0, 2**32, 3000, dtype=np.uint64)]
    for saturate in (False, True):
        check(name, bits, saturate)


@pytest.mark.parametrize("name", NAMES)
def test_shapes_are_kept(name):
    function, *_, dtype = FORMATS[name]
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32) * 300
    for shaped in (x, x.T, np.array(-1.5e-8, dtype=np.float32), np.zeros((0, 5), dtype=np.float32)):
        got = function(shaped)
        assert got.dtype == dtype and got.shape == shaped.shape
        want = [expected(int(b), name, False) for b in shaped.ravel().view(np.uint32)]
        assert np.array_equal(got.ravel(), np.array(want, dtype=dtype))


@pytest.mark.parametrize("name", NAMES)
def test_the_input_is_never_modified(name):
    function = FORMATS[name][0]
    x = as_f32(with_both_signs(SPECIAL + [0x7F800000 | payload for payload in NAN_PAYLOADS]) + boundary_patterns(name))
    for saturate in (False, True):
        given = x.copy()
        function(given, saturate=saturate)
        assert np.array_equal(given.view(np.uint32), x.view(np.uint32))


@pytest.mark.parametrize("name", NAMES)
def test_saturate_defaults_to_false(name):
    function = FORMATS[name][0]
    bits = with_both_signs(SPECIAL + boundary_patterns(name)[::7])
    assert np.array_equal(function(as_f32(bits)), function(as_f32(bits), saturate=False))
