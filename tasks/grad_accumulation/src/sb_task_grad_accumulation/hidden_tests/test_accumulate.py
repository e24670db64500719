"""Hidden tests for grad_accumulation.

The model's parameters, the optimiser and the loss live in the solution's process (the
optimiser must update live tensors): _probe_accumulate.py builds them from the parameters
given here, calls the solution and reports what it saw. The model's computation does not
live there: its forward and backward run here, in ModelServer (_model_server.py), with a
secret input mix drawn per test, so the solution cannot compute the model itself, and the
server's record of every forward (its input, its parameters) and backward (its
grad_output) is the judge's own. Every expected value is computed here, independently, in
float64 on the WHOLE batch (_expected), never by calling a reference solution.
"""
import pytest
import torch

from _expected import (full_batch_loss_and_grads64, loss_gradient_wrt_output64, make_batch, make_params,
                       secret_mix, sgd_update)
from _model_server import ModelServer
from accumulate import accumulation_step  # noqa: F401  (the declared module must import)
from sb.judge import probe

# The solution runs in float32; the expectation is float64 (the server computes in float64
# and rounds each output and gradient once to float32). Summing the micro-batch gradients
# and the SGD update in float32 add a few roundings (eps 1.2e-7) on values of order 1, so
# gradients and updated parameters agree to ~1e-6. atol 2e-5 / rtol 1e-4 leave a margin
# of 10x, while every wrong weighting tested here is off by at least ~1e-2 relative.
ATOL = 2e-5
RTOL = 1e-4
# A grad_output that is a positive multiple of the micro-batch loss's own gradient, as the
# worker's float32 loss backward computes it from a float32 output: the two differ by a
# few float32 roundings (~1e-6 relative; ~1e-5 in a second call, whose parameters are the
# worker's float32 step). 1e-4 leaves 10x; a zero, random or other micro-batch's
# grad_output is off by order 1.
DIRECTION_TOL = 1e-4


def run(seed, params, calls, **options):
    """(the probe's reports, the judge's ModelServer and its record) for these calls."""
    server = ModelServer(secret_mix(seed), [p.shape for p in params])
    return probe("_probe_accumulate.py").run(server, params, calls, **options), server


def _assert_tensors_close(actual, expected, what="parameter"):
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a is not None, f"{what} {i} is None"
        torch.testing.assert_close(a.detach().to(torch.float64), e.to(torch.float64), atol=ATOL, rtol=RTOL,
                                   msg=lambda m: f"{what} {i}: {m}")


def _slices(n, micro):
    return [(start, min(start + micro, n)) for start in range(0, n, micro)]


def _forward_sizes(server):
    return [len(record["input"]) for record in server._forwards]


def _assert_served_as_micro_batches(server, steps, loss="mse"):
    """From the judge's own record: for each call in `steps` ((x, y, micro, params before
    the step)), in order, exactly one forward per micro-batch x[0:m], x[m:2m], ..., on
    that micro-batch, at the parameters before the step, each backpropagated once with a
    grad_output that is a positive multiple of that micro-batch's own loss gradient; and
    no other forward or backward, well-formed or not."""
    assert server._refused == [], f"malformed calls to the model: {server._refused}"
    expected = [(x, y, start, stop, params) for x, y, micro, params in steps for start, stop in _slices(len(x), micro)]
    assert _forward_sizes(server) == [stop - start for _, _, start, stop, _ in expected], \
        "the model was not run once per micro-batch, in order (sizes of the forwards it ran)"
    for k, (record, (x, y, start, stop, params)) in enumerate(zip(server._forwards, expected)):
        assert torch.equal(record["input"], x[start:stop]), f"forward {k} was not run on x[{start}:{stop}]"
        _assert_tensors_close(record["params"], params, f"forward {k} ran at a parameter that was not "
                                                        "the one before the step: parameter")
        assert len(record["backwards"]) == 1, \
            f"forward {k} (x[{start}:{stop}]) was backpropagated {len(record['backwards'])} times, not once"
        _assert_is_its_loss_gradient(record["backwards"][0], params, x[start:stop], y[start:stop], server, loss, k)


def _assert_is_its_loss_gradient(grad_output, params, x, y, server, loss, k):
    want = loss_gradient_wrt_output64(params, x, y, server._mix, loss)
    got = grad_output.to(torch.float64)
    scale = (got * want).sum() / (want * want).sum()
    assert scale > 0, f"forward {k}'s backward was not handed a positive multiple of its loss's gradient"
    residual = (got - scale * want).norm() / got.norm()
    assert residual <= DIRECTION_TOL, f"forward {k}'s backward was not handed its own loss's gradient " \
                                      f"(relative residual {residual:.2e})"


def _one_step(seed, batch_size, micro, loss="mse", lr=0.1, momentum=0.0, weight_decay=0.0, **options):
    params = make_params(seed)
    x, y = make_batch(seed + 1, batch_size, classes=(loss == "ce"))
    reports, server = run(seed, params, [(x, y, micro)], loss=loss, lr=lr, momentum=momentum,
                          weight_decay=weight_decay, **options)
    _assert_served_as_micro_batches(server, [(x, y, micro, params)], loss)
    loss64, grads64 = full_batch_loss_and_grads64(params, x, y, server._mix, loss)
    expected_params, _ = sgd_update(params, grads64, lr, momentum, weight_decay)
    return reports[0], loss64, grads64, expected_params, server


# ---------------------------------------------------------------- the step itself


@pytest.mark.parametrize("batch_size, micro", [(12, 4), (12, 3), (7, 7), (5, 1)])
def test_step_equals_full_batch_step_when_micro_batches_are_equal(batch_size, micro):
    seen, _, _, expected, _ = _one_step(10, batch_size, micro)
    _assert_tensors_close(seen["params"], expected)


@pytest.mark.parametrize("batch_size, micro", [(10, 4), (11, 3), (9, 8), (13, 5), (9, 4)])
def test_short_last_micro_batch_is_weighted_by_its_share(batch_size, micro):
    seen, _, _, expected, _ = _one_step(20, batch_size, micro)
    _assert_tensors_close(seen["params"], expected)


def test_micro_batch_larger_than_the_batch_is_one_chunk():
    seen, _, _, expected, server = _one_step(30, 6, 100)
    _assert_tensors_close(seen["params"], expected)
    assert _forward_sizes(server) == [6]


@pytest.mark.parametrize("micro", [1, 5])
def test_batch_of_one_sample(micro):
    seen, loss64, grads64, expected, _ = _one_step(35, 1, micro)
    _assert_tensors_close(seen["params"], expected)
    _assert_tensors_close(seen["grads"], grads64, "gradient")
    assert seen["returned"] == pytest.approx(loss64, rel=1e-5, abs=1e-6)


def test_step_with_cross_entropy_momentum_and_weight_decay():
    seen, _, _, expected, _ = _one_step(40, 10, 3, loss="ce", lr=0.5, momentum=0.9, weight_decay=0.05)
    _assert_tensors_close(seen["params"], expected)


@pytest.mark.parametrize("batch_size, micro", [(10, 4), (12, 4), (7, 2)])
def test_grads_on_return_are_the_full_batch_gradient(batch_size, micro):
    seen, _, grads64, _, _ = _one_step(50, batch_size, micro)
    _assert_tensors_close(seen["grads"], grads64, "gradient")


def test_inputs_with_more_than_two_dimensions_split_on_the_first():
    params = make_params(55)
    x, y = make_batch(56, 9, input_shape=(2, 3))
    (seen,), server = run(55, params, [(x, y, 4)], kind="flatten")
    _assert_served_as_micro_batches(server, [(x, y, 4, params)])
    _, grads64 = full_batch_loss_and_grads64(params, x, y, server._mix)
    expected, _ = sgd_update(params, grads64, 0.1)
    _assert_tensors_close(seen["params"], expected)
    assert [tuple(r["input"].shape) for r in server._forwards] == [(4, 2, 3), (4, 2, 3), (1, 2, 3)]


# ---------------------------------------------------------------- gradients start from zero


@pytest.mark.parametrize("stale", [3.0, -0.5])
def test_stale_gradients_are_cleared_first(stale):
    seen, _, grads64, expected, _ = _one_step(60, 10, 4, stale=stale)
    _assert_tensors_close(seen["grads"], grads64, "gradient")
    _assert_tensors_close(seen["params"], expected)


def test_two_calls_are_two_independent_full_batch_steps():
    # Momentum carries over between calls (that is the optimiser's job); gradients must not.
    lr, momentum = 0.2, 0.9
    params = make_params(70)
    batches = [make_batch(71, 10), make_batch(72, 7)]
    seen, server = run(70, params, [(x, y, 3) for x, y in batches], lr=lr, momentum=momentum)
    expected, buffers, steps = params, None, []
    for (x, y), report in zip(batches, seen):
        loss64, grads64 = full_batch_loss_and_grads64(expected, x, y, server._mix)
        assert report["returned"] == pytest.approx(loss64, rel=1e-5, abs=1e-6)
        steps.append((x, y, 3, expected))
        expected, buffers = sgd_update(expected, grads64, lr, momentum, buffers=buffers)
        _assert_tensors_close(report["grads"], grads64, "gradient")
        _assert_tensors_close(report["params"], expected)
        _assert_tensors_close(report["momentum"], buffers, "momentum buffer")
    _assert_served_as_micro_batches(server, steps)


# ---------------------------------------------------------------- exactly one step


@pytest.mark.parametrize("batch_size, micro", [(10, 4), (6, 6), (5, 1)])
def test_optimizer_steps_exactly_once_after_every_micro_batch(batch_size, micro):
    seen, _, _, _, server = _one_step(80, batch_size, micro)
    events = [e for e in seen["events"] if e != "zero_grad"]
    chunks = -(-batch_size // micro)
    assert events.count("step") == 1
    assert events == ["forward"] * chunks + ["step"]
    # The judge's record agrees: as many forwards, every one at the parameters before the step.
    assert len(server._forwards) == chunks


@pytest.mark.parametrize("batch_size, micro", [(10, 4), (9, 3)])
def test_every_forward_runs_at_the_parameters_before_the_step(batch_size, micro):
    # A large step and momentum, so a step between micro-batches moves the parameters far
    # beyond the tolerance; _one_step checks each forward's parameters in the judge's record.
    seen, _, _, expected, server = _one_step(85, batch_size, micro, lr=0.5, momentum=0.9)
    assert len(server._forwards) == -(-batch_size // micro)
    _assert_tensors_close(seen["params"], expected)


# ---------------------------------------------------------------- forward passes


SPLITS = [(10, 4, [4, 4, 2]), (9, 3, [3, 3, 3]), (5, 8, [5]), (9, 4, [4, 4, 1]), (11, 3, [3, 3, 3, 2]),
          (10, 6, [6, 4])]


@pytest.mark.parametrize("batch_size, micro, sizes", SPLITS, ids=[f"{n}-{m}" for n, m, _ in SPLITS])
def test_model_sees_each_micro_batch_once_in_order(batch_size, micro, sizes):
    _, _, _, _, server = _one_step(90, batch_size, micro)
    x, _ = make_batch(91, batch_size)  # the batch _one_step(90, ...) drew
    assert _forward_sizes(server) == sizes
    assert torch.equal(torch.cat([r["input"] for r in server._forwards]), x)


@pytest.mark.parametrize("batch_size, micro, loss", [(10, 4, "mse"), (11, 3, "ce"), (5, 1, "mse")])
def test_each_micro_batch_is_backpropagated_once_through_its_own_loss(batch_size, micro, loss):
    # _one_step checks, from the judge's record, one backward per forward whose grad_output
    # is a positive multiple of that micro-batch's loss gradient; spelt out here too.
    _, _, _, _, server = _one_step(92, batch_size, micro, loss=loss)
    assert [len(r["backwards"]) for r in server._forwards] == [1] * -(-batch_size // micro)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_train_or_eval_mode_is_left_alone(mode):
    seen, _, _, expected, _ = _one_step(95, 10, 4, mode=mode)
    assert seen["training"] == [mode == "train"] * len(seen["training"])
    _assert_tensors_close(seen["params"], expected)


# ---------------------------------------------------------------- the reported loss


@pytest.mark.parametrize("batch_size, micro", [(10, 4), (11, 3), (8, 8), (13, 5)])
def test_reports_the_full_batch_loss_before_the_step(batch_size, micro):
    seen, loss64, _, _, _ = _one_step(100, batch_size, micro, lr=0.5)
    assert seen["returned_type"] == "builtins.float", f"returned a {seen['returned_type']}"
    assert type(seen["returned"]) is float
    # float32 loss of order 1: a few roundings, far below 1e-5 relative.
    assert seen["returned"] == pytest.approx(loss64, rel=1e-5, abs=1e-6)


def test_reported_cross_entropy_loss_with_short_last_micro_batch():
    seen, loss64, _, _, _ = _one_step(110, 10, 4, loss="ce", lr=0.5)
    assert type(seen["returned"]) is float
    assert seen["returned"] == pytest.approx(loss64, rel=1e-5, abs=1e-6)


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize("micro", [0, -2])
def test_non_positive_micro_batch_size_raises_before_any_side_effect(micro):
    # A first, valid call leaves gradients and momentum buffers behind; the invalid call
    # must raise ValueError and leave all of it, and the parameters, exactly as they were.
    params = make_params(120)
    x, y = make_batch(121, 6)
    (first, second), server = run(120, params, [(x, y, 4), (x, y, micro)], momentum=0.9, catch=True)
    assert first["raised"] is None
    assert isinstance(second["raised"], ValueError), f"raised {second['raised']!r}"
    assert second["events"] == [], f"touched the model or optimiser before raising: {second['events']}"
    for name in ("params", "grads", "momentum"):
        for before, after in zip(first[name], second[name]):
            assert after is not None and torch.equal(before, after), f"{name} changed"
    # The judge's record holds the first call's passes and nothing from the second.
    _assert_served_as_micro_batches(server, [(x, y, 4, params)])


@pytest.mark.parametrize("micro", [0, -1])
def test_non_positive_micro_batch_size_keeps_stale_gradients(micro):
    params = make_params(125)
    x, y = make_batch(126, 5)
    (seen,), server = run(125, params, [(x, y, micro)], stale=2.5, catch=True)
    assert isinstance(seen["raised"], ValueError), f"raised {seen['raised']!r}"
    assert seen["events"] == []
    assert server._forwards == [] and server._refused == [], "the model ran before the ValueError"
    for p, before, grad in zip(seen["params"], params, seen["grads"]):
        assert torch.equal(p, before)
        assert grad is not None and torch.equal(grad, torch.full_like(before, 2.5)), "gradients touched"
