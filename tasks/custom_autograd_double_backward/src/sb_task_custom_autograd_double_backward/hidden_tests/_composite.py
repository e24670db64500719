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
