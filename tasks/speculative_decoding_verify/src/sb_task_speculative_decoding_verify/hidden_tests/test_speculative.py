"""Hidden tests for verify_draft: the emitted distribution, graded statistically.

The rounds run in the solution's process (_probe_rounds.py: one call per round, one
Generator through all of them); the drafts, the probability rows, the counting and every
statistical check are here. Each statistical test compares counts from seeded rounds with
the exact distributions they must follow (the TARGET/DRAFT tables, not the reference
solution) using a Chernoff bound at ALPHA = 1e-7 per test; see _spec_harness. Six
statistical tests -> a correct implementation, whatever order it draws its random numbers
in, fails this file with probability below 6e-7.
"""
import numpy as np

from sb.judge import probe
from speculative import verify_draft  # noqa: F401  (imported at top level: the starter fails each test, not collection)

import _spec_harness as h


def test_output_is_accepted_prefix_then_one_token():
    tokens, outputs, _ = h.main_run()
    lengths = np.array([len(o) for o in outputs])
    assert lengths.min() >= 1 and lengths.max() <= h.K + 1, (
        f"output lengths must be in [1, {h.K + 1}], saw {lengths.min()}..{lengths.max()}")
    for r, out in enumerate(outputs):
        n = len(out)
        assert all(0 <= t < h.V for t in out), f"round {r}: token out of range in {out}"
        assert out[: n - 1] == tokens[r, : n - 1].tolist(), (
            f"round {r}: draft {tokens[r].tolist()} but output {out}: every token but the "
            "last must be an accepted draft token")
        if n <= h.K:
            assert out[-1] != tokens[r, n - 1], (
                f"round {r}: draft {tokens[r].tolist()}, output {out}: output stops at "
                f"position {n - 1} although the draft token there was kept")


def test_output_is_a_list_of_python_ints():
    _, _, obs = h.main_run()
    assert obs["container_types"] == ["list"], f"verify_draft returned {obs['container_types']}, not a list"
    assert obs["element_types"] == ["int"], (
        f"the emitted tokens were of types {obs['element_types']}: return Python ints")


def test_inputs_are_left_unchanged():
    tokens, _, obs = h.main_run()
    ctx = h.draw_drafts(20000, h.K, 0)[1]
    after_tokens, after_draft, after_target = obs["inputs_after"]
    np.testing.assert_array_equal(after_tokens, tokens)
    np.testing.assert_array_equal(after_draft, h.DRAFT[ctx[:, : h.K]],
                                  err_msg="verify_draft modified draft_probs")
    np.testing.assert_array_equal(after_target, h.TARGET[ctx], err_msg="verify_draft modified target_probs")


def test_first_token_follows_target():
    _, outputs, _ = h.main_run()
    counts = h.emitted_counts(outputs)
    h.check_contexts(counts, h.contexts_at(0), "first emitted token")


def test_tokens_after_accepted_prefix_follow_target_given_prefix():
    _, outputs, _ = h.main_run()
    counts = h.emitted_counts(outputs)
    ctxs = [c for j in range(1, h.K) for c in h.contexts_at(j)]
    h.check_contexts(counts, ctxs, "token at positions 1..K-1 given the emitted prefix")


def test_bonus_token_follows_final_target_row():
    _, outputs, _ = h.main_run()
    counts = h.emitted_counts(outputs)
    ctxs = h.contexts_at(h.K)
    assert counts[ctxs].sum() > 1000, (
        f"only {counts[ctxs].sum()} of 20000 rounds emitted a token at position {h.K}; "
        "expected about 3600 (every draft token accepted, then one more token)")
    h.check_contexts(counts, ctxs, "token emitted after the whole draft was accepted")


def test_acceptance_rate_is_the_largest_the_guarantee_allows():
    _, outputs, _ = h.main_run()
    reached, accepted = h.acceptance_counts(outputs)
    # Independent expectation: for a draft q and target p the best achievable
    # probability of keeping the drafted token is the overlap sum_x min(p, q).
    best = np.minimum(h.TARGET[: len(h.DRAFT)], h.DRAFT).sum(axis=1)
    h.chernoff_check(accepted, reached, best, "probability that the drafted token is kept")


def test_empty_draft_samples_the_target():
    p = np.array([[0.1, 0.0, 0.6, 0.3]])
    rounds = 3000
    _, outputs, _ = h.run(np.zeros((rounds, 0), dtype=np.int64), np.zeros((rounds, 0, 4)),
                          np.repeat(p[None], rounds, axis=0), verify_seed=7)
    counts = np.zeros(4, dtype=np.int64)
    for out in outputs:
        assert len(out) == 1, f"an empty draft must emit exactly one token, got {out}"
        assert 0 <= out[0] < 4, f"token out of range: {out}"
        counts[out[0]] += 1
    h.chernoff_check(counts, np.full(4, counts.sum()), p[0], "token emitted for an empty draft")


def _run_with_noise(global_seed, verify_seed):
    # the probe seeds numpy's global state and the `random` module in the solution's process
    return h.simulate(rounds=300, draft_seed=3, verify_seed=verify_seed, global_seed=global_seed)[1]


def test_randomness_comes_only_from_the_given_generator():
    first = _run_with_noise(global_seed=11, verify_seed=5)
    again = _run_with_noise(global_seed=99, verify_seed=5)
    assert first == again, (
        "the same Generator state must give the same output whatever the global numpy/"
        "random state is: draw every random number from the rng argument")
    other = _run_with_noise(global_seed=11, verify_seed=6)
    assert first != other, (
        "a differently seeded Generator gave identical output over 300 rounds: "
        "the rng argument is not being used")


def test_no_generator_of_its_own():
    """With numpy's and random's generator constructors, seeding, legacy global functions
    and Generator.spawn fenced off (calling one raises), verify_draft still works and
    returns exactly what it returns unfenced from the same generator state. A solution
    that seeds a private generator from rng (deterministic, and statistically right) calls
    a constructor and is caught here. Not statistical: no false-failure probability."""
    tokens, ctx = h.draw_drafts(300, h.K, 4)
    draft_probs, target_probs = h.DRAFT[ctx[:, : h.K]], h.TARGET[ctx]
    _, plain, _ = h.run(tokens, draft_probs, target_probs, verify_seed=8)
    fenced = probe("_probe_fenced.py").run_rounds_fenced(tokens, draft_probs, target_probs, 8)
    assert fenced["blocked"] == [] and fenced["errors"] == [], (
        f"verify_draft called {fenced['blocked']} ({fenced['errors'][:1]}): draw every random "
        "number from rng itself, not from a generator of your own")
    lengths = [int(n) for n in fenced["lengths"]]
    edges = np.cumsum([0] + lengths)
    flat = fenced["tokens"].tolist()
    assert [flat[a:b] for a, b in zip(edges[:-1], edges[1:])] == plain, (
        "with other random sources fenced off, the same rng state gave different output")
