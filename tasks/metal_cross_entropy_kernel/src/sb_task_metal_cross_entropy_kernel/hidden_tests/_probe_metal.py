"""Worker-side probe for metal_cross_entropy_kernel: compiles and dispatches the solution.

Shipped into the solution's process (sb.judge.probe): MPS tensors cannot cross to the
judge, and the judge never compiles or runs the solution's shader itself. This holds no
expected value and no oracle: it returns the raw loss buffers and what the wrapper did;
the hidden tests compare them with float64 computations of their own.
"""
import importlib
import sys

import numpy as np
import torch

MODULE = "cross_entropy_metal"
KERNEL = "cross_entropy_rows"
# Where the buffers live. Graded only on MPS; the task's offline dry check
# (tools/metal_dry_check) points this at the CPU and replaces
# torch.mps.compile_shader with a CPU emulation.
DEVICE = torch.device("mps")

_cache = {}


def _sync():
    if DEVICE.type == "mps":
        torch.mps.synchronize()


def _kernel():
    if "kernel" not in _cache:
        source = importlib.import_module(MODULE).SOURCE
        _cache["kernel"] = getattr(torch.mps.compile_shader(source), KERNEL)
    return _cache["kernel"]


def dispatch(problems):
    """Dispatch the solution's kernel once per problem, in order, through one compiled library.

    problems: a list of (logits float32 (n_rows, n_cols), targets int64 (n_rows,),
    group_size, extra). The loss buffer has n_rows + extra float32 slots, all NaN before the
    dispatch; returns each buffer afterwards as a numpy array.
    """
    kernel = _kernel()
    outputs = []
    for logits, targets, group_size, extra in problems:
        n_rows, n_cols = logits.shape
        x = torch.from_numpy(np.ascontiguousarray(logits)).to(DEVICE)
        t = torch.from_numpy(np.ascontiguousarray(targets)).to(DEVICE)
        loss = torch.full((n_rows + extra,), float("nan"), dtype=torch.float32, device=DEVICE)
        kernel(x, t, loss, n_cols, threads=n_rows * group_size, group_size=group_size)
        _sync()
        outputs.append(loss.cpu().numpy())
    return outputs


def _plain(value):
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    try:
        return int(value)
    except (TypeError, ValueError):
        return repr(value)


class _Recording:
    """A compiled library whose kernel calls are recorded, then forwarded."""

    def __init__(self, library, calls):
        self._library, self._calls = library, calls

    def __getattr__(self, name):
        kernel = getattr(self._library, name)

        def call(*args, **kwargs):
            self._calls.append({"kernel": name, "n_args": len(args), "threads": _plain(kwargs.get("threads")),
                                "group_size": _plain(kwargs.get("group_size"))})
            return kernel(*args, **kwargs)
        return call


def wrapper(logits, targets, threadgroup_size):
    """Import the solution afresh, then call its wrapper; report what happened.

    While the module is imported, torch.mps.compile_shader fails as it does on a machine
    without MPS (and counts the attempt); afterwards it compiles for real and every kernel
    call on the library it returns is recorded.
    """
    real = torch.mps.compile_shader
    seen = {"compiles_during_import": 0, "import_error": None, "compiles": 0, "calls": []}
    importing = [True]

    def patched(source):
        # Stays valid if the module kept a reference to it (from torch.mps import ...).
        if importing[0]:
            seen["compiles_during_import"] += 1
            raise RuntimeError("MPS is not available")
        seen["compiles"] += 1
        return _Recording(real(source), seen["calls"])

    sys.modules.pop(MODULE, None)
    torch.mps.compile_shader = patched
    try:
        try:
            module = importlib.import_module(MODULE)
        except Exception as exc:
            seen["import_error"] = f"{type(exc).__name__}: {exc}"
            return seen
        importing[0] = False
        x = torch.from_numpy(np.ascontiguousarray(logits)).to(DEVICE)
        t = torch.from_numpy(np.ascontiguousarray(targets)).to(DEVICE)
        out = module.cross_entropy(x, t, threadgroup_size)
        _sync()
    finally:
        torch.mps.compile_shader = real
    seen["type"] = type(out).__name__
    if isinstance(out, torch.Tensor):
        seen.update(shape=list(out.shape), dtype=out.dtype, device=out.device.type,
                    loss=out.detach().cpu().numpy())
    return seen
