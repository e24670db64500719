"""Probe (worker side of sb.judge.observe_call): calls one function of the solution on
arguments that live in this process and reports them as the call left them.

Arguments cross to the worker as copies, so whether a function writes to its inputs,
returns one of them, or returns a view of one can only be seen here. This file holds no
expected value: it returns the result, every argument after the call, and which
arguments the result shares memory with or is.
"""
import importlib
import sys


def call(module, function, args, kwargs):
    target = importlib.import_module(module)
    for part in function.split("."):
        target = getattr(target, part)
    result = target(*args, **kwargs)
    results = result if isinstance(result, tuple) else (result,)
    labelled = [*enumerate(args), *kwargs.items()]
    return {"result": result, "args": list(args), "kwargs": dict(kwargs),
            "shares_memory": [label for label, value in labelled if any(_shares(r, value) for r in results)],
            "returned_argument": next((label for label, value in labelled if any(r is value for r in results)), None)}


def _shares(a, b):
    numpy, torch = sys.modules.get("numpy"), sys.modules.get("torch")
    if numpy is not None and isinstance(a, numpy.ndarray) and isinstance(b, numpy.ndarray):
        return bool(numpy.shares_memory(a, b))
    if torch is not None and isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    return False
