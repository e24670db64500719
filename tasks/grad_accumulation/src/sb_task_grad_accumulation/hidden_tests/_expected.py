"""Independent float64 computation of what one full-batch step should produce.

The model is Linear(in, hidden) -> Tanh -> Linear(hidden, out) (optionally after a
Flatten), applied after a SECRET mix of the input features: an orthogonal matrix drawn
here, in the judge, from a salt that exists only among the hidden tests and the test's own
seed. The model's computation runs in the judge (_model_server.py), so the solution's
process holds the parameters but never the function: it cannot compute the model on the
whole batch by itself, and every forward it wants is a call the judge records. Here the
same function is evaluated as plain float64 tensor algebra on the WHOLE batch; torch's
autograd supplies the gradients and SGD's documented rule is written out by hand.
"""
import torch

IN, HIDDEN, OUT = 6, 16, 3

# Drawn for this file and nowhere else: with the test's seed it fixes each test's secret
# mix, so a mix a solution reconstructed in one test is of no use in the next.
_SECRET_SALT = 0x5EC12E7A


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


def secret_mix(seed, in_features=IN):
    """A float64 orthogonal in x in matrix (so inputs keep their scale) from the hidden salt."""
    gen = torch.Generator().manual_seed(_SECRET_SALT + seed)
    q, r = torch.linalg.qr(torch.randn(in_features, in_features, generator=gen, dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))


def model_output64(params64, x, mix):
    """The model's output, in float64, for any number of samples (the server and the oracle)."""
    w1, b1, w2, b2 = params64
    h = torch.tanh((x.reshape(x.shape[0], -1).to(torch.float64) @ mix) @ w1.T + b1)
    return h @ w2.T + b2


def loss64(out, y, loss="mse"):
    if loss == "mse":
        return ((out - y.to(torch.float64)) ** 2).mean()
    log_probs = out - torch.logsumexp(out, dim=1, keepdim=True)
    return -log_probs[torch.arange(len(y)), y].mean()


def full_batch_loss_and_grads64(params, x, y, mix, loss="mse"):
    """Loss and gradients of the WHOLE batch in float64, at the given parameter values."""
    leaves = [p.detach().to(torch.float64).clone().requires_grad_(True) for p in params]
    value = loss64(model_output64(leaves, x, mix), y, loss)
    grads = torch.autograd.grad(value, leaves)
    return value.item(), [g.detach() for g in grads]


def loss_gradient_wrt_output64(params, x, y, mix, loss="mse"):
    """d loss_fn(model(x), y) / d model(x) in float64: what backpropagating this micro-batch's
    own loss (times any positive weight) hands the model's backward."""
    out = model_output64([p.detach().to(torch.float64) for p in params], x, mix).requires_grad_(True)
    (grad,) = torch.autograd.grad(loss64(out, y, loss), out)
    return grad


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
