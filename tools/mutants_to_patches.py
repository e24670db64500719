"""Convert hand mutants kept as whole copies (mutants/NAME/ with mutant.yaml and files) into
patches (mutants/NAME.patch, harness/src/sb/mutant_patch.py), checking each round trip.

    python tools/mutants_to_patches.py tasks/SLUG [tasks/OTHER ...]

Each patch, applied to the reference, must give back exactly the files the folder held
(or the reference's own where the copy was identical); only then is the folder removed.
"""

import shutil
import sys
from pathlib import Path

import yaml

from sb import mutant_patch
from sb.task import load_task_dir, read_tree


def convert(task_dir: Path) -> int:
    src = next((task_dir / "src").iterdir()) if (task_dir / "src").is_dir() else task_dir
    task = load_task_dir(src)
    reference = task.reference_files
    done = 0
    for folder in sorted(p for p in (src / "mutants").iterdir() if p.is_dir() and p.name != "__pycache__"):
        spec = yaml.safe_load((folder / "mutant.yaml").read_text(encoding="utf-8")) or {}
        files = {k: v for k, v in read_tree(folder).items() if k != "mutant.yaml"}
        text = mutant_patch.make_patch(spec["expected"], spec["description"], reference, files,
                                       str(spec.get("reason") or ""))
        parsed = mutant_patch.parse(text)
        applied = {**reference, **mutant_patch.apply(reference, parsed.diff)}
        if applied != {**reference, **files} or parsed.description != mutant_patch.one_line(spec["description"]):
            raise SystemExit(f"{folder}: the patch does not give back the mutant's files")
        (folder.parent / f"{folder.name}.patch").write_text(text, encoding="utf-8")
        shutil.rmtree(folder)
        done += 1
    return done


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}: {convert(Path(arg))} mutants converted")
