"""The brute-force model: Python integers and Fractions, following prompt.md's definitions
word for word, one element at a time. Nothing here shares code with the reference and
nothing here uses numpy's integer kernels (no //, >>, wrap-around or dtype promotion)."""
import math
from fractions import Fraction

INT32_MIN = -(2 ** 31)
INT32_MAX = 2 ** 31 - 1
HALF = Fraction(1, 2)


def quantize_multiplier(real):
    m = Fraction(real)  # the exact value of the double
    if m == 0:
        return 0, 0
    e = 0
    while m >= Fraction(2) ** e:
        e += 1
    while m < Fraction(2) ** (e - 1):
        e -= 1
    f = m / Fraction(2) ** e  # 1/2 <= f < 1
    q = math.floor(f * 2 ** 31 + HALF)  # nearest, a tie up
    if q == 2 ** 31:
        q, e = 2 ** 30, e + 1
    if e < -31:
        return 0, 0
    if e > 30:
        return INT32_MAX, 30
    return q, e


def high_mul(a, b):
    a, b = int(a), int(b)
    if a == INT32_MIN and b == INT32_MIN:
        return INT32_MAX
    p = a * b
    nudge = 2 ** 30 if p >= 0 else 1 - 2 ** 30
    return int(Fraction(p + nudge, 2 ** 31))  # int() of a Fraction truncates toward zero


def divide_by_power_of_two(x, exponent):
    v = Fraction(int(x), 2 ** int(exponent))
    low = math.floor(v)
    rest = v - low
    if rest > HALF or (rest == HALF and v > 0):
        return low + 1
    return low


def saturate32(v):
    return max(INT32_MIN, min(INT32_MAX, v))


def multiply_by_quantized_multiplier(x, q, shift):
    x, q, shift = int(x), int(q), int(shift)
    left, right = max(shift, 0), max(-shift, 0)
    return divide_by_power_of_two(high_mul(saturate32(x * 2 ** left), q), right)


def accumulators(a, za, b, zb, bias):
    """acc[i][j] = bias[j] + sum_k (a[i][k] - za) * (b[k][j] - zb[j]), in Python ints."""
    a = [[int(v) for v in row] for row in a]
    b = [[int(v) for v in row] for row in b]
    m, k, n = len(a), len(b), len(b[0])
    zb = [int(zb)] * n if isinstance(zb, int) else [int(v) for v in zb]
    bias = [0] * n if bias is None else [int(v) for v in bias]
    cols = [[b[t][j] - zb[j] for t in range(k)] for j in range(n)]
    return [[bias[j] + sum((a[i][t] - za) * cols[j][t] for t in range(k)) for j in range(n)] for i in range(m)]


def requantized_matmul(a, za, b, zb, bias, multiplier, out_zp, low, high):
    acc = accumulators(a, za, b, zb, bias)
    n = len(acc[0])
    multipliers = [multiplier] * n if isinstance(multiplier, float) else list(multiplier)
    pairs = [quantize_multiplier(float(v)) for v in multipliers]
    return [[max(low, min(high, multiply_by_quantized_multiplier(row[j], *pairs[j]) + out_zp)) for j in range(n)]
            for row in acc]


def elementwise(function, *arrays):
    """function applied to every element of the broadcast arrays, as a list of Python ints."""
    import numpy as np
    columns = np.broadcast_arrays(*[np.asarray(a) for a in arrays])
    return [function(*values) for values in zip(*(c.ravel().tolist() for c in columns))]
