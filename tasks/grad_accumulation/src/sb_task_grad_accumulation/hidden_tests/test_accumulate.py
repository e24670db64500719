"""Hidden tests for grad_accumulation.

Every expected value is computed independently in float64 on the WHOLE batch
(_expected), never by calling a reference solution.
"""
import pytest
import torch

from _expected import (full_batch_loss_and_grads64, make_batch, make_model, params64,
                       sgd_update)
from accumulate import accumulation_step

# The solution runs in float32; the expectation is float64. Forward and backward through
# this 2-layer MLP accumulate a few float32 roundings (eps 1.2e-7) on values of order 1,
# so gradients and updated parameters agree to ~1e-6. atol 2e-5 / rtol 1e-4 leave a margin
# of 10x, while every wrong weighting tested here is off by at least ~1e-2 relative.
ATOL = 2e-5
RTOL = 1e-4

mse = torch.nn.MSELoss()
cross_entropy = torch.nn.CrossEntropyLoss()


def _assert_tensors_close(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a is not None, "a parameter has no gradient"
        torch.testing.assert_close(a.detach().to(torch.float64), e, atol=ATOL, rtol=RTOL)


def _run(seed, batch_size, micro, loss_fn=mse, classes=False, lr=0.1, momentum=0.0,
         weight_decay=0.0):
    model = make_model(seed)
    x, y = make_batch(seed + 1, batch_size, classes=classes)
    start = params64(model)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum,
                          weight_decay=weight_decay)
    reported = accumulation_step(model, opt, loss_fn, x, y, micro)
    loss64, grads64 = full_batch_loss_and_grads64(model, start, loss_fn, x, y)
    expected_params, _ = sgd_update(start, grads64, lr, momentum, weight_decay)
    return model, reported, loss64, grads64, expected_params


# ---------------------------------------------------------------- the step itself


@pytest.mark.parametrize("batch_size, micro", [(12, 4), (12, 3), (7, 7), (5, 1)])
def test_step_equals_full_batch_step_when_micro_batches_are_equal(batch_size, micro):
    model, _, _, _, expected = _run(10, batch_size, micro)
    _assert_tensors_close(list(model.parameters()), expected)


@pytest.mark.parametrize("batch_size, micro", [(10, 4), (11, 3), (9, 8), (13, 5)])
def test_short_last_micro_batch_is_weighted_by_its_share(batch_size, micro):
    model, _, _, _, expected = _run(20, batch_size, micro)
    _assert_tensors_close(list(model.parameters()), expected)


def test_micro_batch_larger_than_the_batch_is_one_chunk():
    model, _, _, _, expected = _run(30, 6, 100)
    _assert_tensors_close(list(model.parameters()), expected)


def test_step_with_cross_entropy_momentum_and_weight_decay():
    model, _, _, _, expected = _run(40, 10, 3, loss_fn=cross_entropy, classes=True,
                                    lr=0.5, momentum=0.9, weight_decay=0.05)
    _assert_tensors_close(list(model.parameters()), expected)


@pytest.mark.parametrize("batch_size, micro", [(10, 4), (12, 4)])
def test_grads_on_return_are_the_full_batch_gradient(batch_size, micro):
    model, _, _, grads64, _ = _run(50, batch_size, micro)
    _assert_tensors_close([p.grad for p in model.parameters()], grads64)


# ---------------------------------------------------------------- gradients start from zero


def test_stale_gradients_are_cleared_first():
    model = make_model(60)
    x, y = make_batch(61, 10)
    for p in model.parameters():
        p.grad = torch.full_like(p, 3.0)
    start = params64(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    accumulation_step(model, opt, mse, x, y, 4)
    _, grads64 = full_batch_loss_and_grads64(model, start, mse, x, y)
    expected, _ = sgd_update(start, grads64, 0.1)
    _assert_tensors_close([p.grad for p in model.parameters()], grads64)
    _assert_tensors_close(list(model.parameters()), expected)


def test_two_calls_are_two_independent_full_batch_steps():
    # Momentum carries over between calls (that is the optimiser's job); gradients must not.
    lr, momentum = 0.2, 0.9
    model = make_model(70)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    batches = [make_batch(71, 10), make_batch(72, 7)]
    expected, buffers = params64(model), None
    for x, y in batches:
        _, grads64 = full_batch_loss_and_grads64(model, expected, mse, x, y)
        expected, buffers = sgd_update(expected, grads64, lr, momentum, buffers=buffers)
        accumulation_step(model, opt, mse, x, y, 3)
    _assert_tensors_close(list(model.parameters()), expected)


# ---------------------------------------------------------------- exactly one step


@pytest.mark.parametrize("batch_size, micro", [(10, 4), (6, 6)])
def test_optimizer_steps_exactly_once(batch_size, micro):
    model = make_model(80)
    x, y = make_batch(81, batch_size)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = []
    opt.register_step_post_hook(lambda optimizer, args, kwargs: steps.append(1))
    accumulation_step(model, opt, mse, x, y, micro)
    assert len(steps) == 1


# ---------------------------------------------------------------- forward passes


@pytest.mark.parametrize("batch_size, micro, sizes", [(10, 4, [4, 4, 2]), (9, 3, [3, 3, 3]),
                                                     (5, 8, [5])])
def test_model_sees_each_micro_batch_once_in_order(batch_size, micro, sizes):
    model = make_model(90)
    x, y = make_batch(91, batch_size)
    seen = []
    model.register_forward_pre_hook(lambda module, args: seen.append(args[0].detach().clone()))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    accumulation_step(model, opt, mse, x, y, micro)
    assert [len(chunk) for chunk in seen] == sizes
    assert torch.equal(torch.cat(seen), x)


# ---------------------------------------------------------------- the reported loss


@pytest.mark.parametrize("batch_size, micro", [(10, 4), (11, 3), (8, 8)])
def test_reports_the_full_batch_loss_before_the_step(batch_size, micro):
    _, reported, loss64, _, _ = _run(100, batch_size, micro, lr=0.5)
    assert isinstance(reported, float)
    # float32 loss of order 1: a few roundings, far below 1e-5 relative.
    assert reported == pytest.approx(loss64, rel=1e-5, abs=1e-6)


def test_reported_cross_entropy_loss_with_short_last_micro_batch():
    _, reported, loss64, _, _ = _run(110, 10, 4, loss_fn=cross_entropy, classes=True, lr=0.5)
    assert reported == pytest.approx(loss64, rel=1e-5, abs=1e-6)


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize("micro", [0, -2])
def test_non_positive_micro_batch_size_raises_value_error(micro):
    model = make_model(120)
    x, y = make_batch(121, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = params64(model)
    with pytest.raises(ValueError):
        accumulation_step(model, opt, mse, x, y, micro)
    _assert_tensors_close(list(model.parameters()), before)
