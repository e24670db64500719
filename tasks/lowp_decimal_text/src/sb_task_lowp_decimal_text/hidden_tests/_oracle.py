"""The brute-force oracle: exact rationals and searches, nothing borrowed from a solution.

Every bit pattern of a format is decoded by the definition (sign, exponent field, mantissa
field) into a fractions.Fraction. Parsing takes the exact value of the text and finds the
nearest of the sorted values by comparison; formatting tries every p-digit decimal near the
value, p = 1, 2, ..., and keeps those that this module's own parser maps back to the pattern.
"""
import bisect
import re
from fractions import Fraction
from functools import lru_cache

# name: (exponent bits, mantissa bits, IEEE-like specials (inf and NaN at the top exponent))
SPECS = {
    "bfloat16": (8, 7, True),
    "float8_e5m2": (5, 2, True),
    "float8_e4m3fn": (4, 3, False),
}
FORMATS = list(SPECS)
# the NaN each format's parse returns (sign bit clear); stated in the prompt
CANONICAL_NAN = {"bfloat16": 0x7FC0, "float8_e5m2": 0x7E, "float8_e4m3fn": 0x7F}

# the grammar of the prompt, written out independently of any solution
_GRAMMAR = re.compile(
    r"(?P<sign>[+-]?)(?:(?P<special>(?i:inf|infinity|nan))"
    r"|(?P<mant>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]{1,5}))?)",
    re.ASCII)
MAX_LENGTH = 200


class Format:
    def __init__(self, name):
        E, M, ieee = SPECS[name]
        self.name, self.E, self.M, self.ieee = name, E, M, ieee
        self.bias = 2 ** (E - 1) - 1
        self.width = 1 + E + M
        self.sign_bit = 1 << (E + M)
        self.value = {}          # bits -> Fraction, "inf", "-inf" or "nan"
        for bits in range(1 << self.width):
            self.value[bits] = self._decode(bits)
        positives = sorted((v, b) for b, v in self.value.items()
                           if isinstance(v, Fraction) and b < self.sign_bit)
        self.max_finite, self.max_bits = positives[-1]
        # The exponent range continued upward: the next value above the largest finite one
        # (the same spacing as below it) and the pattern it would have: max_bits + 1.
        self.step = 2 * self.max_finite - positives[-2][0]
        self.step_bits = self.max_bits + 1
        ladder = positives + [(self.step, self.step_bits)]
        # Integers: every value times 2^S, S chosen so half the smallest subnormal is 1.
        self.S = self.bias + M
        self.scaled = [int(v * 2 ** self.S) for v, _ in ladder]
        assert all(Fraction(x, 2 ** self.S) == v for x, (v, _) in zip(self.scaled, ladder))
        self.ladder_bits = [b for _, b in ladder]
        self.finite_bits = [b for b, v in self.value.items() if isinstance(v, Fraction)]
        self.nan_bits = [b for b, v in self.value.items() if v == "nan"]
        self.inf_bits = [b for b, v in self.value.items() if v == "inf"]

    def _decode(self, bits):
        s = bits >> (self.E + self.M)
        e = (bits >> self.M) & ((1 << self.E) - 1)
        m = bits & ((1 << self.M) - 1)
        top = (1 << self.E) - 1
        if self.ieee and e == top:
            return "nan" if m else ("-inf" if s else "inf")
        if not self.ieee and e == top and m == (1 << self.M) - 1:
            return "nan"
        if e == 0:
            mag = Fraction(m, 1 << self.M) * Fraction(2) ** (1 - self.bias)
        else:
            mag = (1 + Fraction(m, 1 << self.M)) * Fraction(2) ** (e - self.bias)
        return -mag if s else mag

    # ---- parsing -------------------------------------------------------------------
    def overflow_bits(self, negative):
        if self.ieee:
            mag = self.inf_bits[0]
        else:
            mag = CANONICAL_NAN[self.name]
        return mag | (self.sign_bit if negative else 0)

    def round_magnitude(self, num, den):
        """Magnitude bits of num/den >= 0 rounded to nearest, ties to the even pattern, with
        the exponent range unbounded; None when it overflows."""
        scaled_num = num << self.S             # the value times 2^S is scaled_num / den
        if scaled_num >= self.scaled[-1] * den:
            return None                         # at or beyond the step: overflow
        floor = scaled_num // den
        i = bisect.bisect_right(self.scaled, floor) - 1
        below, above = self.scaled[i], self.scaled[i + 1]   # below <= value < above
        twice = 2 * scaled_num - (below + above) * den       # sign of 2*value - (below + above)
        if twice < 0:
            j = i
        elif twice > 0:
            j = i + 1
        else:
            j = i if self.ladder_bits[i] % 2 == 0 else i + 1
        bits = self.ladder_bits[j]
        return None if bits == self.step_bits else bits

    def parse_exact(self, negative, num, den):
        mag = self.round_magnitude(num, den)
        if mag is None:
            return self.overflow_bits(negative)
        return mag | (self.sign_bit if negative else 0)

    def parse(self, text):
        """The oracle's parse: the bits, or the string "ValueError"."""
        match = _GRAMMAR.fullmatch(text) if len(text) <= MAX_LENGTH else None
        if match is None:
            return "ValueError"
        negative = match["sign"] == "-"
        if match["special"] is not None:
            if match["special"].lower() == "nan":
                return CANONICAL_NAN[self.name] | (self.sign_bit if negative else 0)
            return self.overflow_bits(negative)
        x = Fraction(match["mant"]) * Fraction(10) ** int(match["exp"] or 0)
        return self.parse_exact(negative, x.numerator, x.denominator)

    # ---- formatting ----------------------------------------------------------------
    def shortest_digits(self, bits):
        """(n, q) for a finite nonzero pattern: n * 10^q, n with no trailing zero.

        Integers throughout: V = |value| * 2^S, and n * 10^q compared with it as
        n * 10^q * 2^S (q >= 0) or n * 2^S / 10^-q."""
        V = int(abs(self.value[bits]) * 2 ** self.S)
        one = 1 << self.S                        # 1.0 in these units
        mag = bits & (self.sign_bit - 1)

        def at_least_power(x_scaled, e):        # x >= 10^e, for x = x_scaled / 2^S
            return x_scaled >= 10 ** e * one if e >= 0 else x_scaled * 10 ** -e >= one

        # 10^lead <= |value| < 10^(lead + 1): start from the bit length's estimate, then step
        lead = (V.bit_length() - self.S) * 3 // 10
        while not at_least_power(V, lead):
            lead -= 1
        while at_least_power(V, lead + 1):
            lead += 1
        p = 1
        while True:
            found = []
            smallest, largest = 10 ** (p - 1), 10 ** p - 1     # the p-digit integers
            for decade in (lead - 1, lead, lead + 1):
                q = decade - p + 1
                if q >= 0:
                    unit, den = 10 ** q, 1
                    t = V // (unit * one)                      # floor(|value| / 10^q)
                else:
                    unit, den = 1, 10 ** -q
                    t = (V * den) // one
                for n in {t - 2, t - 1, t, t + 1, t + 2, t + 3, smallest, largest}:
                    if n < smallest or n > largest or n % 10 == 0:
                        continue            # not exactly p significant digits at this q
                    num = n * unit
                    scaled = num * one            # the candidate is scaled / den in V's units
                    if not V * den < 2 * scaled < 4 * V * den:
                        continue            # outside (value / 2, 2 * value): every pattern's
                        #                     rounding interval lies inside that, the smallest
                        #                     subnormal's (value / 2, 3 * value / 2) the widest
                    if self.round_magnitude(num, den) == mag:
                        # distance |n * 10^q - value| = |num * 2^S - V * den| / (den * 2^S)
                        found.append((Fraction(abs(num * one - V * den), den), n % 2, n, q))
            if found:
                found.sort()
                if len(found) > 1:
                    # a tie the prompt's rule could not settle would show here
                    assert found[0][:2] != found[1][:2], (self.name, bits, found[:2])
                return found[0][2], found[0][3]
            p += 1

    def format(self, bits):
        v = self.value[bits]
        if v == "nan":
            return "nan"
        if v in ("inf", "-inf"):
            return v
        negative = bits >= self.sign_bit
        if v == 0:
            return "-0.0" if negative else "0.0"
        n, q = self.shortest_digits(bits)
        text = spell(n, q)
        return "-" + text if negative else text


def spell(n, q):
    """The canonical spelling: repr of the float64 nearest n * 10^q, checked to carry
    exactly the digits of n (so it is the decimal itself, written as Python writes it)."""
    text = repr(float(f"{n}e{q}"))
    mantissa = text.split("e")[0].replace(".", "").lstrip("0").rstrip("0")
    assert mantissa == str(n), (n, q, text)
    assert Fraction(text) == Fraction(n) * Fraction(10) ** q, (n, q, text)
    return text


@lru_cache(maxsize=None)
def fmt(name):
    return Format(name)


@lru_cache(maxsize=None)
def all_formatted(name):
    """The oracle's string for every bit pattern of the format, in order."""
    f = fmt(name)
    return tuple(f.format(b) for b in range(1 << f.width))


def exact_decimal(x):
    """The exact decimal expansion of a dyadic Fraction, as (digits, exponent): x = digits * 10^exponent."""
    num, den = x.numerator, x.denominator
    k = 0
    while den % 2 == 0:
        den //= 2
        k += 1
    assert den == 1, x
    # num / 2^k = num * 5^k / 10^k
    return num * 5 ** k, -k
