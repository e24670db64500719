"""Bit-pattern helpers shared by the hidden tests (judge side only)."""
import numpy as np


def bits(a):
    """The float32 bit patterns of `a` (which must come back as float32)."""
    a = np.asarray(a)
    assert a.dtype == np.float32, f"expected float32 output, got {a.dtype}"
    return np.ascontiguousarray(a).view(np.uint32)


def assert_same_bits(got, want, what):
    g, w = bits(got), bits(want)
    assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
    differ = np.argwhere(g != w)
    assert differ.size == 0, (f"{what}: {len(differ)} of {g.size} elements differ in their bits, first at "
                              f"{tuple(differ[0])}: {np.asarray(got)[tuple(differ[0])]!r} vs "
                              f"{np.asarray(want)[tuple(differ[0])]!r}")


def f32(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)
