"""Worker-side probe for fused_rmsnorm_kernel: runs the solution and reports what it did.

Shipped into the solution's process (sb.judge.probe). It holds no expected value and no
oracle: every function returns raw observations (output buffers, flags, what Triton
compiled) and the hidden tests judge them against float64 computations of their own.

`prepare()` must run before anything imports triton in this process: Triton reads
TRITON_INTERPRET when `@triton.jit` decorates a function (its own `tl.sum` and friends
included, at triton's first import), so without CUDA it selects the interpreter here.
The ahead-of-time compile runs in a child process of this one (`compile_launches`),
because an interpreter-mode triton cannot compile: that child never sets
TRITON_INTERPRET, so there `rmsnorm_kernel` is a real JITFunction.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import torch

_state = {"device": None}


def prepare():
    """Choose where kernels run in this process; say whether triton was already imported."""
    already = "triton" in sys.modules
    on_cuda = bool(torch.cuda.is_available())
    if not on_cuda:
        os.environ["TRITON_INTERPRET"] = "1"
    _state["device"] = "cuda" if on_cuda else "cpu"
    return {"device": _state["device"], "triton_was_imported": already}


def _device():
    if _state["device"] is None:
        raise RuntimeError("prepare() was not called first")
    return torch.device(_state["device"])


def _solution():
    import rmsnorm
    return rmsnorm


def _host(tensor):
    return tensor.detach().to("cpu").clone()


def call(base, n_cols, weight, eps=None):
    """x = base[:, :n_cols] on the device (row stride base.shape[1]); y = rmsnorm(x, weight[, eps]).

    Returns y and what can only be seen here: its layout, whether it shares memory with x,
    and x's buffer after the call.
    """
    dev = _device()
    base_d = base.to(dev)
    x = base_d[:, :n_cols]
    w = weight.to(dev)
    fn = _solution().rmsnorm
    y = fn(x, w) if eps is None else fn(x, w, eps)
    seen = {"type": type(y).__name__, "base_after": _host(base_d)}
    if isinstance(y, torch.Tensor):
        seen.update(y=_host(y), shape=list(y.shape), dtype=y.dtype, device=y.device.type,
                    contiguous=bool(y.is_contiguous()),
                    shares_memory_with_x=y.untyped_storage().data_ptr() == base_d.untyped_storage().data_ptr())
    return seen


def call_plain(x, weight, eps=1e-6):
    """rmsnorm(x, weight, eps) on the device for an x of any shape; the result or its exception."""
    dev = _device()
    y = _solution().rmsnorm(x.to(dev), weight.to(dev), eps)
    return _host(y) if isinstance(y, torch.Tensor) else y


def launch(x_base, n_cols, weight, out, y_offset, stride_y, eps, block_size):
    """rmsnorm_kernel[(n_rows,)] directly: x = x_base[:, :n_cols]; y is an (n_rows, n_cols)
    view of the flat buffer `out` starting at element y_offset with row stride stride_y.
    Returns the whole of `out` afterwards."""
    dev = _device()
    n_rows = x_base.shape[0]
    x = x_base.to(dev)[:, :n_cols]
    out_d = out.to(dev)
    y = out_d.as_strided((n_rows, n_cols), (stride_y, 1), y_offset)
    kernel = _solution().rmsnorm_kernel
    try:
        kernel[(n_rows,)](x, weight.to(dev), y, x.stride(0), y.stride(0), n_cols, eps, BLOCK_SIZE=block_size)
    except Exception as exc:
        # The interpreter wraps an exception raised in the kernel body; an unimplemented
        # kernel should read as the NotImplementedError it raised.
        if isinstance(exc.__cause__, NotImplementedError):
            raise exc.__cause__ from None
        raise
    return _host(out_d)


def compile_launches(cases, timeout_s=240):
    """Run _DRIVER in a fresh process without TRITON_INTERPRET; return what it reported.

    cases: a list of {"key", "n_rows", "n_cols", "dtype"}.
    """
    spec = importlib.util.find_spec("rmsnorm")
    solution_dir = os.path.dirname(spec.origin) if spec is not None and spec.origin else os.getcwd()
    home = tempfile.mkdtemp(prefix="triton_aot_")
    env = dict(os.environ, TRITON_HOME=home, TRITON_CACHE_DIR=os.path.join(home, "cache"))
    env.pop("TRITON_INTERPRET", None)
    cmd = [sys.executable, "-s", "-B", "-P", "-c", _DRIVER, solution_dir, json.dumps(cases)]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"returncode": None, "report": None, "stderr": f"did not finish in {timeout_s} s"}
    lines = proc.stdout.strip().splitlines()
    report = None
    if lines:
        try:
            report = json.loads(lines[-1])
        except ValueError:
            report = None
    return {"returncode": proc.returncode, "report": report, "stderr": proc.stderr[-3000:]}


# The child process. For each case it calls the solution's rmsnorm on CPU zeros with the
# kernel's launcher replaced by a recorder, then puts the recorded launch through Triton's
# own launch-time binder (create_function_from_signature + JITFunction._pack_args: the code
# a real launch runs, so an integer argument equal to 1 becomes a compile-time constant,
# pointers are typed by dtype, alignment is hinted) and compiles it with triton.compile for
# GPUTarget("cuda", 90, 32) down to a cubin (ptxas ships in the triton wheel). It reports,
# per case, what happened; it decides nothing.
_DRIVER = r'''
import json
import os
import sys
import traceback

os.environ.pop("TRITON_INTERPRET", None)


def describe(exc):
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    cause = exc.__cause__
    if cause is not None:
        text += " | caused by: " + "".join(traceback.format_exception_only(type(cause), cause)).strip()
    return text[-1500:]


def plain(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return repr(value)


def run_case(module, backend, target, case, seen):
    import torch
    import triton
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction, create_function_from_signature

    seen["stage"] = "lookup"
    kernel = getattr(module, "rmsnorm_kernel", None)
    seen["kernel_type"] = type(kernel).__name__
    if not isinstance(kernel, JITFunction):
        return
    launches = []

    def record(*args, grid, warmup, **kwargs):
        launches.append((grid, args, kwargs))

    seen["stage"] = "call"
    kernel.run = record
    try:
        dtype = getattr(torch, case["dtype"])
        x = torch.zeros(case["n_rows"], case["n_cols"], dtype=dtype)
        w = torch.ones(case["n_cols"], dtype=dtype)
        module.rmsnorm(x, w, 1e-6)
    finally:
        del kernel.run
    seen["launch_count"] = len(launches)
    if not launches:
        return
    grid, args, kwargs = launches[0]
    seen["stage"] = "grid"
    if callable(grid):
        grid = grid(dict(zip(kernel.arg_names, args), **kwargs))
    seen["grid"] = [plain(g) for g in grid]
    seen["kwargs"] = {k: plain(v) for k, v in kwargs.items()}
    seen["stage"] = "bind"
    binder = create_function_from_signature(kernel.signature, kernel.params, backend)
    bound_args, specialization, options = binder(*args, **kwargs)
    options, signature, constexprs, attrs = kernel._pack_args(backend, kwargs, bound_args, specialization, options)
    names = [p.name for p in kernel.params]
    seen["constexprs"] = {names[path[0]]: plain(value) for path, value in constexprs.items() if len(path) == 1}
    seen["signature"] = {k: plain(v) for k, v in signature.items()}
    seen["stage"] = "compile"
    compiled = triton.compile(ASTSource(kernel, signature, constexprs, attrs), target=target,
                              options=options.__dict__)
    ptx = compiled.asm.get("ptx") or ""
    seen["ptx_target"] = next((line.split()[1] for line in ptx.splitlines() if line.startswith(".target")), "")
    seen["ptx_entries"] = [line.split()[-1].rstrip("(") for line in ptx.splitlines() if ".entry" in line]
    seen["cubin_bytes"] = len(compiled.asm.get("cubin") or b"")
    seen["stage"] = "done"


def main():
    solution_dir, cases = sys.argv[1], json.loads(sys.argv[2])
    sys.path.insert(0, solution_dir)
    try:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import make_backend

        import rmsnorm
        target = GPUTarget("cuda", 90, 32)
        backend = make_backend(target)
    except BaseException as exc:
        print(json.dumps({"import_error": describe(exc), "cases": {}}))
        return
    results = {}
    for case in cases:
        seen = {"stage": "start", "error": None}
        try:
            run_case(rmsnorm, backend, target, case, seen)
        except BaseException as exc:
            seen["error"] = describe(exc)
        results[case["key"]] = seen
    print(json.dumps({"import_error": None, "cases": results}))


main()
'''
