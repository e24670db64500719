"""Probe: each quant function called on live arrays in the solution's process.

For every call it reports the arguments as they are afterwards and whether a returned
array shares memory with one of them. The judge compares the arguments with its own
copies; nothing here knows what any result should be.
"""
import numpy as np

from quant import choose_qparams, dequantize, fake_quantize, quantize


def _call(fn, arrays, **options):
    passed = {name: np.array(value, copy=True) for name, value in arrays.items()}
    out = fn(*passed.values(), **options)
    results = out if isinstance(out, tuple) else (out,)
    shares = any(isinstance(r, np.ndarray) and np.shares_memory(r, a) for r in results for a in passed.values())
    return passed, shares


def exercise(x, zeros, scale, zero_point, q, axis):
    mode = dict(num_bits=8, signed=False)
    return {
        "choose_qparams": _call(choose_qparams, {"x": x}, symmetric=False, axis=axis, **mode),
        "quantize": _call(quantize, {"x": x, "scale": scale, "zero_point": zero_point}, axis=axis, **mode),
        "dequantize": _call(dequantize, {"q": q, "scale": scale, "zero_point": zero_point}, axis=axis),
        "fake_quantize": _call(fake_quantize, {"x": x}, symmetric=False, axis=axis, **mode),
        "fake_quantize of zeros": _call(fake_quantize, {"zeros": zeros}, symmetric=True, axis=axis, **mode),
        "symmetric fake_quantize": _call(fake_quantize, {"x": x}, symmetric=True, axis=axis, **mode),
    }
