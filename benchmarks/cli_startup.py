"""How fast `sb list` starts with every task installed, and that it imports no torch.

    python benchmarks/cli_startup.py [ROUNDS]

Prints the median wall time of `sb list --json` beside a bare `python -c pass` measured
in the same run, so the figure is the harness's own cost.
"""

import statistics
import subprocess
import sys
import time

LIST = [sys.executable, "-c", "import sys; from sb.cli import main; sys.argv=['sb','list','--json']; main()"]
BARE = [sys.executable, "-c", "pass"]
PROBE = ("import sys\nfrom sb.cli import main\ntry:\n    main(['list', '--json'])\nexcept SystemExit:\n    pass\n"
         "print('torch imported' if 'torch' in sys.modules else 'torch not imported', file=sys.stderr)")


def median_time(argv, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    bare, listing = median_time(BARE, rounds), median_time(LIST, rounds)
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    print(f"python -c pass : {bare:.3f}s (median of {rounds})")
    print(f"sb list --json : {listing:.3f}s (median of {rounds}); harness cost {listing - bare:.3f}s")
    print(probe.stderr.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
