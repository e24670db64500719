"""Ground truth: the same function written with ordinary torch ops (autograd differentiates it)."""
import numpy as np
import torch

# (x, w, b) shapes: same-shape-free broadcasting in every direction, including an x smaller
# than the output and a 0-d b.
SHAPES = {
    "row_params": ((3, 4), (4,), (4,)),
    "outer": ((3, 1), (1, 4), ()),
    "three_d": ((2, 3, 4), (3, 1), (1, 1, 4)),
    "x_broadcast": ((4,), (2, 1, 4), (3, 1)),
}
SCALES = [1.7, -0.6]


def make_inputs(case, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randn(shape, generator=g, dtype=torch.float64).to(dtype).requires_grad_(True)
        for shape in SHAPES[case]
    ]


def composite(x, w, b, scale):
    return x * torch.sigmoid(scale * (x * w + b))


def numpy_forward(x, w, b, scale):
    x, w, b = (t.detach().double().numpy() for t in (x, w, b))
    return x / (1.0 + np.exp(-scale * (x * w + b)))


def _rows(flat, wrt):
    rows = []
    for i in range(flat.numel()):
        grads = torch.autograd.grad(flat[i], wrt, retain_graph=True, allow_unused=True)
        rows.append(torch.cat([torch.zeros(t.numel(), dtype=t.dtype) if g is None else g.reshape(-1)
                               for g, t in zip(grads, wrt)]))
    return torch.stack(rows)


def composite_jacobian(inputs, scale):
    """d composite / d (x, w, b), float64, one row per output element."""
    leaves = [t.detach().double().clone().requires_grad_(True) for t in inputs]
    return _rows(composite(*leaves, scale).reshape(-1), leaves)


def composite_second_jacobian(inputs, scale, upstream):
    """The Jacobian of (x, w, b, grad_out) -> the composite's first derivatives, float64."""
    leaves = [t.detach().double().clone().requires_grad_(True) for t in inputs]
    up = upstream.detach().double().clone().requires_grad_(True)
    firsts = torch.autograd.grad(composite(*leaves, scale), leaves, up, create_graph=True)
    return _rows(torch.cat([g.reshape(-1) for g in firsts]), leaves + [up])
