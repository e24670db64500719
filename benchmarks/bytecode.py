"""What installed .pyc files save each grading process, measured side by side in one run.

    python benchmarks/bytecode.py [ROUNDS]

Gradings run with PYTHONDONTWRITEBYTECODE=1 in a read-only view of the environment, so a
module whose .pyc the installer did not write is compiled from source in every judge and
every worker, every time. This imports what a torch task's judge imports (torch, numpy,
pytest), alternately as installed (tools/install.sh compiles bytecode) and with the .pyc
files hidden (PYTHONPYCACHEPREFIX names an empty folder, so Python finds none and writes
none), and prints the median CPU time of each and their ratio.
"""

import os
import statistics
import subprocess
import sys
import tempfile

IMPORTS = "import torch, numpy, pytest"


def cpu_seconds(env: dict) -> float:
    """User plus system CPU of one fresh interpreter importing IMPORTS."""
    before = os.times()
    subprocess.run([sys.executable, "-c", IMPORTS], env=env, check=True)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    base = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory() as empty:
        hidden = {**base, "PYTHONPYCACHEPREFIX": empty}
        cpu_seconds(base)  # warm the page cache for both
        installed, source = [], []
        for _ in range(rounds):  # alternated, so a change in machine load falls on both
            installed.append(cpu_seconds(base))
            source.append(cpu_seconds(hidden))
    with_pyc, without = statistics.median(installed), statistics.median(source)
    print(f"{IMPORTS}: median CPU over {rounds} rounds each")
    print(f"  with the installed .pyc:  {with_pyc:.2f}s")
    print(f"  compiled from source:     {without:.2f}s")
    print(f"  ratio:                    {without / with_pyc:.2f}x")


if __name__ == "__main__":
    main()
