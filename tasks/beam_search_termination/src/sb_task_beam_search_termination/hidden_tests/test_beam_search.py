"""Hidden tests for beam_search_termination.

The model is a seeded table served from the judge (_models.py): the solution gets a plain
function, every call of which runs here and is recorded here, so the number of calls and the
prefixes of each are the judge's own observation. Expectations come from _oracle.py, which
runs the search to max_new_tokens without stopping early and finds the stopping step by
trying every length a running hypothesis could still finish at, and from an exhaustive
scoring of every possible sequence where the beam is wide enough to prune nothing.
"""
import functools
import math

import pytest

import _models
import _oracle
from beam_search import beam_search

# Scores are compared to 1e-12 relative: the prompt fixes the formula sum / length ** p, but
# an algebraically equal form (sum * length ** -p) may differ in the last bit or two.
SCORE_RTOL = 1e-12

PENALTIES = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 3.0]
BEAMS = [1, 2, 3, 5]
SEEDS = [0, 1, 2]


def observe(model, bos, eos, num_beams, max_new_tokens, length_penalty):
    """(result as [(tokens, score)], [prefixes of each step call]) seen from the judge."""
    recorder = _models.Recorder(model)

    def step(prefixes):
        return recorder(prefixes)

    got = beam_search(step, bos, eos, num_beams, max_new_tokens, length_penalty)
    result = [(tuple(int(t) for t in tokens), float(score)) for tokens, score in list(got)]
    return result, recorder.calls


def assert_same_result(got, want):
    assert [tokens for tokens, _ in got] == [tuple(tokens) for tokens, _ in want], (got, want)
    for (_, g), (_, w) in zip(got, want):
        assert math.isclose(g, w, rel_tol=SCORE_RTOL, abs_tol=0.0), (got, want)


def expected_calls(calls):
    return [[tuple(p) for p in prefixes] for prefixes in calls]


# ------------------------------------------------------------------ random normalised tables


def grid_case(length_penalty, num_beams, seed):
    vocab_size = [5, 7, 6][seed]
    eos = [0, 3, 5][seed]
    max_new_tokens = [8, 10, 7][seed]
    bos = [vocab_size, 1, 2][seed]  # the BOS id may or may not be a vocabulary id
    model_seed = 1000 * seed + 10 * num_beams + int(4 * length_penalty) + 50
    model = _models.NormalTable(model_seed, vocab_size, eos)
    return model, bos, eos, num_beams, max_new_tokens, length_penalty


@functools.lru_cache(maxsize=None)
def grid_run(length_penalty, num_beams, seed):
    case = grid_case(length_penalty, num_beams, seed)
    return observe(*case), _oracle.expected(*case)


GRID = [(p, k) for p in PENALTIES for k in BEAMS]
GRID_IDS = [f"p{p}-k{k}" for p, k in GRID]


@pytest.mark.parametrize("length_penalty, num_beams", GRID, ids=GRID_IDS)
def test_result_equals_the_search_run_to_max_new_tokens(length_penalty, num_beams):
    for seed in SEEDS:
        (got, _), (want, _, _) = grid_run(length_penalty, num_beams, seed)
        assert_same_result(got, want)


@pytest.mark.parametrize("length_penalty, num_beams", GRID, ids=GRID_IDS)
def test_stops_at_the_first_step_after_which_nothing_can_change(length_penalty, num_beams):
    for seed in SEEDS:
        (_, calls), (_, stop, _) = grid_run(length_penalty, num_beams, seed)
        assert len(calls) == stop, f"seed {seed}: {len(calls)} step calls, the rule stops after {stop}"


@pytest.mark.parametrize("length_penalty, num_beams", GRID, ids=GRID_IDS)
def test_each_call_passes_the_running_beam_in_rank_order(length_penalty, num_beams):
    for seed in SEEDS:
        (_, calls), (_, _, want) = grid_run(length_penalty, num_beams, seed)
        assert calls == expected_calls(want), f"seed {seed}"


# ------------------------------------------------------------------ exhaustive search


# (vocab_size, eos, max_new_tokens, num_beams) with num_beams > (vocab_size - 1) ** (max_new_tokens
# - 1): before the last step every candidate is met. At the last step the candidates not met
# all have length max_new_tokens and a sum below num_beams others of that length, so they
# could never be among the best num_beams.
EXHAUSTIVE = [
    (3, 1, 3, 5),
    (4, 3, 3, 10),
    (3, 0, 4, 9),
]


@pytest.mark.parametrize("length_penalty", [-1.0, -0.5, 0.0, 0.7, 1.0, 2.0])
@pytest.mark.parametrize("vocab_size, eos, max_new_tokens, num_beams", EXHAUSTIVE)
def test_a_beam_that_prunes_nothing_finds_the_best_sequences_overall(
    vocab_size, eos, max_new_tokens, num_beams, length_penalty
):
    model = _models.NormalTable(77 + vocab_size + eos, vocab_size, eos, eos_bias=0.0)
    bos = vocab_size + 2
    everything = _oracle.exhaustive(model, bos, eos, max_new_tokens, length_penalty)
    top = everything[:num_beams]
    # the case has no near-tie at the cut, so the best num_beams are one well-defined set
    assert top[-1][1] - everything[num_beams][1] > 1e-9
    got, _ = observe(model, bos, eos, num_beams, max_new_tokens, length_penalty)
    assert_same_result(got, top)


# ------------------------------------------------------------------ exact ties


TIE_CASES = [  # (seed, vocab_size, eos, num_beams, max_new_tokens, length_penalty, zeros)
    (seed, vocab_size, eos, k, m, p, zeros)
    for seed, (vocab_size, eos, m, zeros) in enumerate(
        [(4, 0, 6, False), (5, 2, 7, True), (6, 5, 5, False), (4, 3, 8, True)]
    )
    for k in (1, 2, 4)
    for p in (0.0, 1.0, 2.0)
]


@pytest.mark.parametrize(
    "seed, vocab_size, eos, num_beams, max_new_tokens, length_penalty, zeros",
    TIE_CASES,
    ids=[f"s{c[0]}-k{c[3]}-p{c[5]}" for c in TIE_CASES],
)
def test_ties_follow_the_stated_order(
    seed, vocab_size, eos, num_beams, max_new_tokens, length_penalty, zeros
):
    # multiples of -1/4: sums are exact, so equal sums and equal scores really are equal
    model = _models.DyadicTable(300 + seed, vocab_size, eos, levels=3, eos_levels=4, allow_zero=zeros)
    bos = 9
    want, stop, want_calls = _oracle.expected(model, bos, eos, num_beams, max_new_tokens, length_penalty)
    got, calls = observe(model, bos, eos, num_beams, max_new_tokens, length_penalty)
    assert calls == expected_calls(want_calls)
    assert len(calls) == stop
    # exact: the sums are exact and with p in {0, 1, 2} the score is one correctly rounded
    # division by an exact integer, so ties between any two hypotheses are exact too
    assert got == [(tuple(t), s) for t, s in want]


# ------------------------------------------------------------------ hand-built cases
# Tokens: EOS = 0, a = 1, b = 2 (and c = 3 where there is one); rows are keyed by the
# generated tokens, BOS left out. Each case spells its expectation out and checks the oracle
# against it too.

BOS = 7


def hand_run(rows, default, num_beams, max_new_tokens, length_penalty):
    model = _models.ExplicitTable(rows, default, BOS)
    want = _oracle.expected(model, BOS, 0, num_beams, max_new_tokens, length_penalty)
    return observe(model, BOS, 0, num_beams, max_new_tokens, length_penalty), want


def test_positive_penalty_keeps_searching_while_a_longer_hypothesis_could_win():
    # after step 1: finished [EOS] scores -0.5; [a] (sum -1.0) could still finish at length 4
    # with score -1.0 / 4 = -0.25, so the search goes on (at its current length it would have
    # scored -1.0, at the next -0.5); [a, a, EOS] ends at -1.2 / 3 = -0.4, and after step 3
    # the running [a, a, a] (sum -3.1) can reach at most -3.1 / 4 = -0.775, so the search
    # stops after 3 calls.
    rows = {(): [-0.5, -1.0, -5.0], (1,): [-3.0, -0.1, -5.0], (1, 1): [-0.1, -2.0, -5.0]}
    (got, calls), (want, stop, _) = hand_run(rows, [-1.0, -1.0, -1.0], 1, 4, 1.0)
    assert stop == 3 and [t for t, _ in want] == [[1, 1, 0]]
    assert len(calls) == 3
    assert_same_result(got, [([1, 1, 0], -1.2 / 3)])


def test_negative_penalty_stops_once_the_next_length_cannot_win():
    # p = -1: score = sum * length. After step 2 the two best finished scores are -0.25 ([EOS])
    # and -1.5 ([a, EOS]: -0.75 * 2). The best running sum is -0.625 ([a, a], length 2): its
    # shortest finish has length 3 and score -1.875 <= -1.5, and every longer one is lower, so
    # the search stops after 2 calls (at its current length it would have scored -1.25).
    rows = {(): [-0.25, -0.5, -0.75], (1,): [-0.25, -0.125, -3.0], (2,): [-3.0, -2.0, -2.5]}
    (got, calls), (want, stop, _) = hand_run(rows, [-1.0, -1.0, -1.0], 2, 5, -1.0)
    assert stop == 2
    assert len(calls) == 2
    assert calls[1] == [(BOS, 1), (BOS, 2)]
    assert_same_result(got, [([0], -0.25), ([1, 0], -1.5)])
    assert_same_result(got, want)


@pytest.mark.parametrize("length_penalty, rows", [
    (0.0, {(): [-0.5, -0.5, -2.0]}),   # [a] (sum -0.5) can at best tie [EOS] at -0.5
    (1.0, {(): [-0.25, -1.0, -2.0]}),  # [a] (sum -1.0) can at best reach -1.0 / 4 = -0.25
])
def test_a_hypothesis_that_can_only_tie_does_not_keep_the_search_going(length_penalty, rows):
    # later rows are all 0, so [a] really can tie; a tie finishes later and ranks after
    (got, calls), (want, stop, _) = hand_run(rows, [0.0, 0.0, 0.0], 1, 4, length_penalty)
    assert stop == 1
    assert len(calls) == 1
    assert_same_result(got, [([0], rows[()][0])])
    assert_same_result(got, want)


@pytest.mark.parametrize("length_penalty", [-0.5, 0.0, 2.0])
def test_one_new_token_finishes_what_the_walk_takes(length_penalty):
    # the walk stops at the second non-EOS candidate, before EOS; both finish as they are
    rows = {(): [-1.0, -0.5, -0.75, -2.0]}
    (got, calls), (want, _, _) = hand_run(rows, [-1.0] * 4, 2, 1, length_penalty)
    assert calls == [[(BOS,)]]
    assert_same_result(got, [([1], -0.5), ([2], -0.75)])
    assert_same_result(got, want)


def test_fewer_finished_than_num_beams_returns_them_all():
    # one non-EOS token: step 1 finishes [EOS] and keeps [a]; step 2 is the last
    rows = {(): [-0.5, -0.25], (1,): [-1.0, -0.5]}
    (got, calls), (want, _, _) = hand_run(rows, [-1.0, -1.0], 4, 2, 0.5)
    assert calls == [[(BOS,)], [(BOS, 1)]]
    expect = [([0], -0.5), ([1, 1], -0.75 / 2**0.5), ([1, 0], -1.25 / 2**0.5)]
    assert_same_result(got, expect)
    assert_same_result(got, want)
