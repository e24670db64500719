"""The judge's side of grading the solver's test_spec_verify.py: sb.solver_tests runs it once
per implementation of spec_verify.py (_good/NAME, _buggy/NAME), and a buggy version counts as
caught only when the run failed AND the judge's own record shows a call on which that version
behaves differently from the correct one. What is particular to this task: how alike two
behaviours must be (the emitted list exactly; any ValueError alike), an independent model of
the contract in exact rational arithmetic that also measures how close each decision came to
its threshold, and the battery of calls over the documented domain that the guards for the
grader itself use."""
import functools
import pathlib
from fractions import Fraction

import numpy as np

from sb.solver_tests import SolverTests, behaviour

# Decisions closer than this to their threshold may go either way (the prompt's rounding rule).
NEAR_TIE = 1e-9


def _results_alike(a, b) -> bool:
    if type(a) is not list or type(b) is not list:
        return False
    return all(type(x) is int for x in a + b) and a == b


def alike(a: tuple, b: tuple) -> bool:
    """Two behaviours alike: the same exception type (its text is free), or the same emitted
    list of Python ints and exactly the same arguments written."""
    if a[0] != b[0]:
        return False
    if a[0] == "raises":
        return a[1] == b[1]
    written_a, written_b = dict(a[2]), dict(b[2])
    if written_a.keys() != written_b.keys():
        return False
    if any(not np.array_equal(written_a[key], written_b[key], equal_nan=True) for key in written_a):
        return False
    return _results_alike(a[1], b[1])


SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_spec_verify.py", module="spec_verify",
                    functions=("verify",), alike=alike,
                    run_order_seed=3,  # chosen so that a buggy version runs first and the correct ones run far apart
                    max_calls=500,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="python_loops")
# The buggy version that must not depend on an earlier run: one that departs on very many
# calls (the residual measured the wrong way round).
STANDALONE_BUGGY = ("residual_q_minus_p",)


# ---------------------------------------------------------------------------------------
# An independent model of the contract: every comparison made on exact rationals built from
# the given float64 values, with the margin of every decision rounding could flip.

def _draw(weights: list, u: Fraction) -> tuple:
    """(token, smallest margin) of the inverse-CDF draw over ascending ids from exact weights."""
    total = sum(weights)
    positive = [j for j, w in enumerate(weights) if w > 0]
    running, chosen, margin = Fraction(0), None, float("inf")
    for j in positive:
        running += weights[j]
        if j != positive[-1]:  # past the last boundary the last positive token is the answer either way
            margin = min(margin, abs(float(running / total - u)))
        if chosen is None and u < running / total:
            chosen = j
    return (positive[-1] if chosen is None else chosen), margin


def model(draft_tokens, draft_probs, target_probs, u_accept, u_sample) -> tuple:
    """(emitted tokens, smallest decision margin) for valid arguments."""
    emitted, margin = [], float("inf")
    k = len(draft_tokens)
    for i in range(k):
        t = int(draft_tokens[i])
        p_t, q_t = Fraction(float(target_probs[i, t])), Fraction(float(draft_probs[i, t]))
        bar = min(Fraction(1), p_t / q_t)
        u = Fraction(float(u_accept[i]))
        if p_t > 0:  # a token the target gives probability 0 is rejected exactly, for any u
            margin = min(margin, abs(float(u - bar)))
        if u < bar:
            emitted.append(t)
            continue
        p_row = [Fraction(float(x)) for x in target_probs[i]]
        residual = [max(Fraction(0), a - Fraction(float(b))) for a, b in zip(p_row, draft_probs[i])]
        token, m = _draw(residual if any(residual) else p_row, Fraction(float(u_sample[i])))
        return emitted + [token], min(margin, m)
    token, m = _draw([Fraction(float(x)) for x in target_probs[k]], Fraction(float(u_sample[k])))
    return emitted + [token], min(margin, m)


# ---------------------------------------------------------------------------------------
# Guards for the grader itself, over a battery of calls on the documented domain.

def _call(tokens, q, p, ua, us):
    return ("verify", (np.asarray(tokens, dtype=np.int64), np.asarray(q, dtype=np.float64),
                       np.asarray(p, dtype=np.float64), np.asarray(ua, dtype=np.float64),
                       np.asarray(us, dtype=np.float64)), {})


def _row(rng, vocab, sparse):
    row = rng.random(vocab) ** 2
    if sparse and vocab > 1:
        row[rng.random(vocab) < 0.4] = 0.0
    if not row.any():
        row[rng.integers(vocab)] = 1.0
    return row / row.sum()


def _near(values, scale=(1e-8, 3e-8, 3e-7)):
    """u just either side of each value, kept inside [0, 1)."""
    out = []
    for v in values:
        for d in scale:
            out += [v - d, v + d]
    return [u for u in out if 0.0 <= u < 1.0]


def _off_one(rng, row):
    """The row scaled so that it sums to 1 only within the stated tolerance (3 times in 10)."""
    return row * (1 + rng.choice([-5e-7, 5e-7])) if rng.random() < 0.3 else row


def _case(rng, k, vocab):
    q = np.array([_row(rng, vocab, sparse=rng.random() < 0.5) for _ in range(k)]).reshape(k, vocab)
    p = np.array([_row(rng, vocab, sparse=rng.random() < 0.5) for _ in range(k + 1)])
    tokens = np.array([rng.choice(vocab, p=q[i]) for i in range(k)], dtype=np.int64)
    q = np.array([_off_one(rng, row) for row in q]).reshape(k, vocab)
    p = np.array([_off_one(rng, row) for row in p])
    for i in range(k):
        shape = rng.random()
        if shape < 0.15:
            p[i] = q[i]  # the target agrees: every token accepted
        elif shape < 0.3:  # at or below the draft everywhere: the residual is all zero
            cut = rng.random(vocab) * (q[i] > 0)
            cut[tokens[i]] += 1.0
            p[i] = q[i] - np.minimum(q[i], 4e-7 * cut / cut.sum())
        elif shape < 0.4 and vocab > 1:
            p[i, tokens[i]] = 0.0  # the drafted token is impossible for the target
            p[i] = p[i] / p[i].sum() if p[i].any() else np.eye(vocab)[(tokens[i] + 1) % vocab]
    return tokens, q, p


def _uniform_sets(rng, tokens, q, p):
    k = len(tokens)
    grid = [0.0, 0.1, 0.35, 0.6, 0.85, float(np.nextafter(1.0, 0.0))]
    sets = []
    for _ in range(6):
        ua = rng.choice(grid, k) if rng.random() < 0.5 else rng.random(k)
        us = rng.choice(grid, k + 1) if rng.random() < 0.5 else rng.random(k + 1)
        sets.append((ua, us))
    # u_accept next to each ratio; u_sample next to each cumulative boundary of every row
    ratios = [min(1.0, p[i, t] / q[i, t]) for i, t in enumerate(tokens)]
    for i in range(k):
        for u in _near([ratios[i]]) + [0.0]:
            ua = np.zeros(k)  # everything before i accepted (when p > 0), i decided by u
            ua[i] = u
            sets.append((ua, rng.random(k + 1)))
    for i in range(k + 1):
        weights = p[i] if i == k else np.maximum(p[i] - q[i], 0.0)
        if not weights.any():
            weights = p[i]
        cdf = np.cumsum(weights) / weights.sum()
        for u in _near(cdf[:-1][:4])[:12] + [0.0]:
            ua = np.where(np.arange(k) < i, 0.0, float(np.nextafter(1.0, 0.0)))  # reject at step i
            us = rng.random(k + 1)
            us[i] = u
            sets.append((ua, us))
    return sets


@functools.lru_cache(maxsize=None)
def valid_battery() -> tuple:
    rng = np.random.default_rng(20261204)
    calls = []
    for trial in range(50):
        k = int(rng.choice([0, 1, 1, 2, 3, 4, 6]))
        vocab = int(rng.choice([1, 2, 3, 4, 6, 9, 30]))
        tokens, q, p = _case(rng, k, vocab)
        calls += [_call(tokens, q, p, ua, us) for ua, us in _uniform_sets(rng, tokens, q, p)]
    return tuple(calls)


def invalid_battery() -> tuple:
    """Calls the prompt says raise ValueError, several with the fault placed after a step at
    which a valid walk would already have stopped."""
    q = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    p = np.array([[0.0, 0.5, 0.5], [0.3, 0.3, 0.4], [0.3, 0.3, 0.4], [0.2, 0.2, 0.6]])
    tokens, ua, us = np.array([0, 1, 2]), np.array([0.5, 0.5, 0.5]), np.array([0.5, 0.5, 0.5, 0.5])

    def with_(tokens=tokens, q=q, p=p, ua=ua, us=us):
        return _call(tokens, q, p, ua, us)

    bad_q_late = q.copy()
    bad_q_late[2] = [0.0, 0.2, 0.8]
    return (
        with_(ua=np.array([0.5, 1.0, 0.5])), with_(us=np.array([0.5, 0.5, 0.5, 1.0])),
        with_(ua=np.array([-0.1, 0.5, 0.5])), with_(us=np.array([0.5, -0.5, 0.5, 0.5])),
        with_(tokens=np.array([0, 1, -1])), with_(tokens=np.array([0, 3, 2])),
        with_(tokens=np.array([2, 1, 2])), with_(tokens=np.array([0, 1, 0]), q=bad_q_late),
        with_(tokens=np.array([0, 1, -3])), with_(tokens=np.array([1, 0, 0]), q=bad_q_late),
        with_(q=q * (1 + 3e-6)), with_(p=p * (1 - 3e-6)), with_(q=np.array([[0.6, 0.5, -0.1], q[1], q[2]])),
        with_(p=np.vstack([p[:3], [[np.nan, 0.5, 0.5]]])), with_(p=p[:3]), with_(q=q[:2]),
        with_(ua=ua[:2]), with_(us=us[:3]),
    )


@functools.lru_cache(maxsize=None)
def battery() -> tuple:
    return valid_battery() + invalid_battery()


@functools.lru_cache(maxsize=None)
def _battery_model(index: int) -> tuple:
    _, args, _ = battery()[index]
    return model(*args)


@functools.lru_cache(maxsize=None)
def _battery_behaviour(kind: str, name: str, index: int) -> tuple:
    return behaviour(SUITE.load(kind, name), battery()[index])


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must behave differently from the correct one somewhere on the
    documented domain, away from any decision rounding could flip, or no test file could be
    asked to catch it."""
    valid = len(valid_battery())
    for i in list(range(valid, len(battery()))) + list(range(valid)):  # the few invalid calls first
        if i < valid and _battery_model(i)[1] < NEAR_TIE:
            continue
        if not alike(_battery_behaviour("buggy", name, i), _battery_behaviour("good", SUITE.reference, i)):
            return True
    return False


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_contract() -> list:
    """[(version, battery index)] where a correct version departs from the exact model away
    from a near-tie, or does not raise ValueError on an invalid call: empty when all is well."""
    wrong = []
    valid = len(valid_battery())
    for index in range(len(battery())):
        if index < valid:
            want, margin = _battery_model(index)
            if margin < NEAR_TIE:
                continue
        for name in SUITE.good:
            seen = _battery_behaviour("good", name, index)
            if index < valid:
                ok = seen[0] == "returns" and not seen[2] and _results_alike(seen[1], want)
            else:
                ok = seen[:2] == ("raises", "ValueError")
            if not ok:
                wrong.append((name, index))
    return wrong
