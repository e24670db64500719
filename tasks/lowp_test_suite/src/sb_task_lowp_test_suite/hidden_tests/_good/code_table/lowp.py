"""A correct lowp written as a search in the sorted table of every finite code's value."""
import functools

import numpy as np

_FORMATS = {  # name: (exponent bits, mantissa bits, largest finite code, infinity code or None, NaN code, dtype)
    "bf16": (8, 7, 0x7F7F, 0x7F80, 0x7FC0, np.uint16),
    "e4m3fn": (4, 3, 0x7E, None, 0x7F, np.uint8),
    "e5m2": (5, 2, 0x7B, 0x7C, 0x7E, np.uint8),
}


def _value(code, exp_bits, man_bits):
    field, mantissa = code >> man_bits, code & ((1 << man_bits) - 1)
    bias = (1 << (exp_bits - 1)) - 1
    if field == 0:
        return mantissa * 2.0 ** (1 - bias - man_bits)
    return (1 + mantissa / 2**man_bits) * 2.0 ** (field - bias)


@functools.lru_cache(maxsize=None)
def _table(name):
    """Values (float64, exact) of the codes 0 .. largest + 1, the last one a value the format
    would have if its exponent went on: rounding to it is an overflow."""
    exp_bits, man_bits, largest = _FORMATS[name][:3]
    return np.array([_value(c, exp_bits, man_bits) for c in range(largest + 2)], dtype=np.float64)


def _convert(x, name, saturate):
    exp_bits, man_bits, largest, infinity, nan_code, dtype = _FORMATS[name]
    x = np.array(x, dtype=np.float32, copy=True)
    with np.errstate(invalid="ignore"):  # a signalling NaN widens to a quiet one
        magnitude = np.abs(x.astype(np.float64))
    table = _table(name)
    finite = np.isfinite(magnitude)
    clipped = np.where(finite, np.minimum(magnitude, table[-1]), 0.0)
    above = np.searchsorted(table, clipped, side="left")  # table[above - 1] < m <= table[above]
    below = np.maximum(above - 1, 0)
    gap_down, gap_up = clipped - table[below], table[above] - clipped
    pick_up = (gap_up < gap_down) | ((gap_up == gap_down) & (above % 2 == 0))
    code = np.where(pick_up, above, below).astype(np.int64)

    negative = np.signbit(x)
    overflow = ~finite | (code > largest)
    if saturate:
        code = np.where(overflow, largest, code)
    elif infinity is not None:
        code = np.where(overflow, infinity, code)
    code = code | (negative.astype(np.int64) << (exp_bits + man_bits))
    nan = np.isnan(x)
    if infinity is None and not saturate:
        nan = nan | overflow
    return np.where(nan, nan_code, code).astype(dtype)


def to_bf16(x, *, saturate=False):
    return _convert(x, "bf16", saturate)


def to_e4m3fn(x, *, saturate=False):
    return _convert(x, "e4m3fn", saturate)


def to_e5m2(x, *, saturate=False):
    return _convert(x, "e5m2", saturate)
