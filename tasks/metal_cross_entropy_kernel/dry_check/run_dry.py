"""Dry check of this Metal task on a machine without Metal (Linux, g++): NOT grading.

Runs the hidden tests against the reference, the untouched starter and every hand mutant,
with the shader compiled by g++ and dispatched by a deterministic CPU emulation
(metal_emu.py, emu_core.h) and the probe run in-process (dry_plugin.py). It shows that the
tests' plumbing, oracles and tolerances hold together and that the reference's algorithm,
barriers included, is right under the emulator's strict rules; it does not show that any
shader compiles or runs under Metal, or that a mutant is caught on a GPU.

    python dry_check/run_dry.py [--order 0|1|2] [reference | starter | MUTANT ...]

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
TASK = HERE.parent
PACKAGE = next((TASK / "src").glob("sb_task_*"))
FILE = next((PACKAGE / "starter").glob("*.py")).name
# The kernel's parameters before the three built-ins, as the prompt declares them.
SIGNATURES = json.loads((HERE / "signatures.json").read_text())


def run_variant(name, folder, order):
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "results.json")
        env = dict(os.environ, DRY_SIGNATURES=json.dumps(SIGNATURES), DRY_TESTS_DIR=str(PACKAGE / "hidden_tests"),
                   DRY_RESULTS=results, EMU_ORDER=str(order),
                   PYTHONPATH=os.pathsep.join([str(folder), str(HERE), str(PACKAGE / "hidden_tests")]))
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "dry_plugin", "-p", "no:cacheprovider",
               str(PACKAGE / "hidden_tests")]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp)
        if not os.path.exists(results):
            return {"<run>": "failed: " + (proc.stdout + proc.stderr)[-2000:]}
        with open(results) as handle:
            return json.load(handle)


def variants(names):
    out = []
    wanted = set(names)
    for name in ("reference", "starter"):
        if not wanted or name in wanted:
            out.append((name, PACKAGE / name, "pass" if name == "reference" else "fail-all"))
    for folder in sorted((PACKAGE / "mutants").iterdir()):
        if folder.is_dir() and (not wanted or folder.name in wanted):
            spec = yaml.safe_load((folder / "mutant.yaml").read_text())
            out.append((folder.name, folder, spec["expected"]))
    return out


def main(argv):
    order = 0
    if argv[:1] == ["--order"]:
        order, argv = int(argv[1]), argv[2:]
    bad = 0
    for name, folder, expected in variants(argv):
        if not (folder / FILE).exists():
            continue
        results = run_variant(name, folder, order)
        failed = {k: v for k, v in results.items() if v != "passed"}
        passed = len(results) - len(failed)
        if expected == "pass":
            ok = not failed and results
        elif expected == "fail-all":
            ok = passed == 0 and results
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
    sys.exit(main(sys.argv[1:]))
