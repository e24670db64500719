#!/usr/bin/env bash
# The project's test command (the README's `make test`): lint and types, every task's contract
# and mutants, the flake checks, then the harness's own tests. Any failure fails the whole run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
jobs=$(nproc 2>/dev/null || echo 2)
stage() {  # a stage's name, and how long the previous one took (the CI log shows where its time goes)
  [ -n "${stage_name:-}" ] && echo "-- $stage_name took $((SECONDS - stage_start)) s"
  stage_name=$1; stage_start=$SECONDS
  [ -n "$1" ] && echo "== $1"
  return 0
}
python tools/check_lock.py   # every pyproject's requirements are in the locks (else it names the package and: bash tools/lock.sh)

# ruff and mypy as configured in pyproject.toml (what they cover, and why tasks/ is left out);
# `make lint` runs the same two.
stage "lint and types"
ruff check
mypy
stage "sb validate --tier all"
sb validate --tier all --jobs "$jobs"
# --first-failure: each mutant's grading stops at its first failing test; the same verdicts
# (docs/cli.md), in about 0.6 of the time on the slow tasks.
stage "sb mutants --tier all --first-failure"
sb mutants --tier all --first-failure --jobs "$jobs"
stage "generated mutants (a fixed sample; the full run is python tools/validity.py)"
sb mutants --generate refactor --first-failure --jobs "$jobs"
stage "flake checks"
bash tools/check_flake.sh
stage "costs, calibration and the committed chart re-derive"
python tools/check_cost.py
python tools/check_calibration.py
python tools/render_chart.py --check
stage "pytest"
# One pytest worker per core (pytest-xdist; a file's tests stay on one worker, so a module's
# servers start once), except the files that measure timing or start a Ray cluster: they run
# after, alone, as before (a grading on the next core skews a latency figure, and a loaded
# GCS misses Ray's start-up deadline).
alone=(harness/tests/test_speed.py harness/tests/test_speed_llama.py harness/tests/test_executors_ray.py)
pytest -q -p no:cacheprovider --durations=25 -n "$jobs" --dist loadfile "${alone[@]/#/--ignore=}" \
  harness/tests $(ls -d tasks/*/tests 2>/dev/null)
stage "pytest, the timing and cluster files alone"
pytest -q -p no:cacheprovider --durations=10 "${alone[@]}"
stage ""
