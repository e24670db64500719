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

Each public name is imported on first use (PEP 562): `sb grade`'s head start imports
warm.py and early.py before anything else, and must not pay for the pipeline's imports.
"""

import importlib as _importlib

_TYPE_CHECKING = False  # True for a type checker only; importing typing would cost the head start (sb/entry.py)
if _TYPE_CHECKING:
    from sb.grading.layout import GRADER_FILES, JUDGE_HELPERS, grader_hash, solution_modules, write_files
    from sb.grading.pipeline import PINNED_ENV, decide, execute, grade, missing_deps, precheck
    from sb.grading.verdict import ALLOWED_EXCEPTIONS_FOR_STARTER, Record, starter_exceptions, verdict

_HOME = {
    "sb.grading.layout": ("GRADER_FILES", "JUDGE_HELPERS", "grader_hash", "solution_modules", "write_files"),
    "sb.grading.pipeline": ("PINNED_ENV", "decide", "execute", "grade", "missing_deps", "precheck"),
    "sb.grading.verdict": ("ALLOWED_EXCEPTIONS_FOR_STARTER", "Record", "starter_exceptions", "verdict"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}

__all__ = ["ALLOWED_EXCEPTIONS_FOR_STARTER", "GRADER_FILES", "JUDGE_HELPERS", "PINNED_ENV", "Record", "decide",
           "execute", "grade", "grader_hash", "missing_deps", "precheck", "solution_modules", "starter_exceptions",
           "verdict", "write_files"]


_SUBMODULES = frozenset({"early", "expected", "layout", "pipeline", "verdict", "warm", "wire"})


def __getattr__(name: str):
    if name in _SUBMODULES:  # `sb.grading.pipeline` read before anything imported it
        return _importlib.import_module(f"{__name__}.{name}")
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'sb.grading' has no attribute {name!r}")
    return getattr(_importlib.import_module(module), name)
