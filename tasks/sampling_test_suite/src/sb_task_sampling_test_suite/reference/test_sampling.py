import math

import numpy as np
import pytest

from sampling import filtered_probs, sample

# filtered_probs is promised within 1e-12 of the exact values; this file's own float64 model
# adds at most ~1e-15 more, so 2e-12 is never tighter than the promise.
PROB_TOL = 2e-12
# Decisions within 1e-9 of their threshold may go either way; probes sit 2e-9 from a boundary
# (outside that band, and well inside the error of a float32 cumulative sum).
NEAR = 2e-9
U_JUST_BELOW_ONE = float(np.nextafter(1.0, 0.0))


def model(logits, temperature=1.0, top_k=None, top_p=None, min_p=None):
    """The contract in float64 with math.fsum: (probabilities, smallest decision margin)."""
    values = [float(x) for x in logits]
    ranked = sorted((i for i, x in enumerate(values) if x > -math.inf), key=lambda i: (-values[i], i))
    margin = math.inf
    if temperature == 0:
        kept = {ranked[0]: 1.0}
    else:
        top = values[ranked[0]]
        weight = {i: math.exp((values[i] - top) / temperature) for i in ranked}
        if top_k:
            ranked = ranked[:top_k]
        if top_p is not None:
            total = math.fsum(weight[i] for i in ranked)
            for position in range(len(ranked)):
                mass = math.fsum(weight[i] for i in ranked[: position + 1]) / total
                if position < len(ranked) - 1:  # the last decision keeps every token either way
                    margin = min(margin, abs(mass - top_p))
                if mass >= top_p:
                    ranked = ranked[: position + 1]
                    break
        if min_p:
            best = values[ranked[0]]
            ratios = {i: math.exp((values[i] - best) / temperature) for i in ranked}
            margin = min([margin] + [abs(ratios[i] - min_p) for i in ranked if values[i] != best])
            ranked = [i for i in ranked if values[i] == best or ratios[i] >= min_p]
        kept = {i: weight[i] for i in ranked}
    total = math.fsum(kept.values())
    return np.array([kept.get(i, 0.0) / total for i in range(len(values))]), margin


def expected_token(probs, u):
    running = 0.0
    for i, p in enumerate(probs):
        if p > 0:
            running = math.fsum(probs[: i + 1])
            if u < running:
                return i
    return int(np.nonzero(probs)[0][-1])


def probes(probs):
    """u at 0, just below 1, and just either side of the first five cumulative boundaries."""
    cdf = [math.fsum(probs[: i + 1]) for i in range(len(probs)) if probs[i] > 0]
    near = [U_JUST_BELOW_ONE] + [c + d for c in cdf[:-1][:5] for d in (-NEAR, NEAR)]
    # keep only u in [0, 1) that no boundary comes within rounding of (past the last one,
    # the last kept token is the answer either way)
    return [0.0] + [u for u in near if 0 <= u < 1 and min([abs(u - c) for c in cdf[:-1]] + [1]) > 1.5e-9]


def check(logits, **options):
    """filtered_probs and sample (at every probe u) against the model; the logits untouched."""
    logits = np.asarray(logits, dtype=np.float64)
    before = logits.copy()
    want, margin = model(logits, **options)
    assert margin > 1e-8, "test case too close to a rounding tie"
    got = filtered_probs(logits, **options)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == logits.shape
    assert np.all(np.abs(got - want) <= PROB_TOL), (got, want)
    assert np.array_equal(got == 0, want == 0)
    for u in probes(want):
        token = sample(logits, u=u, **options)
        assert type(token) is int and token == expected_token(want, u), (u, token)
    assert np.array_equal(logits, before)


RNG = np.random.default_rng(7)
RANDOM = [RNG.standard_normal(n) * s for n, s in ((6, 1.0), (9, 2.5), (12, 0.7))]


@pytest.mark.parametrize("temperature", [0.5, 2.0])
@pytest.mark.parametrize("logits", RANDOM, ids=["n6", "n9", "n12"])
def test_no_filter(logits, temperature):
    check(logits, temperature=temperature)


@pytest.mark.parametrize("options", [
    {"top_k": 3}, {"top_k": 1}, {"top_p": 0.5}, {"top_p": 0.8, "temperature": 0.6},
    {"top_p": 0.5, "temperature": 2.0}, {"min_p": 0.2}, {"min_p": 0.2, "temperature": 0.5},
    {"min_p": 0.3, "temperature": 3.0},
])
def test_one_filter(options):
    check(RANDOM[1], **options)


@pytest.mark.parametrize("options", [
    {"top_k": 4, "top_p": 0.6}, {"top_k": 3, "top_p": 0.7, "temperature": 2.0},
    {"top_k": 5, "top_p": 0.9, "min_p": 0.15}, {"top_p": 0.85, "min_p": 0.1, "temperature": 1.5},
])
def test_filters_combined(options):
    check(RANDOM[2], **options)


def test_top_p_after_top_k_renormalised():
    # probabilities ~ [0.32, 0.32, 0.12, 0.12, 0.12]: top_k=2 leaves [0.5, 0.5], and 0.45 is
    # reached by the first of them alone; measured before top-k it would take both
    logits = np.log(np.array([0.32, 0.31, 0.12, 0.13, 0.12]))
    check(logits, top_k=2, top_p=0.45)
    assert filtered_probs(logits, top_k=2, top_p=0.45)[1] == 0.0


def test_top_p_keeps_the_crossing_token():
    logits = np.log(np.array([0.5, 0.3, 0.2]))
    check(logits, top_p=0.6)
    assert filtered_probs(logits, top_p=0.6)[1] > 0


def test_top_p_one_and_disabled_filters_keep_everything():
    logits = RANDOM[0]
    want, _ = model(logits)
    for options in ({"top_p": 1.0}, {"top_k": 0}, {"top_k": None}, {"min_p": 0.0}, {"top_k": 6}, {"top_k": 50}):
        assert np.all(np.abs(filtered_probs(logits, **options) - want) <= PROB_TOL), options
    check(logits, top_k=50, top_p=1.0)


def test_ties_at_the_top_k_boundary_keep_smaller_ids():
    logits = np.array([0.0, 2.0, 1.0, 2.0, 1.0, 1.0, -1.0])
    check(logits, top_k=3)  # 1, 3 and then the first 1.0: token 2
    check(logits, top_k=4)
    check(logits, top_k=2, temperature=0.5)


def test_ties_at_the_top_p_boundary_keep_smaller_ids():
    logits = np.array([0.0, 1.0, 1.0, 1.0, -0.5])
    check(logits, top_p=0.4)  # each 1.0 holds ~0.29: two of them cross 0.4
    check(logits, top_p=0.5, temperature=0.7)


def test_min_p_is_relative_to_the_largest_probability():
    logits = np.log(np.array([0.1, 0.4, 0.05, 0.25, 0.2]))
    check(logits, min_p=0.3)  # threshold 0.12: keeps 0.4, 0.25, 0.2
    check(logits, min_p=0.55, temperature=0.5)


def test_min_p_one_keeps_every_token_tied_at_the_top():
    logits = np.array([0.5, 3.0, -1.0, 3.0, 3.0 - 1e-3])
    check(logits, min_p=1.0)
    assert np.count_nonzero(filtered_probs(logits, min_p=1.0)) == 2


@pytest.mark.parametrize("options", [{}, {"top_k": 2}, {"top_p": 0.1}, {"min_p": 0.9}])
def test_greedy_ties_go_to_the_smallest_id(options):
    logits = np.array([1.0, 4.0, -np.inf, 4.0, 2.0, 4.0])
    probs = filtered_probs(logits, temperature=0.0, **options)
    assert np.array_equal(probs, np.eye(6)[1])
    for u in (0.0, 0.5, 0.9, U_JUST_BELOW_ONE):
        assert sample(logits, u=u, temperature=0.0, **options) == 1


def test_filtered_tokens_are_never_drawn_at_u_zero():
    check(np.array([-np.inf, 0.3, -np.inf, 1.0]))
    check(np.array([0.1, 2.0, 1.0, 3.0]), top_k=2)
    check(np.array([-1.0, 2.0, 1.0, 3.0]), min_p=0.5, temperature=0.5)
    assert sample(np.array([-np.inf, 0.3, 1.0]), u=0.0) == 1


@pytest.mark.parametrize("n", [7, 9, 30])
def test_uniform_and_minus_inf_tail(n):
    logits = np.zeros(n)
    logits[-2:] = -np.inf
    check(logits)
    check(logits, top_k=3)


def test_single_token_and_minus_inf():
    check(np.array([0.25]))
    check(np.array([-np.inf, -np.inf, 5.0]), top_k=2, top_p=0.5, min_p=0.5)
    check(np.array([-np.inf, 1.0, -np.inf, 1.5, -np.inf]), top_k=4, temperature=3.0)


@pytest.mark.parametrize("scale", [1e3, 1e6])
def test_large_logits_stay_finite(scale):
    logits = np.random.default_rng(3).standard_normal(7) * scale
    logits[2] = logits.max() - 0.3  # a runner-up close to the top
    check(logits)
    check(logits, temperature=0.01)


def test_the_callers_logits_are_not_modified():
    logits = np.array([0.2, -1.0, 1.5, 0.7, -np.inf])
    before = logits.copy()
    for temperature in (0.0, 0.3, 2.5):
        filtered_probs(logits, temperature=temperature, top_k=3, top_p=0.9, min_p=0.05)
        sample(logits, u=0.4, temperature=temperature, top_k=3, top_p=0.9, min_p=0.05)
        assert np.array_equal(logits, before)


@pytest.mark.parametrize("call", [
    lambda: sample(np.array([0.0, 1.0]), u=1.0),
    lambda: sample(np.array([0.0, 1.0]), u=-0.1),
    lambda: filtered_probs(np.array([0.0, np.nan])),
    lambda: filtered_probs(np.array([0.0, np.inf])),
    lambda: filtered_probs(np.array([-np.inf, -np.inf])),
    lambda: filtered_probs(np.zeros(0)),
    lambda: filtered_probs(np.array([0.0, 1.0]), temperature=-0.5),
    lambda: filtered_probs(np.array([0.0, 1.0]), top_k=-1),
    lambda: filtered_probs(np.array([0.0, 1.0]), top_p=0.0),
    lambda: filtered_probs(np.array([0.0, 1.0]), top_p=1.2),
    lambda: filtered_probs(np.array([0.0, 1.0]), min_p=-0.2),
    lambda: filtered_probs(np.array([0.0, 1.0]), min_p=1.1),
])
def test_invalid_arguments_raise(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("top", [1e6, -1e6])
@pytest.mark.parametrize("temperature", [0.01, 0.3])
def test_large_logits_a_small_gap_apart(top, temperature):
    # the promised accuracy holds where logits of the domain's largest size differ by little
    # at a temperature that does not divide exactly
    check(top - np.array([0.0, 0.01, 0.03, 0.002]), temperature=temperature)
