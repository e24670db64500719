"""What stopping at the first failing test saves `sb mutants`, measured side by side in one run.

    python benchmarks/mutants_first_failure.py [SLUG ...]

Runs `sb mutants` twice over the same tasks (default: two torch tasks and two numpy or
pure-Python ones), once as CI runs it (each grading stops at its first failing test) and
once with `--every-test`, checks the verdicts are identical, and prints both wall times
and their ratio. The reference's test ids come from the cache in both runs (a first run
warms it), so only mutant gradings are timed.
"""

import json
import subprocess
import sys
import time

DEFAULT = ["grad_accumulation", "attention_causal_mask", "quantization_error_bounds", "format"]


def mutants(slugs, *flags):
    argv = [sys.executable, "-c", "from sb.cli import main; main()", "mutants", *slugs, "--jobs", "2", "--json", *flags]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    rows = json.loads(done.stdout)
    return elapsed, sorted((row["slug"], row["mutant"], row["actual"]) for row in rows)


def main() -> None:
    slugs = sys.argv[1:] or DEFAULT
    for slug in slugs:  # warm the reference cache, so neither timed run grades a reference
        subprocess.run([sys.executable, "-c", "from sb.cli import main; main()", "validate", slug],
                       capture_output=True)
    every, every_verdicts = mutants(slugs, "--every-test")
    first, first_verdicts = mutants(slugs)
    assert every_verdicts == first_verdicts, "the two modes disagree on a verdict"
    print(f"{len(slugs)} tasks, {len(first_verdicts)} mutants, identical verdicts")
    print(f"  --every-test:        {every:.1f}s")
    print(f"  first failure (CI):  {first:.1f}s")
    print(f"  speed-up:            {every / first:.2f}x")


if __name__ == "__main__":
    main()
