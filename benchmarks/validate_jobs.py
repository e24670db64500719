"""The speed-up of `sb validate --jobs 2` over `--jobs 1`, measured side by side in one run.

    python benchmarks/validate_jobs.py [SLUG ...]

Runs both over the same tasks (default: the five v1 tasks), checks the verdicts are
identical, and prints both wall times and their ratio.
"""

import json
import subprocess
import sys
import time

V1 = ["softmax_stability", "bpe_merge_order", "grad_accumulation", "kv_cache_equivalence", "online_softmax_attention"]


def validate(slugs, jobs: int):
    argv = [sys.executable, "-c", "from sb.cli import main; main()", "validate", *slugs, "--jobs", str(jobs), "--json"]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    return elapsed, [(row["slug"], row["verdict"]) for row in json.loads(done.stdout)]


def main() -> None:
    slugs = sys.argv[1:] or V1
    serial, serial_verdicts = validate(slugs, 1)
    parallel, parallel_verdicts = validate(slugs, 2)
    assert serial_verdicts == parallel_verdicts, (serial_verdicts, parallel_verdicts)
    print(f"{len(slugs)} tasks, identical verdicts: {', '.join(v for _, v in serial_verdicts)}")
    print(f"  --jobs 1: {serial:.1f}s")
    print(f"  --jobs 2: {parallel:.1f}s")
    print(f"  speed-up: {serial / parallel:.2f}x")


if __name__ == "__main__":
    main()
