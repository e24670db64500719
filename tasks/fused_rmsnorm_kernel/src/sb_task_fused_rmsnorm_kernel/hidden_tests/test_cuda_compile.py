"""Ahead-of-time compilation of what the wrapper launches, for a CUDA target, with no GPU.

Triton's launcher turns an integer argument equal to 1 into a compile-time constant. The
interpreter does not, so a kernel that treats such an argument as a tensor passes every
interpreted test and then fails to compile on a GPU for a one-column input. The probe
(_probe_rmsnorm.compile_launches, in a fresh child of the solution's process, without
TRITON_INTERPRET) records the wrapper's own launch (its grid, BLOCK_SIZE, num_warps and
argument values), puts it through Triton's launch-time binder and compiles it with
`triton.compile` down to a cubin for sm_90. It reports what happened; the verdict is
decided here. This proves the kernel compiles for those launches; it does not run it.
"""
from _device import RMS  # noqa: I001  (selects the worker's mode before the solution loads)

import pytest

# (n_rows, n_cols, dtype): one column (n_cols, and with it both row strides, become
# constants), a single row, short odd, a power of two, wide and ragged, the widest.
CASES = [(3, 1, "float16"), (1, 1, "float32"), (3, 3, "float16"), (3, 64, "float32"),
         (1, 1000, "float16"), (2, 8192, "float32")]
IDS = [f"{r}x{n}-{d}" for r, n, d in CASES]


@pytest.fixture(scope="module")
def reports():
    cases = [{"key": key, "n_rows": r, "n_cols": n, "dtype": d} for key, (r, n, d) in zip(IDS, CASES)]
    return RMS.compile_launches(cases)


def case_report(reports, key):
    report = reports["report"]
    assert report is not None, (f"the compiler process failed (status {reports['returncode']}): "
                                f"{reports['stderr'][-1500:]}")
    assert report["import_error"] is None, f"rmsnorm.py does not import without TRITON_INTERPRET: {report['import_error']}"
    seen = report["cases"][key]
    assert seen.get("kernel_type") == "JITFunction", (
        f"rmsnorm_kernel must be a plain @triton.jit function, got {seen.get('kernel_type')}")
    return seen


@pytest.mark.parametrize("n_rows,n_cols,dtype", CASES, ids=IDS)
def test_wrapper_launches_the_kernel_once_on_a_grid_of_rows(reports, n_rows, n_cols, dtype):
    seen = case_report(reports, f"{n_rows}x{n_cols}-{dtype}")
    assert "launch_count" in seen, f"rmsnorm(x[{n_rows}, {n_cols}] {dtype}) failed: {seen['error']}"
    assert seen["launch_count"] == 1, f"rmsnorm launched rmsnorm_kernel {seen['launch_count']} times, expected once"
    assert "grid" in seen, f"the launch grid could not be evaluated: {seen['error']}"
    grid = seen["grid"]
    assert grid[:1] == [n_rows] and all(g == 1 for g in grid[1:]), (
        f"rmsnorm launched grid {tuple(grid)} for {n_rows} rows, expected ({n_rows},)")


@pytest.mark.parametrize("n_rows,n_cols,dtype", CASES, ids=IDS)
def test_compiles_for_cuda_sm90(reports, n_rows, n_cols, dtype):
    seen = case_report(reports, f"{n_rows}x{n_cols}-{dtype}")
    assert seen["error"] is None, (f"rmsnorm(x[{n_rows}, {n_cols}] {dtype}) does not compile for CUDA sm_90 "
                                   f"(failed at {seen['stage']}): {seen['error']}")
    assert seen["stage"] == "done"
    assert seen["ptx_target"].startswith("sm_90"), f"compiled for {seen['ptx_target']!r}, not sm_90"
    assert seen["ptx_entries"] == ["rmsnorm_kernel"], seen["ptx_entries"]
    assert seen["cubin_bytes"] > 0, "compilation produced no cubin"
    if n_cols == 1:
        # What makes this case worth compiling: the launch really did turn n_cols into a
        # constant, as a launch on a GPU would.
        assert seen["constexprs"].get("n_cols") == 1, f"n_cols was not specialised: {seen['constexprs']}"
