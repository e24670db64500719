"""Runs in the solution's process. It only records what the solution does; it holds no
expected value and no oracle (the tests compare its observations with their own).

- record_driver: every call attention_backward() makes to this module's
  attention_backward_block (each argument by its parameter name, tensors copied, and the
  Python type of each offset), and the driver's result.
- call_and_return_inputs: calls one function on tensors that live here, then returns the
  arguments as they are afterwards (to see whether any was modified) and the result.
- record_tensor_shapes: runs attention_backward() under a TorchDispatchMode and returns,
  for every tensor any ATen operation produced meanwhile (the driver's, the block
  function's and autograd's alike), the operation's name, the dtype and the shape (each
  distinct triple once), and the driver's result.
"""
import inspect

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

import flash_backward


def _snapshot(value):
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (tuple, list)):
        return [_snapshot(part) for part in value]
    return value


def record_driver(args, kwargs):
    calls = []
    real_block = flash_backward.attention_backward_block
    signature = inspect.signature(real_block)

    def recording_block(*block_args, **block_kwargs):
        bound = signature.bind(*block_args, **block_kwargs)
        bound.apply_defaults()
        entry = {name: _snapshot(value) for name, value in bound.arguments.items()}
        entry["offset_types"] = [type(bound.arguments["q_offset"]).__name__,
                                 type(bound.arguments["k_offset"]).__name__]
        calls.append(entry)
        return real_block(*block_args, **block_kwargs)

    flash_backward.attention_backward_block = recording_block
    try:
        result = flash_backward.attention_backward(*args, **kwargs)
    finally:
        flash_backward.attention_backward_block = real_block
    return {"calls": calls, "result": _snapshot(result)}


def call_and_return_inputs(name, args, kwargs):
    result = getattr(flash_backward, name)(*args, **kwargs)
    return {"args_after": _snapshot(list(args)), "result": _snapshot(result)}


class _ShapeRecorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.seen = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self.seen.add((str(func), str(t.dtype), tuple(int(n) for n in t.shape)))
        return out


def record_tensor_shapes(args, kwargs):
    recorder = _ShapeRecorder()
    with recorder:
        result = flash_backward.attention_backward(*args, **kwargs)
    tensors = [[op, dtype, list(shape)] for op, dtype, shape in sorted(recorder.seen)]
    return {"tensors": tensors, "result": _snapshot(result)}
