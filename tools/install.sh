#!/usr/bin/env bash
# Install the workspace into .venv: the CPU build of torch first (a plain `torch` requirement
# would pull a multi-GB CUDA build), then the harness and every task package, editable.
# As root on Debian/Ubuntu it also installs bubblewrap (the sandbox) and nix-bin (flake checks).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=()
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  command -v nix-instantiate >/dev/null || missing+=(nix-bin)
  command -v make >/dev/null || missing+=(make)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install: apt-get install ${missing[*]}"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null \
      || echo "install: could not install ${missing[*]} (grading a model's output will need bubblewrap)"
  fi
fi

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
pip() { .venv/bin/python -m pip "$@"; }
pip install -q --disable-pip-version-check torch==2.13.0
pip install -q --disable-pip-version-check hatchling editables 'triton==3.9.0'
members=(-e "harness[dev]")
for dir in tasks/*/; do
  [ -f "$dir/pyproject.toml" ] && members+=(-e "$dir")
done
pip install -q --disable-pip-version-check --no-build-isolation "${members[@]}"
echo "install: $(.venv/bin/sb --version) with ${#members[@]} packages in .venv"
