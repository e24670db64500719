"""Independent float64 computation of what one full-batch step should produce.

The model is Linear(in, hidden) -> Tanh -> Linear(hidden, out) (optionally after a
Flatten), written here as plain float64 tensor algebra on the WHOLE batch; torch's
autograd supplies the gradients and SGD's documented rule is written out by hand.
"""
import torch

IN, HIDDEN, OUT = 6, 16, 3


def make_params(seed, in_features=IN, hidden=HIDDEN, out_features=OUT):
    """float32 initial parameters (W1, b1, W2, b2), like torch.nn.Linear's default scale."""
    gen = torch.Generator().manual_seed(seed)
    shapes = [(hidden, in_features), (hidden,), (out_features, hidden), (out_features,)]
    fan_in = [in_features, in_features, hidden, hidden]
    return [(2 * torch.rand(s, generator=gen) - 1) / fan_in[i] ** 0.5 for i, s in enumerate(shapes)]


def make_batch(seed, batch_size, in_features=IN, out_features=OUT, classes=False, input_shape=None):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch_size, *(input_shape or (in_features,)), generator=gen)
    if classes:
        y = torch.randint(0, out_features, (batch_size,), generator=gen)
    else:
        y = torch.randn(batch_size, out_features, generator=gen)
    return x, y


def full_batch_loss_and_grads64(params, x, y, loss="mse"):
    """Loss and gradients of the WHOLE batch in float64, at the given parameter values."""
    w1, b1, w2, b2 = [p.detach().to(torch.float64).clone().requires_grad_(True) for p in params]
    h = torch.tanh(x.reshape(x.shape[0], -1).to(torch.float64) @ w1.T + b1)
    out = h @ w2.T + b2
    if loss == "mse":
        value = ((out - y.to(torch.float64)) ** 2).mean()
    else:
        log_probs = out - torch.logsumexp(out, dim=1, keepdim=True)
        value = -log_probs[torch.arange(len(y)), y].mean()
    grads = torch.autograd.grad(value, [w1, b1, w2, b2])
    return value.item(), [g.detach() for g in grads]


def sgd_update(params, grads, lr, momentum=0.0, weight_decay=0.0, buffers=None):
    """torch.optim.SGD's documented rule (dampening 0, no nesterov), written out by hand."""
    new_params, new_buffers = [], []
    for i, (p, g) in enumerate(zip(params, grads)):
        p = p.to(torch.float64)
        d = g + weight_decay * p
        if momentum:
            d = d if buffers is None else momentum * buffers[i] + d
        new_buffers.append(d)
        new_params.append(p - lr * d)
    return new_params, new_buffers
