"""What a user sees when stdout is not a terminal, and the exits that must not say 0."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, fake_install, sb_env

SB = [sys.executable, "-c", "from sb.cli import main; main()"]
HIDE_MATPLOTLIB = [sys.executable, "-c",
                   "import sys; sys.modules['matplotlib'] = None\nfrom sb.cli import main; main()"]
GOLDEN = Path(__file__).parent / "golden"


def sb(*args, env=None, cwd=None, argv0=SB):
    return subprocess.run([*argv0, *args], capture_output=True, text=True, env=env or sb_env(), cwd=cwd, timeout=600)


def test_piped_list_matches_its_golden_file_and_never_wraps(fixture_env):
    env = {k: v for k, v in fixture_env.items() if k != "COLUMNS"}  # piped: the width is not the terminal's
    done = sb("list", env=env)
    assert done.returncode == 0, done.stderr
    golden = (GOLDEN / "list.txt").read_text()
    assert done.stdout == golden, "sb list | cat changed: regenerate harness/tests/golden/list.txt if intended"


def test_piped_list_of_every_task_keeps_each_slug_whole():
    env = {k: v for k, v in sb_env().items() if k != "COLUMNS"}
    done = sb("list", env=env)
    slugs = [row["slug"] for row in json.loads(sb("list", "--json").stdout)]
    lines = done.stdout.splitlines()[1:-1]
    assert [line.split()[0] for line in lines] == slugs
    assert all(line == line.rstrip() for line in lines)


@pytest.mark.parametrize("args", [["models"], ["validate", "fixture_add"], ["mutants", "fixture_add"]])
def test_piped_tables_keep_one_row_per_line(fixture_env, args):
    env = {**fixture_env}
    env.pop("COLUMNS", None)
    done = sb(*args, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(line == line.rstrip() for line in lines)
    if args[0] != "models":
        rows = [line for line in lines if line.startswith("fixture_add")]
        assert rows and all("fixture_add" == line.split()[0] for line in rows)


def _broken_reference_env(tmp_path, task_copy):
    folder = task_copy()
    (folder / "reference" / "adder.py").write_text("def add(a, b):\n    return a - b\n")
    site = tmp_path / "broken-site"
    site.mkdir()
    fake_install(site, folder, "fixture_add")
    return sb_env(PYTHONPATH=str(site), SB_LOAD_PLUGINS="fixture_add")


def test_a_failing_reference_prints_as_the_failure_it_is(tmp_path, task_copy):
    done = sb("run", "--model", "reference", "--tasks", "fixture_add", env=_broken_reference_env(tmp_path, task_copy),
              cwd=tmp_path)
    assert done.returncode == 1
    assert "BROKEN fixture_add: the task's reference does not pass here" in done.stdout
    assert "100%" not in done.stdout


def test_a_run_that_measured_nothing_exits_non_zero_with_one_line(fixture_env, tmp_path):
    done = sb("run", "--model", "cmd:exit 3", "--tasks", "fixture_add", env=fixture_env, cwd=tmp_path)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("sb: error:")]
    assert errors == ["sb: error: nothing was measured (1 adapter_error): the command exited with status 3"]


def test_html_without_matplotlib_writes_every_page_and_says_what_is_missing(tmp_path):
    out = tmp_path / "site"
    done = sb("report", "--html", str(out), "--leaderboard", str(REPO / "leaderboard"), argv0=HIDE_MATPLOTLIB)
    assert done.returncode == 1
    assert done.stderr.strip().endswith(f"pages were written to {out}")
    assert "pip install 'scratchbench[report]'" in done.stderr and done.stderr.count("\n") == 1
    assert (out / "index.html").is_file() and list((out / "models").glob("*.html"))


def test_one_plugin_manager_per_command(fixture_env, tmp_path, monkeypatch):
    """`sb run` builds exactly one PluginManager, however many parts it looks up."""
    import signal
    import pluggy
    from sb.cli import main
    for key, value in fixture_env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.syspath_prepend(fixture_env["PYTHONPATH"])
    monkeypatch.chdir(tmp_path)
    built = []
    original = pluggy.PluginManager.__init__

    def counting(self, *args, **kwargs):
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(pluggy.PluginManager, "__init__", counting)
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as done:
            main(["run", "--model", "reference", "--tasks", "fixture_add"])
    finally:
        signal.signal(signal.SIGINT, handlers[0])
        signal.signal(signal.SIGTERM, handlers[1])
    assert done.value.code == 0
    assert len(built) == 1


PLUGIN_OBJECTS = ("adapter", "session", "sandbox", "reporter", "executor", "plugin", "impl.plugin")


def test_no_attribute_probing_of_plugin_objects():
    """Plugins declare what the harness uses on their base classes; nothing is probed."""
    import re
    source = Path(__file__).resolve().parent.parent / "src" / "sb"
    probe = re.compile(r"\b(getattr|hasattr)\(\s*(self\.)?(sweep\.)?(" + "|".join(
        re.escape(name) for name in PLUGIN_OBJECTS) + r")\b")
    found = [f"{path.relative_to(source)}:{n}: {line.strip()}" for path in source.rglob("*.py")
             for n, line in enumerate(path.read_text().splitlines(), 1) if probe.search(line)]
    assert found == []


def test_sb_new_makes_a_package_that_validates_and_is_listed(tmp_path):
    """The scaffold, made into a wheel-less install the way pip -e would: listed, valid, its mutant caught."""
    done = sb("new", "clamp_demo", "--dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    site = tmp_path / "site"
    site.mkdir()
    fake_install(site, tmp_path / "clamp_demo" / "src" / "sb_task_clamp_demo", "clamp_demo")
    env = sb_env(PYTHONPATH=str(site), SB_LOAD_PLUGINS="clamp_demo")
    listed = json.loads(sb("list", "--json", env=env).stdout)
    assert [r["slug"] for r in listed] == ["clamp_demo"]
    validated = sb("validate", "clamp_demo", "--json", "--isolation", "none", env=env)
    assert json.loads(validated.stdout)[0]["verdict"] == "ok", validated.stdout
    shown = sb("validate", "clamp_demo", "--isolation", "none", env=env)
    assert shown.returncode == 0
    assert "clamp_demo: meta.yaml's probes (and category, suite) are still sb new's" in shown.stderr
    mutants = sb("mutants", "clamp_demo", "--json", "--isolation", "none", env=env)
    assert [m["actual"] for m in json.loads(mutants.stdout)] == ["caught", "caught"]
    again = sb("new", "clamp_demo", "--dir", str(tmp_path))
    assert again.returncode == 2 and "already exists" in again.stderr
    assert sb("new", "Bad-Slug", "--dir", str(tmp_path)).returncode == 2
