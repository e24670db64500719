"""The judge's side of grading the solver's test_rope.py: sb.solver_tests runs it once per
implementation of apply_rope (_good/NAME/rope.py, _buggy/NAME/rope.py), and a buggy version
counts as caught only when the run failed AND the judge's own record shows a call, inside the
documented domain, on which that version breaks the contract where the correct one keeps it
(another exception type, an exception where a result is due or the reverse, a result of
another kind, dtype or shape, an entry outside the stated accuracy, an argument written to).
What is particular to this task: the accuracy is stated per rotated pair, so the comparison
reads the call (x, rotary_dim, layout) as well as the two behaviours; and the battery of calls
over the documented domain that the guards for the grader itself use."""
import functools
import inspect
import math
import pathlib

import numpy as np

from _exact import exact, pairs
from sb.solver_tests import SolverTests, behaviour

MAX_POSITION = 2**20
# The promise of the prompt: every rotated entry within PROMISED * (|x_a| + |x_b|) of the
# exact value of its pair (a, b); the features passed through are x's own, bit for bit.
PROMISED = 1e-9
# A buggy entry counts as outside the promise when it is further than REVEALED * (|x_a| + |x_b|)
# from the shown implementation's. That one is within 1.3e-10 * (|x_a| + |x_b|) of the exact
# value over the whole domain (measured against _exact.py over the battery and random draws),
# so such an entry is more than 1.3e-9 from the exact value: past the promise, never a rounding.
REVEALED = 1.5e-9


def _signature():
    return inspect.signature(SUITE.load("good", SUITE.reference).apply_rope)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def documented_arguments(call):
    """The call's arguments as a dict when it lies in the documented domain (valid or one of
    the stated ValueError cases), else None: a call outside it decides nothing."""
    name, args, kwargs = call
    if name != "apply_rope":
        return None
    try:
        bound = _signature().bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    a = dict(bound.arguments)
    x, positions = a["x"], a["positions"]
    if not (isinstance(x, np.ndarray) and x.dtype == np.float64 and x.ndim >= 2 and x.size > 0
            and np.all(np.isfinite(x))):
        return None
    if not (isinstance(positions, np.ndarray) and positions.dtype.kind in "iu" and positions.size > 0):
        return None
    base = a["base"]
    if not (isinstance(base, (int, float, np.integer, np.floating)) and not isinstance(base, (bool, np.bool_))
            and math.isfinite(float(base)) and float(base) > 1):
        return None
    if not (a["rotary_dim"] is None or _is_int(a["rotary_dim"])) or not isinstance(a["layout"], str):
        return None
    return a


def is_valid(a) -> bool:
    """Whether documented arguments call for a result (True) or a ValueError (False)."""
    x, positions, rot = a["x"], a["positions"], a["rotary_dim"]
    head_dim = x.shape[-1]
    rot = head_dim if rot is None else int(rot)
    return (rot % 2 == 0 and 2 <= rot <= head_dim and positions.shape == (x.shape[-2],)
            and int(positions.min()) >= 0 and int(positions.max()) <= MAX_POSITION
            and a["layout"] in ("half", "interleaved"))


def pair_scale(a) -> np.ndarray:
    """|x_a| + |x_b| of the pair each entry belongs to; 0 for the features passed through."""
    x = a["x"]
    rot = x.shape[-1] if a["rotary_dim"] is None else int(a["rotary_dim"])
    scale = np.zeros_like(x)
    for i, j in pairs(rot, a["layout"]):
        scale[..., i] = scale[..., j] = np.abs(x[..., i]) + np.abs(x[..., j])
    return scale


def _within(got, want, scale, bound) -> bool:
    if not (isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == want.shape):
        return False
    return bool(np.all(np.abs(got - want) <= bound * scale))  # a NaN is never within


def behaves_differently(call, buggy: tuple, good: tuple) -> bool:
    """On a documented call, `buggy` breaks the contract where `good` (the shown one) keeps it."""
    a = documented_arguments(call)
    if a is None:
        return False
    if buggy[0] != good[0]:
        return True
    if good[0] == "raises":
        return buggy[1] != good[1]
    if dict(buggy[2]).keys() != dict(good[2]).keys() or buggy[2]:
        return True
    return not _within(buggy[1], good[1], pair_scale(a), REVEALED)


class RopeSolverTests(SolverTests):
    """SolverTests whose comparison of two behaviours also reads the call: the stated
    accuracy is relative to the magnitudes of x's pairs, which the results alone do not give."""

    def revealing_calls(self, name: str, run: dict) -> list:
        buggy, good = self.load("buggy", name), self.load("good", self.reference)
        return [call for call in run.get("calls", [])
                if behaves_differently(call, behaviour(buggy, call), behaviour(good, call))]

    def differs_somewhere(self, name: str, calls: list) -> bool:
        buggy, good = self.load("buggy", name), self.load("good", self.reference)
        return any(behaves_differently(call, behaviour(buggy, call), behaviour(good, call)) for call in calls)


SUITE = RopeSolverTests(pathlib.Path(__file__).parent, test_file="test_rope.py", module="rope",
                        functions=("apply_rope",),
                        run_order_seed=38,  # chosen so that a buggy version runs first and the correct ones run far apart
                        max_calls=300,  # the prompt's budget of calls per run; the next call raises
                        standalone_correct="fmod_exp")
# The buggy version that must not depend on an earlier run: it departs on every call (it
# writes into x), so what a run records differs.
STANDALONE_BUGGY = ("input_rotated_in_place",)


# ---------------------------------------------------------------------------------------
# Guards for the grader itself, over a battery of calls on the documented domain.

def _call(x, positions, **kwargs):
    return ("apply_rope", (x, np.asarray(positions, dtype=np.int64)), kwargs)


@functools.lru_cache(maxsize=None)
def battery() -> list:
    """Seeded calls covering every rule: both layouts, full and partial rotation (an odd
    head_dim too), several bases, 2-D to 5-D inputs (4-D with heads unlike seq), positions
    that jump, repeat, decrease, and reach 0 and 2**20, and every stated ValueError."""
    rng = np.random.default_rng(20260312)
    calls = []
    shapes = [(5, 8), (3, 5, 8), (2, 3, 5, 8), (2, 2, 3, 5, 8), (2, 3, 4, 16)]
    for shape in shapes:
        seq = shape[-2]
        for layout in ("half", "interleaved"):
            for rot in (None, 4 if shape[-1] == 8 else 6):
                for base in (10000.0, 500000.0, 123.456):
                    positions = rng.integers(0, MAX_POSITION + 1, seq)
                    positions[0] = MAX_POSITION
                    positions[-1] = positions[1]  # a repeat
                    calls.append(_call(rng.standard_normal(shape), positions, base=base, rotary_dim=rot,
                                       layout=layout))
    small = np.array([3, 1, 0, 7, 2])  # small positions, decreasing and with a gap
    for layout in ("half", "interleaved"):
        calls.append(_call(rng.standard_normal((2, 5, 8)), small, layout=layout))
        calls.append(_call(rng.standard_normal((2, 5, 7)), small, rotary_dim=4, layout=layout))
        calls.append(_call(rng.standard_normal((2, 5, 2)), small, layout=layout))
        calls.append(_call(rng.standard_normal((2, 5, 8)), np.array([4, 5, 6, 7, 8]), layout=layout))
        calls.append(_call(rng.standard_normal((2, 5, 8)), np.array([2, 9, 30, 31, 100]), layout=layout))
    x = rng.standard_normal((2, 5, 8))
    for kwargs in ({"rotary_dim": 3}, {"rotary_dim": 0}, {"rotary_dim": 10}, {"rotary_dim": -2},
                   {"layout": "neox"}):
        calls.append(_call(x, small, **kwargs))
    calls.append(_call(rng.standard_normal((2, 5, 7)), small))                # odd head_dim, rotary_dim None
    calls.append(_call(x, small[:4]))                                         # positions too short
    calls.append(_call(x, np.array([3, 1, -1, 7, 2])))                        # a negative position
    calls.append(_call(x, np.array([3, 1, MAX_POSITION + 1, 7, 2])))          # past 2**20
    return calls


@functools.lru_cache(maxsize=None)
def _battery_behaviour(kind: str, name: str, index: int) -> tuple:
    return behaviour(SUITE.load(kind, name), battery()[index])


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must break the contract somewhere on the documented domain, or no test
    file could be asked to catch it."""
    return any(behaves_differently(battery()[i], _battery_behaviour("buggy", name, i),
                                   _battery_behaviour("good", SUITE.reference, i))
               for i in range(len(battery())))


def meets_the_contract(name: str, index: int) -> bool:
    """One correct implementation on one battery call, against the exact rotation: a ValueError
    exactly where one is due, else a float64 array of x's shape within the promise, the
    features passed through bit for bit, and no argument written to."""
    a = documented_arguments(battery()[index])
    seen = _battery_behaviour("good", name, index)
    if not is_valid(a):
        return seen[0] == "raises" and seen[1] == "ValueError"
    if seen[0] != "returns" or seen[2]:
        return False
    want, scale = exact(a["x"], a["positions"], base=a["base"], rotary_dim=a["rotary_dim"], layout=a["layout"])
    # want is the exact value rounded to float64 (and through float64 products, ~4e-16 * scale):
    # far inside the promise, so the check below is the promise itself.
    tail = scale == 0
    return (_within(seen[1], want, scale, PROMISED) and np.array_equal(seen[1][tail], a["x"][tail]))


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> bool:
    assert documented_arguments(battery()[0]) is not None
    return all(meets_the_contract(name, i) for name in SUITE.good for i in range(len(battery())))
