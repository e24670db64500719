"""The bubblewrap sandbox's added cost per grading, measured side by side in one run.

    python benchmarks/sandbox_overhead.py [SLUG] [ROUNDS]

Grades the task's reference ROUNDS times under each isolation, interleaved so machine
load hits both alike, and prints the medians and the difference.
"""

import statistics
import sys
import time

from sb.catalog import load_tasks
from sb.grading import grade
from sb.sandbox.bwrap import BwrapSandbox
from sb.sandbox.plain import PlainSandbox


def main() -> None:
    slug = sys.argv[1] if len(sys.argv) > 1 else "bpe_merge_order"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    task = load_tasks()[slug]
    timings = {"none": [], "bwrap": []}
    for _ in range(rounds):
        for sandbox in (PlainSandbox(), BwrapSandbox()):
            start = time.perf_counter()
            outcome = grade(task, task.reference_files, sandbox)
            timings[sandbox.name].append(time.perf_counter() - start)
            assert outcome.passed, outcome.summary()
    plain, jailed = statistics.median(timings["none"]), statistics.median(timings["bwrap"])
    print(f"task {slug}, {rounds} gradings each (median wall seconds)")
    print(f"  isolation none : {plain:.3f}s")
    print(f"  isolation bwrap: {jailed:.3f}s")
    print(f"  added by bwrap : {jailed - plain:+.3f}s per grading ({jailed / plain:.2f}x)")


if __name__ == "__main__":
    main()
