"""Warm judges (sb/grading/warm.py): each grading's judge a fork of one long-lived judge per task
view, with the verdicts, the limits and the clean slate of a cold judge."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

import pytest

from sb.grading import grade
from sb.grading.pipeline import _warm_judge
from sb.outcome import Status
from sb.grading.warm import warm_judges

GOOD = {"adder.py": b"def add(a, b):\n    return a + b\n"}
WRONG = {"adder.py": b"def add(a, b):\n    return a - b\n"}


@pytest.fixture(params=["plain", "bwrap"])
def sandbox(request):
    return request.getfixturevalue(f"{request.param}_sandbox")


def _judge_for(sandbox):
    """The idle warm judge of `sandbox` (each test grades one task in it), or None."""
    for _, judge in warm_judges().idle:
        if judge.sandbox is sandbox:
            return judge
    return None


def _summary(outcome):
    return outcome.status, outcome.counts, sorted(outcome.failed_tests), sorted(outcome.test_ids)


def test_one_warm_judge_serves_a_tasks_gradings_with_the_verdicts_of_a_cold_one(fixture_task, sandbox, monkeypatch):
    warm = [grade(fixture_task, files, sandbox, None if files is GOOD else ["test_add.py::test_add_negative"])
            for files in (GOOD, WRONG, GOOD)]
    judge = _judge_for(sandbox)
    assert judge is not None and judge.served == 3 and not judge.broken  # three forks of one warm judge
    monkeypatch.setenv("SB_WARM_JUDGES", "0")
    cold = [grade(fixture_task, files, sandbox, None if files is GOOD else ["test_add.py::test_add_negative"])
            for files in (GOOD, WRONG, GOOD)]
    assert judge.served == 3  # SB_WARM_JUDGES=0: cold judges, the warm one untouched
    assert [_summary(o) for o in warm] == [_summary(o) for o in cold]
    assert warm[0].status == Status.PASSED and warm[1].status == Status.FAILED


LEAVES_STATE = """
import os, subprocess, sys
import pytest
from adder import add

MARK = "{mark}"


def test_leaves_state_behind():
    assert not hasattr(pytest, "sb_left_here"), "a previous grading's module state reached this one"
    assert "sb_left_module" not in sys.modules and os.environ.get("SB_LEFT") is None
    assert os.getcwd() not in {{p for p in os.environ.get("SB_SEEN_CWDS", "").split(":") if p}}
    previous = "/tmp/" + MARK
    if os.path.exists(previous):  # the pid a previous grading's judge left running
        pid = int(open(previous).read())
        assert not os.path.exists(f"/proc/{{pid}}") or open(f"/proc/{{pid}}/stat").read().split()[2] == "Z"
    pytest.sb_left_here = True
    sys.modules["sb_left_module"] = sys
    os.environ["SB_LEFT"] = "1"
    child = subprocess.Popen(["sleep", "600"])
    with open(previous, "w") as f:
        f.write(str(child.pid))
    assert add(1, 1) == 2
"""


def test_nothing_a_grading_does_in_its_judge_reaches_the_next(task_copy, sandbox):
    """Module state, environment and processes a hidden test leaves in its judge end with
    that grading's fork, as they end with a cold judge's sandbox."""
    from sb.task import load_task_dir
    folder = task_copy()
    mark = f"sb-warm-{uuid.uuid4().hex}"
    (folder / "hidden_tests" / "test_state.py").write_text(LEAVES_STATE.format(mark=mark))
    task = load_task_dir(folder, package="warm_state")
    try:
        first = grade(task, GOOD, sandbox)
        second = grade(task, GOOD, sandbox, first.test_ids)
        third = grade(task, GOOD, sandbox, first.test_ids)
    finally:  # under `none` the judge's /tmp is the host's: its note of a pid is left there
        (Path("/tmp") / mark).unlink(missing_ok=True)
    assert first.status == second.status == third.status == Status.PASSED, (second.detail, third.detail)
    assert _judge_for(sandbox).served == 3


def test_a_judge_past_its_limit_is_killed_and_its_warm_judge_serves_the_next(task_copy, sandbox):
    from sb.task import load_task_dir
    folder = task_copy(time_limit_s=1)
    (folder / "hidden_tests" / "test_hangs.py").write_text(
        "import time\nfrom adder import add\n\ndef test_hangs_in_the_judge():\n"
        "    if add(0, 0) == 7:  # the judge itself waits, not the solution\n        time.sleep(120)\n")
    task = load_task_dir(folder, package="warm_hangs")
    expected = grade(task, GOOD, sandbox).test_ids
    hangs = {"adder.py": b"def add(a, b):\n    return 7 if a == b == 0 else a + b\n"}
    hung = grade(task, hangs, sandbox, expected)
    # the judge's limit is the task's 1 s plus JUDGE_GRACE_S (10 s); well under 120 s
    assert hung.status == Status.TIMEOUT and hung.duration_s < 60, hung.detail
    after = grade(task, GOOD, sandbox, expected)
    assert after.status == Status.PASSED, after.detail
    judge = _judge_for(sandbox)
    assert judge.served == 3 and not judge.broken


def test_a_warm_judge_that_ended_is_replaced_and_the_grading_still_judged(fixture_task, sandbox):
    grade(fixture_task, GOOD, sandbox)
    ended = _judge_for(sandbox)
    ended.control.shutdown(socket.SHUT_WR)  # end of file: that warm judge exits
    ended.thread.join(timeout=30)
    assert not ended.thread.is_alive()
    outcome = grade(fixture_task, WRONG, sandbox, ["test_add.py::test_add_negative"])
    assert outcome.status == Status.FAILED and "test_add.py::test_add_negative" in outcome.failed_tests
    assert ended.broken and ended not in [judge for _, judge in warm_judges().idle]
    again = grade(fixture_task, GOOD, sandbox)
    # the ended judge was known broken before the grading took it: a new one served both
    assert again.status == Status.PASSED and _judge_for(sandbox).served == 2


def test_a_task_with_devices_and_a_sandbox_that_keeps_none_get_cold_judges(fixture_task, plain_sandbox, monkeypatch):
    from sb.grading import pipeline
    from sb.testing import FakeSandbox
    assert _warm_judge(fixture_task, FakeSandbox()) is None
    monkeypatch.setattr(pipeline, "accelerator_devices", lambda meta: ("/dev/null",))
    assert _warm_judge(fixture_task, plain_sandbox) is None


LEAVES_FILES = """
import os
from adder import add

PLACES = {places!r}


def test_leaves_files_behind():
    here = os.getcwd()
    for place in PLACES:
        path = os.path.normpath(os.path.join(here, place))
        assert not os.path.exists(path), "a previous grading's judge left " + path
        with open(path, "w") as f:
            f.write("carried")
    assert add(1, 1) == 2
"""


def test_nothing_a_grading_writes_in_its_judge_is_there_for_the_next(task_copy, sandbox):
    """A red team carried a solution from one grading to the next through a file the
    judge's side wrote (SQL's ATTACH) above its own scratch or in /tmp, which a warm judge's
    gradings had in common: each grading now finds the folders a new judge would."""
    from sb.task import load_task_dir
    folder = task_copy()
    mark = f"sb-warm-{uuid.uuid4().hex}"
    # from the judge's folder (the solution's copy): the grading's slot, and the warm judge's own folder and home
    places = [f"../{mark}", f"../../{mark}", f"../../home/{mark}", f"../../tmp/{mark}"]
    if sandbox.private_scratch:  # a private /tmp (bwrap); under none it is the host's, as for a cold judge
        places += [f"/tmp/{mark}", f"/dev/shm/{mark}", f"/var/tmp/{mark}"]
    (folder / "hidden_tests" / "test_files.py").write_text(LEAVES_FILES.format(places=places))
    task = load_task_dir(folder, package="warm_files")
    outcomes = [grade(task, GOOD, sandbox) for _ in range(3)]
    assert [o.status for o in outcomes] == [Status.PASSED] * 3, [o.detail for o in outcomes]
    assert _judge_for(sandbox).served == 3


def test_a_warm_judge_past_its_retirement_age_takes_no_new_grading(fixture_task, plain_sandbox, monkeypatch):
    """Its own limit (WARM_LIFETIME_S) must never end a grading in flight: past
    WARM_RETIRE_S it is closed and a new one takes the next grading."""
    from sb.grading import warm
    grade(fixture_task, GOOD, plain_sandbox)
    old = _judge_for(plain_sandbox)
    monkeypatch.setattr(warm, "WARM_RETIRE_S", 0)
    assert grade(fixture_task, GOOD, plain_sandbox).status == Status.PASSED
    new = _judge_for(plain_sandbox)
    assert new is not old and new.served == 1 and not old.thread.is_alive()


def test_an_interrupt_while_a_warm_judge_takes_a_grading_closes_its_descriptors(fixture_task, plain_sandbox,
                                                                              monkeypatch):
    """Left open, the record pipe's write end would keep the grader's reader thread waiting forever."""
    import os
    from sb.grading import warm
    grade(fixture_task, GOOD, plain_sandbox)
    handed = []
    real = warm.socket.send_fds

    def then_interrupted(sock, buffers, fds):
        real(sock, buffers, fds)
        handed.extend(fds[:2])  # the record pipe's and the wire's ends
        raise KeyboardInterrupt

    monkeypatch.setattr(warm.socket, "send_fds", then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        grade(fixture_task, GOOD, plain_sandbox)
    for fd in handed:
        with pytest.raises(OSError):
            os.fstat(fd)
    monkeypatch.setattr(warm.socket, "send_fds", real)
    assert grade(fixture_task, GOOD, plain_sandbox).status == Status.PASSED


def test_a_warm_judge_left_idle_is_closed(fixture_task, plain_sandbox, monkeypatch):
    """A long-lived process (a Ray worker between sweeps) keeps no warm judge for nothing."""
    import time
    from sb.grading import warm
    monkeypatch.setattr(warm, "IDLE_CLOSE_S", 0.4)
    grade(fixture_task, GOOD, plain_sandbox)
    judge = _judge_for(plain_sandbox)
    deadline = time.monotonic() + 20
    while judge.thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not judge.thread.is_alive() and _judge_for(plain_sandbox) is None
    assert grade(fixture_task, GOOD, plain_sandbox).status == Status.PASSED


def test_a_warm_judge_too_slow_to_take_a_grading_is_killed_before_a_cold_judge_takes_it(fixture_task, monkeypatch):
    """It holds the grading's descriptors: left alive, it would fork a second judge on the
    same wire and record pipe once its imports end (found by a red team)."""
    from sb.grading import warm
    from sb.sandbox.plain import PlainSandbox
    sandbox = PlainSandbox()  # a new one: its warm judge is still importing pytest when asked
    monkeypatch.setattr(warm, "START_TIMEOUT_S", 0.01)
    outcome = grade(fixture_task, GOOD, sandbox)
    assert outcome.status == Status.PASSED and outcome.counts["passed"] == 5, outcome.detail
    assert _judge_for(sandbox) is None


def _unpacked(packed_file, slot: Path) -> None:
    from sb.grading import judge_process
    judge_process._unpack(os.dup(packed_file.fileno()), str(slot))


def test_a_gradings_files_reach_the_warm_judge_whole(tmp_path):
    from sb.grading.warm import _packed
    source = tmp_path / "slot"
    files = {"judge/judge_process.py": b"print('judge')\n",
             "judge/sb/__pycache__/judge.cpython-311.pyc": bytes(range(256)),
             "hidden_tests/test_x.py": b"def test_x():\n    pass\n",
             "solution_copy/empty.py": b"",
             "solution_copy/pkg/deep/mod.py": b"\n" * 70000}
    for name, data in files.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_bytes(data)
    for empty in ("jscratch/home", "jscratch/tmp"):
        (source / empty).mkdir(parents=True)
    target = tmp_path / "there"
    with _packed(source) as packed:
        _unpacked(packed, target)
    assert {p.relative_to(target).as_posix(): p.read_bytes() for p in target.rglob("*") if p.is_file()} == files
    assert (target / "jscratch/home").is_dir() and (target / "jscratch/tmp").is_dir()
    with _packed(source) as packed:  # `--isolation none`: the same folder, written again with the same bytes
        _unpacked(packed, source)
    assert all((source / name).read_bytes() == data for name, data in files.items())


@pytest.mark.parametrize("name", ["../outside.py", "/etc/outside.py", "a/../../outside.py", "", ".", "a//b", 7])
def test_the_warm_judge_writes_nothing_outside_the_gradings_folder(tmp_path, name):
    import json
    packed = tmp_path / "packed"
    packed.write_bytes(json.dumps([[name, 2]]).encode() + b"\nno")
    with open(packed, "rb") as stream, pytest.raises(ValueError, match="not a path inside"):
        _unpacked(stream, tmp_path / "slot")
    assert not (tmp_path / "outside.py").exists()


def test_packed_files_that_end_early_are_refused_and_no_link_is_followed(tmp_path):
    import json
    packed = tmp_path / "packed"
    packed.write_bytes(json.dumps([["a.py", 10]]).encode() + b"\nshort")
    with open(packed, "rb") as stream, pytest.raises(ValueError, match="end inside"):
        _unpacked(stream, tmp_path / "slot")
    slot = tmp_path / "linked"
    slot.mkdir()
    (slot / "a.py").symlink_to(tmp_path / "target.py")
    packed.write_bytes(json.dumps([["a.py", 2]]).encode() + b"\nok")
    with open(packed, "rb") as stream, pytest.raises(OSError):
        _unpacked(stream, slot)
    assert not (tmp_path / "target.py").exists()


def test_a_warm_judge_its_sandbox_cannot_start_is_left_at_once_for_a_cold_judge(fixture_task, monkeypatch):
    """A sandbox that raises before starting the warm judge (an unusable cache folder made
    bwrap's once): the grading hears of it at once, not after START_TIMEOUT_S."""
    import threading

    from sb.grading import warm
    from sb.sandbox.plain import PlainSandbox

    class CannotStartWarm(PlainSandbox):
        def run(self, job):
            if "--warm" in job.argv:
                raise OSError("cannot start")
            return super().run(job)

    monkeypatch.setattr(warm, "START_TIMEOUT_S", 3600)
    sandbox = CannotStartWarm()
    graded: dict = {}
    thread = threading.Thread(target=lambda: graded.update(outcome=grade(fixture_task, GOOD, sandbox)), daemon=True)
    thread.start()
    thread.join(timeout=120)  # a liveness bound, far beyond a grading; without the fix it waits an hour
    assert not thread.is_alive()
    assert graded["outcome"].status == Status.PASSED and graded["outcome"].counts["passed"] == 5
    assert _judge_for(sandbox) is None


def test_only_regular_files_and_folders_are_packed(tmp_path):
    """The grader lays out nothing else; a FIFO would block the packing and a link would
    carry another file's bytes."""
    from sb.grading.warm import _packed
    source = tmp_path / "slot"
    (source / "judge").mkdir(parents=True)
    (source / "judge" / "kept.py").write_bytes(b"x = 1\n")
    os.mkfifo(source / "judge" / "fifo")
    (tmp_path / "secret").write_bytes(b"elsewhere")
    (source / "judge" / "link.py").symlink_to(tmp_path / "secret")
    (source / "folder_link").symlink_to(tmp_path)
    target = tmp_path / "there"
    with _packed(source) as packed:
        _unpacked(packed, target)
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == ["judge", "judge/kept.py"]
