"""Reproducible reduction step of a gradient all-reduce.

Every finite float32 is an integer multiple of 2**-149 (the smallest subnormal), at most
(2**24 - 1) * 2**253 of them, so the exact sum of any number of shards is an integer in
those units. It is kept per element as signed 32-bit limbs in int64 arrays (vectorised),
and only the final integer is rounded, once, straight to 24 significant bits.
"""
import numpy as np

_LIMB = 32
_MASK = (1 << _LIMB) - 1
# Limbs 0..8 hold bits 0..287 (the largest exact sum of 64 shards needs 283); limb 9
# gathers anything above, which can only be an overflow.
_N_LIMBS = 10
_NAN_BITS = np.uint32(0x7FC00000)


def _normalise(limbs):
    """Carry so that limbs 0..N-2 lie in [0, 2**32); the top limb keeps the sign."""
    for j in range(_N_LIMBS - 1):
        carry = limbs[j] >> _LIMB  # arithmetic shift: floor division
        limbs[j] -= carry << _LIMB
        limbs[j + 1] += carry


class ExactAccumulator:
    """Exact running sum of float32 shards of one shape; result() rounds it once."""

    def __init__(self):
        self._shape = None

    def _start(self, shape):
        n = int(np.prod(shape, dtype=np.int64))
        self._shape = shape
        self._limbs = np.zeros((_N_LIMBS, n), dtype=np.int64)
        self._nan = np.zeros(n, dtype=bool)
        self._pos_inf = np.zeros(n, dtype=bool)
        self._neg_inf = np.zeros(n, dtype=bool)
        self._all_neg_zero = np.ones(n, dtype=bool)
        self._pending = 0

    def add(self, shard):
        shard = np.asarray(shard)
        if shard.dtype != np.float32:
            raise TypeError(f"shards must be float32, got {shard.dtype}")
        if self._shape is None:
            self._start(shard.shape)
        elif shard.shape != self._shape:
            raise ValueError(f"shard shape {shard.shape} differs from {self._shape}")
        bits = np.ascontiguousarray(shard).reshape(-1).view(np.uint32).astype(np.int64)
        negative = (bits >> 31) == 1
        biased = (bits >> 23) & 0xFF
        fraction = bits & 0x7FFFFF
        special = biased == 0xFF
        self._nan |= special & (fraction != 0)
        self._pos_inf |= special & (fraction == 0) & ~negative
        self._neg_inf |= special & (fraction == 0) & negative
        self._all_neg_zero &= bits == 0x80000000
        # value = mantissa * 2**(position - 149)
        mantissa = np.where(biased == 0, fraction, fraction | 0x800000)
        mantissa = np.where(special, 0, mantissa)
        position = np.maximum(biased - 1, 0)
        signed = np.where(negative, -mantissa, mantissa)
        limb = position // _LIMB
        shifted = signed << (position % _LIMB)  # |shifted| < 2**56
        low = shifted & _MASK
        high = shifted >> _LIMB
        flat = self._limbs.reshape(-1)
        index = limb * bits.size + np.arange(bits.size)
        flat[index] += low  # each column once per shard: no repeated index
        flat[index + bits.size] += high
        # Each add moves a limb by less than 2**32: carry long before int64 could overflow.
        self._pending += 1
        if self._pending == 1 << 20:
            _normalise(self._limbs)
            self._pending = 0

    def result(self):
        if self._shape is None:
            raise ValueError("result() before any shard was added")
        limbs = self._limbs.copy()
        _normalise(limbs)
        out_bits = _round_to_float32(limbs).view(np.uint32)
        out_bits = np.where(self._all_neg_zero, np.uint32(0x80000000), out_bits)
        inf_bits = np.where(self._pos_inf, np.uint32(0x7F800000), np.uint32(0xFF800000))
        out_bits = np.where(self._pos_inf | self._neg_inf, inf_bits, out_bits)
        out_bits = np.where(self._nan | (self._pos_inf & self._neg_inf), _NAN_BITS, out_bits)
        return out_bits.astype(np.uint32).view(np.float32).reshape(self._shape)


def _round_to_float32(limbs):
    """The exact sums (normalised limbs, units of 2**-149) rounded to nearest, ties to even."""
    n = limbs.shape[1]
    negative = limbs[-1] < 0
    limbs[:, negative] = -limbs[:, negative]
    _normalise(limbs)
    too_big = limbs[-1] != 0
    # Row 0 is a zero pad so that the limb below the top one always exists.
    padded = np.zeros((_N_LIMBS, n), dtype=np.uint64)
    padded[1:] = limbs[:-1].astype(np.uint64)
    nonzero = padded != 0
    is_zero = ~nonzero.any(axis=0)
    top = _N_LIMBS - 1 - np.argmax(nonzero[::-1], axis=0)
    top = np.where(is_zero, 1, top)
    columns = np.arange(n)
    high = padded[top, columns]
    window = (high << np.uint64(_LIMB)) | padded[top - 1, columns]
    seen_below = np.logical_or.accumulate(nonzero, axis=0)
    sticky = np.where(top >= 2, seen_below[np.maximum(top - 2, 0), columns], False)
    high_length = np.frexp(high.astype(np.float64))[1].astype(np.int64)
    base = _LIMB * (top - 2)
    top_bit = base + _LIMB + high_length - 1
    lsb = np.maximum(top_bit - 23, 0)
    shift = (lsb - base).astype(np.uint64)
    quotient = window >> shift
    remainder = window & ((np.uint64(1) << shift) - np.uint64(1))
    half = np.uint64(1) << (shift - np.uint64(1))
    odd = (quotient & np.uint64(1)) == 1
    round_up = (remainder > half) | ((remainder == half) & (sticky | odd))
    quotient = quotient + round_up.astype(np.uint64)
    with np.errstate(over="ignore"):
        magnitude = np.ldexp(quotient.astype(np.float64), lsb - 149).astype(np.float32)
    magnitude = np.where(too_big, np.float32(np.inf), magnitude)
    magnitude = np.where(is_zero, np.float32(0.0), magnitude)
    return np.where(negative, -magnitude, magnitude).astype(np.float32)


def reduce_sum(shards):
    """The exact elementwise sum of float32 arrays, correctly rounded to float32."""
    shards = list(shards)
    if not shards:
        raise ValueError("reduce_sum needs at least one shard")
    accumulator = ExactAccumulator()
    for shard in shards:
        accumulator.add(shard)
    return accumulator.result()
