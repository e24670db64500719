"""float32 <-> bf16 / e4m3fn / e5m2 on bit patterns, graded bit for bit.

Every expected code comes from _oracle (exact rationals and a nearest search over the sorted
values, never bit tricks) and, where torch's casts are defined the same way, from torch too.
All comparisons are exact: a conversion either produces the right bit pattern or it does not.
"""

import numpy as np
import pytest
import torch

from lowp import (
    bf16_to_float32,
    e4m3fn_to_float32,
    e5m2_to_float32,
    float32_to_bf16,
    float32_to_e4m3fn,
    float32_to_e5m2,
)
from sb.judge import solution_source

from _oracle import SPECS, expected_decoding, expected_encoding, finite_ladder
from _source_rules import float_uses

ENCODE = {"bf16": float32_to_bf16, "e4m3fn": float32_to_e4m3fn, "e5m2": float32_to_e5m2}
DECODE = {"bf16": bf16_to_float32, "e4m3fn": e4m3fn_to_float32, "e5m2": e5m2_to_float32}
TORCH_DTYPE = {"bf16": torch.bfloat16, "e4m3fn": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
FORMATS = list(SPECS)
MODES = pytest.mark.parametrize("saturate", [False, True], ids=["overflowing", "saturating"])
FMT = pytest.mark.parametrize("fmt", FORMATS)


def as_f32(bits):
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def bits_of(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def is_f32_subnormal(x):
    b = bits_of(x) & np.uint32(0x7FFFFFFF)
    return (b != 0) & (b < np.uint32(0x00800000))


def both_signs(magnitude_bits):
    m = np.asarray(magnitude_bits, dtype=np.uint32).reshape(-1)
    return as_f32(np.concatenate([m, m | np.uint32(0x80000000)]))


def assert_codes(got, want, x, what):
    got = np.asarray(got)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, want {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}"
    bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    if bad.size:
        xb = bits_of(x).reshape(-1)
        width = 2 * want.dtype.itemsize
        shown = "; ".join(
            f"x=0x{int(xb[i]):08x} ({float(as_f32(xb[i])):.9g}): got 0x{int(got.reshape(-1)[i]):0{width}x},"
            f" want 0x{int(want.reshape(-1)[i]):0{width}x}"
            for i in bad[:8]
        )
        raise AssertionError(f"{what}: {bad.size} of {want.size} codes wrong, e.g. {shown}")


def encode_and_check(fmt, x, saturate, what):
    want, _ = expected_encoding(SPECS[fmt], x, saturate)
    assert_codes(ENCODE[fmt](x, saturate=saturate), want, x, f"{fmt} {what} (saturate={saturate})")


def near_every_value_and_midpoint(spec, radius=3):
    """Every finite value, every midpoint between neighbours (the step above the largest value
    included) and the steps beyond, each with its float32 neighbours up to `radius` ulps away."""
    ladder = finite_ladder(spec)
    points = np.concatenate([ladder, (ladder[:-1] + ladder[1:]) / 2, ladder[-1:] * 2, ladder[-1:] * 3])
    points = points[points <= float(np.finfo(np.float32).max)]
    as32 = points.astype(np.float32)
    assert np.array_equal(as32.astype(np.float64), points)  # each point is a float32 exactly
    mags = as32.view(np.uint32).astype(np.int64)
    around = (mags[:, None] + np.arange(-radius, radius + 1)[None, :]).reshape(-1)
    return both_signs(np.unique(np.clip(around, 0, 0x7F800000)))


def random_patterns(fmt, n=1 << 17):
    """Uniform random float32 bit patterns, and random values whose exponent lies within a few
    binades of the format's range (where rounding, underflow and overflow all happen)."""
    spec = SPECS[fmt]
    rng = np.random.default_rng(1000 + FORMATS.index(fmt))
    uniform = rng.integers(0, 1 << 32, size=n, dtype=np.uint64)
    emin = 1 - spec.bias
    emax = (1 << spec.exp_bits) - 1 - spec.bias
    exps = rng.integers(max(emin - spec.man_bits - 4, -126), min(emax + 3, 127) + 1, size=n) + 127
    fracs = rng.integers(0, 1 << 23, size=n)
    signs = rng.integers(0, 2, size=n) << 31
    near = (signs | (exps << 23) | fracs).astype(np.uint64)
    return as_f32(np.concatenate([uniform, near]).astype(np.uint32))


def every_binade():
    """Every float32 exponent (subnormals and infinity included) with mantissas that sit at, just
    above, exactly half-way along and at the top of the binade."""
    fracs = np.array([0, 1, 2, 0x3FFFFF, 0x400000, 0x400001, 0x7FFFFE, 0x7FFFFF, 0x123457], dtype=np.int64)
    mags = (np.arange(0, 255, dtype=np.int64)[:, None] << 23) | fracs[None, :]
    return both_signs(np.concatenate([mags.reshape(-1), [0x7F800000]]))


# ---------------------------------------------------------------- decoding


@FMT
def test_decode_every_pattern(fmt):
    spec = SPECS[fmt]
    codes = np.arange(spec.n_codes).astype(spec.dtype)
    got = np.asarray(DECODE[fmt](codes))
    assert got.dtype == np.float32 and got.shape == codes.shape
    want = expected_decoding(spec, codes)
    bad = np.flatnonzero(got.view(np.uint32) != want)
    assert not bad.size, [(hex(int(codes[i])), hex(int(got.view(np.uint32)[i])), hex(int(want[i]))) for i in bad[:8]]


@FMT
def test_decode_agrees_with_torch_on_every_non_nan_pattern(fmt):
    spec = SPECS[fmt]
    codes = np.arange(spec.n_codes).astype(spec.dtype)
    wide = torch.from_numpy(codes.view(np.int16) if fmt == "bf16" else codes)
    ref = wide.view(TORCH_DTYPE[fmt]).float().numpy()
    got = np.asarray(DECODE[fmt](codes))
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    # float32 subnormal results (bf16 subnormals) are left to the exact oracle: a CPU that
    # flushes denormals would change torch's answer there, not the prompt's.
    keep = ~nan & ~is_f32_subnormal(ref)
    assert np.array_equal(got[keep].view(np.uint32), ref[keep].view(np.uint32))


@FMT
def test_decode_keeps_the_shape(fmt):
    spec = SPECS[fmt]
    codes = np.arange(24).astype(spec.dtype).reshape(2, 3, 4) * 5
    got = np.asarray(DECODE[fmt](codes))
    assert got.shape == (2, 3, 4) and got.dtype == np.float32
    assert np.array_equal(got.view(np.uint32), expected_decoding(spec, codes))


# ---------------------------------------------------------------- encoding, exhaustively near the ladder


@FMT
@MODES
def test_encode_near_every_value_and_midpoint(fmt, saturate):
    encode_and_check(fmt, near_every_value_and_midpoint(SPECS[fmt]), saturate, "near values and midpoints")


@FMT
@MODES
def test_encode_every_float32_binade(fmt, saturate):
    encode_and_check(fmt, every_binade(), saturate, "every binade")


@FMT
@MODES
def test_encode_random_bit_patterns(fmt, saturate):
    encode_and_check(fmt, random_patterns(fmt), saturate, "random patterns")


@FMT
def test_encode_agrees_with_torch_where_nothing_overflows(fmt):
    """torch's CPU casts round to nearest even; but torch 2.13 saturates e4m3fn (inf and
    464 < |x| give 0x7E) and turns a bf16 NaN into 0xffff, and a CPU with denormals-are-zero
    conversion instructions may flush float32 subnormal inputs: only finite, normal (or zero)
    inputs that do not overflow are compared. The exact oracle covers the rest."""
    spec = SPECS[fmt]
    x = np.concatenate([near_every_value_and_midpoint(spec), random_patterns(fmt), every_binade()])
    _, overflow = expected_encoding(spec, x, False)
    keep = np.isfinite(x) & ~overflow & ~is_f32_subnormal(x)
    x = x[keep]
    ref = torch.from_numpy(x).to(TORCH_DTYPE[fmt]).view(torch.int16 if fmt == "bf16" else torch.uint8)
    ref = ref.numpy().view(spec.dtype)
    assert_codes(ENCODE[fmt](x, saturate=False), ref, x, f"{fmt} against torch")


# ---------------------------------------------------------------- the rules one at a time


@FMT
@MODES
def test_nan_becomes_the_canonical_nan_with_the_input_sign(fmt, saturate):
    spec = SPECS[fmt]
    payloads = [0x7F800001, 0x7F807FFF, 0x7F808000, 0x7F80FFFF, 0x7F810000, 0x7FBFFFFF,
                0x7FC00000, 0x7FC00001, 0x7FFF8000, 0x7FFFFFFF, 0x7FE00000]
    x = both_signs(payloads)
    want = np.array([spec.nan_code] * len(payloads) + [spec.nan_code | spec.sign_bit] * len(payloads), dtype=spec.dtype)
    assert_codes(ENCODE[fmt](x, saturate=saturate), want, x, f"{fmt} NaN")


@FMT
@MODES
def test_infinity_and_overflow(fmt, saturate):
    spec = SPECS[fmt]
    ladder = finite_ladder(spec)
    # just past the midpoint between the largest value and the step above it, and the step itself
    beyond = [np.inf, float(np.finfo(np.float32).max), (ladder[-2] + ladder[-1]) / 2 * (1 + 2.0**-20)]
    if ladder[-1] < 2.0**127:
        beyond.append(ladder[-1])
    x = np.concatenate([np.array(beyond, dtype=np.float32), -np.array(beyond, dtype=np.float32)])
    code = spec.max_code if saturate else spec.overflow_code
    want = np.array([code] * len(beyond) + [code | spec.sign_bit] * len(beyond), dtype=spec.dtype)
    assert_codes(ENCODE[fmt](x, saturate=saturate), want, x, f"{fmt} overflow")


@MODES
def test_e4m3fn_rounds_to_448_up_to_464_and_overflows_above(saturate):
    x32 = np.array([448.0, 456.0, 463.99997, 464.0, 464.00003, 470.0, 479.99997, 480.0, 500.0, 432.0, 431.99997],
                   dtype=np.float32)
    over = 0x7E if saturate else 0x7F
    want = np.array([0x7E, 0x7E, 0x7E, 0x7E, over, over, over, over, over, 0x7E, 0x7D], dtype=np.uint8)
    x = np.concatenate([x32, -x32])
    want = np.concatenate([want, want | 0x80])
    assert_codes(float32_to_e4m3fn(x, saturate=saturate), want, x, "e4m3fn near 448")
    oracle, _ = expected_encoding(SPECS["e4m3fn"], x, saturate)
    assert np.array_equal(oracle, want)


@FMT
@MODES
def test_zero_and_underflow_keep_the_sign(fmt, saturate):
    spec = SPECS[fmt]
    tiny = float(finite_ladder(spec)[1]) / 4  # a quarter of the smallest subnormal rounds to zero
    x = np.array([0.0, -0.0, tiny, -tiny, 1e-45, -1e-45], dtype=np.float32)
    want = np.array([0, spec.sign_bit] * 3, dtype=spec.dtype)
    assert_codes(ENCODE[fmt](x, saturate=saturate), want, x, f"{fmt} zeros")
    back = np.asarray(DECODE[fmt](np.array([0, spec.sign_bit], dtype=spec.dtype)))
    assert back.view(np.uint32).tolist() == [0, 0x80000000]


@FMT
@MODES
def test_every_value_round_trips(fmt, saturate):
    spec = SPECS[fmt]
    codes = np.array([c for c in range(spec.n_codes) if (c & (spec.sign_bit - 1)) <= spec.max_code], dtype=spec.dtype)
    x = as_f32(expected_decoding(spec, codes))
    assert_codes(ENCODE[fmt](x, saturate=saturate), codes, x, f"{fmt} round trip")
    assert np.array_equal(np.asarray(DECODE[fmt](codes)).view(np.uint32), x.view(np.uint32))


@FMT
def test_encode_keeps_the_shape(fmt):
    x = random_patterns(fmt, n=30)[:60].reshape(3, 4, 5)
    for saturate in (False, True):
        want, _ = expected_encoding(SPECS[fmt], x, saturate)
        assert_codes(ENCODE[fmt](x, saturate=saturate), want, x, f"{fmt} shape (3, 4, 5)")
        assert_codes(ENCODE[fmt](x[0], saturate=saturate), want[0], x[0], f"{fmt} shape (4, 5)")


# ---------------------------------------------------------------- integers only


def test_integer_operations_only():
    x = np.array([1.0, -2.5, 3e-3, 7e4, 1e-7], dtype=np.float32)
    for fmt in FORMATS:
        encode_and_check(fmt, x, False, "a few values")
        codes = np.arange(0, SPECS[fmt].n_codes, 37).astype(SPECS[fmt].dtype)
        assert np.array_equal(np.asarray(DECODE[fmt](codes)).view(np.uint32), expected_decoding(SPECS[fmt], codes))
    uses = float_uses(solution_source("lowp.py"), "lowp.py")
    assert not uses, "the prompt allows integer operations on bit patterns only: " + "; ".join(uses)
