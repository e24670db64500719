"""Independent, non-checkpointed versions of the block used as ground truth."""
import numpy as np
import torch

N, D, H = 6, 5, 7  # distinct sizes so an (N, H) activation is recognisable by shape


def make_params(seed, dtype=torch.float64, n=N, d=D, h=H):
    g = torch.Generator().manual_seed(seed)
    shapes = [(n, d), (h, d), (h,), (d, h), (d,)]
    return [torch.randn(s, generator=g, dtype=torch.float64).to(dtype) for s in shapes]


def generator_at(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def clone_generator(g):
    c = torch.Generator()
    c.set_state(g.get_state())
    return c


def draw_keep(g, p):
    """The keep mask exactly as the prompt defines it, drawn from g (advances g)."""
    return torch.rand((N, H), generator=g, dtype=torch.float32) >= p


def numpy_forward(x, w1, b1, w2, b2, keep, p, activation=np.tanh):
    """float64 numpy forward of the plain block with a given keep mask."""
    x, w1, b1, w2, b2 = (t.detach().double().numpy() for t in (x, w1, b1, w2, b2))
    a = activation(x @ w1.T + b1)
    dropped = np.where(keep.numpy(), a / (1.0 - p), 0.0)
    return x + dropped @ w2.T + b2


def autograd_plain(tensors, keep, p, activation=torch.tanh):
    """Plain (non-checkpointed) float64 block under ordinary autograd, given the mask."""
    x, w1, b1, w2, b2 = tensors
    a = activation(x @ w1.T + b1)
    dropped = torch.where(keep, a / (1.0 - p), torch.zeros_like(a))
    return x + dropped @ w2.T + b2
