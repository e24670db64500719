"""What a grading costs, measured side by side in one run: bare pytest, the single-process
grading this project used before the judge/worker split, and the two-process grading.

    python benchmarks/sandbox_overhead.py [SLUG ...] [--rounds N]

Default tasks: softmax_stability (numpy) and chunked_batchnorm_backward (torch). For each,
the reference is graded ROUNDS times each way, interleaved so machine load hits all three
alike, and the medians are printed with the added seconds per grading:

- bare pytest: `python -m pytest -q` over the hidden tests, the reference on sys.path, no
  sandbox, no record;
- single process: the old runner (`harness/src/sb/_runner.py` at commit a614a88, taken
  from git) importing the solution itself, in the same bubblewrap jail;
- two processes, cold judge: `sb.grading.grade` with SB_WARM_JUDGES=0 (judge + worker,
  each started in bwrap for every grading);
- two processes, warm judge: `sb.grading.grade` as it runs by default, the judge forked
  from a warm judge (sb/grading/warm.py) that one warm-up grading started; the worker is new;
- `sb grade`: the command as a user or task author runs it, a fresh process each time
  (plugins loaded, the task read, its cached reference ids used, one grading), and its
  ratio to bare pytest (issue #35's target: 1.3x or less, on a quiet machine).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sb.session import default_session
from sb.grading import PINNED_ENV, grade, write_files
from sb.grading.pipeline import _RecordReader
from sb.sandbox.base import Job
from sb.sandbox.bwrap import BwrapSandbox
from sb.sandbox.view import JUDGE_DISTRIBUTIONS, python_view

OLD_RUNNER_COMMIT = "a614a88"
REPO = Path(__file__).resolve().parent.parent


def old_runner() -> bytes:
    return subprocess.run(["git", "show", f"{OLD_RUNNER_COMMIT}:harness/src/sb/_runner.py"], cwd=REPO,
                          capture_output=True, check=True).stdout


def _layout(root: Path, task) -> dict:
    layout = {n: root / n for n in ("solution", "hidden_tests", "harness", "scratch")}
    for path in layout.values():
        path.mkdir()
    write_files(layout["solution"], task.reference_files)
    write_files(layout["hidden_tests"], task.hidden_test_files)
    (layout["scratch"] / "tmp").mkdir()
    return layout


# Bare pytest has no worker to load a probe into: this plugin loads each probe module (a
# task's, or one the harness ships, as observe_call's) in the test process itself (what the
# single-process runner did), before any test imports it.
LOCAL_PROBES = """
import importlib.util, os, types
import sb.judge
TESTS = os.environ["SB_BENCH_TESTS"]
_loaded = {}
def _local_probe(filename):
    if filename not in _loaded:
        spec = importlib.util.spec_from_file_location(os.path.splitext(filename)[0], os.path.join(TESTS, filename))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded[filename] = module
    return _loaded[filename]
def _local_shipped(key, source):
    if key not in _loaded:
        module = types.ModuleType(os.path.splitext(key)[0])
        exec(compile(source, key, "exec"), module.__dict__)
        _loaded[key] = module
    return _loaded[key]
sb.judge.probe = _local_probe
sb.judge.shipped_probe = _local_shipped
"""


def bare_pytest(task) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        layout = _layout(Path(tmp), task)
        (layout["harness"] / "sb_bench_local_probes.py").write_text(LOCAL_PROBES)
        env = {**os.environ, **PINNED_ENV, "SB_BENCH_TESTS": str(layout["hidden_tests"]),
               "PYTHONPATH": os.pathsep.join([str(layout["solution"]), str(layout["harness"])])}
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-p", "sb_bench_local_probes", str(layout["hidden_tests"])],
                              cwd=layout["solution"], env=env, capture_output=True)
        elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    return elapsed


def single_process(task, runner: bytes) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        layout = _layout(Path(tmp), task)
        (layout["harness"] / "runner.py").write_bytes(runner)
        (layout["harness"] / "pytest.ini").write_text("[pytest]\n")
        view = python_view(tuple(task.meta.deps), JUDGE_DISTRIBUTIONS)
        read_fd, write_fd = os.pipe()
        reader = _RecordReader(read_fd)
        env = {"PATH": "/usr/bin:/bin", **PINNED_ENV, "HOME": str(layout["scratch"]),
               "TMPDIR": str(layout["scratch"] / "tmp")}
        argv = [sys.executable, "-s", "-B", "-P", str(layout["harness"] / "runner.py"), str(layout["solution"]),
                str(layout["hidden_tests"]), str(layout["harness"] / "pytest.ini"), str(write_fd),
                ",".join(task.meta.deps)]
        job = Job(argv=argv, cwd=layout["solution"], env=env, timeout_s=task.meta.time_limit_s,
                  writable=(layout["solution"], layout["scratch"]), masked=view.masked, pass_fds=(write_fd,),
                  readable=(*view.readable, str(layout["harness"]), str(layout["hidden_tests"])))
        start = time.perf_counter()
        BwrapSandbox().run(job)
        elapsed = time.perf_counter() - start
        record = reader.finish()
    outcomes = record.test_outcomes()
    if not (record.ended and outcomes and all(v == "passed" for v in outcomes.values())):
        return None  # today's hidden tests use sb.judge (probes, facades), which the old runner lacks
    return elapsed


SANDBOX = BwrapSandbox()  # one instance: warm judges are kept per sandbox


def two_processes(task, expected: list, warm: bool) -> float:
    os.environ["SB_WARM_JUDGES"] = "1" if warm else "0"
    start = time.perf_counter()
    outcome = grade(task, task.reference_files, SANDBOX, expected)
    elapsed = time.perf_counter() - start
    assert outcome.passed, outcome.summary()
    return elapsed


# A user's interpreter writes the bytecode of the harness and the task packages on their
# first import and reads it afterwards; an environment that forbids writing it (as some CI
# images and sandboxes do) would have every command compile them again.
USER_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def fresh_command(slug: str, folder: Path) -> float:
    """`sb grade SLUG FOLDER` from a new process, as a user runs it."""
    start = time.perf_counter()
    done = subprocess.run([str(Path(sys.executable).parent / "sb"), "grade", slug, str(folder)], capture_output=True,
                          env=USER_ENV)
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    return elapsed


def main() -> None:
    args = sys.argv[1:]
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 7
    slugs = [a for i, a in enumerate(args) if not a.startswith("--") and (i == 0 or args[i - 1] != "--rounds")]
    slugs = slugs or ["softmax_stability", "chunked_batchnorm_backward"]
    tasks, runner = default_session().tasks(), old_runner()
    print(f"median wall seconds per grading of the reference, {rounds} rounds, interleaved")
    print(f"{'task':28} {'bare':>7} {'1 proc':>7} {'2p cold':>8} {'2p warm':>8} {'warm-bare':>10} {'warm-cold':>10}"
          f" {'sb grade':>9} {'grade/bare':>11}")
    for slug in slugs:
        task = tasks[slug]
        expected = grade(task, task.reference_files, SANDBOX).test_ids  # also starts the warm judge
        timings: dict[str, list] = {"bare": [], "one": [], "cold": [], "warm": [], "command": []}
        with tempfile.TemporaryDirectory() as answer:
            write_files(Path(answer), task.reference_files)
            fresh_command(slug, Path(answer))  # caches the reference's ids, as a first `sb grade` does
            for _ in range(rounds):
                timings["bare"].append(bare_pytest(task))
                timings["one"].append(single_process(task, runner))
                timings["cold"].append(two_processes(task, expected, warm=False))
                timings["warm"].append(two_processes(task, expected, warm=True))
                timings["command"].append(fresh_command(slug, Path(answer)))
        bare, cold, warm, command = (statistics.median(timings[k]) for k in ("bare", "cold", "warm", "command"))
        one = "n/a" if None in timings["one"] else f"{statistics.median(timings['one']):.3f}"
        print(f"{slug:28} {bare:7.3f} {one:>7} {cold:8.3f} {warm:8.3f} {warm - bare:+10.3f} {warm - cold:+10.3f}"
              f" {command:9.3f} {command / bare:10.2f}x")
    print("n/a: the single-process runner of a614a88 cannot run hidden tests that use sb.judge; bare pytest"
          " loads their probes in its own process")


if __name__ == "__main__":
    main()
