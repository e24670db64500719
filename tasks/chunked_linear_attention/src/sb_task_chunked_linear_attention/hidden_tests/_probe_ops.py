"""Runs in the solution's process and only records; it holds no expected value.

record(args, kwargs): calls chunked_gla under a TorchDispatchMode and returns how many
ATen operations ran, the largest number of elements of any tensor an operation produced
(with that tensor's shape and the operation's name), and the result.
"""
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

import chunked_gla


class _Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.count = 0
        self.largest = (0, [], "")

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.count += 1
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.numel() > self.largest[0]:
                self.largest = (int(t.numel()), [int(n) for n in t.shape], str(func))
        return out


def record(args, kwargs):
    recorder = _Recorder()
    with recorder:
        o, state = chunked_gla.chunked_gla(*args, **kwargs)
    return {"ops": recorder.count, "largest": list(recorder.largest),
            "o": o.detach().clone(), "state": state.detach().clone()}
