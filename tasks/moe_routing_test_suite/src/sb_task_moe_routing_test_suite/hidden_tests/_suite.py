"""The judge's side of grading the solver's test_router.py: sb.solver_tests runs it once per
implementation of router.py (_good/NAME, _buggy/NAME), and a buggy version counts as caught
only when the run failed AND the judge's own record shows a call on which that version behaves
differently from the correct one. What is particular to this task: how alike two behaviours
must be (experts exactly, gates within rounding), an independent model of the contract in
exact and 50-digit arithmetic, and the battery of calls over the documented domain that the
guards for the grader itself use."""
import functools
import pathlib
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from sb.solver_tests import SolverTests, behaviour

# The prompt promises every gate within 1e-13 of its exact value. A correct gate is one exp
# (within an ulp or two) of an exactly computed difference, a sum of at most 64 terms and a
# division: its error stays below 70 * 2**-53 ~ 8e-15, so correct versions sit within 2e-14
# of one another. Two behaviours are "the same" within SAME = 5e-14: every correct pair is
# inside it, and a test that fails a version for a gate more than the promise away from the
# exact value (the model's own error is below 1e-30) has found one more than 5e-14 away from
# the correct version's gate.
PROMISED = 1e-13
SAME = 5e-14
# Slots of one rank whose exact gates differ by less than this may be offered in either order.
NEAR_TIE = 1e-12


def _result_alike(a, b) -> bool:
    if not (type(a) is tuple and type(b) is tuple and len(a) == len(b) == 2):
        return False
    (experts_a, gates_a), (experts_b, gates_b) = a, b
    if not all(type(x) is np.ndarray for x in (experts_a, gates_a, experts_b, gates_b)):
        return False
    if experts_a.dtype != experts_b.dtype or experts_a.shape != experts_b.shape:
        return False
    if gates_a.dtype != gates_b.dtype or gates_a.shape != gates_b.shape:
        return False
    if not np.array_equal(experts_a, experts_b):
        return False
    if gates_a.dtype.kind != "f":
        return np.array_equal(gates_a, gates_b)
    if not np.array_equal(np.isnan(gates_a), np.isnan(gates_b)):
        return False
    finite = ~np.isnan(gates_b)
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(gates_a[finite] - gates_b[finite]) <= SAME))


def alike(a: tuple, b: tuple) -> bool:
    """Two behaviours alike: the same exception type (its text is free), or results alike
    and exactly the same arguments written."""
    if a[0] != b[0]:
        return False
    if a[0] == "raises":
        return a[1] == b[1]
    written_a, written_b = dict(a[2]), dict(b[2])
    if written_a.keys() != written_b.keys():
        return False
    if any(not np.array_equal(written_a[key], written_b[key], equal_nan=True) for key in written_a):
        return False
    return _result_alike(a[1], b[1])


SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_router.py", module="router",
                    functions=("route",), alike=alike,
                    run_order_seed=0,  # chosen so that a buggy version runs first and the correct ones run far apart
                    max_calls=400,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="python_loops")
# The buggy version that must not depend on an earlier run: the one that departs on almost
# every call (it writes into the caller's logits).
STANDALONE_BUGGY = ("logits_shifted_in_place",)


# ---------------------------------------------------------------------------------------
# An independent model of the contract: exact rationals for every comparison of logits,
# 50-digit decimals for the gates, and exact equality of gates decided on exact differences.

@functools.lru_cache(maxsize=None)
def _exp(difference: Fraction) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 50
        return (Decimal(difference.numerator) / Decimal(difference.denominator)).exp()


@functools.lru_cache(maxsize=None)
def _choices_and_gates(data: bytes, shape: tuple, k: int) -> tuple:
    """Each token's k choices, the exact gate of each slot (50 digits), and the exact
    differences it is a function of (equal exactly when two exact gates are equal)."""
    rows = [[Fraction(x) for x in row] for row in np.frombuffer(data, dtype=np.float64).reshape(shape).tolist()]
    choices = [sorted(range(shape[1]), key=lambda e, row=row: (-row[e], e))[:k] for row in rows]
    gates, shapes = {}, {}
    with localcontext() as ctx:
        ctx.prec = 50
        for t, row in enumerate(rows):
            for rank, e in enumerate(choices[t]):
                differences = tuple(sorted(row[c] - row[e] for c in choices[t]))
                shapes[t, rank] = differences
                gates[t, rank] = 1 / sum(_exp(d) for d in differences)
    return choices, gates, shapes


def _boundary_gap(queue: list, accepted: int, gates: dict, shapes: dict, rank: int) -> float:
    """How far apart the nearest unequal gates on either side of one expert's acceptance
    boundary are: swapping two slots there changes the outcome."""
    gap = float("inf")
    for a in queue[:accepted]:
        for b in queue[accepted:]:
            if shapes[a, rank] != shapes[b, rank]:
                gap = min(gap, abs(float(gates[a, rank] - gates[b, rank])))
    return gap


def model(logits, k, capacity):
    """(experts, exact gates as float64, smallest gap between unequal gates that decide a drop)."""
    logits = np.ascontiguousarray(logits, dtype=np.float64)
    choices, gates, shapes = _choices_and_gates(logits.tobytes(), logits.shape, k)
    tokens, n_experts = logits.shape
    experts = np.full((tokens, k), -1, dtype=np.int64)
    kept = np.zeros((tokens, k))
    load, gap = [0] * n_experts, float("inf")
    for rank in range(k):
        # descending exact gate, equal gates by ascending token (a stable sort, never negated)
        queue = sorted(range(tokens), key=lambda t: gates[t, rank], reverse=True)
        for e in range(n_experts):
            wanting = [t for t in queue if choices[t][rank] == e]
            room = max(0, min(capacity - load[e], len(wanting)))
            if 0 < room < len(wanting):
                gap = min(gap, _boundary_gap(wanting, room, gates, shapes, rank))
            for t in wanting[:room]:
                experts[t, rank] = e
                kept[t, rank] = float(gates[t, rank])
            load[e] += room
    return experts, kept, gap


# ---------------------------------------------------------------------------------------
# Guards for the grader itself, over a battery of calls on the documented domain.

def _call(logits, k, capacity):
    return ("route", (np.ascontiguousarray(logits, dtype=np.float64),), {"k": k, "capacity": capacity})


def _capacities(tokens, k, n_experts):
    fair = -(-tokens * k // n_experts)
    return sorted({0, 1, max(fair - 1, 0), fair, tokens * k})


@functools.lru_cache(maxsize=None)
def valid_battery() -> tuple:
    """Seeded valid calls: random logits, many exact ties (small integers), equal rows and
    rows shifted by a constant, k of 1, 2 and E, capacities from 0 to no limit, a single
    token, a single expert, logits at the domain's edge and tokens far apart in magnitude
    within one call."""
    rng = np.random.default_rng(20261205)
    calls = []
    shapes = [(1, 1), (1, 5), (3, 1), (4, 2), (9, 3), (12, 6), (20, 8), (5, 64)]
    for trial, (tokens, n_experts) in enumerate(shapes * 3):
        style = trial // len(shapes)
        if style == 0:
            logits = rng.standard_normal((tokens, n_experts)) * 2
        elif style == 1:
            logits = rng.integers(-2, 3, (tokens, n_experts)).astype(np.float64)  # exact ties
        else:  # equal rows and rows shifted by a power of two, exactly: exactly equal gates
            logits = np.round(rng.standard_normal((tokens, n_experts)) * 2.0 ** 20) / 2.0 ** 20
            logits[tokens // 2:] = logits[: tokens - tokens // 2] + 2.0 ** rng.integers(-1, 4)
            logits[1::3] = logits[0]
        for k in sorted({1, 2, n_experts} & set(range(1, n_experts + 1))):
            for capacity in _capacities(tokens, k, n_experts):
                calls.append(_call(logits, k, capacity))
    for scale in (1e3, 1e4):  # exp overflows and underflows; the tiny gates drop nothing
        logits = rng.uniform(-scale, scale, (8, 6))
        calls += [_call(logits, 1, 2), _call(logits, 1, 3), _call(logits, 6, 48)]
    # tokens at unlike magnitudes, each with gates far from 0 and 1: offsets up to the domain's
    # edge, and a pair of tokens 700 to 760 apart
    offsets = np.concatenate([rng.uniform(-9990, 9990, 6), [-9995.0, 9990.0, 5000.0, 4280.0, 4260.0]])
    logits = np.clip(offsets[:, None] + rng.standard_normal((offsets.size, 5)), -1e4, 1e4)
    for k, capacity in ((1, 3), (2, 1), (2, 2), (3, 3), (5, 11)):
        calls.append(_call(logits, k, capacity))
    return tuple(calls)


def invalid_battery() -> tuple:
    """Calls the prompt says raise ValueError."""
    good = np.array([[0.5, -1.0, 2.0], [1.0, 1.0, 0.0]])
    nan, inf, minus_inf = good.copy(), good.copy(), good.copy()
    nan[1, 2], inf[0, 1], minus_inf[1, 0] = np.nan, np.inf, -np.inf
    return (_call(good, 0, 1), _call(good, 4, 1), _call(good, 2, -1), _call(good[0], 1, 1),
            _call(good[None], 1, 1), _call(nan, 1, 1), _call(inf, 1, 1), _call(minus_inf, 2, 1))


@functools.lru_cache(maxsize=None)
def battery() -> tuple:
    return valid_battery() + invalid_battery()


@functools.lru_cache(maxsize=None)
def _battery_model(index: int) -> tuple:
    _, (logits,), kwargs = battery()[index]
    return model(logits, kwargs["k"], kwargs["capacity"])


@functools.lru_cache(maxsize=None)
def _battery_behaviour(kind: str, name: str, index: int) -> tuple:
    return behaviour(SUITE.load(kind, name), battery()[index])


def _near_tie(index: int) -> bool:
    return index < len(valid_battery()) and _battery_model(index)[2] < NEAR_TIE


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must behave differently from the correct one somewhere on the
    documented domain, away from any order rounding could flip, or no test file could be
    asked to catch it."""
    return any(not _near_tie(i) and not alike(_battery_behaviour("buggy", name, i),
                                               _battery_behaviour("good", SUITE.reference, i))
               for i in range(len(battery())))


def _meets(seen, want) -> bool:
    if seen[0] != "returns" or seen[2] or type(seen[1]) is not tuple or len(seen[1]) != 2:
        return False
    (experts, gates), (want_experts, want_gates, _) = seen[1], want
    return (type(experts) is np.ndarray and experts.dtype == np.int64 and experts.shape == want_experts.shape
            and np.array_equal(experts, want_experts) and type(gates) is np.ndarray
            and gates.dtype == np.float64 and gates.shape == want_gates.shape
            and bool(np.all(np.abs(gates - want_gates) <= PROMISED))
            and bool(np.all(gates[want_experts < 0] == 0.0)))


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> list:
    """[(version, battery index)] where a correct version departs from the model away from a
    near-tie, or does not raise ValueError on an invalid call: empty when all is well."""
    wrong = []
    valid = len(valid_battery())
    for index in range(len(battery())):
        if _near_tie(index):
            continue
        for name in SUITE.good:
            seen = _battery_behaviour("good", name, index)
            ok = _meets(seen, _battery_model(index)) if index < valid else seen[:2] == ("raises", "ValueError")
            if not ok:
                wrong.append((name, index))
    return wrong
