#!/usr/bin/env bash
# Validate and mutation-test the accelerated tier on whatever device this machine has.
#
#   bash tools/verify_accelerated.sh
#
# CPU only: fused_rmsnorm_kernel is still checked (Triton interpreter + an ahead-of-time
# sm_90 compile, see tasks/fused_rmsnorm_kernel/CPU_PATH.md); the Metal tasks are
# UNCHECKED. NVIDIA GPU: fused_rmsnorm_kernel also launches for real. Mac with Apple
# silicon: this same command is what remains to be run to check
# metal_cross_entropy_kernel and metal_softmax_backward_kernel, whose set stays
# `unvalidated` until their reference has passed there.
#
# Prints the hardware and toolchain, the validate and mutants tables, then ONE summary
# line. Exit status 1 when a task is broken or a mutant gets another verdict than
# expected; UNCHECKED (no device) is not a failure, and is counted in the summary.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== hardware and toolchain"
echo "os: $(uname -srm)"
if [ -r /proc/cpuinfo ]; then
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc)"
fi
if [ "$(uname -s)" = Darwin ]; then
    echo "macos: $(sw_vers -productVersion 2>/dev/null)  cpu: $(sysctl -n machdep.cpu.brand_string 2>/dev/null)"
fi
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/nvidia: /'
fi
python - <<'EOF'
import platform
from importlib import metadata
print(f"python: {platform.python_version()}")
for name in ("scratchbench", "torch", "triton", "numpy", "pytest"):
    try:
        print(f"{name}: {metadata.version(name)}")
    except metadata.PackageNotFoundError:
        print(f"{name}: not installed")
try:
    import torch
    cuda = torch.cuda.is_available()
    print(f"cuda available: {cuda}" + (f" ({torch.cuda.get_device_name(0)}, torch cuda {torch.version.cuda})" if cuda else ""))
    print(f"mps available: {torch.backends.mps.is_available()}")
except Exception as exc:  # a broken torch is itself worth printing
    print(f"torch import failed: {exc!r}")
EOF
[ -n "${SB_ASSUME_NO_ACCELERATOR:-}" ] && echo "SB_ASSUME_NO_ACCELERATOR=$SB_ASSUME_NO_ACCELERATOR (devices treated as absent)"

echo "== sb validate --tier accelerated"
sb validate --tier accelerated --json >"$out/validate.json"
validate_rc=$?
echo "== sb mutants --tier accelerated"
sb mutants --tier accelerated --json >"$out/mutants.json"
mutants_rc=$?

python - "$out/validate.json" "$out/mutants.json" "$validate_rc" "$mutants_rc" <<'EOF'
import json, sys
from collections import Counter

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

validate, mutants = load(sys.argv[1]), load(sys.argv[2])
validate_rc, mutants_rc = int(sys.argv[3]), int(sys.argv[4])
if validate is None or mutants is None:
    print(f"verify_accelerated: FAIL (sb gave no readable JSON; validate exit {validate_rc}, mutants exit {mutants_rc})")
    sys.exit(1)
for row in validate:
    reason = f"  {row['reason']}" if row.get("reason") else ""
    print(f"  validate {row['slug']:<32} {row['verdict'].upper()}{reason}")
for row in mutants:
    mark = "-- " if row["actual"] == "unchecked" else ("ok " if row["ok"] else "BAD")
    print(f"  mutants  {mark} {row['slug']:<32} {row['mutant']:<30} expected {row['expected']:<8} got {row['actual']}")

verdicts = Counter(row["verdict"] for row in validate)
unchecked_mutants = sum(row["actual"] == "unchecked" for row in mutants)
checked = [row for row in mutants if row["actual"] != "unchecked"]
wrong = sum(not row["ok"] for row in checked)
failed = verdicts.get("broken", 0) > 0 or wrong > 0 or validate_rc != 0 or mutants_rc != 0
print(
    f"verify_accelerated: {'FAIL' if failed else 'PASS'}: "
    f"validate {verdicts.get('ok', 0)} ok, {verdicts.get('broken', 0)} broken, "
    f"{verdicts.get('unchecked', 0)} unchecked, {verdicts.get('skipped', 0)} skipped; "
    f"mutants {len(checked) - wrong}/{len(checked)} as expected, {unchecked_mutants} unchecked"
    + ("; unchecked ones need their device: run this script there" if verdicts.get("unchecked") else "")
)
sys.exit(1 if failed else 0)
EOF
