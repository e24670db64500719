"""`sb grade`'s head start (sb/grading/early.py): the judge its grading takes is started from
the task's own entry point before the command loads its plugins; the verdict is unchanged,
and a judge the session's choices do not match is never taken."""

from __future__ import annotations

import sys

import pytest

from conftest import FIXTURE_TASK_DIR, fake_install
from sb.grading import warm
from sb.grading.early import same_sandbox, start_judge_early
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
