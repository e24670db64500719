"""Hidden tests for sliding_window_kv_cache.

Every expectation comes from _oracle.py: a model that keeps the whole sequence raw and
computes each query's output by looping over every earlier key with the prompt's mask rule,
and that finds the positions a cache must hold by asking which keys the queries of every
possible later call see. Everything is observed here, from values the solution's calls
return through its proxy: each step's outputs and the state after every call.

Tolerances (float64 throughout):
- OUT_ATOL = 1e-10 on outputs. Both sides compute softmax-weighted sums of at most ~80
  values of size O(1) with scores of size O(10); rounding contributes about 1e-15 per
  operation, so honest differences stay below 1e-12 (measured: under 3e-15). A key
  wrongly seen or missed moves an output by about 1/(number of keys seen) >= 1e-2.
- ROT_ATOL = 1e-11 on rotated keys at positions below 1000: an angle of up to 1e3 rad
  carries an absolute rounding error near 1e3 * 1.1e-16 ~ 1e-13, and theta_i computed by
  another float64 formula differs by an ulp, moving the angle by ~1e-13 more.
- At positions near 1e6 the same ulp of theta_i moves the angle by ~1e6 * 2.2e-16 ~ 2e-10
  rad, so rotations are compared to 1e-8 and outputs to 1e-7 there; rotating at a wrong
  position moves a rotated key by O(1).
"""
import numpy as np
import pytest

import _oracle
from window_cache import SlidingWindowCache, apply_rotary

OUT_ATOL = 1e-10
ROT_ATOL = 1e-11
BASE = 10000.0

# (n_heads, head_dim, window, num_sinks, sequence length)
CONFIGS = [
    (1, 4, 1, 0, 14),
    (2, 6, 1, 3, 18),
    (2, 8, 3, 0, 26),
    (1, 4, 4, 2, 30),
    (2, 4, 2, 1, 24),
    (1, 8, 5, 7, 28),
    (2, 6, 6, 1, 34),
    (3, 4, 3, 4, 22),
]


def config_id(config):
    return "h{}-d{}-w{}-s{}-n{}".format(*config)


def random_chunking(rng, total, longest):
    sizes = []
    while sum(sizes) < total:
        sizes.append(min(int(rng.integers(1, longest + 1)), total - sum(sizes)))
    return sizes


def chunkings(rng, total, window, num_sinks):
    """One token at a time, the whole sequence at once, and random chunkings whose chunks
    are often longer than window + num_sinks."""
    out = [[1] * total, [total]]
    for _ in range(3):
        out.append(random_chunking(rng, total, window + num_sinks + 4))
    return out


def check_state(state, model):
    pos = np.asarray(state["pos"]).astype(np.int64).reshape(-1)
    assert sorted(pos.tolist()) == model.held(), (
        f"held positions {sorted(pos.tolist())}, reachable {model.held()} "
        f"(seen {model.seen}, rewindable {model.rewindable})")
    assert int(state["seen"]) == model.seen
    assert int(state["rewindable"]) == model.rewindable
    k, v = np.asarray(state["k"]), np.asarray(state["v"])
    assert k.shape == v.shape == (model.k.shape[0], len(pos), model.k.shape[2])
    assert k.dtype == v.dtype == np.float64
    want_k = _oracle.rotate(model.k[:, pos], pos, model.base)
    np.testing.assert_allclose(k, want_k, rtol=0, atol=ROT_ATOL)
    # Values are stored as they were given, never computed: bit-equal.
    assert np.array_equal(v, model.v[:, pos])


def feed(cache, model, rng, sizes, check):
    n_heads, _, head_dim = model.k.shape
    for size in sizes:
        q, k, v = (rng.standard_normal((n_heads, size, head_dim)) for _ in range(3))
        got = np.asarray(cache.step(q, k, v))
        want = model.step(q, k, v)
        if check == "outputs":
            assert got.shape == want.shape and got.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=0, atol=OUT_ATOL,
                                       err_msg=f"chunk sizes {sizes}, at position {model.seen - size}")
        else:
            check_state(cache.state(), model)


def new_pair(n_heads, head_dim, window, num_sinks, max_rewind=0, base=BASE):
    cache = SlidingWindowCache(n_heads, head_dim, window, num_sinks, max_rewind, base)
    return cache, _oracle.Model(n_heads, head_dim, window, num_sinks, max_rewind, base)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_outputs_match_full_attention_for_every_chunking(config):
    n_heads, head_dim, window, num_sinks, total = config
    rng = np.random.default_rng(sum(config))
    for sizes in chunkings(rng, total, window, num_sinks):
        cache, model = new_pair(n_heads, head_dim, window, num_sinks)
        feed(cache, model, rng, sizes, "outputs")


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_state_after_every_step_holds_exactly_the_reachable_keys(config):
    n_heads, head_dim, window, num_sinks, total = config
    rng = np.random.default_rng(100 + sum(config))
    for sizes in chunkings(rng, total, window, num_sinks):
        cache, model = new_pair(n_heads, head_dim, window, num_sinks)
        check_state(cache.state(), model)
        feed(cache, model, rng, sizes, "state")


def test_a_sink_is_not_seen_before_its_own_position():
    rng = np.random.default_rng(7)
    cache, model = new_pair(2, 4, 2, 6)
    for size in (5, 1, 3):
        q, k, v = (rng.standard_normal((2, size, 4)) for _ in range(3))
        np.testing.assert_allclose(cache.step(q, k, v), model.step(q, k, v), rtol=0, atol=OUT_ATOL)


def test_a_chunk_many_windows_long_after_the_cache_is_full():
    rng = np.random.default_rng(8)
    cache, model = new_pair(1, 6, 3, 1)
    for size in (5, 2, 23, 1, 17):
        q, k, v = (rng.standard_normal((1, size, 6)) for _ in range(3))
        np.testing.assert_allclose(cache.step(q, k, v), model.step(q, k, v), rtol=0, atol=OUT_ATOL)


def random_ops(rng, count, window, num_sinks, max_rewind):
    """Steps, each followed half the time by an allowed rewind of 1..min(max_rewind, T)."""
    ops = []
    for _ in range(count):
        size = int(rng.integers(1, window + num_sinks + max_rewind + 3))
        ops.append(("step", size))
        if rng.random() < 0.5:
            ops.append(("rewind", int(rng.integers(1, min(max_rewind, size) + 1))))
    return ops


def run_ops(cache, model, rng, ops, restore_every=None):
    n_heads, _, head_dim = model.k.shape
    for index, (kind, n) in enumerate(ops):
        if kind == "step":
            q, k, v = (rng.standard_normal((n_heads, n, head_dim)) for _ in range(3))
            np.testing.assert_allclose(cache.step(q, k, v), model.step(q, k, v), rtol=0, atol=OUT_ATOL,
                                       err_msg=f"ops {ops[:index + 1]}")
        else:
            cache.rewind(n)
            model.rewind(n)
        state = cache.state()
        check_state(state, model)
        if restore_every and index % restore_every == restore_every - 1:
            cache = restored(state, rng, model)
    return cache


def restored(state, rng, model):
    """A fresh object given the state with its entries in a random order."""
    order = rng.permutation(len(np.asarray(state["pos"]).reshape(-1)))
    shuffled = {"k": np.asarray(state["k"])[:, order], "v": np.asarray(state["v"])[:, order],
                "pos": np.asarray(state["pos"]).astype(np.int64)[order],
                "seen": int(state["seen"]), "rewindable": int(state["rewindable"])}
    n_heads, _, head_dim = model.k.shape
    fresh = SlidingWindowCache(n_heads, head_dim, model.window, model.num_sinks, model.max_rewind, model.base)
    fresh.load_state(shuffled)
    return fresh


# (n_heads, head_dim, window, num_sinks, max_rewind)
REWIND_CONFIGS = [
    (1, 4, 1, 0, 3),
    (2, 4, 1, 2, 2),
    (1, 6, 2, 0, 1),
    (2, 4, 3, 2, 4),
    (1, 8, 4, 1, 6),
    (2, 6, 5, 3, 2),
]


def rewind_config_id(config):
    return "h{}-d{}-w{}-s{}-r{}".format(*config)


@pytest.mark.parametrize("config", REWIND_CONFIGS, ids=rewind_config_id)
def test_steps_and_rewinds_match_the_model_call_by_call(config):
    n_heads, head_dim, window, num_sinks, max_rewind = config
    rng = np.random.default_rng(200 + sum(config))
    for _ in range(2):
        cache, model = new_pair(n_heads, head_dim, window, num_sinks, max_rewind)
        run_ops(cache, model, rng, random_ops(rng, 12, window, num_sinks, max_rewind))


@pytest.mark.parametrize("config", REWIND_CONFIGS, ids=rewind_config_id)
def test_a_state_loaded_in_any_order_continues_exactly(config):
    n_heads, head_dim, window, num_sinks, max_rewind = config
    rng = np.random.default_rng(300 + sum(config))
    cache, model = new_pair(n_heads, head_dim, window, num_sinks, max_rewind)
    run_ops(cache, model, rng, random_ops(rng, 14, window, num_sinks, max_rewind), restore_every=2)


def test_a_chunk_shorter_than_max_rewind_limits_the_rewind():
    rng = np.random.default_rng(9)
    cache, model = new_pair(1, 4, 3, 1, 8)
    run_ops(cache, model, rng, [("step", 12), ("step", 2), ("rewind", 2), ("step", 1), ("step", 5),
                                ("rewind", 5), ("step", 3)])


@pytest.mark.parametrize("head_dim", [2, 4, 6, 8])
@pytest.mark.parametrize("base", [10000.0, 500.0])
def test_apply_rotary_matches_a_complex_rotation(head_dim, base):
    rng = np.random.default_rng(head_dim)
    x = rng.standard_normal((3, 5, head_dim))
    small = np.array([0, 1, 2, 17, 999])
    got = np.asarray(apply_rotary(x, small, base))
    assert got.shape == x.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, _oracle.rotate(x, small, base), rtol=0, atol=ROT_ATOL)
    large = np.array([1_000_000, 1_000_001, 1_234_567, 999_999, 2_000_003])
    # Angles near 1e6 rad: see the module docstring for 1e-8.
    np.testing.assert_allclose(np.asarray(apply_rotary(x, large, base)), _oracle.rotate(x, large, base),
                               rtol=0, atol=1e-8)


@pytest.mark.parametrize("num_sinks", [0, 3])
def test_a_loaded_state_far_into_the_sequence_rotates_at_absolute_positions(num_sinks):
    """A state the test builds itself at seen = 1,000,005: the sinks and the last window - 1
    keys, rotated at their positions; steps then continue at position 1,000,005."""
    rng = np.random.default_rng(10 + num_sinks)
    n_heads, head_dim, window, base = 2, 6, 4, 10000.0
    seen = 1_000_005
    pos = np.array(_oracle.reachable(seen, 0, window, num_sinks), dtype=np.int64)
    k_raw, v = rng.standard_normal((2, n_heads, len(pos), head_dim))
    cache = SlidingWindowCache(n_heads, head_dim, window, num_sinks, 0, base)
    cache.load_state({"k": _oracle.rotate(k_raw, pos, base), "v": v, "pos": pos,
                      "seen": seen, "rewindable": 0})
    for size in (3, 1, 6):
        q, k_new, v_new = (rng.standard_normal((n_heads, size, head_dim)) for _ in range(3))
        q_pos = np.arange(seen, seen + size)
        all_pos = np.concatenate([pos, q_pos])
        all_k = np.concatenate([k_raw, k_new], axis=1)
        all_v = np.concatenate([v, v_new], axis=1)
        want = _oracle.attend(q, list(q_pos), all_k, list(all_pos), all_v, window, num_sinks, base)
        # Positions near 1e6: see the module docstring for 1e-7.
        np.testing.assert_allclose(cache.step(q, k_new, v_new), want, rtol=0, atol=1e-7)
        seen += size
        keep = np.isin(all_pos, _oracle.reachable(seen, 0, window, num_sinks))
        pos, k_raw, v = all_pos[keep], all_k[:, keep], all_v[:, keep]
        state = cache.state()
        got_pos = np.asarray(state["pos"]).astype(np.int64)
        assert sorted(got_pos.tolist()) == pos.tolist()
        order = np.argsort(got_pos)
        np.testing.assert_allclose(np.asarray(state["k"])[:, order], _oracle.rotate(k_raw, pos, base),
                                   rtol=0, atol=1e-8)


def test_large_scores_give_finite_exact_outputs():
    """Queries 1000 times larger: scores in the thousands, where exp overflows unshifted."""
    rng = np.random.default_rng(11)
    cache, model = new_pair(2, 4, 3, 2)
    for size in (4, 3, 6):
        q, k, v = (rng.standard_normal((2, size, 4)) for _ in range(3))
        q *= 1000.0
        got = np.asarray(cache.step(q, k, v))
        assert np.isfinite(got).all()
        # Scores near 1e3 to 1e4 carry rounding near 1e4 * 1e-16 in the exponent: 1e-9 is ample.
        np.testing.assert_allclose(got, model.step(q, k, v), rtol=0, atol=1e-9)


def test_defaults_are_no_rewind_and_base_ten_thousand():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 4))
    large = np.array([5, 1_000_000, 1_500_001])
    # Angles near 1e6 rad: see the module docstring for 1e-8.
    np.testing.assert_allclose(np.asarray(apply_rotary(x, large)), _oracle.rotate(x, large, 10000.0),
                               rtol=0, atol=1e-8)
    cache = SlidingWindowCache(2, 4, 3, 1)
    model = _oracle.Model(2, 4, 3, 1, 0, 10000.0)
    for size in (4, 1, 5):
        q, k, v = (rng.standard_normal((2, size, 4)) for _ in range(3))
        np.testing.assert_allclose(cache.step(q, k, v), model.step(q, k, v), rtol=0, atol=OUT_ATOL)
        check_state(cache.state(), model)
