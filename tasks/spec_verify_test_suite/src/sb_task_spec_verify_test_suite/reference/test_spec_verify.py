from fractions import Fraction

import numpy as np
import pytest

from spec_verify import verify

# Decisions within 1e-9 of their threshold may go either way; every probe here sits 2e-9 from
# its threshold (outside that band, and well inside the error of float32 arithmetic or of a
# row that sums to 1 only within 1e-6), and a probe the model finds closer than 1.5e-9 to any
# threshold is never made.
NEAR = 2e-9
SAFE = 1.5e-9
U_MIN = 0.0
U_MAX = float(np.nextafter(1.0, 0.0))


def exact_draw(weights, u):
    """(token, margin): smallest j with u < C_j over exact weights, ascending ids."""
    total = sum(weights)
    positive = [j for j, w in enumerate(weights) if w > 0]
    running, chosen, margin = Fraction(0), None, float("inf")
    for j in positive:
        running += weights[j]
        if j != positive[-1]:
            margin = min(margin, abs(float(running / total - u)))
        if chosen is None and u < running / total:
            chosen = j
    return (positive[-1] if chosen is None else chosen), margin


def model(tokens, q, p, ua, us):
    """The contract on exact rationals of the given floats: (emitted, smallest margin)."""
    out, margin = [], float("inf")
    F = lambda x: Fraction(float(x))  # noqa: E731
    for i, t in enumerate(int(x) for x in tokens):
        bar = min(Fraction(1), F(p[i][t]) / F(q[i][t]))
        if p[i][t] > 0:
            margin = min(margin, abs(float(F(ua[i]) - bar)))
        if F(ua[i]) < bar:
            out.append(t)
            continue
        residual = [max(Fraction(0), F(a) - F(b)) for a, b in zip(p[i], q[i])]
        token, m = exact_draw(residual if any(residual) else [F(x) for x in p[i]], F(us[i]))
        return out + [token], min(margin, m)
    token, m = exact_draw([F(x) for x in p[len(out)]], F(us[len(out)]))
    return out + [token], min(margin, m)


def arrays(tokens, q, p, ua, us):
    k, vocab = len(tokens), len(p[0])
    return (np.array(tokens, dtype=np.int64), np.array(q, dtype=np.float64).reshape(k, vocab),
            np.array(p, dtype=np.float64), np.array(ua, dtype=np.float64), np.array(us, dtype=np.float64))


def check(tokens, q, p, ua, us):
    args = arrays(tokens, q, p, ua, us)
    want, margin = model(*args)
    assert margin > SAFE, "test case too close to a rounding tie"
    got = verify(*args)
    assert type(got) is list and all(type(x) is int for x in got), got
    assert got == want, (got, want, args)


def safe(args):
    return model(*arrays(*args))[1] > SAFE


def cumulative(weights):
    weights = [Fraction(float(w)) for w in weights]
    total, running, out = sum(weights), Fraction(0), []
    for w in weights:
        running += w
        if w > 0:
            out.append(float(running / total))
    return out[:-1]


def around(values):
    return [v + d for v in values for d in (-NEAR, NEAR) if 0 <= v + d < 1]


def row(rng, vocab, zeros=True, scale=1.0):
    r = rng.random(vocab) + 0.05
    if zeros:
        r[rng.random(vocab) < 0.35] = 0.0
        if not r.any():
            r[0] = 1.0
    return r / r.sum() * scale


def case(seed, k, vocab, scale=1.0):
    rng = np.random.default_rng(seed)
    q = [row(rng, vocab, scale=scale) for _ in range(k)]
    p = [row(rng, vocab, scale=1 / scale if scale != 1 else 1.0) for _ in range(k + 1)]
    tokens = [int(rng.choice(np.flatnonzero(q[i]))) for i in range(k)]
    return tokens, q, p, rng


# ------------------------------------------------------------------ acceptance

@pytest.mark.parametrize("seed,scale", [(1, 1.0), (2, 1 + 6e-7), (3, 1 - 6e-7)])
def test_acceptance_threshold_either_side(seed, scale):
    tokens, q, p, rng = case(seed, 4, 6, scale)
    for i, t in enumerate(tokens):
        if p[i][t] == 0:
            p[i][t] = 0.3 * q[i][t]  # a ratio strictly inside (0, 1) to probe
    for i, t in enumerate(tokens):
        ratio = float(Fraction(float(p[i][t])) / Fraction(float(q[i][t])))
        for u in around([min(ratio, 1.0)]) + [U_MIN]:
            ua = [U_MIN] * len(tokens)
            ua[i] = u
            us = list(rng.random(len(tokens) + 1))
            if safe((tokens, q, p, ua, us)):
                check(tokens, q, p, ua, us)


def test_token_the_target_rules_out_is_never_accepted():
    q = [[0.25, 0.25, 0.5], [0.5, 0.5, 0.0]]
    p = [[0.0, 0.4, 0.6], [0.2, 0.0, 0.8], [0.1, 0.2, 0.7]]
    for tokens in ([0, 0], [1, 1], [2, 1]):
        for ua in ([U_MIN, U_MIN], [U_MIN, 0.7]):
            check(tokens, q, p, ua, [U_MIN, U_MIN, U_MIN])
            check(tokens, q, p, ua, [0.3, 0.6, 0.9])


# ------------------------------------------------------------------ the residual draw

@pytest.mark.parametrize("seed,vocab", [(10, 5), (11, 7)])
def test_residual_draw_boundaries(seed, vocab):
    tokens, q, p, rng = case(seed, 3, vocab)
    for i, t in enumerate(tokens):
        # make step i rejectable: the target gives the drafted token less than the draft does
        p[i] = list(np.asarray(p[i]))
        if p[i][t] >= q[i][t]:
            p[i][t], p[i][(t + 1) % vocab] = 0.0, p[i][(t + 1) % vocab] + p[i][t]
    for i in range(len(tokens)):
        residual = np.maximum(np.asarray(p[i]) - np.asarray(q[i]), 0.0)
        us_values = around(cumulative(residual)) + [U_MIN, U_MAX]
        for u in us_values:
            ua = [U_MIN] * i + [U_MAX] * (len(tokens) - i)
            us = list(rng.random(len(tokens) + 1))
            us[i] = u
            if safe((tokens, q, p, ua, us)):
                check(tokens, q, p, ua, us)


def test_residual_all_zero_draws_from_the_target_row():
    # the target is at or below the draft everywhere (its row sums to 1 - 8e-7): rejecting
    # leaves a zero residual, and the token comes from the target row itself
    q = [[0.3, 0.5, 0.2], [0.1, 0.6, 0.3]]
    p = [[0.3 - 5e-7, 0.5, 0.2 - 3e-7], [0.1, 0.6 - 8e-7, 0.3], [0.5, 0.25, 0.25]]
    for tokens, ua, step in (([0, 1], [U_MAX, U_MIN], 0), ([1, 1], [U_MIN, U_MAX], 1)):
        for u in around(cumulative(p[step])) + [U_MIN, 0.5, U_MAX]:
            us = [0.7, 0.7, 0.7]
            us[step] = u
            if safe((tokens, q, p, ua, us)):
                check(tokens, q, p, ua, us)


# ------------------------------------------------------------------ the bonus token

@pytest.mark.parametrize("scale", [1.0, 1 + 7e-7, 1 - 7e-7])
def test_bonus_after_every_token_accepted(scale):
    rng = np.random.default_rng(20)
    vocab = 6
    q = [row(rng, vocab) for _ in range(3)]
    tokens = [int(np.flatnonzero(r)[0]) for r in q]
    p = [list(r) for r in q] + [list(row(rng, vocab, scale=scale))]
    for u in around(cumulative(p[3])) + [U_MIN, U_MAX]:
        us = [0.9, 0.1, 0.5, u]
        if safe((tokens, q, p, [0.3, 0.6, 0.99], us)):
            check(tokens, q, p, [0.3, 0.6, 0.99], us)


@pytest.mark.parametrize("target", [[0.0, 0.5, 0.0, 0.5], [0.2, 0.3, 0.5, 0.0], [0.0, 0.0, 0.0, 1.0]])
def test_no_draft_gives_one_token_from_the_first_target_row(target):
    for u in around(cumulative(target)) + [U_MIN, 0.5, U_MAX]:
        args = ([], [], [target], [], [u])
        if safe(args):
            check(*args)


# ------------------------------------------------------------------ random rounds

@pytest.mark.parametrize("seed", range(30, 34))
def test_random_rounds_against_exact_model(seed):
    rng = np.random.default_rng(seed)
    k, vocab = int(rng.integers(1, 6)), int(rng.integers(2, 12))
    tokens, q, p, _ = case(seed, k, vocab)
    for _ in range(5):
        ua, us = list(rng.random(k)), list(rng.random(k + 1))
        if safe((tokens, q, p, ua, us)):
            check(tokens, q, p, ua, us)


# ------------------------------------------------------------------ errors

GOOD_Q = [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]
GOOD_P = [[0.0, 0.5, 0.5], [0.3, 0.3, 0.4], [0.3, 0.3, 0.4], [0.2, 0.2, 0.6]]


def bad(tokens=(0, 1, 2), q=GOOD_Q, p=GOOD_P, ua=(0.5, 0.5, 0.5), us=(0.5, 0.5, 0.5, 0.5)):
    return arrays(list(tokens), q, p, list(ua), list(us))


@pytest.mark.parametrize("args", [
    bad(ua=(0.5, 1.0, 0.5)), bad(us=(0.5, 0.5, 0.5, 1.0)), bad(ua=(0.5, 0.5, -1e-300)),
    bad(us=(-0.5, 0.5, 0.5, 0.5)), bad(tokens=(0, 1, -1)), bad(tokens=(0, 1, 3)), bad(tokens=(2, 1, 2)),
    bad(tokens=(0, 1, 0), q=GOOD_Q[:2] + [[0.0, 0.2, 0.8]]),  # the walk stops at step 0
    bad(q=[[x * (1 + 3e-6) for x in r] for r in GOOD_Q]), bad(p=[[x * (1 - 3e-6) for x in r] for r in GOOD_P]),
    bad(q=[[0.6, 0.5, -0.1]] + GOOD_Q[1:]), bad(p=GOOD_P[:3] + [[np.nan, 0.5, 0.5]]),
    bad(p=GOOD_P[:3]), bad(ua=(0.5, 0.5)),
])
def test_invalid_arguments_raise(args):
    with pytest.raises(ValueError):
        verify(*args)


def test_rows_within_tolerance_are_accepted():
    q = [[x * (1 + 9e-7) for x in r] for r in GOOD_Q]
    p = [[x * (1 - 9e-7) for x in r] for r in GOOD_P]
    check([1, 1, 2], q, p, [0.45, 0.45, 0.45], [0.37, 0.37, 0.37, 0.37])
