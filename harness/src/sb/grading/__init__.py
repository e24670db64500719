"""Grading: one solution's files in, one Outcome out (docs/architecture.md).

- pipeline.py: `grade` and `precheck`: lay out a grading, run the judge and the worker
  together, each in its own sandbox, and decide.
- layout.py: which files each process sees, and the hash of the code that decides.
- verdict.py: the judge's record folded into an Outcome; a pure function.
- judge_process.py: the judge, a standalone program: runs the hidden tests under pytest
  and writes the record. judge.py (`sb.judge`, beside this package) is what those tests
  call; it is laid out beside the judge, never imported by the grader for a verdict.
- worker_process.py: the worker, a standalone program: imports the solution and serves
  the judge's requests.
- wire/: the data-only protocol between the two (framing, values, proxies, the peer).
- warm.py: warm judges, forked once per grading so no grading pays pytest's imports again.
- expected.py: the reference's test ids, cached per task, toolchain and grader.
"""

from sb.grading.layout import GRADER_FILES, JUDGE_HELPERS, grader_hash, solution_modules, write_files
from sb.grading.pipeline import PINNED_ENV, decide, execute, grade, missing_deps, precheck
from sb.grading.verdict import ALLOWED_EXCEPTIONS_FOR_STARTER, Record, starter_exceptions, verdict

__all__ = ["ALLOWED_EXCEPTIONS_FOR_STARTER", "GRADER_FILES", "JUDGE_HELPERS", "PINNED_ENV", "Record", "decide",
           "execute", "grade", "grader_hash", "missing_deps", "precheck", "solution_modules", "starter_exceptions",
           "verdict", "write_files"]
