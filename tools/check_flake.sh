#!/usr/bin/env bash
# Offline checks of flake.nix (CI cannot download nixpkgs): it parses, it evaluates against
# the stub nixpkgs in nix/stub-nixpkgs, its dev shell installs through tools/install.sh (the
# lock, hashes required), and its committed lock file is readable as is.
set -euo pipefail
cd "$(dirname "$0")/.."
export NIX_CONFIG="experimental-features = nix-command flakes"
command -v nix-instantiate >/dev/null || { echo "check_flake: nix is not installed (apt-get install nix-bin)"; exit 1; }
nix-instantiate --parse flake.nix >/dev/null
echo "flake.nix parses"
nix flake check --offline --no-build --no-write-lock-file \
  --override-input nixpkgs "path:$PWD/nix/stub-nixpkgs"
echo "flake check passes against the stub nixpkgs"
hook=$(nix eval --offline --raw --no-write-lock-file --override-input nixpkgs "path:$PWD/nix/stub-nixpkgs" \
  .#devShells.x86_64-linux.default.shellHook 2>/dev/null)
case $hook in
  *"bash tools/install.sh"*) ;;
  *) echo "check_flake: the dev shell does not install through tools/install.sh (from the lock)"; exit 1 ;;
esac
grep -q -- 'pip sync .*--require-hashes' tools/install.sh \
  || { echo "check_flake: tools/install.sh no longer syncs from the lock with --require-hashes"; exit 1; }
echo "the dev shell installs from the lock (tools/install.sh: uv pip sync --require-hashes locks/laptop.txt)"
nix flake metadata --offline --no-update-lock-file >/dev/null
echo "flake metadata reads the committed lock"
