"""The rotation by the real-number angle p * base ** (-2i/r), evaluated in decimal arithmetic
with 40 significant digits (far beyond float64), independent of every implementation."""
import decimal
import functools

import numpy as np

_CONTEXT = decimal.Context(prec=40)
_PI = decimal.Decimal("3.14159265358979323846264338327950288419716939937510582097494459")


def _cos_sin(angle: decimal.Decimal) -> tuple:
    """cos and sin of a decimal angle by Taylor series after reduction to [-pi, pi]."""
    ctx = _CONTEXT
    two_pi = ctx.multiply(2, _PI)
    turns = ctx.divide_int(ctx.add(angle, _PI), two_pi)
    y = ctx.subtract(angle, ctx.multiply(turns, two_pi))
    y2 = ctx.multiply(y, y)
    cos, sin = decimal.Decimal(1), y
    term_c, term_s, n = decimal.Decimal(1), y, 1
    while True:
        term_c = ctx.divide(ctx.multiply(-term_c, y2), (2 * n - 1) * (2 * n))
        term_s = ctx.divide(ctx.multiply(-term_s, y2), (2 * n) * (2 * n + 1))
        if abs(term_c) < decimal.Decimal("1e-45") and abs(term_s) < decimal.Decimal("1e-45"):
            break
        cos, sin = ctx.add(cos, term_c), ctx.add(sin, term_s)
        n += 1
    return cos, sin


@functools.lru_cache(maxsize=None)
def _inv_freq(base: float, rot: int, i: int) -> decimal.Decimal:
    if i == 0:
        return decimal.Decimal(1)
    exponent = ctx_div(decimal.Decimal(-2 * i), decimal.Decimal(rot))
    return _CONTEXT.exp(_CONTEXT.multiply(exponent, _CONTEXT.ln(decimal.Decimal(base))))


def ctx_div(a, b):
    return _CONTEXT.divide(a, b)


@functools.lru_cache(maxsize=None)
def cos_sin(p: int, base: float, rot: int, i: int) -> tuple:
    """(cos, sin) of theta = p * base ** (-2i/rot), rounded to float64 from 40 digits."""
    angle = _CONTEXT.multiply(decimal.Decimal(p), _inv_freq(base, rot, i))
    c, s = _cos_sin(angle)
    return float(c), float(s)


def pairs(rot: int, layout: str) -> list:
    half = rot // 2
    if layout == "half":
        return [(i, i + half) for i in range(half)]
    return [(2 * i, 2 * i + 1) for i in range(half)]


def exact(x, positions, *, base=10000.0, rotary_dim=None, layout="half"):
    """(value, scale): the exact result rounded to float64 and, per entry, |x_a| + |x_b| of
    the pair it belongs to (0 for the features passed through unchanged). The rounding of
    cos/sin to float64 and the float64 products here add at most ~4e-16 * scale."""
    x = np.asarray(x, dtype=np.float64)
    rot = x.shape[-1] if rotary_dim is None else rotary_dim
    value, scale = x.copy(), np.zeros_like(x)
    table = np.array([[cos_sin(int(p), float(base), rot, i) for i in range(rot // 2)] for p in positions])
    for i, (a, b) in enumerate(pairs(rot, layout)):
        c, s = table[:, i, 0], table[:, i, 1]
        xa, xb = x[..., a], x[..., b]
        value[..., a] = xa * c - xb * s
        value[..., b] = xb * c + xa * s
        scale[..., a] = scale[..., b] = np.abs(xa) + np.abs(xb)
    return value, scale
