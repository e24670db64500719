"""Probe shipped into the solution's process: the forward and backward of the block need
live tensors, a live generator and a live autograd graph there. It instruments the run
(activation calls, saved tensors, generator and global RNG states, tensors still alive
after the forward, Python and numpy memory the forward keeps) and reports what it saw as
plain data. It holds no expected value: the tests compute masks, outputs, gradients and
generator states themselves."""
import gc
import tracemalloc

import torch

from checkpoint_block import checkpointed_mlp_block

ACTIVATIONS = {"tanh": torch.tanh, "sin": torch.sin}


def _generator(state):
    g = torch.Generator()
    g.set_state(state)
    return g


def _leaves(tensors, requires):
    return [t.clone().requires_grad_(bool(r)) for t, r in zip(tensors, requires)]


class _Recorder:
    """An activation that records, per call, whether grad mode was on and the generator state."""

    def __init__(self, fn, generator):
        self.fn, self.generator, self.calls = fn, generator, []

    def __call__(self, h):
        self.calls.append({"grad_enabled": torch.is_grad_enabled(), "state": self.generator.get_state().clone(),
                           "shape": tuple(h.shape)})
        return self.fn(h)


def _live_hidden_sized(n, h):
    """Shapes of tensors still reachable from Python that are as large as the (N, H) activation."""
    gc.collect()
    found = []
    for obj in gc.get_objects():
        if issubclass(type(obj), torch.Tensor) and (tuple(obj.shape) == (n, h) or obj.numel() == n * h):
            found.append(tuple(obj.shape))
    return found


def traced_growth_over_forward(tensors, p, state):
    """Bytes of traced memory (Python objects and numpy buffers: numpy reports its data
    allocations to tracemalloc) that are allocated during the forward and still held after
    it, with y alive and garbage collected. One warm-up forward and backward first, on a
    copy of the generator, so that one-time caches are not counted."""
    warm = _generator(state)
    checkpointed_mlp_block(*_leaves(tensors, [True] * 5), p, warm).sum().backward()
    g = _generator(state)
    leaves = _leaves(tensors, [True] * 5)
    gc.collect()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        y = checkpointed_mlp_block(*leaves, p, g)
        gc.collect()
        growth = tracemalloc.get_traced_memory()[0] - before
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return {"traced_growth": growth, "y": y.detach().clone()}


def _custom_function_in_graph(node, depth=6):
    """Whether a node of a user-defined torch.autograd.Function lies within `depth` steps of y."""
    frontier, seen = [node], set()
    for _ in range(depth):
        following = []
        for n in frontier:
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            if isinstance(n, torch.autograd.function.BackwardCFunction):
                return True
            following += [f for f, _ in n.next_functions]
        frontier = following
    return False


def run(tensors, p, state, upstream, requires=(True,) * 5, activation=None, record=False, draws_between=0,
        how="backward", hidden=None):
    """Forward, optional draws by the caller, backward; every observation along the way."""
    g = _generator(state)
    leaves = _leaves(tensors, requires)
    global_before = torch.get_rng_state()
    fn = ACTIVATIONS[activation] if activation is not None else None
    recorder = _Recorder(fn or torch.tanh, g) if record else None
    act = recorder if record else fn

    saved = []

    def pack(t):
        saved.append(tuple(t.shape))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = checkpointed_mlp_block(*leaves, p, g) if act is None else \
            checkpointed_mlp_block(*leaves, p, g, activation=act)
    after_forward = g.get_state().clone()
    grad_fn = y.grad_fn
    report = {
        "y": y.detach().clone(), "dtype": str(y.dtype), "requires_grad": y.requires_grad,
        "grad_fn_type": None if grad_fn is None else type(grad_fn).__name__,
        "custom_function_in_graph": _custom_function_in_graph(grad_fn),
        "saved_shapes": list(saved),
        "state_after_forward": after_forward,
        "calls_after_forward": None if recorder is None else len(recorder.calls),
    }
    if hidden is not None:
        report["live_hidden_sized"] = _live_hidden_sized(*hidden)
    del grad_fn
    if draws_between:
        torch.rand(draws_between, generator=g)
    before_backward = g.get_state().clone()
    if how == "backward":
        y.backward(upstream)
        grads = [t.grad for t in leaves]
    else:
        wanted = [t for t in leaves if t.requires_grad]
        got = iter(torch.autograd.grad(y, wanted, upstream))
        grads = [next(got) if t.requires_grad else None for t in leaves]
    report.update({
        "grads": [None if gr is None else gr.detach().clone() for gr in grads],
        "grad_dtypes": [None if gr is None else str(gr.dtype) for gr in grads],
        "state_before_backward": before_backward,
        "state_after_backward": g.get_state().clone(),
        "global_rng_unchanged": torch.equal(global_before, torch.get_rng_state()),
        "calls": None if recorder is None else recorder.calls,
    })
    return report


def chain(first, second, p, state, upstream):
    """Two blocks sharing one generator: y = block2(block1(x)); both weights' gradients."""
    g = _generator(state)
    a, b = _leaves(first, [True] * 5), _leaves(second[1:], [True] * 4)
    h = checkpointed_mlp_block(*a, p, g)
    y = checkpointed_mlp_block(h, *b, p, g)
    after_forward = g.get_state().clone()
    y.backward(upstream)
    return {"y": y.detach().clone(), "grads": [t.grad.detach().clone() for t in a + b],
            "state_after_forward": after_forward, "state_after_backward": g.get_state().clone()}


def invalid_p(tensors, p, state):
    """Call with a dropout probability outside [0, 1): what was raised, and the generator after."""
    g = _generator(state)
    try:
        checkpointed_mlp_block(*_leaves(tensors, [True] * 5), p, g)
        raised = None
    except Exception as exc:  # reported, judged by the test
        raised = exc
    return {"raised": raised, "state_after": g.get_state().clone()}
