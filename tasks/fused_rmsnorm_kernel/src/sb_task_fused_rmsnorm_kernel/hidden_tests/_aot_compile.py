"""Compile, for a CUDA target and without a GPU, exactly what the solution's wrapper launches.

Run as a fresh process: Triton's interpreter patches triton.language in the process that
used it, so compiling there afterwards is unreliable. This process never sets
TRITON_INTERPRET, so `rmsnorm_kernel` is a real JITFunction.

For each case the wrapper `rmsnorm` is called on CPU tensors with the kernel's launcher
replaced by a recorder. The recorded call is then put through Triton's own launch-time
binder, so every argument is specialised as a real launch would specialise it (an integer
equal to 1 becomes a compile-time constant, pointers are typed by dtype, alignment hints),
and compiled by `triton.compile` down to a cubin for GPUTarget("cuda", 90, 32).

argv[1]: directory that holds rmsnorm.py; argv[2]: JSON list of [n_cols, dtype name].
Prints one JSON object {"<n_cols>-<dtype>": "ok" | "<why not>"} as the last stdout line.
"""
import json
import os
import sys
import traceback

os.environ.pop("TRITON_INTERPRET", None)
TARGET_ARCH, WARP_SIZE = 90, 32
N_ROWS = 3


def describe(exc):
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    cause = exc.__cause__
    if cause is not None:
        text += " | caused by: " + "".join(traceback.format_exception_only(type(cause), cause)).strip()
    return text[-1500:]


def compile_launch(kernel, backend, target, args, kwargs):
    import triton
    from triton.compiler import ASTSource
    from triton.runtime.jit import create_function_from_signature

    binder = create_function_from_signature(kernel.signature, kernel.params, backend)
    bound_args, specialization, options = binder(*args, **kwargs)
    options, signature, constexprs, attrs = kernel._pack_args(backend, kwargs, bound_args, specialization, options)
    compiled = triton.compile(ASTSource(kernel, signature, constexprs, attrs), target=target,
                              options=options.__dict__)
    if not compiled.asm.get("cubin"):
        raise RuntimeError("compilation produced no cubin")


def run_case(module, backend, target, n_cols, dtype_name):
    import torch
    from triton.runtime.jit import JITFunction

    kernel = getattr(module, "rmsnorm_kernel", None)
    if not isinstance(kernel, JITFunction):
        return f"rmsnorm_kernel is not a plain @triton.jit function (got {type(kernel).__name__})"
    launches = []

    def record(*args, grid, warmup, **kwargs):
        launches.append((grid, args, kwargs))

    kernel.run = record
    try:
        dtype = getattr(torch, dtype_name)
        x = torch.zeros(N_ROWS, n_cols, dtype=dtype)
        w = torch.ones(n_cols, dtype=dtype)
        module.rmsnorm(x, w, 1e-6)
    finally:
        del kernel.run
    if len(launches) != 1:
        return f"rmsnorm launched rmsnorm_kernel {len(launches)} times, expected once"
    grid, args, kwargs = launches[0]
    grid = grid(dict(zip(kernel.arg_names, args), **kwargs)) if callable(grid) else grid
    if tuple(grid) not in ((N_ROWS,), (N_ROWS, 1), (N_ROWS, 1, 1)):
        return f"rmsnorm launched grid {tuple(grid)} for {N_ROWS} rows, expected ({N_ROWS},)"
    compile_launch(kernel, backend, target, args, kwargs)
    return "ok"


def main():
    solution_dir, cases = sys.argv[1], json.loads(sys.argv[2])
    sys.path.insert(0, solution_dir)
    results = {}
    try:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import make_backend

        import rmsnorm
        target = GPUTarget("cuda", TARGET_ARCH, WARP_SIZE)
        backend = make_backend(target)
    except BaseException as exc:  # the solution does not import: every case says why
        print(json.dumps({f"{n}-{d}": "import failed: " + describe(exc) for n, d in cases}))
        return
    for n_cols, dtype_name in cases:
        try:
            results[f"{n_cols}-{dtype_name}"] = run_case(rmsnorm, backend, target, n_cols, dtype_name)
        except BaseException as exc:
            results[f"{n_cols}-{dtype_name}"] = describe(exc)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
