"""Ahead-of-time compilation of what the wrapper launches, for a CUDA target, with no GPU.

Triton's launcher turns an integer argument equal to 1 into a compile-time constant. The
interpreter does not, so a kernel that treats such an argument as a tensor passes every
interpreted test and then fails to compile on a GPU for a one-column input. This compiles
the solution's own launch (its BLOCK_SIZE, num_warps and argument values) through Triton's
launch-time binder and `triton.compile` down to a cubin for sm_90, in a fresh process (see
_aot_compile.py). It proves the kernel compiles for those launches; it does not run it.
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest

# Row widths: one column (the specialised case), short odd, a power of two, wide and ragged.
CASES = [(1, "float16"), (1, "float32"), (3, "float16"), (64, "float32"), (1000, "float16")]
HELPER = pathlib.Path(__file__).parent / "_aot_compile.py"


def solution_dir():
    spec = importlib.util.find_spec("rmsnorm")
    assert spec is not None and spec.origin, "rmsnorm.py is not importable"
    return str(pathlib.Path(spec.origin).parent)


@pytest.fixture(scope="module")
def compile_results(tmp_path_factory):
    home = tmp_path_factory.mktemp("triton_home")
    env = dict(os.environ, TRITON_HOME=str(home), TRITON_CACHE_DIR=str(home / "cache"))
    env.pop("TRITON_INTERPRET", None)
    cmd = [sys.executable, str(HELPER), solution_dir(), json.dumps(CASES)]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        return {f"{n}-{d}": "compilation did not finish in 240 s" for n, d in CASES}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {f"{n}-{d}": f"compiler process failed: {proc.stderr[-2000:]}" for n, d in CASES}
    return json.loads(lines[-1])


@pytest.mark.parametrize("n_cols,dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_compiles_for_cuda_sm90(compile_results, n_cols, dtype):
    verdict = compile_results[f"{n_cols}-{dtype}"]
    assert verdict == "ok", f"rmsnorm(x[3, {n_cols}] {dtype}) does not compile for CUDA sm_90: {verdict}"
