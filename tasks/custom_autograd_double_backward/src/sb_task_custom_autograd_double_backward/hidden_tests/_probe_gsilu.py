"""Probe shipped into the solution's process: first and second derivatives through the
solution's Function need a live autograd graph there. It reports what the solution's
backward produced (gradients, raw backward outputs, Jacobians built from backward calls)
as plain data. It holds no expected value: the tests compare every observation with the
same function written with ordinary torch ops, differentiated by autograd in the judge."""
import contextlib
import inspect
import threading

import torch
from torch.autograd.variable import Variable

from gated_silu import GatedSiLU, gated_silu


class _CountingEngine:
    """Stands in for autograd's engine object. torch.autograd.grad, torch.autograd.backward,
    Tensor.backward and torch.func's transforms all reach the engine through
    torch.autograd.graph._engine_run_backward, which looks up
    Variable._execution_engine.run_backward at call time (torch 2.13), so this counts
    engine passes however the caller got hold of grad or backward. The probe's own outer
    calls (made inside outer()) are not counted; every pass started while one of them runs,
    i.e. from inside a backward the engine called, and every pass started outside them, is."""

    def __init__(self, engine):
        self._engine = engine
        self._lock = threading.Lock()
        self.depth = 0
        self.probe_calling = False
        self.count = 0

    def run_backward(self, *args, **kwargs):
        with self._lock:
            is_outer = self.probe_calling and self.depth == 0
            if not is_outer:
                self.count += 1
            self.depth += 1
        try:
            return self._engine.run_backward(*args, **kwargs)
        finally:
            with self._lock:
                self.depth -= 1

    def __getattr__(self, name):
        return getattr(self._engine, name)

    @contextlib.contextmanager
    def outer(self):
        self.probe_calling = True
        try:
            yield
        finally:
            self.probe_calling = False


@contextlib.contextmanager
def _engine_watch():
    plain = Variable.__dict__["_execution_engine"]
    watch = _CountingEngine(plain)
    Variable._execution_engine = watch
    try:
        yield watch
    finally:
        Variable._execution_engine = plain


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
    differentiation entry points and every pass of its engine counted while it runs."""
    leaves = _leaves(tensors)
    y = gated_silu(*leaves, scale)
    counts = {"grad": 0, "backward": 0, "engine": 0}
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
        with _engine_watch() as watch:
            raw = y.grad_fn.apply(upstream)
        counts["engine"] = watch.count
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


def engine_passes_inside_backward(tensors, scale, upstream, create_graph):
    """First derivatives through the engine (and, with create_graph, the second derivatives
    of their sum with respect to x, w, b and grad_out): how many autograd engine passes were
    started other than the probe's own calls, i.e. from inside the solution's backward."""
    leaves = _leaves(tensors)
    up = upstream.detach().clone().requires_grad_(True)
    with _engine_watch() as watch:
        with watch.outer():
            firsts = torch.autograd.grad(gated_silu(*leaves, scale), leaves, up, create_graph=create_graph)
        inner = sum(g.sum() for g in firsts)
        if create_graph and inner.requires_grad:   # a backward with no graph is the other tests' failure
            with watch.outer():
                torch.autograd.grad(inner, leaves + [up], allow_unused=True)
    return watch.count
