"""Run the solver's test file against the good money.py and every buggy version.

All versions run in ONE fresh Python process (this file run as a script), one pytest.main()
call per version, each in its own directory, with `money` and `test_money` dropped from
sys.modules in between: that pays pytest's start-up once instead of once per version."""
import ast
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).parent
SOLVER_TESTS = "test_money.py"
BUGGY_VERSIONS = sorted(p.name for p in (HERE / "_buggy").iterdir() if p.is_dir())


def solver_test_source() -> str:
    path = pathlib.Path.cwd() / SOLVER_TESTS
    return path.read_text(encoding="utf-8") if path.exists() else ""


def run_all_versions() -> dict:
    """Return {version: {"code": pytest exit code, "passed": n, "output": text}} for "good"
    and every buggy version."""
    with tempfile.TemporaryDirectory(prefix="sb_test_task_") as tmp:
        tmp_path = pathlib.Path(tmp)
        for version in ["good"] + BUGGY_VERSIONS:
            folder = tmp_path / version
            folder.mkdir()
            source = HERE / ("_good" if version == "good" else f"_buggy/{version}") / "money.py"
            shutil.copy(source, folder / "money.py")
            (folder / SOLVER_TESTS).write_text(solver_test_source(), encoding="utf-8")
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTHONPATH", None)
        try:
            proc = subprocess.run([sys.executable, str(HERE / "_runner.py"), tmp],
                                  cwd=tmp, env=env, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return {}
        results_file = tmp_path / "results.json"
        if not results_file.exists():
            return {"good": {"code": -1, "passed": 0, "output": proc.stdout + proc.stderr}}
        return json.loads(results_file.read_text(encoding="utf-8"))


class _Counter:
    """pytest plugin: counts test items whose call phase passed."""

    def __init__(self):
        self.passed = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.passed += 1


def _run_one(folder: pathlib.Path) -> dict:
    import contextlib
    import io

    import pytest

    for name in ("money", "test_money"):
        sys.modules.pop(name, None)
    counter = _Counter()
    buffer = io.StringIO()
    os.chdir(folder)
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        code = pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", str(folder),
                            "-c", os.devnull, str(folder / SOLVER_TESTS)], plugins=[counter])
    return {"code": int(code), "passed": counter.passed, "output": buffer.getvalue()[-3000:]}


def _main(tmp: str) -> None:
    root = pathlib.Path(tmp)
    results = {}
    for version in ["good"] + BUGGY_VERSIONS:
        results[version] = _run_one(root / version)
    (root / "results.json").write_text(json.dumps(results), encoding="utf-8")


def _load_money(version: str):
    import importlib.util

    folder = "_good" if version == "good" else f"_buggy/{version}"
    spec = importlib.util.spec_from_file_location(f"_money_{version}", HERE / folder / "money.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _behaviour(module) -> list:
    """Brute-force battery over both functions: results, or the exception type raised."""
    seen = []
    calls = [(module.split_amount, (t, p)) for t in range(-3, 40) for p in range(-1, 7)]
    calls += [(module.format_cents, (c,)) for c in list(range(-1500, 1500, 7)) + [10**6, -10**7 - 1]]
    for function, args in calls:
        try:
            seen.append(function(*args))
        except Exception as exc:  # noqa: BLE001 - the exception type is part of the behaviour
            seen.append(type(exc).__name__)
    return seen


def version_really_differs(version: str) -> bool:
    """Guard for the grader itself: a buggy version must behave differently from the good
    one somewhere, or no test file could be asked to catch it."""
    return _behaviour(_load_money(version)) != _behaviour(_load_money("good"))


def functions_without_assertions(source: str) -> list[str]:
    """Names of test functions (module level or inside Test* classes) that check nothing:
    no assert statement, no pytest.raises / warns / fail, and no call to a module-level
    helper function of the file that itself asserts."""
    tree = ast.parse(source)
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.startswith("Test")):
        functions += [n for n in cls.body if isinstance(n, ast.FunctionDef)]
    helpers = {f.name for f in tree.body
               if isinstance(f, ast.FunctionDef) and not f.name.startswith("test") and _asserts(f, set())}
    return [f.name for f in functions if f.name.startswith("test") and not _asserts(f, helpers)]


def _asserts(function: ast.FunctionDef, helpers: set) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in {"raises", "warns", "fail"}:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            return True
    return False


if __name__ == "__main__":
    _main(sys.argv[1])
