import numpy as np
import pytest

from rope import apply_rope

MAX_POSITION = 2**20
# The promise: each rotated entry within 1e-9 * (|x_a| + |x_b|) of the exact value of its pair.
# The oracle below is a plain float64 evaluation of the formulas, itself within that bound, so a
# correct result and the oracle differ by at most twice it.
TOL = 2e-9
SHAPES = [(6, 8), (3, 6, 8), (2, 3, 6, 8), (2, 2, 3, 6, 8)]  # no, one, two (heads unlike seq), three leading axes


def pairs(rot, layout):
    half = rot // 2
    if layout == "half":
        return [(i, i + half) for i in range(half)]
    return [(2 * i, 2 * i + 1) for i in range(half)]


def oracle(x, positions, base=10000.0, rotary_dim=None, layout="half"):
    """(value, scale): the rotation in float64 from the formulas, pair by pair, and per entry
    |x_a| + |x_b| of its pair (0 for the features passed through)."""
    rot = x.shape[-1] if rotary_dim is None else rotary_dim
    value, scale = x.copy(), np.zeros_like(x)
    for i, (a, b) in enumerate(pairs(rot, layout)):
        theta = np.array([float(p) * base ** (-2.0 * i / rot) for p in positions])
        c, s = np.cos(theta), np.sin(theta)
        value[..., a] = x[..., a] * c - x[..., b] * s
        value[..., b] = x[..., b] * c + x[..., a] * s
        scale[..., a] = scale[..., b] = np.abs(x[..., a]) + np.abs(x[..., b])
    return value, scale


def check(x, positions, **kwargs):
    saved_x, saved_positions = x.copy(), positions.copy()
    got = apply_rope(x, positions, **kwargs)
    assert np.array_equal(x, saved_x) and np.array_equal(positions, saved_positions)
    want, scale = oracle(x, positions, **kwargs)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == x.shape
    assert np.all(np.abs(got - want) <= TOL * scale)  # the features passed through: exactly x's


def far_positions(rng, seq):
    """Positions over the whole range: the largest allowed, 0, a repeat and a decrease."""
    positions = rng.integers(1, MAX_POSITION, seq)
    positions[0], positions[2], positions[-1] = MAX_POSITION, 0, positions[1]
    return positions


@pytest.mark.parametrize("base", [10000.0, 123.456])
@pytest.mark.parametrize("rotary_dim", [None, 4])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_matches_the_oracle(layout, rotary_dim, base):
    rng = np.random.default_rng([len(layout), rotary_dim or 0, int(base)])
    for shape in SHAPES:
        check(rng.standard_normal(shape), far_positions(rng, shape[-2]), base=base, rotary_dim=rotary_dim,
              layout=layout)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_small_positions_to_the_stated_accuracy(layout):
    rng = np.random.default_rng(7)
    check(rng.standard_normal((2, 6, 8)), np.array([1, 2, 3, 5, 8, 13]), layout=layout)
    check(rng.standard_normal((2, 6, 8)), np.array([1, 2, 3, 5, 8, 13]), layout=layout, rotary_dim=6)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_the_largest_positions(layout):
    rng = np.random.default_rng(11)
    check(rng.standard_normal((2, 4, 16)), np.array([MAX_POSITION, MAX_POSITION - 1, 0, MAX_POSITION]),
          layout=layout)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_odd_head_dim_with_partial_rotation(layout):
    rng = np.random.default_rng(13)
    check(rng.standard_normal((3, 5, 7)), np.array([9, 4, 4, 0, 77777]), rotary_dim=4, layout=layout)
    check(rng.standard_normal((5, 2)), np.array([9, 4, 4, 0, 77777]), layout=layout)


@pytest.mark.parametrize("kwargs", [{"rotary_dim": 3}, {"rotary_dim": 0}, {"rotary_dim": -2}, {"rotary_dim": 10},
                                    {"layout": "neox"}, {"head_dim": 7}, {"seq": 4}, {"position": -1},
                                    {"position": MAX_POSITION + 1}],
                         ids=["odd", "zero", "negative", "too_wide", "layout", "odd_head_dim", "short_positions",
                              "negative_position", "past_the_last_position"])
def test_rejects_invalid_arguments(kwargs):
    kwargs = dict(kwargs)
    x = np.random.default_rng(17).standard_normal((2, 5, kwargs.pop("head_dim", 8)))
    positions = np.arange(kwargs.pop("seq", 5))
    if "position" in kwargs:
        positions[1] = kwargs.pop("position")
    with pytest.raises(ValueError):
        apply_rope(x, positions, **kwargs)

