#!/usr/bin/env bash
# Install the workspace into .venv (or $VENV) from the lock, never from a fresh resolve:
# every third-party distribution comes from locks/laptop.txt (or locks/dev.txt with --dev),
# each file checked against its sha256 hash (--require-hashes); the venv is synced to the
# lock exactly (what the lock does not name is removed). Then the harness and every task
# package, editable from this checkout with --no-deps: they are the working tree itself, not
# downloads, so they carry no hash, and --no-deps means nothing they ask for is resolved here
# (tools/check_lock.py, run by tools/test.sh, fails when the lock no longer satisfies them).
# The lock's own installer, uv, is bootstrapped with pip from its hashed pin in the lock.
# As root on Debian/Ubuntu it also installs bubblewrap (the sandbox).
# --dev adds what the project's own tests need: nix-bin (flake checks), chromium (the HTML
# leaderboard test), the SDKs, ray, inspect-ai and integrations/*, and llama-cpp-python (a real inference server, compiled once
# from its hashed sdist with the hashed build tools of locks/build.txt; uv caches the wheel).
# The lock is the machine's (uname -s, uname -m): on x86_64 Linux the tier's (locks/laptop.txt,
# locks/dev.txt); on macOS arm64 locks/laptop-macos-arm64.txt, on aarch64 Linux
# locks/laptop-linux-aarch64.txt (the laptop tier only); SB_TIER=cuda on x86_64 Linux:
# locks/cuda.txt (PyPI's CUDA torch). --which-lock prints the lock it would use, and stops.
# --sdk adds the official SDKs (anthropic, openai) to the laptop lock, as the dev lock pins
# them with their hashes (tools/sdk_lock.py), for grading hosted or served models; the venv
# remembers it (.sb-sdk), so a later `make run` keeps them.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=0 which_lock=0 sdk=0
for arg in "$@"; do
  case $arg in --dev) dev=1 ;; --which-lock) which_lock=1 ;; --sdk) sdk=1 ;; esac
done
tier=laptop
[ $dev = 1 ] && tier=dev
VENV=${VENV:-.venv}
[ -f "$VENV/.sb-sdk" ] && sdk=1

machine="$(uname -s) $(uname -m)"
case "${SB_TIER:-laptop} $tier $machine" in
  "laptop $tier Linux x86_64") lock="locks/$tier.txt" ;;
  "laptop laptop Darwin arm64") lock=locks/laptop-macos-arm64.txt ;;
  "laptop laptop Linux aarch64") lock=locks/laptop-linux-aarch64.txt ;;
  "cuda laptop Linux x86_64") lock=locks/cuda.txt ;;
  *) echo "install: no lock for the ${SB_TIER:-$tier} tier$([ $dev = 1 ] && [ -n "${SB_TIER:-}" ] && echo ' with --dev')" \
          "on $machine: locks/ has laptop, dev and cuda (SB_TIER=cuda) for Linux x86_64, laptop for Darwin arm64 and Linux aarch64" >&2
     exit 1 ;;
esac
[ $which_lock = 0 ] || { echo "$lock"; exit 0; }
sync_lock=$lock
if [ $sdk = 1 ] && [ $dev = 0 ]; then  # the dev lock has the SDKs already
  [ "$lock" = locks/laptop.txt ] || { echo "install: --sdk is for the laptop lock on Linux x86_64 (this is $lock)" >&2; exit 1; }
  sync_lock=$(mktemp --suffix=-laptop-sdk.txt)
  "${PYTHON:-python3}" tools/sdk_lock.py locks/laptop.txt locks/dev.txt > "$sync_lock"
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ -z "${SB_INSTALL_NO_APT:-}" ]; then
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
host_pip=0
"$PYTHON" -m pip --version >/dev/null 2>&1 && host_pip=1
if [ ! -x "$VENV/bin/python" ]; then
  # pip itself comes from the lock; the host's pip (where there is one) bootstraps uv.
  if [ $host_pip = 1 ]; then "$PYTHON" -m venv --without-pip "$VENV"; else "$PYTHON" -m venv "$VENV"; fi
fi
py="$VENV/bin/python"
"$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
  || { echo "install: the lock is for CPython 3.11 and $VENV has $("$py" -V 2>&1): remove it, and set PYTHON=python3.11"; exit 1; }

# uv, at the version and with the hashes the lock pins it to, installed with pip.
uv_pin=$(awk '/^uv==/{p=1} p{print} p&&!/\\$/{exit}' "$lock")
want=$(echo "$uv_pin" | sed -n 's/^uv==\([^ ]*\).*/\1/p')
have=$("$VENV/bin/uv" --version 2>/dev/null | awk '{print $2}') || true
if [ "$have" != "$want" ]; then
  pip=("$py" -m pip)
  "$py" -m pip --version >/dev/null 2>&1 || pip=("$PYTHON" -m pip --python "$py")
  tmp=$(mktemp -d)
  echo "$uv_pin" > "$tmp/uv.txt"
  "${pip[@]}" install -q --disable-pip-version-check --require-hashes --no-deps -r "$tmp/uv.txt" 2>"$tmp/log" \
    || { cat "$tmp/log" >&2; exit 1; }
  rm -rf "$tmp"
fi
uv="$VENV/bin/uv"

source tools/uv_sources.sh
sb_uv_sources
# A platform lock's torch is PyPI's 2.13.0, which the find-links source's 2.13.0+cpu would satisfy
# too: the index alone (--index-url URL, which tools/uv_sources.sh puts first), as tools/lock.sh.
[ "$lock" = "locks/$tier.txt" ] || UV_SOURCES=("${UV_SOURCES[@]:0:2}")
# Wheels only (matplotlib's official wheel matters most: the committed chart is byte-checked,
# and a source build links another FreeType), except the packages the lock records as having
# none (sb-lock-sdists), which are built with the hashed tools of locks/build.txt. LLAVA is
# not needed. --compile-bytecode writes every module's .pyc now (all of site-packages, about
# 40 s here): gradings run with PYTHONDONTWRITEBYTECODE in a read-only view, so without it
# every judge and every worker compiled torch from source again (import torch, numpy, pytest:
# 6.5 s of CPU without .pyc, 3.1 s with them, on this 2-core machine).
# SB_INSTALL_NO_BYTECODE=1 leaves it out (harness/tests/test_lock.py, whose three venvs are
# about the lock and the fingerprint, neither of which .pyc files change).
bytecode=(--compile-bytecode)
[ -n "${SB_INSTALL_NO_BYTECODE:-}" ] && bytecode=()
sdists=()
for name in $(sed -n 's/^# sb-lock-sdists://p' "$lock"); do sdists+=(--no-binary "$name"); done
CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" "$uv" pip sync --quiet --python "$py" --require-hashes "${bytecode[@]}" \
  "${UV_SOURCES[@]}" --only-binary :all: "${sdists[@]}" --build-constraint locks/build.txt "$sync_lock"
[ $sdk = 1 ] && [ $dev = 0 ] && touch "$VENV/.sb-sdk"

# SB_INSTALL_TASKS=0: the harness alone (harness/tests/test_lock.py: task packages are not
# part of the toolchain fingerprint).
members=(-e harness)
for dir in tasks/*/; do
  [ -f "$dir/pyproject.toml" ] && [ "${SB_INSTALL_TASKS:-1}" != 0 ] && members+=(-e "$dir")
done
if [ $dev = 1 ]; then  # the integrations (integrations/inspect: sb-inspect), which the tests drive
  for dir in integrations/*/; do
    [ -f "$dir/pyproject.toml" ] && members+=(-e "$dir")
  done
fi
[ $dev = 1 ] && members+=(-e integrations/inspect)  # sb_inspect: needs inspect-ai, which the dev lock holds
"$uv" pip install --quiet --python "$py" --no-deps --no-build-isolation --offline "${members[@]}"
"$py" tools/check_lock.py || echo "install: installed $lock as it is; tools/test.sh fails until it is relocked" >&2
echo "install: $("$VENV/bin/sb" --version) with $((${#members[@]} / 2)) packages in $VENV, third-party from $lock$([ $sdk = 1 ] && [ $dev = 0 ] && echo ' and the SDKs'), in $SECONDS s"
