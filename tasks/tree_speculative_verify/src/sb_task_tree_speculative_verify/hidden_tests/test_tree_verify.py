"""Hidden tests for verify_tree: what it emits, graded on distributions.

The rounds run in the solution's process (_probe_rounds.py: one call per round, one
Generator through all of them); the trees, the probability rows, the counting and every
statistical check are here, against exact values derived from the tables (_tree_harness:
the target's joint distribution over sequences, and the optimal keep rates in fractions),
not from the reference solution. Each statistical test fails a correct implementation,
whatever order it draws its random numbers in, with probability below 1e-7 (a rigorous
Chernoff bound; for the joint G tests, through the chi-square approximation); there are 7
of them, so about 1e-6 for the file. The seeds are fixed: the verdict is deterministic.
"""
import numpy as np
import pytest

from sb.judge import probe
from tree_verify import verify_tree  # noqa: F401  (top level: the starter fails each test, not collection)

import _tree_harness as h

SCENARIOS = ["mixed_bfs", "mixed_dfs", "chain"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_returns_the_kept_path_and_the_final_token_as_python_ints(name):
    obs = h.main_rounds(name).obs
    assert set(obs["result_types"]) <= {"tuple/2"}, (
        f"verify_tree returned {obs['result_types']} (type/length): return a tuple (path, token)")
    assert obs["path_types"] == ["list"], f"the path came back as {obs['path_types']}, not a list"
    assert set(obs["node_types"]) <= {"int"}, (
        f"the path held {obs['node_types']}: node indices must be Python ints")
    assert obs["final_types"] == ["int"], f"the final token was of type {obs['final_types']}, not a Python int"


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_path_walks_down_from_the_root(name):
    batch = h.main_rounds(name)
    for r, (path, final) in enumerate(zip(batch.paths, batch.finals)):
        problem = h.path_problem(batch.scenario, path, final)
        assert problem is None, (
            f"round {r}: tree {batch.scenario.parents.tolist()} with tokens {batch.tokens[r].tolist()} "
            f"returned path {path} and token {final}: {problem}")


def test_inputs_are_left_unchanged():
    scenario = h.scenarios()["mixed_bfs"]
    batch = h.run(scenario, 400, draw_seed=5, verify_seed=6, keep_inputs=True)
    parents, tokens, draft_rows, target_rows = batch.obs["inputs_after"]
    np.testing.assert_array_equal(parents, scenario.parents, err_msg="verify_tree modified parents")
    np.testing.assert_array_equal(tokens, batch.tokens, err_msg="verify_tree modified tokens")
    np.testing.assert_array_equal(draft_rows, scenario.tables.draft[batch.ctx],
                                  err_msg="verify_tree modified draft_probs")
    np.testing.assert_array_equal(target_rows, scenario.tables.target[batch.ctx],
                                  err_msg="verify_tree modified target_probs")


@pytest.mark.parametrize("name", SCENARIOS)
def test_emitted_tokens_follow_the_target(name):
    # 20000 rounds in 37..90 pooled cells (expected count >= 5 in each, so the chi-square
    # reference of G holds); the threshold, its 1 - 1e-7 quantile, is about 100..180, and
    # every wrong version in mutants/ this test catches gives p below 1e-12 (see _tree_harness).
    h.check_joint(h.main_rounds(name), seed=900, what=f"{name}: emitted tokens")


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_child_is_kept_as_often_as_the_guarantee_allows(name):
    h.check_keep_rates(h.main_rounds(name), f"{name}: keep rates")


def test_a_root_without_children_samples_its_target_row():
    # one node, no children: the token follows the root's target row (a draft row is given,
    # unlike it, and must not matter)
    tables = h.Tables.single_row(target=[12, 0, 20, 8], draft=[2, 10, 10, 18])
    rounds = 4000
    obs = probe("_probe_rounds.py").run_rounds(
        np.array([-1]), np.full((rounds, 1), -1), np.zeros((rounds, 1), dtype=np.int64),
        tables.draft, tables.target, 17)
    assert obs["path_lengths"].tolist() == [0] * rounds, "a root without children has nothing to keep"
    counts = np.bincount(obs["final_tokens"], minlength=4)
    assert counts.size == 4, f"tokens out of range: {np.flatnonzero(counts)}"
    h.chernoff_check(counts, np.full(4, rounds), tables.target[0],
                     [f"token {x} emitted" for x in range(4)], "root without children")


def _noisy_run(global_seed, verify_seed):
    # the probe seeds numpy's global state and the random module in the solution's process
    batch = h.run(h.scenarios()["mixed_dfs"], 300, draw_seed=8, verify_seed=verify_seed,
                  global_seed=global_seed)
    return batch.paths, batch.finals


def test_randomness_comes_only_from_the_given_generator():
    first = _noisy_run(global_seed=11, verify_seed=5)
    again = _noisy_run(global_seed=99, verify_seed=5)
    assert first == again, (
        "the same Generator state gave different output under a different global numpy/random "
        "state: draw every random number from the rng argument")
    other = _noisy_run(global_seed=11, verify_seed=6)
    assert first != other, "a differently seeded Generator gave the same 300 outputs: rng is not used"


def test_no_generator_of_its_own():
    """With every other random source refused (calling one raises), verify_tree still runs
    and returns exactly what it returns unfenced from the same generator state: a solution
    seeding a private generator from rng is deterministic and statistically right, and
    caught here. Not statistical."""
    scenario = h.scenarios()["mixed_bfs"]
    plain = h.run(scenario, 300, draw_seed=9, verify_seed=10)
    fenced = probe("_probe_fenced.py").run_rounds_fenced(
        scenario.parents, plain.tokens, plain.ctx, scenario.tables.draft, scenario.tables.target, 10)
    assert fenced["refused"] == [] and fenced["errors"] == [], (
        f"verify_tree called {fenced['refused']} ({fenced['errors'][:1]}): draw every random "
        "number from rng itself, not from a generator of your own")
    again = h.Rounds(scenario, plain.tokens, plain.ctx, fenced)
    assert (again.paths, again.finals) == (plain.paths, plain.finals), (
        "with other random sources refused, the same rng state gave different output")
