"""A correct lowp written in float64 arithmetic: scale by a power of two, np.rint (half to
even), then rebuild the code from frexp of the rounded value."""
import numpy as np


def _round_and_encode(x, exp_bits, man_bits, largest, infinity, nan_code, dtype, saturate):
    x = np.asarray(x)
    with np.errstate(invalid="ignore"):  # a signalling NaN widens to a quiet one
        a = np.abs(x.astype(np.float64)).ravel()
    finite = np.isfinite(a)
    a = np.where(finite, a, 1.0)
    emin = 2 - (1 << (exp_bits - 1))
    _, e = np.frexp(a)
    quantum = np.maximum(e - 1, emin) - man_bits
    steps = np.rint(np.ldexp(a, -quantum))  # exact scaling: only the rounding is inexact
    rounded = np.ldexp(steps, quantum)

    frac, e = np.frexp(rounded)
    normal = (e - 1 >= emin) & (rounded > 0)
    mantissa = np.where(normal, np.ldexp(frac, man_bits + 1) - (1 << man_bits), np.ldexp(rounded, man_bits - emin))
    field = np.where(normal, e - 1 - emin + 1, 0)
    code = (field.astype(np.int64) << man_bits) + mantissa.astype(np.int64)

    overflow = ~finite | (code > largest)
    nan = np.isnan(x.ravel())
    if saturate:
        code[overflow] = largest
    elif infinity is None:
        nan = nan | overflow
    else:
        code[overflow] = infinity
    code = code + (np.signbit(x.ravel()).astype(np.int64) << (exp_bits + man_bits))
    code[nan] = nan_code
    return code.astype(dtype).reshape(x.shape)


def to_bf16(x, *, saturate=False):
    return _round_and_encode(x, 8, 7, 0x7F7F, 0x7F80, 0x7FC0, np.uint16, saturate)


def to_e4m3fn(x, *, saturate=False):
    return _round_and_encode(x, 4, 3, 0x7E, None, 0x7F, np.uint8, saturate)


def to_e5m2(x, *, saturate=False):
    return _round_and_encode(x, 5, 2, 0x7B, 0x7C, 0x7E, np.uint8, saturate)
