"""Probe: what a ChunkedBatchNorm instance keeps between calls.

Runs the four passes over views of one x and one dy (as a training loop hands them out)
and, after every call, once the call's result is dropped, measures two things:

- held: bytes of the data reachable from the instance and from the solution module's
  globals (its classes, functions, closures and defaults included), walked recursively
  through containers and objects; a numpy array or a torch tensor counts the bytes of the
  elements it exposes (a view of the caller's batch counts as much as it shows), any other
  object its sys.getsizeof. Other modules, code objects and foreign types are not entered.
- traced: bytes traced by tracemalloc (numpy reports its buffers to it) that were allocated
  since just before the instance was made and are still allocated: a private copy kept
  anywhere in the process counts, even one the walk cannot reach.

It also returns the parameter gradients, so the test can check that the measured run was
the real protocol. Nothing here knows what any measurement should be.
"""
import gc
import sys
import tracemalloc
import types

import numpy as np

import chunked_bn
from chunked_bn import ChunkedBatchNorm

# An honest instance holds a few dozen objects; a walk that meets this many has found a
# row-sized structure of Python objects, and stops (reported as incomplete).
_MAX_OBJECTS = 200_000


def _held(bn):
    mine = chunked_bn.__name__
    skip = {id(vars(m)) for m in list(sys.modules.values()) if isinstance(m, types.ModuleType) and m is not chunked_bn}
    skip.update((id(skip), id(vars(chunked_bn))))  # the module's globals are walked as roots, dunders left out
    globals_ = [v for k, v in vars(chunked_bn).items() if not (k.startswith("__") and k.endswith("__"))]
    stack, seen, total, visited = [bn, *globals_], set(skip), 0, 0
    torch = sys.modules.get("torch")
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        visited += 1
        if visited > _MAX_OBJECTS:
            return total, False
        if isinstance(obj, (types.ModuleType, types.CodeType)):
            continue
        if isinstance(obj, type) and getattr(obj, "__module__", None) != mine:
            continue
        if isinstance(obj, np.ndarray):
            total += obj.size * obj.itemsize
            if obj.dtype.hasobject:
                stack.extend(obj.ravel().tolist())
            continue
        if torch is not None and isinstance(obj, torch.Tensor):
            total += obj.numel() * obj.element_size()
            continue
        if isinstance(obj, memoryview):
            total += obj.nbytes
            continue
        total += sys.getsizeof(obj, 0)
        if isinstance(obj, (str, bytes, bytearray, int, float, complex, bool, np.generic)):
            continue
        stack.extend(gc.get_referents(obj))
    return total, True


def retained(x, dy, gamma, beta, eps, accumulate, apply_forward, apply_backward):
    x, dy = np.array(x, copy=True), np.array(dy, copy=True)
    gamma, beta = np.array(gamma, copy=True), np.array(beta, copy=True)
    calls = ([("forward_accumulate", (x[lo:hi],)) for lo, hi in accumulate]
             + [("forward_apply", (x[lo:hi],)) for lo, hi in apply_forward]
             + [("backward_accumulate", (x[lo:hi], dy[lo:hi])) for lo, hi in accumulate]
             + [("backward_apply", (x[lo:hi], dy[lo:hi])) for lo, hi in apply_backward])
    held, traced = [0] * len(calls), [0] * len(calls)
    complete = True
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        gc.collect()
        base = tracemalloc.get_traced_memory()[0]
        bn = ChunkedBatchNorm(gamma, beta, eps=eps)
        for k, (name, args) in enumerate(calls):
            getattr(bn, name)(*args)
            gc.collect()
            traced[k] = tracemalloc.get_traced_memory()[0] - base
            held[k], done = _held(bn)
            complete = complete and done
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return {"held": held, "traced": traced, "complete": complete,
            "grad_gamma": bn.grad_gamma(), "grad_beta": bn.grad_beta()}
