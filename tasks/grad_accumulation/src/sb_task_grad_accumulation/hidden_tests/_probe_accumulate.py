"""Probe shipped into the solution's process. It builds the model, optimiser and loss there
(the optimiser must update live parameters), calls accumulation_step, and reports what it
saw as plain data. It holds no expected value and no part of the model's function.

The model's parameters live here, but its forward and backward run in the judge: `server`
is a handle to the tests' ModelServer (_model_server.py), which computes the output from
the input and the parameter values sent to it, and the parameters' gradients from the
grad_output, and records every call where the solution cannot reach. What this probe
records itself (the order of forwards, steps and zero_grad calls, train/eval flags, the
state after the call) is the solution's word; what the model was run on is the judge's.
"""
import torch

from accumulate import accumulation_step


class _ServedPass(torch.autograd.Function):
    """forward and backward of the served model: each a round trip to the judge."""

    @staticmethod
    def forward(ctx, link, inputs, *params):
        call, output = link.forward(inputs.detach(), [p.detach() for p in params])
        ctx.link, ctx.call = link, call
        return output

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        grads = ctx.link.backward(ctx.call, grad_output.detach().contiguous())
        return (None, None, *grads)


class _Link:
    """The server's two methods, looked up once (one round trip per pass, not two)."""

    def __init__(self, server):
        self.forward, self.backward = server.forward, server.backward


class ServedModel(torch.nn.Module):
    """Linear -> Tanh -> Linear in name and parameters (optionally after a Flatten); the
    function itself is the server's."""

    def __init__(self, server, params, kind, events):
        super().__init__()
        in_features, hidden, out_features = params[0].shape[1], params[0].shape[0], params[2].shape[0]
        if kind == "flatten":
            self.flatten = torch.nn.Flatten()
        self.hidden = torch.nn.Linear(in_features, hidden)
        self.act = torch.nn.Tanh()
        self.out = torch.nn.Linear(hidden, out_features)
        with torch.no_grad():
            for p, value in zip(self.parameters(), params):
                p.copy_(value)
        self._link, self._events = _Link(server), events

    def forward(self, inputs):
        self._events.append("forward")
        return _ServedPass.apply(self._link, inputs, self.hidden.weight, self.hidden.bias, self.out.weight,
                                 self.out.bias)


def _state(model, optimizer):
    buffers = []
    for p in model.parameters():
        buf = optimizer.state.get(p, {}).get("momentum_buffer")
        buffers.append(None if buf is None else buf.detach().clone())
    return {
        "params": [p.detach().clone() for p in model.parameters()],
        "grads": [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()],
        "momentum": buffers,
        "training": [m.training for m in model.modules()],
    }


def run(server, params, calls, loss="mse", lr=0.1, momentum=0.0, weight_decay=0.0, stale=None, mode="train",
        kind="mlp", catch=False):
    """calls: a list of (inputs, targets, micro_batch_size). One model and optimiser serve all
    of them in order. stale: a value every .grad holds before the first call (None: no grad).
    catch: report an exception the call raised (and the state after it) instead of raising."""
    events = []
    model = ServedModel(server, params, kind, events)
    model.train(mode == "train")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    loss_fn = torch.nn.MSELoss() if loss == "mse" else torch.nn.CrossEntropyLoss()
    if stale is not None:
        for p in model.parameters():
            p.grad = torch.full_like(p, stale)

    optimizer.register_step_post_hook(lambda opt, args, kwargs: events.append("step"))
    plain_zero_grad = optimizer.zero_grad

    def counting_zero_grad(*args, **kwargs):
        events.append("zero_grad")
        return plain_zero_grad(*args, **kwargs)

    optimizer.zero_grad = counting_zero_grad

    reports = []
    for inputs, targets, micro in calls:
        before = len(events)
        try:
            returned, raised = accumulation_step(model, optimizer, loss_fn, inputs, targets, micro), None
        except Exception as exc:  # reported, not judged, here
            if not catch:
                raise
            returned, raised = None, exc
        reports.append({
            "returned": returned,
            "returned_type": type(returned).__module__ + "." + type(returned).__qualname__,
            "raised": raised,
            "events": events[before:],
            **_state(model, optimizer),
        })
    return reports
