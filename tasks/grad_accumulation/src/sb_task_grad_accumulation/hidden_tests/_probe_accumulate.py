"""Probe shipped into the solution's process. It builds the model, optimiser and loss there
(live autograd needs them in one process), instruments them (forward inputs, optimiser
steps and zero_grad calls, train/eval flags), calls accumulation_step, and reports what it
saw as plain data. It holds no expected value: the tests compute the full-batch step in
float64 themselves and compare."""
import torch

from accumulate import accumulation_step


def _model(params, kind):
    in_features, hidden, out_features = params[0].shape[1], params[0].shape[0], params[2].shape[0]
    layers = [torch.nn.Flatten()] if kind == "flatten" else []
    layers += [torch.nn.Linear(in_features, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, out_features)]
    model = torch.nn.Sequential(*layers)
    with torch.no_grad():
        for p, value in zip(model.parameters(), params):
            p.copy_(value)
    return model


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


def run(params, calls, loss="mse", lr=0.1, momentum=0.0, weight_decay=0.0, stale=None, mode="train",
        kind="mlp", catch=False):
    """calls: a list of (inputs, targets, micro_batch_size). One model and optimiser serve all
    of them in order. stale: a value every .grad holds before the first call (None: no grad).
    catch: report an exception the call raised (and the state after it) instead of raising."""
    model = _model(params, kind)
    model.train(mode == "train")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    loss_fn = torch.nn.MSELoss() if loss == "mse" else torch.nn.CrossEntropyLoss()
    if stale is not None:
        for p in model.parameters():
            p.grad = torch.full_like(p, stale)

    events = []
    model.register_forward_pre_hook(lambda module, args: events.append(("forward", args[0].detach().clone())))
    optimizer.register_step_post_hook(lambda opt, args, kwargs: events.append(("step", None)))
    plain_zero_grad = optimizer.zero_grad

    def counting_zero_grad(*args, **kwargs):
        events.append(("zero_grad", None))
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
        mine = events[before:]
        reports.append({
            "returned": returned,
            "returned_type": type(returned).__module__ + "." + type(returned).__qualname__,
            "raised": raised,
            "forward_inputs": [t for kind_, t in mine if kind_ == "forward"],
            "events": [kind_ for kind_, _ in mine],
            **_state(model, optimizer),
        })
    return reports
