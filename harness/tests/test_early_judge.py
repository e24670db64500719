"""`sb grade`'s head start (sb/grading/early.py, sb/entry.py): the judge its grading takes is
started from the task's own entry point before the command loads its plugins, or from the
one the last `sb grade` of the task remembered before anything else is imported; the
verdict is unchanged, and a judge the session's choices do not match is never taken."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import FIXTURE_TASK_DIR, fake_install
from sb import entry
from sb.grading import early, warm
from sb.grading.early import same_sandbox, start_judge_early, start_remembered_judge
from sb.outcome import Status

GOOD = {"adder.py": b"def add(a, b):\n    return a + b\n"}
WRONG = {"adder.py": b"def add(a, b):\n    return a - b\n"}


def _install(tmp_path, monkeypatch, package_dir) -> None:
    """`package_dir` installed as the task fixture_add, and only it loaded."""
    site = tmp_path / "site"
    site.mkdir()
    fake_install(site, package_dir, "fixture_add")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "sb_task_fixture_add", raising=False)  # read from this install
    monkeypatch.setenv("SB_LOAD_PLUGINS", "fixture_add")


@pytest.fixture
def installed(tmp_path, monkeypatch, bwrap_sandbox):
    _install(tmp_path, monkeypatch, FIXTURE_TASK_DIR)


@pytest.fixture
def started(monkeypatch):
    """Every warm judge started from now on, in order."""
    judges: list = []

    class Recorded(warm.WarmJudge):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            judges.append(self)

    monkeypatch.setattr(warm, "WarmJudge", Recorded)
    return judges


def _session_choices(slug: str):
    from sb.session import default_session
    session = default_session()
    return session.named([slug])[0][slug], session.sandbox(None, trusted=False)


def test_the_grading_takes_the_judge_started_before_the_plugins_loaded(installed, started):
    from sb.api import grade_files
    early = start_judge_early("fixture_add", None)
    assert early is not None and len(started) == 1  # started from the entry point alone
    task, chosen = _session_choices("fixture_add")
    sandbox = same_sandbox(early, chosen)
    assert sandbox is early
    passed, failed = grade_files(task, GOOD, sandbox), grade_files(task, WRONG, sandbox)
    assert passed.status == Status.PASSED and failed.status == Status.FAILED
    assert len(started) == 1 and started[0].served >= 2  # no other judge: the early one served both


def test_no_head_start_where_the_grading_would_not_take_it(installed, started, monkeypatch):
    assert start_judge_early("fixture_add", "none") is None       # another isolation
    assert start_judge_early("no_such_task", None) is None        # no entry point of that name
    monkeypatch.setenv("SB_LOAD_PLUGINS", "")
    assert start_judge_early("fixture_add", None) is None         # an entry point the session would not load
    monkeypatch.setenv("SB_LOAD_PLUGINS", "fixture_add")
    monkeypatch.setenv("SB_WARM_JUDGES", "0")
    assert start_judge_early("fixture_add", None) is None         # gradings get cold judges
    assert started == []


def test_no_head_start_for_a_task_that_cannot_be_graded_here(tmp_path, monkeypatch, task_copy, started,
                                                            bwrap_sandbox):
    _install(tmp_path, monkeypatch, task_copy(deps=["sb_no_such_dependency"]))
    assert start_judge_early("fixture_add", None) is None and started == []  # missing_deps: no judge at all


def test_a_head_start_the_session_does_not_match_is_never_taken(installed, started, task_copy, plain_sandbox):
    from sb.api import grade_files
    from sb.task import load_task_dir
    early = start_judge_early("fixture_add", None)
    assert same_sandbox(early, plain_sandbox) is plain_sandbox  # another kind of sandbox: its own judges
    longer = load_task_dir(task_copy(time_limit_s=77), package="sb_task_fixture_add")
    outcome = grade_files(longer, WRONG, same_sandbox(early, _session_choices("fixture_add")[1]))
    assert outcome.status == Status.FAILED
    assert started[0].served == 0 and len(started) == 2  # another limit: another judge's key


def test_sb_grade_starts_its_judge_first(installed, started, tmp_path):
    from sb.cli import main
    folder = tmp_path / "answer"
    folder.mkdir()
    (folder / "adder.py").write_bytes(GOOD["adder.py"])
    with pytest.raises(SystemExit) as ended:
        main(["grade", "fixture_add", str(folder)])
    assert ended.value.code == 0
    assert len(started) == 1 and started[0].served >= 1


def _answer(tmp_path, files) -> str:
    folder = tmp_path / "answer"
    folder.mkdir(exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return str(folder)


def _sb_grade(argv: list) -> int:
    from sb.cli import main
    with pytest.raises(SystemExit) as ended:
        main(argv)
    return ended.value.code


@pytest.fixture
def launched(monkeypatch, tmp_path):
    """The console script's head starts of this test only, and its own memory of judges."""
    monkeypatch.setenv("SB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(early, "_launched", {})
    return early._launched


def test_the_next_sb_grade_takes_the_judge_the_last_one_remembered(installed, started, launched, tmp_path):
    answer = _answer(tmp_path, GOOD)
    assert _sb_grade(["grade", "fixture_add", answer]) == 0  # remembers its judge
    started.clear()
    start_remembered_judge("fixture_add")  # what sb/entry.py does before importing the CLI
    assert len(started) == 1 and "fixture_add" in launched
    assert _sb_grade(["grade", "fixture_add", answer]) == 0
    assert len(started) == 1 and started[0].served >= 1  # the remembered judge graded it; no other started


def test_a_remembered_judge_the_session_does_not_match_is_never_taken_and_is_rewritten(
        installed, started, launched, tmp_path):
    import json
    answer = _answer(tmp_path, WRONG)
    assert _sb_grade(["grade", "fixture_add", answer]) == 0
    path = early._memory_path("fixture_add")
    right = json.loads(path.read_text())
    for field, value in (("env", {**right["template"]["env"], "PYTHONHASHSEED": "1"}),
                         ("readable", right["template"]["readable"][1:]), ("memory_mb", 1)):
        wrong = {**right, "template": {**right["template"], field: value}}
        path.write_text(json.dumps(wrong))
        started.clear()
        launched.clear()
        start_remembered_judge("fixture_add")
        assert len(started) == 1
        assert _sb_grade(["grade", "fixture_add", answer]) == 0
        assert started[0].served == 0 and len(started) == 2, field  # the session's own judge graded it
        assert json.loads(path.read_text()) == right  # remembered again as the session worked it out


def test_no_remembered_head_start_without_a_usable_memory(installed, started, launched, monkeypatch):
    start_remembered_judge("fixture_add")  # nothing remembered yet
    early._memory_path("fixture_add").parent.mkdir(parents=True, exist_ok=True)
    early._memory_path("fixture_add").write_text("{not json")
    start_remembered_judge("fixture_add")
    start_remembered_judge("../fixture_add")  # never a path of the caller's choosing
    assert started == [] and launched == {}


def test_the_console_script_guesses_only_for_one_task_in_the_default_sandbox():
    assert entry.graded_slug(["grade", "softmax", "out"]) == "softmax"
    assert entry.graded_slug(["grade", "softmax", "out", "--json", "--isolation", "bwrap"]) == "softmax"
    assert entry.graded_slug(["grade", "softmax", "out", "--isolation=bwrap"]) == "softmax"
    for args in (["grade", "softmax", "out", "--isolation", "none"], ["grade", "softmax", "out", "--help"],
                 ["grade", "--json", "softmax", "out"], ["grade", "softmax"], ["run", "softmax", "out"], []):
        assert entry.graded_slug(args) is None, args


def test_where_bwrap_cannot_run_the_remembered_start_fails_unused_and_the_command_says_why(tmp_path):
    import os
    import subprocess

    from conftest import sb_env
    site = tmp_path / "site"
    site.mkdir()
    fake_install(site, FIXTURE_TASK_DIR, "fixture_add")
    env = sb_env(PYTHONPATH=str(site), SB_LOAD_PLUGINS="fixture_add", SB_CACHE_DIR=str(tmp_path / "cache"))
    console_script = [sys.executable, "-c", "from sb.entry import main; main()", "grade", "fixture_add",
                      _answer(tmp_path, GOOD)]
    first = subprocess.run(console_script, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0 and (tmp_path / "cache" / "judges" / "fixture_add.json").is_file(), first.stderr
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    env["PATH"] = f"{fake}{os.pathsep}{env['PATH']}"  # installed, but refused its namespaces (a container's policy)
    second = subprocess.run(console_script, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 2
    assert second.stderr.splitlines() == [
        "sb: error: isolation 'bwrap' cannot run here: bwrap cannot create namespaces here: "
        "bwrap: No permissions to create new namespace (pass --isolation none to grade without isolation, "
        "at your own risk)"], second.stderr


HEAVY_FOR_A_HEAD_START = ("typing", "pluggy", "click", "hashlib", "importlib.resources", "importlib.metadata",
                          "tarfile", "platform", "sb.cli", "sb.plugins", "sb.grading.pipeline")


def test_the_head_start_imports_nothing_the_cli_would_import_first():
    """What the console script runs before the CLI (the remembered judge's start, up to its
    sandbox's argv and program) imports none of the CLI's heavy modules: each would make the
    judge start later. Run without site, so nothing but these imports counts."""
    import subprocess
    from pathlib import Path

    import sb
    source = str(Path(sb.__file__).resolve().parent.parent)
    code = ("import sys\n"
            "import sb.entry, sb.grading.early, sb.grading.warm\n"
            "from sb.cache import cache_dir\n"
            "from sb.grading.layout import judge_program\n"
            "from sb.sandbox.bwrap import BwrapSandbox, _no_privileges\n"
            "from sb.sandbox.process import limits_preexec\n"
            "from sb.sandbox.base import Job\n"
            "cache_dir(), judge_program(), _no_privileges(), limits_preexec(Job([], '/', {}, 1.0))\n"
            f"print(sorted(m for m in {HEAVY_FOR_A_HEAD_START!r} if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-S", "-c", code], env={"PYTHONPATH": source, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


FAKE_BWRAP_USAGE = ("usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]\n"
                    "    --die-with-parent            Kills with SIGKILL child process\n"
                    "    --disable-userns             Disable further use of user namespaces\n")


@pytest.fixture
def fake_bwrap(tmp_path, monkeypatch):
    """A `bwrap` first on PATH that answers --help with FAKE_BWRAP_USAGE and counts how often
    it is asked; the cache folder is this test's own."""
    folder = tmp_path / "bin"
    folder.mkdir()
    asked = tmp_path / "asked"
    script = folder / "bwrap"
    script.write_text(f"#!/bin/sh\necho asked >> {asked}\nprintf '%s' '{FAKE_BWRAP_USAGE}'\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    monkeypatch.setenv("SB_CACHE_DIR", str(tmp_path / "cache"))
    from sb.sandbox import bwrap
    bwrap._no_privileges.cache_clear()
    yield script, lambda: len(asked.read_text().splitlines()) if asked.exists() else 0
    bwrap._no_privileges.cache_clear()  # the real bwrap's flags for the tests after this one


def test_bwrap_is_asked_for_its_options_once_per_binary(fake_bwrap):
    from sb.sandbox import bwrap
    script, times_asked = fake_bwrap
    assert bwrap._no_privileges() == ("--unshare-user", "--disable-userns", "--cap-drop", "ALL")
    assert times_asked() == 1
    bwrap._no_privileges.cache_clear()  # a new command
    assert bwrap._no_privileges() == ("--unshare-user", "--disable-userns", "--cap-drop", "ALL")
    assert times_asked() == 1  # the yes, read from the cache folder
    script.write_text(script.read_text().replace("--disable-userns", "--something-else"))  # another bwrap
    for asked in (2, 3):
        bwrap._no_privileges.cache_clear()
        assert bwrap._no_privileges() == ("--cap-drop", "ALL")
        assert times_asked() == asked  # a no is never kept: asked each time


def test_a_kept_answer_can_add_the_option_but_never_take_it_away(fake_bwrap, tmp_path, monkeypatch):
    from sb.sandbox import bwrap
    script, times_asked = fake_bwrap
    bwrap._no_privileges()
    kept = bwrap._kept_answer(str(script))
    assert kept is not None and kept.read_bytes() == bwrap.USERNS_YES
    kept.unlink()
    os.mkfifo(kept)  # a reader that waited on it would hang the command
    bwrap._no_privileges.cache_clear()
    assert "--disable-userns" in bwrap._no_privileges()
    for planted in (b"", b"no\n", bwrap.USERNS_YES + b"and more"):
        kept.unlink()
        kept.write_bytes(planted)
        bwrap._no_privileges.cache_clear()
        assert "--disable-userns" in bwrap._no_privileges()  # asked again: the option stays
    assert times_asked() == 5
    kept.unlink()
    kept.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_bytes(bwrap.USERNS_YES)
    bwrap._no_privileges.cache_clear()
    bwrap._no_privileges()
    assert times_asked() == 6  # a link is not followed


def test_an_unusable_cache_folder_costs_the_question_and_nothing_else(fake_bwrap, tmp_path, monkeypatch):
    from sb.sandbox import bwrap
    script, times_asked = fake_bwrap
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("SB_CACHE_DIR", str(tmp_path / "a-file"))  # a folder that cannot be made
    for asked in (1, 2):
        bwrap._no_privileges.cache_clear()
        assert bwrap._no_privileges() == ("--unshare-user", "--disable-userns", "--cap-drop", "ALL")
        assert times_asked() == asked


def _ended(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_a_quick_end_keeps_the_status_and_every_byte_printed():
    done = _ended("import sys\nfrom sb.entry import QuickEnd\nending = QuickEnd.install()\n"
                  "sys.stdout.write('x' * 100000 + 'end')\nsys.stderr.write('said')\n"
                  "class Noisy:\n    def __del__(self):\n        print('torn down')\n"
                  "kept = Noisy()\nending.status = 3\nsys.exit(3)\n")
    assert done.returncode == 3
    assert done.stdout == "x" * 100000 + "end"  # flushed, then no teardown (no finaliser ran)
    assert done.stderr == "said"


def test_a_quick_end_that_cannot_flush_ends_as_the_interpreter_would():
    code = ("import sys\nfrom sb.entry import QuickEnd\nending = QuickEnd.install()\n"
            "sys.stdout.write('lost')\nending.status = 0\n")
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # the write waits for the flush
    with open("/dev/full", "w") as full:  # every write fails: no space left
        done = subprocess.run([sys.executable, "-c", code], stdout=full, stderr=subprocess.PIPE, env=buffered,
                              timeout=60)
    assert done.returncode == 120  # CPython's status when its last flush of stdout fails


def test_a_quick_end_with_standard_streams_closed_from_the_start_keeps_the_status():
    code = "import sys\nfrom sb.entry import QuickEnd\nending = QuickEnd.install()\nending.status = 3\nsys.exit(3)\n"
    done = subprocess.run(["sh", "-c", f'exec >&- 2>&-; exec "$0" -c \'{code}\'', sys.executable], timeout=60)
    assert done.returncode == 3  # nothing to flush is not a failed flush


def test_no_quick_end_after_an_earlier_exit_handler_or_without_a_status():
    earlier = _ended("import atexit, sys\natexit.register(lambda: print('earlier handler ran'))\n"
                     "from sb.entry import QuickEnd\nending = QuickEnd.install()\nending.status = 0\n")
    assert earlier.returncode == 0 and earlier.stdout == "earlier handler ran\n"
    unset = _ended("import atexit\nfrom sb.entry import QuickEnd\nending = QuickEnd.install()\n"
                   "class Noisy:\n    def __del__(self):\n        print('torn down')\n"
                   "kept = Noisy()\nraise RuntimeError('no status')\n")
    assert unset.returncode == 1 and "RuntimeError: no status" in unset.stderr
    assert unset.stdout == "torn down\n"  # the interpreter's own end


def test_the_console_script_ends_quickly_with_the_grade_and_its_status(installed, tmp_path):
    import json

    from conftest import sb_env
    env = sb_env(SB_LOAD_PLUGINS="fixture_add", SB_CACHE_DIR=str(tmp_path / "cache"),
                 PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    for files, passed in ((GOOD, True), (WRONG, False)):
        done = subprocess.run([sys.executable, "-c", "import sys; from sb.entry import main; sys.exit(main())", "grade",
                               "fixture_add", _answer(tmp_path, files), "--json"],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["passed"] is passed  # the whole document, flushed through the pipe
