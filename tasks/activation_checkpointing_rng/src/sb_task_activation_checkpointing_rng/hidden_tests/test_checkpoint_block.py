import numpy as np
import pytest
import torch

from checkpoint_block import checkpointed_mlp_block

from _plain import (
    H, N, autograd_plain, clone_generator, draw_keep, generator_at, make_params,
    numpy_forward,
)

# All comparisons run in float64 on tiny matrices (depth 2 matmuls over 5-7 terms):
# rounding differences between two correct float64 implementations stay below 1e-13,
# while every wrong mask, missing rescale or missing residual moves entries by O(0.1).
TOL = 1e-10

P_VALUES = [0.25, 0.5, 0.8]


def _leaves(seed):
    return [t.clone().requires_grad_(True) for t in make_params(seed)]


def _state_bytes(g):
    return bytes(g.get_state().numpy().tobytes())


class _Recorder:
    """tanh that records, per call, whether grad mode was on and the generator state."""

    def __init__(self, generator):
        self.generator = generator
        self.calls = []

    def __call__(self, h):
        self.calls.append((torch.is_grad_enabled(), _state_bytes(self.generator)))
        return torch.tanh(h)


@pytest.mark.parametrize("p", P_VALUES + [0.0])
def test_forward_matches_float64_numpy(p):
    g = generator_at(11)
    keep = draw_keep(clone_generator(g), p)
    tensors = _leaves(1)
    y = checkpointed_mlp_block(*tensors, p, g)
    assert y.shape == (N, tensors[0].shape[1])
    np.testing.assert_allclose(y.detach().numpy(), numpy_forward(*tensors, keep, p), rtol=0, atol=TOL)


@pytest.mark.parametrize("p", P_VALUES)
def test_generator_after_forward_equals_plain_forward(p):
    g = generator_at(12)
    expected = clone_generator(g)
    draw_keep(expected, p)
    checkpointed_mlp_block(*_leaves(2), p, g)
    assert _state_bytes(g) == _state_bytes(expected)


@pytest.mark.parametrize("p", P_VALUES)
def test_gradients_match_plain_float64_autograd(p):
    g = generator_at(13)
    keep = draw_keep(clone_generator(g), p)
    tensors = _leaves(3)
    upstream = torch.randn(N, tensors[0].shape[1], generator=generator_at(99), dtype=torch.float64)
    y = checkpointed_mlp_block(*tensors, p, g)
    y.backward(upstream)

    plain = _leaves(3)
    autograd_plain(plain, keep, p).backward(upstream)
    for name, got, want in zip(["x", "w1", "b1", "w2", "b2"], tensors, plain):
        assert got.grad is not None, name
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=0, atol=TOL, err_msg=name)


@pytest.mark.parametrize("p", P_VALUES)
def test_generator_after_backward_equals_plain_forward(p):
    # The caller draws from the generator between forward and backward; after backward
    # the state must be what a plain forward followed by the same draws leaves behind.
    g = generator_at(14)
    expected = clone_generator(g)
    draw_keep(expected, p)
    torch.rand(13, generator=expected)

    y = checkpointed_mlp_block(*_leaves(4), p, g)
    torch.rand(13, generator=g)
    y.sum().backward()
    assert _state_bytes(g) == _state_bytes(expected)


def test_two_blocks_sharing_a_generator():
    p = 0.4
    g = generator_at(15)
    shadow = clone_generator(g)
    keep1, keep2 = draw_keep(shadow, p), draw_keep(shadow, p)
    first, second = _leaves(5), _leaves(6)
    upstream = torch.randn(N, first[0].shape[1], generator=generator_at(98), dtype=torch.float64)

    h = checkpointed_mlp_block(*first, p, g)
    y = checkpointed_mlp_block(h, *second[1:], p, g)
    y.backward(upstream)
    assert _state_bytes(g) == _state_bytes(shadow)

    p_first, p_second = _leaves(5), _leaves(6)
    h_plain = autograd_plain(p_first, keep1, p)
    autograd_plain([h_plain, *p_second[1:]], keep2, p).backward(upstream)
    for got, want in zip(first + second[1:], p_first + p_second[1:]):
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=0, atol=TOL)


def test_forward_keeps_no_graph_and_backward_recomputes():
    g = generator_at(16)
    recorder = _Recorder(g)
    y = checkpointed_mlp_block(*_leaves(7), 0.5, g, activation=recorder)
    assert [on for on, _ in recorder.calls] == [False], "forward must run without grad tracking"
    y.sum().backward()
    assert [on for on, _ in recorder.calls] == [False, True], "backward must recompute with grad on"


def test_recompute_replays_generator_from_forward_entry():
    g = generator_at(17)
    start = _state_bytes(g)
    recorder = _Recorder(g)
    y = checkpointed_mlp_block(*_leaves(8), 0.5, g, activation=recorder)
    torch.rand(5, generator=g)
    y.sum().backward()
    assert len(recorder.calls) == 2
    assert recorder.calls[0][1] == start
    assert recorder.calls[1][1] == start, "the recompute must start from the state forward started from"


def test_no_hidden_sized_tensor_saved_for_backward():
    saved_shapes = []

    def pack(t):
        saved_shapes.append(tuple(t.shape))
        return t

    g = generator_at(18)
    tensors = _leaves(9)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = checkpointed_mlp_block(*tensors, 0.5, g)
    assert (N, H) not in saved_shapes, f"an (N, H) activation was kept: {saved_shapes}"
    y.sum().backward()


def test_float32_inputs_match_float64_computation():
    p = 0.3
    g = generator_at(19)
    keep = draw_keep(clone_generator(g), p)
    tensors = [t.float().requires_grad_(True) for t in make_params(10)]
    y = checkpointed_mlp_block(*tensors, p, g)
    assert y.dtype == torch.float32
    # float32 forward over 5-7 term dot products of O(1) values: error ~1e-6, margin 1e-4.
    np.testing.assert_allclose(y.detach().numpy(), numpy_forward(*tensors, keep, p), rtol=0, atol=1e-4)
    y.sum().backward()
    plain = [t.detach().double().requires_grad_(True) for t in tensors]
    autograd_plain(plain, keep, p).sum().backward()
    for got, want in zip(tensors, plain):
        assert got.grad.dtype == torch.float32
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=0, atol=1e-4)
