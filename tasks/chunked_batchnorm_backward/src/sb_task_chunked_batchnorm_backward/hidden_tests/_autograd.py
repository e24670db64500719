"""Whole-batch ground truth: batch norm written out in float64 torch, differentiated by autograd."""
import numpy as np
import torch

C = 3


def make_batch(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, C)) * np.array([0.5, 1.0, 3.0]) + rng.normal(size=C) * 2
    # dy with a per-channel mean and a part correlated with x, so that both whole-batch
    # sums (of dy and of dy * x_hat) are far from zero.
    dy = rng.normal(size=(n, C)) + rng.normal(size=C) + 0.8 * (x - x.mean(axis=0))
    gamma = rng.uniform(0.5, 2.0, size=C)
    beta = rng.normal(size=C)
    return x, dy, gamma, beta


def whole_batch(x, dy, gamma, beta, eps):
    """(y, dx, dgamma, dbeta) of training-mode batch norm over all rows at once."""
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    gt = torch.tensor(gamma, dtype=torch.float64, requires_grad=True)
    bt = torch.tensor(beta, dtype=torch.float64, requires_grad=True)
    mean = xt.mean(dim=0)
    var = ((xt - mean) ** 2).mean(dim=0)
    y = (xt - mean) / torch.sqrt(var + eps) * gt + bt
    y.backward(torch.tensor(dy, dtype=torch.float64))
    return y.detach().numpy(), xt.grad.numpy(), gt.grad.numpy(), bt.grad.numpy()


def split(a, sizes):
    assert sum(sizes) == a.shape[0]
    edges = np.cumsum([0] + list(sizes))
    return [(int(lo), int(hi)) for lo, hi in zip(edges[:-1], edges[1:])]
