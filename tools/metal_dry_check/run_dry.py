"""Dry check of a Metal task on a machine without Metal (Linux, g++): NOT grading.

Runs the hidden tests against the reference, the untouched starter and every hand mutant,
with the shader compiled by g++ and dispatched by a deterministic CPU emulation
(metal_emu.py, emu_core.h) and the probe run in-process (dry_plugin.py). It shows that the
tests' plumbing, oracles and tolerances hold together and that the reference's algorithm,
barriers included, is right under the emulator's strict rules; it does not show that any
shader compiles or runs under Metal, or that a mutant is caught on a GPU.

    python tools/metal_dry_check/run_dry.py SLUG [--order 0|1|2] [reference | starter | MUTANT ...]
    python tools/metal_dry_check/run_dry.py SLUG [--order 0|1|2] --generated [ID ...]

One copy serves both Metal tasks; each keeps only its kernel's signature, in
tasks/<slug>/dry_check/signatures.json.

With no variant named: all of them. Exit status 1 when the reference fails a test, the
starter passes one, or a mutant expected caught passes everything.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import yaml

HERE = pathlib.Path(__file__).resolve().parent
SLUG = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else sys.exit(
    "usage: run_dry.py SLUG [--order 0|1|2] [VARIANT ... | --generated [ID ...]]")
TASK = HERE.parent.parent / "tasks" / SLUG
PACKAGE = next((TASK / "src").glob("sb_task_*"))
FILE = next((PACKAGE / "starter").glob("*.py")).name
# The kernel's parameters before the three built-ins, as the prompt declares them.
SIGNATURES = json.loads((TASK / "dry_check" / "signatures.json").read_text())


def run_variant(name, folder, order, stop_early=False):
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "results.json")
        env = dict(os.environ, DRY_SIGNATURES=json.dumps(SIGNATURES), DRY_TESTS_DIR=str(PACKAGE / "hidden_tests"),
                   DRY_RESULTS=results, EMU_ORDER=str(order),
                   PYTHONPATH=os.pathsep.join([str(folder), str(HERE), str(PACKAGE / "hidden_tests")]))
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "dry_plugin", "-p", "no:cacheprovider",
               *(["-x"] if stop_early else []), str(PACKAGE / "hidden_tests")]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp)
        if not os.path.exists(results):
            return {"<run>": "failed: " + (proc.stdout + proc.stderr)[-2000:]}
        with open(results) as handle:
            return json.load(handle)


def contract_problems(results):
    """Every test a clause of contract.yaml names is a test that ran."""
    # As sb validate reads it: a test id (file::name[params]) or file::name for all variants.
    ids = {nodeid.split("hidden_tests/", 1)[-1] for nodeid in results}
    known = ids | {nodeid.split("[", 1)[0] for nodeid in ids}
    clauses = yaml.safe_load((PACKAGE / "contract.yaml").read_text()) or []
    return [f"{clause['clause'][:50]!r} names unknown test {name!r}"
            for clause in clauses for name in clause["tests"] if name not in known]


def variants(names):
    out = []
    wanted = set(names)
    for name in ("reference", "starter"):
        if not wanted or name in wanted:
            out.append((name, PACKAGE / name, "pass" if name == "reference" else "fail-all"))
    from sb.task import load_task_dir
    task = load_task_dir(PACKAGE)
    for mutant in task.mutants:
        if not wanted or mutant.name in wanted:
            folder = pathlib.Path(tempfile.mkdtemp(prefix=f"{mutant.name}-"))
            for name, data in task.mutant_solution(mutant).items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_bytes(data)
            out.append((mutant.name, folder, mutant.expected))
    return out


def generated(order, only=()):
    """cosmic-ray's mutants of the reference (sb.generated), each run here, stopping at the
    first failing test; survivors must be listed in equivalent_mutants.yaml."""
    from sb.session import Session
    from sb.generated import generate
    task = Session().tasks()[PACKAGE.name.removeprefix("sb_task_")]
    listed = task.equivalent_mutants
    killed, equivalent, survived = 0, 0, []
    for mutant in generate(task):
        if only and mutant.id not in only:
            continue
        with tempfile.TemporaryDirectory() as folder:
            pathlib.Path(folder, mutant.file).write_bytes(mutant.source)
            results = run_variant(mutant.id, pathlib.Path(folder), order, stop_early=True)
        if any(v != "passed" for v in results.values()):
            killed += 1
        elif mutant.id in listed:
            equivalent += 1
        else:
            survived.append(mutant.id)
            print(f"SURVIVED {mutant.id}", flush=True)
    total = killed + equivalent + len(survived)
    print(f"generated mutants: {killed} killed, {equivalent} equivalent, {len(survived)} survived of {total}")
    return 1 if survived else 0


def main(argv):
    order = 0
    if argv[:1] == ["--order"]:
        order, argv = int(argv[1]), argv[2:]
    if argv[:1] == ["--generated"]:
        return generated(order, set(argv[1:]))
    bad = 0
    for name, folder, expected in variants(argv):
        if not (folder / FILE).exists():
            continue
        results = run_variant(name, folder, order)
        failed = {k: v for k, v in results.items() if v != "passed"}
        passed = len(results) - len(failed)
        if expected == "pass":
            ok = not failed and results and not contract_problems(results)
            for problem in contract_problems(results):
                print(f"      contract: {problem}")
        elif expected == "fail-all":
            # The untouched starter must fail every test with an assertion or NotImplementedError.
            clean = all(why.split(": ", 1)[-1].startswith(("AssertionError", "NotImplementedError"))
                        for why in failed.values())
            ok = passed == 0 and results and clean
        elif expected == "caught":
            ok = bool(failed)
        else:  # survives
            ok = not failed
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} {name:34s} expected {expected:9s} {passed} passed, {len(failed)} failed")
        for nodeid, why in list(failed.items())[:3 if expected != "fail-all" else 0]:
            print(f"      {nodeid.split('::')[-1]}: {why[:200]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[2:]))
