"""Decimal text to and from bfloat16 / float8 bit patterns, in exact integer arithmetic."""
import re

# name: (exponent bits, mantissa bits, has infinities)
_FORMATS = {
    "bfloat16": (8, 7, True),
    "float8_e5m2": (5, 2, True),
    "float8_e4m3fn": (4, 3, False),
}

_NUMBER = re.compile(r"([+-]?)(?:([0-9]+)(?:\.([0-9]*))?|\.([0-9]+))(?:[eE]([+-]?[0-9]{1,5}))?")
_SPECIAL = re.compile(r"([+-]?)(inf|infinity|nan)", re.IGNORECASE)
_MAX_LENGTH = 200


class _Format:
    def __init__(self, name):
        if name not in _FORMATS:
            raise ValueError(f"unknown format {name!r}")
        self.E, self.M, self.ieee = _FORMATS[name]
        self.bias = (1 << (self.E - 1)) - 1
        self.sign = 1 << (self.E + self.M)
        top = (1 << self.E) - 1                     # the all-ones exponent field
        if self.ieee:
            self.inf = top << self.M
            self.nan = self.inf | (1 << (self.M - 1))
            self.max_finite = self.inf - 1
        else:
            self.inf = None
            self.nan = (top << self.M) | ((1 << self.M) - 1)
            self.max_finite = self.nan - 1

    def is_nan(self, mag):
        return mag > self.inf if self.ieee else mag == self.nan

    def overflow(self):
        return self.inf if self.ieee else self.nan

    def round(self, num, den):
        """Bits of the positive value num/den, rounded to nearest even, overflow applied."""
        e = num.bit_length() - den.bit_length()     # num/den is in (2^(e-1), 2^(e+1))
        if num << max(-e, 0) < den << max(e, 0):
            e -= 1                                  # now 2^e <= num/den < 2^(e+1)
        emin = 1 - self.bias
        e = max(e, emin)
        shift = e - self.M                          # the spacing of the values here is 2^shift
        a, b = num << max(-shift, 0), den << max(shift, 0)
        q, r = divmod(a, b)                         # num/den = (q + r/b) * 2^shift
        if 2 * r > b or (2 * r == b and q & 1):
            q += 1                                  # a carry to 2^(M+1) moves to the next binade
        bits = ((e - emin) << self.M) + q
        return self.overflow() if bits > self.max_finite else bits


def _format(fmt):
    return _Format(fmt)


def decimal_to_bits(text, fmt):
    f = _format(fmt)
    if not isinstance(text, str) or len(text) > _MAX_LENGTH or not text.isascii():
        raise ValueError(f"not a decimal number: {text!r}")
    special = _SPECIAL.fullmatch(text)
    if special:
        sign = f.sign if special.group(1) == "-" else 0
        if special.group(2).lower() == "nan":
            return sign | f.nan
        return sign | f.overflow()
    number = _NUMBER.fullmatch(text)
    if not number:
        raise ValueError(f"not a decimal number: {text!r}")
    sign = f.sign if number.group(1) == "-" else 0
    whole = number.group(2) or ""
    fraction = number.group(3) or number.group(4) or ""
    digits = int(whole + fraction)
    exp10 = int(number.group(5) or "0") - len(fraction)
    if digits == 0:
        return sign
    return sign | f.round(digits * 10 ** max(exp10, 0), 10 ** max(-exp10, 0))


def _floor_log10(num, den):
    """The integer L with 10^L <= num/den < 10^(L+1)."""
    L = len(str(num)) - len(str(den))              # num/den is in (10^(L-1), 10^(L+1))
    if num * 10 ** max(-L, 0) < den * 10 ** max(L, 0):
        L -= 1
    return L


def _shortest(low, v, high, den, closed):
    """(n, q): n * 10^q is the decimal in [low/den, high/den] (open unless closed) with the
    fewest significant digits, nearest v/den among those, even n on a tie."""
    decades = range(_floor_log10(low, den), _floor_log10(high, den) + 1)
    p = 1
    while True:
        best = None
        for lead in decades:
            q = lead - p + 1                        # p-digit numbers n * 10^q in [10^lead, 10^(lead+1))
            unit, scale = den * 10 ** max(q, 0), 10 ** max(-q, 0)
            lo, hi, at = low * scale, high * scale, v * scale   # n * 10^q = n * unit / (den * scale)
            n_min, n_max = -(-lo // unit), hi // unit
            if not closed:
                n_min += lo % unit == 0
                n_max -= hi % unit == 0
            n_min, n_max = max(n_min, 10 ** (p - 1)), min(n_max, 10 ** p - 1)
            if n_min > n_max:
                continue
            t = at // unit
            for n in {min(max(t, n_min), n_max), min(max(t + 1, n_min), n_max)}:
                # distance |n * 10^q - v/den| = |n * unit - at| / (den * scale)
                gap_num, gap_den = abs(n * unit - at), den * scale
                key = (gap_num, gap_den, n & 1)
                if best is None or _closer(key, best[0]):
                    best = (key, n, q)
        if best is not None:
            return best[1], best[2]
        p += 1


def _closer(a, b):
    """Key a ranks before key b: a smaller distance, then an even last digit."""
    left, right = a[0] * b[1], b[0] * a[1]
    return left < right or (left == right and a[2] < b[2])


def bits_to_decimal(bits, fmt):
    f = _format(fmt)
    if type(bits) is not int or not 0 <= bits < 2 * f.sign:
        raise ValueError(f"not a bit pattern of {fmt}: {bits!r}")
    negative, mag = bits & f.sign, bits & (f.sign - 1)
    if f.is_nan(mag):
        return "nan"
    if mag == f.inf:
        return "-inf" if negative else "inf"
    if mag == 0:
        return "-0.0" if negative else "0.0"
    field, m = mag >> f.M, mag & ((1 << f.M) - 1)
    if field == 0:
        c, k = m, 1 - f.bias - f.M
    else:
        c, k = m | (1 << f.M), field - f.bias - f.M
    # value = c * 2^k; in units of 2^(k-2) it is 4c, the midpoint above is 4c + 2 and the one
    # below 4c - 2, or 4c - 1 at a power of two above the smallest normal (half the spacing)
    below = 1 if m == 0 and field > 1 else 2
    scale, den = 1 << max(k - 2, 0), 1 << max(2 - k, 0)
    n, q = _shortest((4 * c - below) * scale, 4 * c * scale, (4 * c + 2) * scale, den, c % 2 == 0)
    text = repr(float(f"{n}e{q}"))
    return "-" + text if negative else text
