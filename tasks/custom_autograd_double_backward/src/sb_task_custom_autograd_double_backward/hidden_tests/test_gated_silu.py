import numpy as np
import pytest
import torch

from gated_silu import GatedSiLU, gated_silu

from _composite import SCALES, SHAPES, composite, make_inputs, numpy_forward

CASES = sorted(SHAPES)
# float64 throughout on at most 24-element tensors: two correct evaluations of these
# closed-form derivatives agree to ~1e-15 relative; every wrong derivative is off by O(0.1).
TOL = 1e-10


def _out_shape(case):
    return torch.broadcast_shapes(*SHAPES[case])


def _upstream(case, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(_out_shape(case), generator=g, dtype=torch.float64)


@pytest.mark.parametrize("case", CASES)
def test_forward_matches_float64_numpy(case):
    x, w, b = make_inputs(case, 1)
    y = gated_silu(x, w, b, 1.7)
    assert y.shape == _out_shape(case)
    np.testing.assert_allclose(y.detach().numpy(), numpy_forward(x, w, b, 1.7), rtol=0, atol=TOL)


def test_output_is_produced_by_the_custom_function():
    x, w, b = make_inputs("row_params", 2)
    y = gated_silu(x, w, b)
    assert type(y.grad_fn).__name__ == "GatedSiLUBackward"
    np.testing.assert_allclose(y.detach().numpy(), numpy_forward(x, w, b, 1.0), rtol=0, atol=TOL)


# gradcheck / gradgradcheck keep their defaults (eps 1e-6, atol 1e-5, rtol 1e-3): central
# differences in float64 on these smooth O(1) functions are accurate to ~1e-9, while a
# wrong derivative is off by O(0.1).
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("case", CASES)
def test_gradcheck(case, scale):
    inputs = make_inputs(case, 3)
    assert torch.autograd.gradcheck(lambda x, w, b: gated_silu(x, w, b, scale), inputs)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("case", CASES)
def test_gradgradcheck(case, scale):
    inputs = make_inputs(case, 4)
    assert torch.autograd.gradgradcheck(lambda x, w, b: gated_silu(x, w, b, scale), inputs)


@pytest.mark.parametrize("case", CASES)
def test_first_derivatives_match_composite_autograd(case):
    inputs = make_inputs(case, 5)
    upstream = _upstream(case, 50)
    got = torch.autograd.grad(gated_silu(*inputs, 1.7), inputs, upstream)
    want = torch.autograd.grad(composite(*inputs, 1.7), inputs, upstream)
    for name, g, t, x in zip("xwb", got, want, inputs):
        assert g.shape == x.shape, name
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=0, atol=TOL, err_msg=name)


def _second_order(fn, inputs, upstream, directions):
    first = torch.autograd.grad(fn(*inputs, 1.7), inputs, upstream, create_graph=True)
    inner = sum((g * d).sum() for g, d in zip(first, directions))
    return torch.autograd.grad(inner, inputs + [upstream], allow_unused=True)


@pytest.mark.parametrize("case", CASES)
def test_second_derivatives_match_composite_autograd(case):
    inputs = make_inputs(case, 6)
    directions = [t.detach() for t in make_inputs(case, 60)]
    up_custom = _upstream(case, 61).requires_grad_(True)
    up_plain = up_custom.detach().clone().requires_grad_(True)
    got = _second_order(gated_silu, inputs, up_custom, directions)
    want = _second_order(composite, inputs, up_plain, directions)
    for name, g, t in zip(["x", "w", "b", "grad_output"], got, want):
        assert g is not None, f"no second derivative reaches {name}"
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=0, atol=TOL, err_msg=name)


@pytest.mark.parametrize("case", CASES)
def test_backward_returns_one_exact_shape_gradient_per_input(case):
    # Autograd's engine would quietly sum a broadcast-shaped gradient for us; the contract
    # is that backward itself returns each gradient in its input's exact shape. For a
    # custom Function the output's grad_fn is the ctx, so its backward can be called as is.
    x, w, b = make_inputs(case, 7)
    y = gated_silu(x, w, b, 1.7)
    raw = y.grad_fn.apply(_upstream(case, 70))
    assert isinstance(raw, tuple) and len(raw) == 4
    assert raw[3] is None
    for name, g, t in zip("xwb", raw[:3], (x, w, b)):
        assert g is not None and tuple(g.shape) == tuple(t.shape), name


def test_float32_inputs():
    inputs = make_inputs("three_d", 8, dtype=torch.float32)
    y = gated_silu(*inputs, 1.7)
    assert y.dtype == torch.float32
    grads = torch.autograd.grad(y.sum(), inputs)
    plain = [t.detach().double().requires_grad_(True) for t in inputs]
    want = torch.autograd.grad(composite(*plain, 1.7).sum(), plain)
    for g, t in zip(grads, want):
        assert g.dtype == torch.float32
        # float32 with up to 6 summed terms of O(1): error ~1e-6; 1e-4 leaves a wide margin.
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=0, atol=1e-4)
