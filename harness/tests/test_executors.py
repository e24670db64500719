"""Executors as plugins: the unit of work is plain data, every executor grades through one
function, refusals are one line out of every rate, references are graded once per command,
several models share one schedule, and an interrupted or killed grading leaves nothing."""

from __future__ import annotations

import _thread
import json
import os
import subprocess
import sys
import signal
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO, sb_env
from sb.executors.base import Work, outcome_of, perform
from sb.outcome import Status, is_evidence
from sb.sandbox.base import Completed, Sandbox
from sb.testing import FakeAdapter, FakeExecutor
from test_cli import SB

GOOD = {"adder.py": b"def add(a, b):\n    return b + a\n"}
WRONG = {"adder.py": b"def add(a, b):\n    return a - b\n"}


def sweep_of(task, sandbox, tmp_path, files=GOOD, model="fake", **kwargs):
    from sb.run import Sweep
    return Sweep([task], FakeAdapter(files), model, sandbox, results_dir=tmp_path / "results", **kwargs)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """No reference ids cached yet: what a sweep grades is then known exactly."""
    monkeypatch.setenv("SB_CACHE_DIR", str(tmp_path / "cache"))


def test_a_work_crosses_as_json_and_back(fixture_task):
    work = Work.grading(fixture_task, {**GOOD, "notes.txt": b"\x00\xff"}, "bwrap", ["a", "b"])
    assert set(work.files) == {"adder.py"}  # only declared names travel
    text = work.to_json()
    assert json.loads(text)["slug"] == "fixture_add"
    assert Work.from_json(text) == work
    with pytest.raises(ValueError):
        Work.from_json(json.dumps({**json.loads(text), "check": "exec"}))


@pytest.mark.parametrize("change, says", [
    ({"content_hash": "0" * 16}, "content hash"),
    ({"fingerprint": "f" * 16}, "toolchain"),
    ({"grader": "e" * 16}, "grader differs"),
    ({"grader": ""}, "grader differs"),  # a driver too old to send one
    ({"slug": "not_installed"}, "not installed"),
    ({"isolation": "bwrap"}, "isolation"),
])
def test_a_worker_refuses_in_one_line_and_the_refusal_is_no_evidence(fixture_task, plain_sandbox, change, says):
    import dataclasses
    work = dataclasses.replace(Work.grading(fixture_task, GOOD, "none", None), **change)
    task = None if change.get("slug") else fixture_task
    result = perform(work, task, plain_sandbox)
    assert says in result["not_graded"] and "\n" not in result["not_graded"]
    outcome = outcome_of(work.slug, result)
    assert outcome.status == Status.HARNESS_ERROR and not is_evidence(outcome.status)


def test_the_fake_executor_and_the_local_one_give_identical_verdicts(fixture_task, plain_sandbox):
    from sb.executors.local import LocalExecutor
    answers = [GOOD, WRONG]
    verdicts = {}
    for executor in (FakeExecutor(), LocalExecutor(jobs=2)):
        with executor:
            executor.start([fixture_task], plain_sandbox)
            ids = outcome_of("fixture_add", executor.grading(fixture_task, fixture_task.reference_files, None)
                             .result()).test_ids
            found = [outcome_of("fixture_add", executor.grading(fixture_task, files, ids).result())
                     for files in answers]
        verdicts[executor.name] = [(o.status, o.counts, o.failed_tests) for o in found]
    assert verdicts["fake"] == verdicts["local"]
    assert [v[0] for v in verdicts["local"]] == ["passed", "failed"]


def test_a_sweep_sends_plain_work_and_records_the_executor(fixture_task, plain_sandbox, tmp_path, fresh_cache):
    from sb.run import run_draws
    executor = FakeExecutor()
    ((doc, _),) = run_draws(sweep_of(fixture_task, plain_sandbox, tmp_path), executor=executor)
    reference, answer = executor.works
    assert reference.expected is None and reference.files == {"adder.py": fixture_task.reference_files["adder.py"]}
    assert answer.files == GOOD and len(answer.expected) == 5 and answer.isolation == "none"
    assert doc["executor"]["name"] == "fake" and doc["executors"] == ["fake"]
    (entry,) = doc["tasks"]
    assert entry["status"] == "passed" and entry["executor"] == "fake" and entry["node"]


def test_a_lost_grading_is_a_harness_error_kept_out_of_the_rate(fixture_task, plain_sandbox, tmp_path, fresh_cache):
    from sb.grading.expected import record
    from sb.grading import grade
    from sb.run import run_draws
    record(fixture_task, grade(fixture_task, fixture_task.reference_files, plain_sandbox))  # cached: no reference work
    ((doc, _),) = run_draws(sweep_of(fixture_task, plain_sandbox, tmp_path),
                            executor=FakeExecutor(lose={"fixture_add"}))
    (entry,) = doc["tasks"]
    assert entry["status"] == "harness_error" and "fake worker died" in entry["detail"]
    assert doc["pass_rate"] is None and not entry["evidence"]


class NoJudgeSandbox(Sandbox):
    """A sandbox whose commands never start: the judge writes no record (harness_error)."""

    name = "no-judge"

    def run(self, job):
        return Completed(returncode=1, timed_out=False, duration_s=0.0, output="no judge started here")


def test_a_reference_without_evidence_keeps_its_status_in_every_path(fixture_task, tmp_path, fresh_cache):
    """sb grade and sb.api (the reference graded here) and a sweep (graded through the
    executor) map a reference that gave no evidence to its own status, never a broken task."""
    from sb.api import grade_files
    from sb.grading.expected import reference_ids
    from sb.run import run_draws
    failure = reference_ids(fixture_task, NoJudgeSandbox()).failure
    assert failure.status == Status.HARNESS_ERROR and "the task's reference could not be graded here" in failure.detail
    assert grade_files(fixture_task, GOOD, NoJudgeSandbox()).status == Status.HARNESS_ERROR
    ((doc, _),) = run_draws(sweep_of(fixture_task, NoJudgeSandbox(), tmp_path), executor=FakeExecutor())
    assert [entry["status"] for entry in doc["tasks"]] == ["harness_error"]


def test_a_sweep_of_three_models_grades_each_reference_once(fixture_task, plain_sandbox, tmp_path, fresh_cache):
    from sb.run import run_sweeps
    sweeps = [sweep_of(fixture_task, plain_sandbox, tmp_path, files, model=name, draws=draws)
              for name, files, draws in (("a", GOOD, 2), ("b", WRONG, 1), ("c", fixture_task.starter_files, 1))]
    executor = FakeExecutor()
    runs = run_sweeps(sweeps, executor=executor)
    assert [w.expected is None for w in executor.works].count(True) == 1  # one reference, four answers
    assert len(executor.works) == 5
    assert [(doc["model"], doc["draw"], doc["pass_rate"]) for doc, _ in runs] == \
        [("a", 1, 1.0), ("a", 2, 1.0), ("b", 1, 0.0), ("c", 1, 0.0)]
    again = FakeExecutor()
    run_sweeps([sweep_of(fixture_task, plain_sandbox, tmp_path / "again", GOOD, model="d")], executor=again)
    assert [w.expected is None for w in again.works] == [False]  # the cache: no reference graded at all


def test_cached_reference_ids_belong_to_the_grader_that_produced_them(fixture_task, plain_sandbox, fresh_cache,
                                                                      monkeypatch):
    from sb import grading
    from sb.grading.expected import cached_ids, record
    record(fixture_task, grading.grade(fixture_task, fixture_task.reference_files, plain_sandbox))
    assert cached_ids(fixture_task)
    monkeypatch.setattr(grading, "grader_hash", lambda: "another-grader")  # an upgraded scratchbench, say
    assert cached_ids(fixture_task) is None


def test_validate_and_mutants_run_through_the_executor(fixture_task, plain_sandbox, fresh_cache):
    from sb.checks import mutants_all, validate_all
    from sb.parallel import References
    executor = FakeExecutor()
    executor.start([fixture_task], plain_sandbox)
    (validation,) = validate_all([fixture_task], executor)
    assert validation.verdict == "ok" and validation.reference.passed and validation.starter.status == Status.FAILED
    (checks,) = mutants_all([fixture_task], executor, References(executor))
    assert [(c.mutant, c.actual, c.ok) for c in checks] == [("ignores_negatives", "caught", True),
                                                             ("off_by_one", "caught", True)]
    assert [w.check for w in executor.works] == ["validate", "grade", "grade"]  # the reference came from the cache


def test_several_models_in_one_command(fixture_env, tmp_path):
    out = tmp_path / "results"
    done = subprocess.run([*SB, "run", "--model", "reference", "--model", "starter", "--concurrency", "2",
                           "--concurrency", "1", "--results", str(out), "--isolation", "none", "--json"],
                          env=fixture_env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    docs = json.loads(done.stdout)
    assert [(d["model"], d["pass_rate"], d["executor"]["name"]) for d in docs] == \
        [("reference", 1.0, "local"), ("starter", 0.0, "local")]
    assert len(list(out.glob("*.json"))) == 2


@pytest.mark.parametrize("args, says", [
    (["--executor", "nope"], "unknown executor 'nope'"),
    (["--address", "127.0.0.1:6379"], "takes no --address"),
    (["--model", "starter", "--concurrency", "1", "--concurrency", "2", "--concurrency", "3"], "--concurrency given 3"),
    (["--model", "reference"], "named twice"),
])
def test_bad_executor_choices_are_one_line(fixture_env, tmp_path, args, says):
    done = subprocess.run([*SB, "run", "--model", "reference", "--results", str(tmp_path), *args],
                          env=fixture_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_ray_executor_asks_the_cluster_for_the_device(task_copy):
    from sb.executors.ray import RayExecutor, _resources
    from sb.task import load_task_dir
    cuda = load_task_dir(task_copy(accelerator="cuda", tier="accelerated"), package="cuda_copy")
    executor = RayExecutor()
    executor.resources = {"CPU": 2.0}
    outcome = executor.precheck(cuda)
    assert outcome.status == Status.NEEDS_ACCELERATOR and "Ray cluster" in outcome.detail
    executor.resources = {"CPU": 2.0, "GPU": 1.0}
    assert executor.precheck(cuda) is None
    assert _resources(Work.grading(cuda, {}, "bwrap", None)) == {"num_gpus": 1}


def test_sb_help_and_list_never_import_ray(fixture_env):
    code = "import sys\nfrom sb.cli import main\ntry:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n" \
           "import sb.plugins; sb.plugins.load_plugins()\nassert 'ray' not in sys.modules, 'ray imported'\n"
    done = subprocess.run([sys.executable, "-c", code], env=fixture_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_every_built_in_executor_has_a_doc_section(pm):
    from sb.plugins import collect
    text = (REPO / "docs" / "plugins.md").read_text()
    registry = collect(pm, "register_executors", "executor", lambda cls: cls.name)
    assert {"local", "ray"} <= set(registry.items)
    for name, source in registry.sources.items():
        if source == "scratchbench":
            assert f"### Built-in executor `{name}`" in text, name


# ---------------------------------------------------------------- nothing left behind


def test_a_folder_whose_owner_was_killed_is_removed_by_the_next_grading(tmp_path, fixture_task, plain_sandbox,
                                                                         monkeypatch):
    from sb import interrupt
    from sb.grading import grade
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    owner = subprocess.Popen([sys.executable, "-c", "import sys\nfrom sb.interrupt import temporary_directory\n"
                              "with temporary_directory('sb-victim-') as p:\n    print(p, flush=True)\n"
                              "    sys.stdin.read()\n"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=sb_env(TMPDIR=str(tmp_path)))
    orphan = owner.stdout.readline().strip()
    owner.kill()  # SIGKILL: no handler, no finally
    owner.wait()
    kept = tmp_path / "sb-unmarked-folder"
    kept.mkdir()
    assert os.path.isdir(orphan)
    grade(fixture_task, GOOD, plain_sandbox)
    assert not os.path.exists(orphan)
    from sb.grading.warm import warm_judges
    warm_judges().close()  # a warm judge's folder lives as long as it does
    assert sorted(p.name for p in tmp_path.iterdir()) == [kept.name]  # a folder without a marker is never touched
    assert interrupt.reap_orphaned_folders(str(tmp_path)) == []


def test_a_removal_a_writer_defeats_keeps_the_marker_and_the_next_reap_finishes_it(tmp_path, monkeypatch):
    """A dead owner's child may still write in its folder while the folder is reaped: what
    is left keeps the owner marker, so a later reap recognises it, never an unmarked folder."""
    from sb import interrupt
    folder = tmp_path / "sb-warm-judge-x"
    (folder / "tmp").mkdir(parents=True)
    (folder / "tmp" / "file").write_text("x")
    namespace = os.readlink("/proc/self/ns/pid")
    (folder / interrupt.OWNER_MARKER).write_text(f"999999999 1 {namespace}")  # no such process
    real_rmtree = interrupt.shutil.rmtree

    def writer_behind(path, ignore_errors=False, dir_fd=None):
        real_rmtree(path, ignore_errors=ignore_errors, dir_fd=dir_fd)
        os.mkdir(path, dir_fd=dir_fd)  # the still-living writer's next file
        os.mkdir(os.path.join(path, "late"), dir_fd=dir_fd)

    monkeypatch.setattr(interrupt.shutil, "rmtree", writer_behind)
    assert interrupt.reap_orphaned_folders(str(tmp_path)) == [str(folder)]
    assert (folder / interrupt.OWNER_MARKER).exists()
    monkeypatch.setattr(interrupt.shutil, "rmtree", real_rmtree)
    assert interrupt.reap_orphaned_folders(str(tmp_path)) == [str(folder)]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_sandbox_whose_grader_died_before_its_death_signal_was_set_runs_nothing(monkeypatch):
    """The grader killed between the fork and the prctl sends no death signal: the child sees
    another parent than the one that made it and ends before it runs anything."""
    from sb.sandbox import process
    monkeypatch.setattr(process.os, "getpid", lambda: 1)  # the child's parent is not this one: the grader is gone
    orphan_check = process._death_signal_setter()
    monkeypatch.undo()
    ran = subprocess.run([sys.executable, "-c", "print('ran')"], preexec_fn=orphan_check, capture_output=True,
                         text=True)
    assert (ran.returncode, ran.stdout) == (128 + signal.SIGKILL, "")
    kept = subprocess.run([sys.executable, "-c", "print('ran')"], preexec_fn=process._death_signal_setter(),
                          capture_output=True, text=True)
    assert (kept.returncode, kept.stdout) == (0, "ran\n")


def test_a_sandbox_whose_folder_or_owner_is_gone_is_killed_by_the_next_reap(tmp_path):
    """A grader killed while bubblewrap set up a sandbox leaves the sandbox's first process
    blocked for good: a reap kills a sandbox process that names a gone folder, or one whose
    owner is gone, never one whose folder is live or still being made."""
    from sb import interrupt
    namespace = os.readlink("/proc/self/ns/pid")
    parent = tmp_path / "tmp"
    folders = {name: parent / f"sb-{name}" for name in ("gone", "dead-owner", "live", "young")}
    # a live folder of another temporary folder whose path contains this one's: never this reap's
    folders["nested"] = Path(f"{tmp_path}/home{parent}/sb-nested")
    for name in ("dead-owner", "live", "young", "nested"):
        folders[name].mkdir(parents=True)
    (folders["dead-owner"] / interrupt.OWNER_MARKER).write_text(f"999999999 1 {namespace}")  # no such process
    for name in ("live", "nested"):
        interrupt._mark_owner(str(folders[name]))
    sandboxes = {name: subprocess.Popen(["bwrap", "-c", "import time; time.sleep(120)", "--bind",
                                         f"{folder}/solution", "/work"], executable=sys.executable)
                 for name, folder in folders.items()}
    try:
        _exec_done(*sandboxes.values())
        killed = interrupt.kill_abandoned_sandboxes(str(parent))
        assert sorted(killed) == sorted(sandboxes[n].pid for n in ("gone", "dead-owner"))
        for name, proc in sandboxes.items():
            assert (proc.wait(timeout=10) == -signal.SIGKILL) if name in ("gone", "dead-owner") else proc.poll() is None
    finally:
        for proc in sandboxes.values():
            proc.kill()
            proc.wait()


def test_a_sandbox_whose_folder_exists_where_it_runs_is_never_killed(tmp_path, bwrap_sandbox):
    """A container's sandbox names a folder of the container's own /tmp, which the host
    cannot see: the reap judges the folder as the sandbox sees it too, and keeps it."""
    from sb import interrupt
    folder = tmp_path / "sb-elsewhere"
    code = ("import os, sys\nos.makedirs(os.environ['F'])\n"
            "os.execv(sys.executable, ['bwrap', '-c', 'import time; time.sleep(120)', os.environ['F']])")
    container = subprocess.Popen(["bwrap", "--unshare-all", "--die-with-parent", "--dev-bind", "/", "/",
                                  "--tmpfs", str(tmp_path), sys.executable, "-c", code],
                                 env={**os.environ, "F": str(folder)})
    try:
        def inside() -> list:
            return [int(e) for e in os.listdir("/proc") if e.isdigit() and _cmdline(e).startswith(b"bwrap\0")
                    and str(folder).encode() in _cmdline(e)]
        deadline = time.monotonic() + 30
        while not inside():
            assert time.monotonic() < deadline and container.poll() is None, "the container's sandbox never started"
            time.sleep(0.05)
        assert not folder.exists()  # gone as the host sees it
        assert interrupt.kill_abandoned_sandboxes(str(tmp_path)) == []
        assert inside() and container.poll() is None
    finally:
        container.kill()
        container.wait()


def _in_time(call, seconds: float = 20):
    """`call()`'s result, failing the test if it has not returned within `seconds`."""
    import threading
    result: list = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{call} still running after {seconds} s"
    return result[0]


@pytest.mark.parametrize("planted", ["fifo", "endless", "not_utf8", "huge"])
def test_a_marker_planted_by_a_sandbox_or_another_user_never_blocks_floods_or_breaks_a_reap(tmp_path, planted):
    """A sandbox's own /tmp, or another user's folder, may hold in a marker's place a FIFO
    (an open that blocks), a link to an endless file, bytes that are not text or a huge
    file: the reap reads none of them as a marker, keeps the folder and carries on."""
    from sb import interrupt
    parent = tmp_path / "tmp"
    folder = parent / "sb-planted"
    folder.mkdir(parents=True)
    marker = folder / interrupt.OWNER_MARKER
    if planted == "fifo":
        os.mkfifo(marker)
    elif planted == "endless":
        marker.symlink_to("/dev/zero")
    elif planted == "not_utf8":
        marker.write_bytes(b"\xff\xfe 1 2")
    else:
        marker.write_bytes(b"9" * (8 << 20))
    namespace = os.readlink("/proc/self/ns/pid")
    sandbox = subprocess.Popen(["bwrap", "-c", "import time; time.sleep(120)", f"{folder}/solution"],
                               executable=sys.executable)
    try:
        _exec_done(sandbox)
        assert _in_time(lambda: interrupt.reap_orphaned_folders(str(parent))) == []
        assert _in_time(lambda: interrupt.kill_abandoned_sandboxes(str(parent), namespace)) == []
        assert marker.exists() or marker.is_symlink()
        assert sandbox.poll() is None
    finally:
        sandbox.kill()
        sandbox.wait()


@pytest.mark.parametrize("marker", ["fifo", "forged"])
def test_a_process_that_names_a_folder_only_in_its_own_view_is_judged_without_reading_it(tmp_path, marker):
    """A sandboxed solution can start a process called bwrap naming a folder of its own /tmp
    whose marker is a FIFO, or names a dead owner of this pid namespace: the reap only looks
    the folder up where that process runs (it exists, so the process is kept) and never
    opens or believes what is inside."""
    from sb import interrupt
    folder = tmp_path / "sb-planted"
    plant = ("os.mkfifo(M)" if marker == "fifo" else
             f"open(M, 'w').write('999999999 1 {os.readlink('/proc/self/ns/pid')}')")  # no such process
    code = ("import os, sys\nos.makedirs(os.environ['F'])\nM = os.path.join(os.environ['F'], '.sb-owner')\n"
            f"{plant}\nos.execv(sys.executable, ['bwrap', '-c', 'import time; time.sleep(120)', os.environ['F']])")
    container = subprocess.Popen(["bwrap", "--unshare-all", "--die-with-parent", "--dev-bind", "/", "/",
                                  "--tmpfs", str(tmp_path), sys.executable, "-c", code],
                                 env={**os.environ, "F": str(folder)})
    try:
        def inside() -> list:
            return [e for e in os.listdir("/proc") if e.isdigit() and _cmdline(e).startswith(b"bwrap\0")
                    and str(folder).encode() in _cmdline(e)]
        deadline = time.monotonic() + 30
        while not inside():
            assert time.monotonic() < deadline and container.poll() is None, "the container's sandbox never started"
            time.sleep(0.05)
        assert _in_time(lambda: interrupt.kill_abandoned_sandboxes(str(tmp_path))) == []
        assert inside() and container.poll() is None
    finally:
        container.kill()
        container.wait()


def test_another_users_folders_and_links_are_never_reaped_or_followed(tmp_path):
    """What another local user leaves in a shared temporary folder is theirs: a folder of
    theirs marked with a dead owner stays, and an `sb-*` link to a folder of this user's
    marked so is never followed (a link swapped in mid-reap would send the removal elsewhere)."""
    from sb import interrupt
    namespace = os.readlink("/proc/self/ns/pid")
    dead = f"999999999 1 {namespace}"  # no such process
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "a").write_text("kept")
    (victim / interrupt.OWNER_MARKER).write_text(dead)
    (tmp_path / "sb-link").symlink_to(victim)
    theirs = tmp_path / "sb-theirs"
    theirs.mkdir()
    (theirs / "b").write_text("kept")
    (theirs / interrupt.OWNER_MARKER).write_text(dead)
    if os.geteuid() == 0:
        os.chown(theirs, 65534, 65534)
    else:
        theirs.rename(tmp_path / "not-sb")  # only root can give a folder away: the link case alone
    assert interrupt.reap_orphaned_folders(str(tmp_path)) == []
    assert (victim / "a").read_text() == "kept" and (victim / interrupt.OWNER_MARKER).exists()
    assert os.geteuid() != 0 or (theirs / "b").read_text() == "kept"


def test_a_marker_with_digits_that_are_not_ascii_is_not_an_owner(tmp_path):
    """'²' is a digit to str.isdigit and no integer to int(): such a marker names no owner,
    and the reap carries on."""
    from sb import interrupt
    folder = tmp_path / "sb-digits"
    folder.mkdir()
    (folder / interrupt.OWNER_MARKER).write_text("\u00b2 1")
    assert interrupt.reap_orphaned_folders(str(tmp_path)) == [] and folder.is_dir()


def test_only_bwrap_or_python_running_the_programs_counts_as_a_sandbox(tmp_path):
    """A command that merely names a grading's judge program (a developer's `tail -f` of it)
    is not a sandbox, and is never killed with the grading's folder gone."""
    from sb import interrupt
    parent = tmp_path / "tmp"
    parent.mkdir()
    program = f"{parent}/sb-gone/judge/judge_process.py"
    looking = subprocess.Popen(["tail", "-c", "120", "-f", program, "/dev/null"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    running = subprocess.Popen(["python3", "-c", "import time; time.sleep(120)", program], executable=sys.executable)
    try:
        _exec_done(looking, running)
        assert interrupt.kill_abandoned_sandboxes(str(parent)) == [running.pid]
        assert looking.poll() is None
    finally:
        for proc in (looking, running):
            proc.kill()
            proc.wait()


def test_no_scan_where_proc_is_another_namespaces(tmp_path, monkeypatch):
    """/proc left from another pid namespace numbers processes this one cannot hold."""
    from sb import interrupt
    parent = tmp_path / "tmp"
    parent.mkdir()
    sandbox = subprocess.Popen(["bwrap", "-c", "import time; time.sleep(120)", f"{parent}/sb-gone"],
                               executable=sys.executable)
    try:
        _exec_done(sandbox)
        real_readlink = os.readlink
        monkeypatch.setattr(interrupt.os, "readlink", lambda path: "1" if path == "/proc/self" else real_readlink(path))
        assert interrupt.kill_abandoned_sandboxes(str(parent)) == [] and sandbox.poll() is None
    finally:
        sandbox.kill()
        sandbox.wait()


def test_a_command_naming_many_folders_is_none_of_ours(tmp_path):
    """A sandbox names its grading's folder; a command naming thousands (a solution making
    the scan slow) is skipped after the first few, and never killed."""
    from sb import interrupt
    parent = tmp_path / "tmp"
    parent.mkdir()
    many = [f"{parent}/sb-gone-{i}" for i in range(5000)]
    sandbox = subprocess.Popen(["bwrap", "-c", "import time; time.sleep(120)", *many], executable=sys.executable)
    try:
        _exec_done(sandbox)
        assert interrupt.kill_abandoned_sandboxes(str(parent)) == []
        assert sandbox.poll() is None
    finally:
        sandbox.kill()
        sandbox.wait()


def test_a_held_process_that_ended_is_never_signalled(monkeypatch):
    """Held by its pid file descriptor, a process that ended is not signalled again, so a
    pid the kernel handed to another process meanwhile is never killed for it."""
    from sb import interrupt
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    with interrupt._held(ended.pid) as held:
        ended.wait()  # gone and reaped: its pid is free for reuse
        assert held is not None and held.pidfd is not None
        assert held.kill() is False


def test_an_owner_whose_process_table_entry_cannot_be_read_is_taken_for_alive(tmp_path, monkeypatch):
    """Out of descriptors (EMFILE), /proc cannot be read: that says nothing about the owner,
    whose folder is kept, and no folder is marked with an identity this process cannot read."""
    import builtins
    import errno
    from sb import interrupt
    folder = tmp_path / "sb-owned"
    folder.mkdir()
    interrupt._mark_owner(str(folder))
    real_open = builtins.open

    def no_descriptors(path, *args, **kwargs):
        if str(path).startswith("/proc/") and str(path).endswith("/stat"):
            raise OSError(errno.EMFILE, "Too many open files")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", no_descriptors)
    assert interrupt.reap_orphaned_folders(str(tmp_path)) == [] and folder.is_dir()
    unmarked = tmp_path / "sb-unmarked"
    unmarked.mkdir()
    interrupt._mark_owner(str(unmarked))
    assert not (unmarked / interrupt.OWNER_MARKER).exists()


def _exec_done(*procs) -> None:
    """Popen can return before the kernel has set the new program's command line (it
    resumes a vfork parent early in exec): wait until /proc shows each one's, as a scan reads it."""
    deadline = time.monotonic() + 20
    for proc in procs:
        wanted = b"\0".join(os.fsencode(a) for a in proc.args) + b"\0"
        while _cmdline(str(proc.pid)) != wanted:
            assert time.monotonic() < deadline and proc.poll() is None, f"{proc.args[0]} never started"
            time.sleep(0.01)


def _cmdline(pid: str) -> bytes:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return b""


def test_an_unmarked_folder_is_removed_only_when_empty_and_unchanged_for_the_grace(tmp_path):
    """A process killed between making its folder and marking it (or between unmarking and
    removing it) leaves an empty unmarked folder: reaped once it has not changed for the
    grace; a younger one (its maker may be about to mark it) or one with anything in it stays."""
    from sb import interrupt
    old = time.time() - interrupt.UNMARKED_GRACE_S - 1
    abandoned, young, full = (tmp_path / f"sb-{name}" for name in ("abandoned", "young", "full"))
    for folder in (abandoned, young, full):
        folder.mkdir()
    (full / "file").write_text("x")
    for folder in (abandoned, full):
        os.utime(folder, (old, old))
    assert interrupt.reap_orphaned_folders(str(tmp_path)) == [str(abandoned)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sb-full", "sb-young"]


@pytest.mark.parametrize("warm", ["0", "1"])
def test_an_interrupt_while_a_sandbox_starts_leaves_no_process(fixture_task, plain_sandbox, monkeypatch, warm):
    """The worst moment: the child exists, nobody tracks it yet. The interrupt waits until
    it is tracked, then the grading stops and kills it. A warm judge starts on a thread of
    its own: the interrupt lands while the grading waits on it, and that warm judge, which
    may still be running the grading, is closed, never kept for the next."""
    monkeypatch.setenv("SB_WARM_JUDGES", warm)
    import subprocess as real
    started = []

    class Interrupted(real.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)
            if threading.current_thread() is threading.main_thread() or "--warm" in args[0]:  # the judge, once
                _thread.interrupt_main()

    monkeypatch.setattr("sb.sandbox.process.subprocess.Popen", Interrupted)
    from sb.grading import grade
    assert threading.current_thread() is threading.main_thread()
    # Python's own Ctrl-C handler, whatever this process inherited: started in the background
    # by a shell without job control, SIGINT arrives ignored and interrupt_main() does nothing.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            grade(fixture_task, GOOD, plain_sandbox)
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert started and all(p.poll() is not None for p in started)
    for proc in started:
        with pytest.raises(ProcessLookupError):
            os.killpg(proc.pid, 0)
