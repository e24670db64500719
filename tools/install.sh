#!/usr/bin/env bash
# Install the workspace into .venv: the CPU build of torch first (a plain `torch` requirement
# would pull a multi-GB CUDA build), then the harness and every task package, editable.
# As root on Debian/Ubuntu it also installs bubblewrap (the sandbox).
# --dev adds what the project's own tests need: nix-bin (flake checks), chromium (the HTML
# leaderboard test), the SDKs, and llama-cpp-python (a real inference server, compiled once).
set -euo pipefail
cd "$(dirname "$0")/.."
dev=0
[ "${1:-}" = "--dev" ] && dev=1

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=()
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  command -v make >/dev/null || missing+=(make)
  if [ $dev = 1 ]; then
    command -v nix-instantiate >/dev/null || missing+=(nix-bin)
    command -v chromium >/dev/null || missing+=(chromium)
    command -v chromedriver >/dev/null || missing+=(chromium-driver)
  fi
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
# matplotlib from its official wheel only: the committed chart is byte-checked, and a source
# build links another FreeType, which places glyphs differently.
pip install -q --disable-pip-version-check --only-binary=matplotlib 'jsonschema==4.26.0' 'matplotlib==3.11.2' 'httpx==0.28.1'
extras="report,speed"
if [ $dev = 1 ]; then
  # Pinned so that CI and a laptop test alike. llama-cpp-python compiles llama.cpp (a few
  # minutes, once: pip caches the wheel); LLAVA is not needed.
  CMAKE_ARGS="-DLLAVA_BUILD=OFF" pip install -q --disable-pip-version-check \
    'anthropic==2.14.0' 'openai==3.57.0' 'selenium==4.51.0' 'gguf==0.17.1' 'llama-cpp-python[server]==0.3.16' 'cosmic-ray==8.7.0'
  extras="dev,anthropic,openai,report,speed"
fi
members=(-e "harness[$extras]")
for dir in tasks/*/; do
  [ -f "$dir/pyproject.toml" ] && members+=(-e "$dir")
done
pip install -q --disable-pip-version-check --no-build-isolation "${members[@]}"
echo "install: $(.venv/bin/sb --version) with ${#members[@]} packages in .venv"
