"""Independent float64 computation of what one full-batch step should produce."""
import copy

import torch


def make_model(seed, in_features=6, hidden=16, out_features=3):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(in_features, hidden),
        torch.nn.Tanh(),
        torch.nn.Linear(hidden, out_features),
    )


def make_batch(seed, batch_size, in_features=6, out_features=3, classes=False):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch_size, in_features, generator=gen)
    if classes:
        y = torch.randint(0, out_features, (batch_size,), generator=gen)
    else:
        y = torch.randn(batch_size, out_features, generator=gen)
    return x, y


def params64(model):
    return [p.detach().to(torch.float64).clone() for p in model.parameters()]


def full_batch_loss_and_grads64(model, params, loss_fn, x, y):
    """Loss and gradients of the WHOLE batch in float64, at the given parameter values."""
    twin = copy.deepcopy(model).to(torch.float64)
    with torch.no_grad():
        for p, value in zip(twin.parameters(), params):
            p.copy_(value)
    loss = loss_fn(twin(x.to(torch.float64) if x.is_floating_point() else x),
                   y.to(torch.float64) if y.is_floating_point() else y)
    grads = torch.autograd.grad(loss, list(twin.parameters()))
    return loss.item(), [g.detach() for g in grads]


def sgd_update(params, grads, lr, momentum=0.0, weight_decay=0.0, buffers=None):
    """torch.optim.SGD's documented rule (dampening 0, no nesterov), written out by hand."""
    new_params, new_buffers = [], []
    for i, (p, g) in enumerate(zip(params, grads)):
        d = g + weight_decay * p
        if momentum:
            d = d if buffers is None else momentum * buffers[i] + d
        new_buffers.append(d)
        new_params.append(p - lr * d)
    return new_params, new_buffers
