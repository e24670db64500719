#!/usr/bin/env bash
# Offline checks of flake.nix (CI cannot download nixpkgs): it parses, it evaluates against
# the stub nixpkgs in nix/stub-nixpkgs, and its committed lock file is readable as is.
set -euo pipefail
cd "$(dirname "$0")/.."
export NIX_CONFIG="experimental-features = nix-command flakes"
command -v nix-instantiate >/dev/null || { echo "check_flake: nix is not installed (apt-get install nix-bin)"; exit 1; }
nix-instantiate --parse flake.nix >/dev/null
echo "flake.nix parses"
nix flake check --offline --no-build --no-write-lock-file \
  --override-input nixpkgs "path:$PWD/nix/stub-nixpkgs"
echo "flake check passes against the stub nixpkgs"
nix flake metadata --offline --no-update-lock-file >/dev/null
echo "flake metadata reads the committed lock"
