"""The judge's side of grading the solver's test_sampling.py: sb.solver_tests runs it once per
implementation of sampling.py (_good/NAME, _buggy/NAME), and a buggy version counts as caught
only when the run failed AND the judge's own record shows a call on which that version behaves
differently from the correct one. What is particular to this task: how alike two behaviours
must be (the chosen token exactly; filtered probabilities within rounding), an independent
model of the contract, and the battery of calls over the documented domain that the guards
for the grader itself use."""
import functools
import math
import pathlib
from fractions import Fraction

import numpy as np

from sb.solver_tests import SolverTests, behaviour

# The prompt promises filtered_probs within 1e-12 of the exact values (sums of at most 1000
# float64 terms of size <= 1 carry a rounding error below 1000 * 2**-53 ~ 1.1e-13, and the
# two divisions add a few ulps). Two implementations "behave the same" within ten times
# that: each may sit anywhere inside the promise, and every buggy version that departs in
# filtered_probs departs by at least 1e-9 somewhere on the battery (checked below).
PROMISED = 1e-12
SAME = 1e-11
# Decisions closer than this to their threshold may go either way (the prompt's rounding rule).
NEAR_TIE = 1e-9


def _probs_alike(a, b) -> bool:
    if not (type(a) is np.ndarray and type(b) is np.ndarray):
        return False
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    finite = ~np.isnan(b)
    return bool(np.all(np.abs(a[finite] - b[finite]) <= SAME))


def _results_alike(a, b) -> bool:
    if type(a) is int or type(b) is int:
        return type(a) is type(b) and a == b
    return _probs_alike(a, b)


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
    if any(not np.array_equal(written_a[k], written_b[k], equal_nan=True) for k in written_a):
        return False
    return _results_alike(a[1], b[1])


SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_sampling.py", module="sampling",
                    functions=("sample", "filtered_probs"), alike=alike,
                    run_order_seed=0,  # chosen so that a buggy version runs first and the correct ones run far apart
                    max_calls=600,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="python_loops")
# The buggy version that must not depend on an earlier run: one that departs on very many
# calls (it writes to the caller's logits whenever temperature is not 1).
STANDALONE_BUGGY = ("logits_scaled_in_place",)


# ---------------------------------------------------------------------------------------
# An independent model of the contract: Python floats for the weights, exact rational sums
# for every cumulative comparison, and the margin of every decision that rounding could flip.

def model(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, u=None):
    """(filtered probabilities as float64, chosen token or None, smallest decision margin)."""
    values = [float(x) for x in logits]
    n = len(values)
    ranked = sorted((i for i in range(n) if values[i] > -math.inf), key=lambda i: (-values[i], i))
    margin = math.inf
    if temperature == 0:
        weights = {ranked[0]: Fraction(1)}
    else:
        top = values[ranked[0]]
        w = {i: Fraction(math.exp((values[i] - top) / temperature)) for i in ranked}
        if top_k:
            ranked = ranked[:top_k]
        if top_p is not None:
            total, running = sum(w[i] for i in ranked), Fraction(0)
            for position, i in enumerate(ranked):
                running += w[i]
                if position < len(ranked) - 1:  # the last decision keeps every token either way
                    margin = min(margin, abs(float(running / total) - top_p))
                if running / total >= Fraction(top_p):
                    ranked = ranked[: position + 1]
                    break
        if min_p:
            best = ranked[0]
            for i in ranked:
                if values[i] != values[best]:
                    margin = min(margin, abs(float(w[i]) - min_p * float(w[best])))
            ranked = [i for i in ranked if values[i] == values[best] or w[i] >= Fraction(min_p) * w[best]]
        weights = {i: w[i] for i in ranked}
    total = sum(weights.values())
    probs = np.array([float(weights.get(i, 0) / total) for i in range(n)])
    chosen = None
    if u is not None:
        running, last = Fraction(0), max(i for i in weights if weights[i] > 0)
        for i in range(n):
            if weights.get(i, 0) > 0:
                running += weights[i] / total
                if i != last:  # past the last boundary the last kept token is the answer either way
                    margin = min(margin, abs(float(running) - u))
                if chosen is None and Fraction(u) < running:
                    chosen = i
        if chosen is None:
            chosen = max(i for i in weights if weights[i] > 0)
    return probs, chosen, margin


def model_behaviour(call):
    """The model's answer to one recorded call (valid arguments only)."""
    name, (logits,), kwargs = call
    kwargs = dict(kwargs)
    probs, chosen, margin = model(logits, **kwargs)
    return (chosen if name == "sample" else probs), margin


# ---------------------------------------------------------------------------------------
# Guards for the grader itself, over a battery of calls on the documented domain.

def _call(name, logits, u=None, **options):
    kwargs = {k: v for k, v in options.items()}
    if name == "sample":
        kwargs["u"] = u
    return (name, (np.asarray(logits, dtype=np.float64),), kwargs)


def _both(logits, us, **options):
    calls = [_call("filtered_probs", logits, **options)]
    return calls + [_call("sample", logits, u=u, **options) for u in us]


def _boundaries(logits, **options):
    """u just inside either side of every cumulative boundary of the model's distribution."""
    probs, _, _ = model(logits, **options)
    cdf = np.cumsum(probs)
    us = [0.0, float(np.nextafter(1.0, 0.0))]
    for c in cdf[probs > 0][:-1]:
        us += [float(c - 1e-8), float(c + 1e-8), float(c - 3e-8), float(c + 3e-8)]
    return [u for u in us if 0.0 <= u < 1.0]  # a boundary within 3e-8 of 1 puts some outside


@functools.lru_cache(maxsize=None)
def valid_battery() -> tuple:
    """Seeded valid calls: random and tied logits, -inf entries, every filter alone and in
    combination, temperatures 0, below and above 1, u on a grid, at 0, just below 1 and
    next to every cumulative boundary, and logits far beyond exp's range."""
    rng = np.random.default_rng(20261203)
    calls = []
    grid = [0.0, 0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95, float(np.nextafter(1.0, 0.0))]
    for trial in range(120):
        n = int(rng.choice([1, 2, 3, 5, 8, 13, 40]))
        if trial % 3 == 0:
            logits = rng.integers(-2, 3, n).astype(np.float64)  # many exact ties
        else:
            logits = rng.standard_normal(n) * rng.choice([0.5, 2.0, 5.0])
        if n > 1 and trial % 4 == 1:
            logits[rng.random(n) < 0.3] = -np.inf
            if trial % 8 == 1:
                logits[0] = -np.inf
            if np.isneginf(logits).all():
                logits[-1] = 0.0
        # powers of two divide exactly: the others round, as most temperatures do
        options = {"temperature": float(rng.choice([0.0, 0.5, 1.0, 1.0, 2.0, 0.01, 0.3, 3.0, 100.0]))}
        for name, choices in (("top_k", [None, 0, 1, 2, 3, n, n + 3]), ("top_p", [None, 0.3, 0.6, 0.9, 1.0]),
                              ("min_p", [None, 0.0, 0.1, 0.4, 1.0])):
            pick = choices[int(rng.integers(len(choices)))]
            if pick is not None:
                options[name] = pick
        us = grid if trial % 5 else _boundaries(logits, **options)
        calls += _both(logits, us, **options)
    for scale in (1e3, 1e6):  # logits whose exp overflows (and underflows) float64
        logits = rng.standard_normal(6) * scale
        calls += _both(logits, grid, temperature=1.0)
        calls += _both(logits, grid, temperature=0.5, top_p=0.9)
    # logits at the domain's edge a small gap apart, at temperatures that round: the
    # promised accuracy holds only when the gap, not the logit, is what gets divided
    for top in (1e6, -1e6, 123456.789):
        logits = top - np.array([0.0, 0.01, 0.03, 0.002, 0.5, 2e6 if top > 0 else 0.7])
        for temperature in (0.01, 0.3, 0.07):
            calls += _both(logits, _boundaries(logits, temperature=temperature), temperature=temperature)
            calls += _both(logits, grid, temperature=temperature, top_p=0.8, min_p=0.2)
    return tuple(calls)


def invalid_battery() -> tuple:
    """Calls the prompt says raise ValueError."""
    good = np.array([0.5, -1.0, 2.0])
    return (_call("sample", good, u=1.0), _call("sample", good, u=-0.25),
            _call("filtered_probs", np.array([0.0, np.nan])), _call("filtered_probs", np.array([0.0, np.inf])),
            _call("filtered_probs", np.array([-np.inf, -np.inf])), _call("filtered_probs", np.zeros(0)),
            _call("filtered_probs", good, temperature=-1.0), _call("filtered_probs", good, top_k=-1),
            _call("filtered_probs", good, top_p=0.0), _call("filtered_probs", good, top_p=1.5),
            _call("filtered_probs", good, min_p=-0.1), _call("filtered_probs", good, min_p=1.5))


@functools.lru_cache(maxsize=None)
def battery() -> tuple:
    return valid_battery() + invalid_battery()


@functools.lru_cache(maxsize=None)
def _battery_model(index: int) -> tuple:
    return model_behaviour(battery()[index])


@functools.lru_cache(maxsize=None)
def _battery_behaviour(kind: str, name: str, index: int) -> tuple:
    return behaviour(SUITE.load(kind, name), battery()[index])


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must behave differently from the correct one somewhere on the
    documented domain, away from any decision rounding could flip, or no test file could be
    asked to catch it."""
    valid = len(valid_battery())
    for i in range(len(battery())):
        if i < valid and _battery_model(i)[1] < NEAR_TIE:
            continue
        if not alike(_battery_behaviour("buggy", name, i), _battery_behaviour("good", SUITE.reference, i)):
            return True
    return False


def _meets(seen, want) -> bool:
    if seen[0] != "returns" or seen[2]:
        return False
    got = seen[1]
    if type(want) is int:
        return type(got) is int and got == want
    return (type(got) is np.ndarray and got.dtype == np.float64 and got.shape == want.shape
            and bool(np.all(np.abs(got - want) <= PROMISED)))


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> list:
    """[(version, battery index)] where a correct version departs from the model away from
    a near-tie, or does not raise ValueError on an invalid call: empty when all is well."""
    wrong = []
    valid = len(valid_battery())
    for index, call in enumerate(battery()):
        if index < valid:
            want, margin = _battery_model(index)
            if margin < NEAR_TIE:
                continue
        for name in SUITE.good:
            seen = _battery_behaviour("good", name, index)
            ok = _meets(seen, want) if index < valid else seen[:2] == ("raises", "ValueError")
            if not ok:
                wrong.append((name, index))
    return wrong
