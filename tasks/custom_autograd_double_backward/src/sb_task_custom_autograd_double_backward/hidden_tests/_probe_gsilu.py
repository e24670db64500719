"""Probe shipped into the solution's process: first and second derivatives through the
solution's Function need a live autograd graph there. It reports what the solution's
backward produced (gradients, raw backward outputs, Jacobians built from backward calls)
as plain data. It holds no expected value: the tests compare every observation with the
same function written with ordinary torch ops, differentiated by autograd in the judge."""
import inspect

import torch

from gated_silu import GatedSiLU, gated_silu


def _leaves(tensors, requires=(True, True, True)):
    return [t.detach().clone().requires_grad_(bool(r)) for t, r in zip(tensors, requires)]


def structure():
    """How GatedSiLU is declared."""
    return {
        "is_function": isinstance(GatedSiLU, type) and issubclass(GatedSiLU, torch.autograd.Function),
        "forward_static": isinstance(inspect.getattr_static(GatedSiLU, "forward", None), staticmethod),
        "backward_static": isinstance(inspect.getattr_static(GatedSiLU, "backward", None), staticmethod),
    }


def forward(tensors, scale=None, use_apply=False):
    x, w, b = _leaves(tensors)
    if use_apply:
        y = GatedSiLU.apply(x, w, b, scale)
    else:
        y = gated_silu(x, w, b) if scale is None else gated_silu(x, w, b, scale)
    node = y.grad_fn
    return {"y": y.detach().clone(), "dtype": str(y.dtype), "requires_grad": y.requires_grad,
            "grad_fn_type": None if node is None else type(node).__name__,
            "grad_fn_is_custom_function": isinstance(node, torch.autograd.function.BackwardCFunction)}


def first(tensors, scale, upstream, requires=(True, True, True)):
    """Gradients through the solution's Function by torch.autograd.grad (None where not asked)."""
    leaves = _leaves(tensors, requires)
    wanted = [t for t in leaves if t.requires_grad]
    got = iter(torch.autograd.grad(gated_silu(*leaves, scale), wanted, upstream))
    return [next(got).detach().clone() if t.requires_grad else None for t in leaves]


def raw_backward(tensors, scale, upstream):
    """The node's backward called directly, outside the engine, with autograd's own
    differentiation entry points counted while it runs."""
    leaves = _leaves(tensors)
    y = gated_silu(*leaves, scale)
    counts = {"grad": 0, "backward": 0}
    plain_grad, plain_backward = torch.autograd.grad, torch.autograd.backward
    plain_tensor_backward = torch.Tensor.backward

    def counting_grad(*args, **kwargs):
        counts["grad"] += 1
        return plain_grad(*args, **kwargs)

    def counting_backward(*args, **kwargs):
        counts["backward"] += 1
        return plain_backward(*args, **kwargs)

    def counting_tensor_backward(self, *args, **kwargs):
        counts["backward"] += 1
        return plain_tensor_backward(self, *args, **kwargs)

    torch.autograd.grad, torch.autograd.backward = counting_grad, counting_backward
    torch.Tensor.backward = counting_tensor_backward
    try:
        raw = y.grad_fn.apply(upstream)
    finally:
        torch.autograd.grad, torch.autograd.backward = plain_grad, plain_backward
        torch.Tensor.backward = plain_tensor_backward
    items = list(raw) if isinstance(raw, (tuple, list)) else [raw]
    return {"type": type(raw).__name__, "length": len(items),
            "items": [i.detach().clone() if isinstance(i, torch.Tensor) else i for i in items],
            "autograd_calls": counts}


def second(tensors, scale, upstream, directions, requires=(True, True, True)):
    """d/d(x, w, b, grad_out) of sum(first-derivative * direction), with create_graph=True."""
    leaves = _leaves(tensors, requires)
    up = upstream.detach().clone().requires_grad_(True)
    wanted = [t for t in leaves if t.requires_grad]
    firsts = torch.autograd.grad(gated_silu(*leaves, scale), wanted, up, create_graph=True)
    dirs = [d for d, t in zip(directions, leaves) if t.requires_grad]
    inner = sum((g * d).sum() for g, d in zip(firsts, dirs))
    got = torch.autograd.grad(inner, wanted + [up], allow_unused=True)
    got = [None if g is None else g.detach().clone() for g in got]
    out, it = [], iter(got[:-1])
    for t in leaves:
        out.append(next(it) if t.requires_grad else None)
    return out + [got[-1]]


def jacobian(tensors, scale):
    """d y / d (x, w, b), one row per output element, each row from one backward call."""
    leaves = _leaves(tensors)
    y = gated_silu(*leaves, scale).reshape(-1)
    rows = []
    for i in range(y.numel()):
        unit = torch.zeros_like(y)
        unit[i] = 1.0
        grads = torch.autograd.grad(y, leaves, unit, retain_graph=True, allow_unused=True)
        rows.append(torch.cat([torch.zeros(t.numel(), dtype=t.dtype) if g is None else g.reshape(-1)
                               for g, t in zip(grads, leaves)]))
    return torch.stack(rows)


def second_jacobian(tensors, scale, upstream):
    """The Jacobian of (x, w, b, grad_out) -> the first derivatives (create_graph=True),
    one row per first-derivative element, each row from one backward of the backward."""
    leaves = _leaves(tensors)
    up = upstream.detach().clone().requires_grad_(True)
    firsts = torch.autograd.grad(gated_silu(*leaves, scale), leaves, up, create_graph=True)
    flat = torch.cat([g.reshape(-1) for g in firsts])
    wrt = leaves + [up]
    rows = []
    for i in range(flat.numel()):
        grads = torch.autograd.grad(flat[i], wrt, retain_graph=True, allow_unused=True)
        rows.append(torch.cat([torch.zeros(t.numel(), dtype=t.dtype) if g is None else g.reshape(-1)
                               for g, t in zip(grads, wrt)]))
    return torch.stack(rows)
