"""Hidden tests for activation_checkpointing_rng.

The block's forward and backward need a live generator and a live autograd graph, so they
run in the solution's process through _probe_ckpt.py, which reports outputs, gradients,
generator states and instrumentation as data. Every expected value is computed here: the
mask drawn from a clone of the generator exactly as the prompt defines it, the forward in
float64 numpy, the gradients by plain (non-checkpointed) float64 autograd.
"""
import numpy as np
import pytest
import torch

from checkpoint_block import checkpointed_mlp_block  # noqa: F401  (the declared module must import)
from sb.judge import probe

from _plain import (
    D, H, N, autograd_plain, clone_generator, draw_keep, generator_at, make_params, numpy_forward,
)

# All comparisons run in float64 on tiny matrices (depth 2 matmuls over 5-7 terms):
# rounding differences between two correct float64 implementations stay below 1e-13,
# while every wrong mask, missing rescale or missing residual moves entries by O(0.1).
TOL = 1e-10

P_VALUES = [0.25, 0.5, 0.8]
NAMES = ["x", "w1", "b1", "w2", "b2"]


def ckpt():
    return probe("_probe_ckpt.py")


def _upstream(seed):
    return torch.randn(N, D, generator=generator_at(seed), dtype=torch.float64)


def _run(seed, p, gen_seed, upstream_seed=99, **options):
    tensors = make_params(seed)
    g = generator_at(gen_seed)
    seen = ckpt().run(tensors, p, g.get_state(), _upstream(upstream_seed), **options)
    return seen, tensors, g


def _plain_grads(tensors, keep, p, upstream, requires=(True,) * 5, activation=torch.tanh):
    leaves = [t.detach().double().clone().requires_grad_(bool(r)) for t, r in zip(tensors, requires)]
    autograd_plain(leaves, keep, p, activation).backward(upstream)
    return [t.grad for t in leaves]


def _assert_grads(got, want, tol=TOL):
    for name, g, w in zip(NAMES, got, want):
        if w is None:
            continue
        assert g is not None, f"no gradient for {name}"
        np.testing.assert_allclose(g.double().numpy(), w.numpy(), rtol=0, atol=tol, err_msg=name)


def _state_after_plain(gen_seed, p, draws_between=0):
    expected = generator_at(gen_seed)
    draw_keep(expected, p)
    if draws_between:
        torch.rand(draws_between, generator=expected)
    return expected.get_state()


# ---------------------------------------------------------------- the forward


@pytest.mark.parametrize("p", P_VALUES + [0.0])
def test_forward_matches_float64_numpy(p):
    seen, tensors, g = _run(1, p, 11)
    keep = draw_keep(clone_generator(g), p)
    assert tuple(seen["y"].shape) == (N, D) and seen["dtype"] == "torch.float64"
    np.testing.assert_allclose(seen["y"].numpy(), numpy_forward(*tensors, keep, p), rtol=0, atol=TOL)


def test_a_draw_exactly_equal_to_p_is_kept():
    # keep = rand >= p: choose p equal to one of the float32 draws the mask will use, so
    # that element separates >= from >. (The draws are exact float32 values, and p as a
    # Python float holds that value exactly.)
    g = generator_at(27)
    draws = torch.rand((N, H), generator=clone_generator(g), dtype=torch.float32)
    p = float(draws.flatten().sort().values[N * H // 2])
    keep = draws >= p
    seen = ckpt().run(make_params(28), p, g.get_state(), _upstream(99))
    np.testing.assert_allclose(seen["y"].numpy(), numpy_forward(*make_params(28), keep, p), rtol=0, atol=TOL)
    _assert_grads(seen["grads"], _plain_grads(make_params(28), keep, p, _upstream(99)))


def test_activation_argument_is_used_in_forward_and_recompute():
    p = 0.4
    seen, tensors, g = _run(20, p, 21, activation="sin")
    keep = draw_keep(clone_generator(g), p)
    np.testing.assert_allclose(seen["y"].numpy(), numpy_forward(*tensors, keep, p, np.sin), rtol=0, atol=TOL)
    _assert_grads(seen["grads"], _plain_grads(tensors, keep, p, _upstream(99), activation=torch.sin))


@pytest.mark.parametrize("p", P_VALUES + [0.0])
def test_generator_after_forward_equals_plain_forward(p):
    # One float32 draw of shape (N, H), even when p == 0.
    seen, _, _ = _run(2, p, 12)
    assert torch.equal(seen["state_after_forward"], _state_after_plain(12, p))


@pytest.mark.parametrize("p", [1.0, 1.5, -0.1, float("nan"), float("inf"), float("-inf"), -5e-324])
def test_invalid_dropout_probability_raises_before_drawing(p):
    # NaN satisfies no comparison, so it is outside 0 <= p < 1 however a range check is
    # written; a check written as `p < 0 or p >= 1` lets it through. -5e-324 is the
    # negative float closest to 0.
    g = generator_at(22)
    seen = ckpt().invalid_p(make_params(22), p, g.get_state())
    assert isinstance(seen["raised"], ValueError), f"raised {seen['raised']!r}"
    assert torch.equal(seen["state_after"], g.get_state()), "the generator moved before the ValueError"


def test_output_comes_from_a_custom_autograd_function():
    seen, _, _ = _run(23, 0.5, 24)
    assert seen["requires_grad"]
    assert seen["custom_function_in_graph"], f"no torch.autograd.Function of its own behind y ({seen['grad_fn_type']})"


# ---------------------------------------------------------------- gradients


@pytest.mark.parametrize("p", P_VALUES + [0.0])
def test_gradients_match_plain_float64_autograd(p):
    seen, tensors, g = _run(3, p, 13)
    keep = draw_keep(clone_generator(g), p)
    _assert_grads(seen["grads"], _plain_grads(tensors, keep, p, _upstream(99)))


@pytest.mark.parametrize("requires", [(False, True, True, True, True), (True, False, True, False, True)],
                         ids=["x-is-data", "frozen-weights"])
def test_gradients_by_autograd_grad_with_some_inputs_not_requiring_grad(requires):
    p = 0.3
    seen, tensors, g = _run(25, p, 26, requires=requires, how="grad", draws_between=4)
    keep = draw_keep(clone_generator(g), p)
    want = _plain_grads(tensors, keep, p, _upstream(99), requires=requires)
    _assert_grads(seen["grads"], want)
    assert torch.equal(seen["state_after_backward"], _state_after_plain(26, p, 4))


@pytest.mark.parametrize("p", P_VALUES)
def test_generator_after_backward_equals_plain_forward(p):
    # The caller draws from the generator between forward and backward; after backward
    # the state must be what a plain forward followed by the same draws leaves behind.
    seen, tensors, g = _run(4, p, 14, draws_between=13)
    expected = _state_after_plain(14, p, 13)
    assert torch.equal(seen["state_before_backward"], expected)
    assert torch.equal(seen["state_after_backward"], expected)
    assert seen["global_rng_unchanged"], "the global generator was used or moved"
    keep = draw_keep(clone_generator(g), p)
    _assert_grads(seen["grads"], _plain_grads(tensors, keep, p, _upstream(99)))


def test_two_blocks_sharing_a_generator():
    p = 0.4
    g = generator_at(15)
    shadow = clone_generator(g)
    keep1, keep2 = draw_keep(shadow, p), draw_keep(shadow, p)
    first, second = make_params(5), make_params(6)
    upstream = _upstream(98)
    seen = ckpt().chain(first, second, p, g.get_state(), upstream)
    assert torch.equal(seen["state_after_forward"], shadow.get_state())
    assert torch.equal(seen["state_after_backward"], shadow.get_state())

    p_first = [t.clone().requires_grad_(True) for t in first]
    p_second = [t.clone().requires_grad_(True) for t in second[1:]]
    h_plain = autograd_plain(p_first, keep1, p)
    y_plain = autograd_plain([h_plain, *p_second], keep2, p)
    np.testing.assert_allclose(seen["y"].numpy(), y_plain.detach().numpy(), rtol=0, atol=TOL)
    y_plain.backward(upstream)
    for got, want in zip(seen["grads"], p_first + p_second):
        np.testing.assert_allclose(got.numpy(), want.grad.numpy(), rtol=0, atol=TOL)


# ---------------------------------------------------------------- checkpointing


def test_forward_keeps_no_graph_and_backward_recomputes():
    seen, _, _ = _run(7, 0.5, 16, record=True)
    assert seen["calls_after_forward"] == 1, "forward must call activation exactly once"
    assert [c["grad_enabled"] for c in seen["calls"]] == [False, True], \
        "forward must run without grad tracking, backward must recompute with it"
    assert all(c["shape"] == (N, H) for c in seen["calls"])


def test_recompute_replays_generator_from_forward_entry():
    seen, _, g = _run(8, 0.5, 17, record=True, draws_between=5)
    start = g.get_state()
    assert len(seen["calls"]) == 2
    assert torch.equal(seen["calls"][0]["state"], start)
    assert torch.equal(seen["calls"][1]["state"], start), "the recompute must start from the state forward started from"


def test_no_hidden_sized_tensor_survives_the_forward():
    seen, _, _ = _run(9, 0.5, 18, hidden=(N, H))
    assert (N, H) not in seen["saved_shapes"], f"an (N, H) tensor was saved for backward: {seen['saved_shapes']}"
    assert seen["live_hidden_sized"] == [], f"(N, H)-sized tensors outlived the forward: {seen['live_hidden_sized']}"


def test_no_mask_sized_python_or_numpy_memory_survives_the_forward():
    # A mask kept outside torch (a numpy array, bytes, a list, a Python int) lives in
    # memory tracemalloc traces. A larger block, so that the mask dwarfs what an honest
    # forward keeps there: with p = 0.5 the mask is N*H independent fair bits, and no
    # encoding of it takes fewer than N*H/8 bytes on average (a numpy bool array takes N*H).
    # The bound is half of that, 64 KiB. An honest forward keeps a few Python objects
    # (about 1.3 KiB measured for the reference) and the generator state: 5056 bytes as a
    # tensor (torch memory, untraced), or as bytes or a numpy array, about 40 KiB at worst
    # as a Python list of ints. Deterministic: no sampling in the bound.
    n, d, h, p = 64, 4, 16384, 0.5
    tensors = make_params(30, n=n, d=d, h=h)
    g = generator_at(31)
    seen = ckpt().traced_growth_over_forward(tensors, p, g.get_state())
    keep = torch.rand((n, h), generator=clone_generator(g), dtype=torch.float32) >= p
    # y's entries now sum 16384 O(1) terms and reach ~500: two correct float64 summation
    # orders differ by ~1e-12 (1.1e-12 measured), 1e-9 leaves a 1000x margin, while a wrong
    # mask, rescale or residual moves entries by O(1).
    np.testing.assert_allclose(seen["y"].numpy(), numpy_forward(*tensors, keep, p), rtol=0, atol=1e-9)
    bound = n * h // 16
    assert seen["traced_growth"] < bound, \
        f"{seen['traced_growth']} bytes of Python/numpy memory allocated in the forward outlived it (bound {bound})"


# ---------------------------------------------------------------- dtypes


def test_float32_inputs_match_float64_computation():
    p = 0.3
    tensors = [t.float() for t in make_params(10)]
    g = generator_at(19)
    seen = ckpt().run(tensors, p, g.get_state(), _upstream(97).float())
    keep = draw_keep(clone_generator(g), p)
    assert seen["dtype"] == "torch.float32"
    # float32 forward over 5-7 term dot products of O(1) values: error ~1e-6, margin 1e-4.
    np.testing.assert_allclose(seen["y"].numpy(), numpy_forward(*tensors, keep, p), rtol=0, atol=1e-4)
    assert seen["grad_dtypes"] == ["torch.float32"] * 5
    _assert_grads(seen["grads"], _plain_grads(tensors, keep, p, _upstream(97).float().double()), tol=1e-4)
    assert torch.equal(seen["state_after_backward"], _state_after_plain(19, p))
