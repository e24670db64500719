"""High-precision reference values computed slice by slice with the decimal module.

Independent of numpy's exp/log and of any max shift: decimal's exponent range is so wide
that exp(-3000) and exp(1000) are ordinary numbers, so no stabilising trick is needed.
"""
from decimal import Decimal, localcontext

import numpy as np

NEG_INF = float("-inf")
PRECISION = 50


def _lse_decimal(values):
    finite = [Decimal(float(v)) for v in values if float(v) != NEG_INF]
    if not finite:
        return None
    return sum(d.exp() for d in finite).ln()


def _rows(x, axis):
    """Move `axis` last and flatten the rest: each row is one slice along `axis`."""
    moved = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    return moved.reshape(-1, moved.shape[-1]), moved.shape


def logsumexp(x, axis=-1):
    rows, moved_shape = _rows(x, axis)
    out = []
    with localcontext() as ctx:
        ctx.prec = PRECISION
        for row in rows:
            lse = _lse_decimal(row)
            out.append(NEG_INF if lse is None else float(lse))
    return np.array(out, dtype=np.float64).reshape(moved_shape[:-1])


def _per_element(x, axis, element):
    rows, moved_shape = _rows(x, axis)
    out = np.empty_like(rows)
    with localcontext() as ctx:
        ctx.prec = PRECISION
        for i, row in enumerate(rows):
            lse = _lse_decimal(row)
            for j, v in enumerate(row):
                out[i, j] = element(float(v), lse)
    return np.moveaxis(out.reshape(moved_shape), -1, axis)


def _log_softmax_element(v, lse):
    if lse is None or v == NEG_INF:
        return NEG_INF
    return float(Decimal(v) - lse)


def _softmax_element(v, lse):
    if lse is None or v == NEG_INF:
        return 0.0
    return float((Decimal(v) - lse).exp())


def log_softmax(x, axis=-1):
    return _per_element(x, axis, _log_softmax_element)


def softmax(x, axis=-1):
    return _per_element(x, axis, _softmax_element)

