"""What the console script's head start is worth, measured side by side in one run.

    python benchmarks/grade_entry.py [SLUG] [--rounds N]

`sb grade SLUG` of the task's reference, a fresh process each time, interleaved: through
the `sb` console script (sb/entry.py, which starts the judge the last grading remembered
before importing the CLI) and through `sb.cli.main` directly (the judge started from the
task's entry point once the CLI is imported). One grading first, so a judge is remembered.
Medians and minimums of the wall time.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sb.grading import write_files
from sb.session import default_session


def main() -> None:
    args = sys.argv[1:]
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 11
    slugs = [a for i, a in enumerate(args) if not a.startswith("--") and (i == 0 or args[i - 1] != "--rounds")]
    slug = slugs[0] if slugs else "softmax_stability"
    task = default_session().named([slug])[0][slug]
    sb = str(Path(sys.executable).parent / "sb")
    with tempfile.TemporaryDirectory() as answer:
        write_files(Path(answer), task.reference_files)
        commands = {"console script": [sb, "grade", slug, answer],
                    "sb.cli.main": [sys.executable, "-c", "import sys; from sb.cli import main; sys.exit(main())",
                                    "grade", slug, answer]}
        # as on a user's machine, the first command writes the packages' bytecode and later ones read it
        env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run(commands["console script"], capture_output=True, check=True, env=env)
        times: dict = {name: [] for name in commands}
        for _ in range(rounds):
            for name, argv in commands.items():
                start = time.perf_counter()
                subprocess.run(argv, capture_output=True, check=True, env=env)
                times[name].append(time.perf_counter() - start)
    print(f"sb grade {slug} (reference), {rounds} rounds, interleaved: median / min wall seconds")
    for name, values in times.items():
        print(f"  {name:15} {statistics.median(values):.3f} / {min(values):.3f}")


if __name__ == "__main__":
    main()
