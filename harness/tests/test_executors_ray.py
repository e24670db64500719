"""The ray executor on real clusters: a local one for the session (the fast tests), and a
head plus a second node on loopback, started with `ray start`, that loses its second node
mid-sweep. Processes are only ever stopped by pid: `ray stop` stops every node on the
machine, other people's included, and is never used here."""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURE_TASK_DIR, sb_env
from sb.executors.base import Work, outcome_of
from sb.testing import FakeAdapter
from test_cli import SB

TOKEN = secrets.token_hex(16)
RAY_ENV = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN, "RAY_USAGE_STATS_ENABLED": "0"}
os.environ.update(RAY_ENV)  # before ray is imported (it reads them once): a token of our own, none in ~/.ray
ray = pytest.importorskip("ray")
GOOD = {"adder.py": b"def add(a, b):\n    return b + a\n"}
WRONG = {"adder.py": b"def add(a, b):\n    return a - b\n"}
TASKS = {"fixture_add": {}, "fixture_add2": {}, "fixture_metal": {"tier": "accelerated", "accelerator": "metal"},
         "fixture_cuda": {"tier": "accelerated", "accelerator": "cuda"}}


def install_copies(site: Path, tasks: dict, slow_test: str | None = None) -> dict:
    """Copies of the fixture task as installed distributions; slug -> package folder."""
    folders = {}
    for slug, meta_changes in tasks.items():
        package = site / f"sb_task_{slug}"
        shutil.copytree(FIXTURE_TASK_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
        meta = yaml.safe_load((package / "meta.yaml").read_text())
        (package / "meta.yaml").write_text(yaml.safe_dump({**meta, "slug": slug, **meta_changes}))
        if slow_test:
            (package / "hidden_tests" / "test_slow.py").write_text(slow_test)
        dist = site / f"sb_task_{slug}-1.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sb-task-{slug}\nVersion: 1.0\n")
        (dist / "entry_points.txt").write_text(f"[sb]\n{slug} = sb_task_{slug}\n")
        folders[slug] = package
    return folders


@pytest.fixture(scope="session")
def cluster_tasks(tmp_path_factory):
    """The driver's tasks, read from the same folders the workers have installed."""
    from sb.task import load_task_dir
    site = tmp_path_factory.mktemp("ray-site")
    folders = install_copies(site, TASKS)
    return site, {slug: load_task_dir(folder, package=f"sb_task_{slug}") for slug, folder in folders.items()}


@pytest.fixture(scope="session")
def local_cluster(cluster_tasks):
    """One local Ray instance for the fast tests: two CPUs, a `metal` resource, no GPU."""
    site, _ = cluster_tasks
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, resources={"metal": 1},
             logging_level=logging.ERROR,
             runtime_env={"env_vars": {"PYTHONPATH": str(site), "SB_LOAD_PLUGINS": ",".join(TASKS)}})
    yield
    ray.shutdown()


@pytest.fixture
def ray_executor(local_cluster, cluster_tasks, bwrap_sandbox):
    from sb.executors.ray import RayExecutor
    executor = RayExecutor(jobs=2)
    executor.start(list(cluster_tasks[1].values()), bwrap_sandbox)
    yield executor
    executor.close()


@pytest.fixture
def local_executor(cluster_tasks, bwrap_sandbox):
    from sb.executors.local import LocalExecutor
    with LocalExecutor(jobs=2) as executor:
        executor.start(list(cluster_tasks[1].values()), bwrap_sandbox)
        yield executor


def test_ray_and_local_give_identical_verdicts(cluster_tasks, ray_executor, local_executor):
    from sb.checks import validate_all
    task = cluster_tasks[1]["fixture_add"]
    seen = {}
    for executor in (local_executor, ray_executor):
        (validation,) = validate_all([task], executor)  # the reference and the starter, graded as one Work
        answers = [executor.grading(task, files, validation.reference.test_ids) for files in (GOOD, WRONG)]
        outcomes = [validation.reference, validation.starter, *(outcome_of(task.slug, f.result()) for f in answers)]
        seen[executor.name] = [validation.verdict] + [(o.status, o.counts, o.failed_tests) for o in outcomes]
    assert seen["ray"] == seen["local"]
    assert seen["ray"][0] == "ok" and [v[0] for v in seen["ray"][1:]] == ["passed", "failed", "passed", "failed"]


def test_a_worker_refuses_a_task_that_differs_from_the_drivers(cluster_tasks, ray_executor, tmp_path):
    from sb.task import load_task_dir
    changed = tmp_path / "sb_task_fixture_add"
    shutil.copytree(FIXTURE_TASK_DIR, changed)
    (changed / "prompt.md").write_text("Another prompt under the same slug.\n")
    task = load_task_dir(changed, package="sb_task_fixture_add")
    result = ray_executor.grading(task, GOOD, None).result()
    assert "content hash" in result["not_graded"] and result["node"]
    import dataclasses
    work = dataclasses.replace(Work.grading(cluster_tasks[1]["fixture_add"], GOOD, "bwrap", None), fingerprint="0" * 16)
    assert "toolchain differs" in ray_executor.submit(work).result()["not_graded"]


def test_the_ray_executor_refuses_isolation_none(local_cluster, plain_sandbox):
    from sb.errors import SbError
    from sb.executors.ray import RayExecutor
    with pytest.raises(SbError, match="refuses --isolation none"):
        RayExecutor().start([], plain_sandbox)


def test_a_cluster_without_token_authentication_is_warned_about(local_cluster, bwrap_sandbox, monkeypatch):
    from sb.executors.ray import RayExecutor
    executor = RayExecutor(address="10.0.0.5:6379")
    executor.start([], bwrap_sandbox)  # ray is already connected: only the address is taken
    assert executor.warnings == []  # this session's token
    monkeypatch.delenv("RAY_AUTH_MODE")
    executor = RayExecutor(address="10.0.0.5:6379")
    executor.start([], bwrap_sandbox)
    (warning,) = executor.warnings
    assert "10.0.0.5:6379 was joined without token authentication" in warning


class Counting(FakeAdapter):
    def __init__(self, files):
        super().__init__(files)
        self.asked = []

    def solve(self, model, task, workdir, options):
        self.asked.append(task.slug)
        return super().solve(model, task, workdir, options)


def test_device_tasks_go_only_where_the_device_is_and_never_call_a_model_without_one(
        cluster_tasks, ray_executor, bwrap_sandbox, tmp_path):
    from sb.run import Sweep, run_draws
    tasks = cluster_tasks[1]
    adapter = Counting(GOOD)
    sweep = Sweep([tasks["fixture_cuda"], tasks["fixture_metal"]], adapter, "fake", bwrap_sandbox,
                  results_dir=tmp_path)
    ((doc, _),) = run_draws(sweep, executor=ray_executor)
    cuda, metal = doc["tasks"]
    assert cuda["status"] == metal["status"] == "needs_accelerator" and doc["pass_rate"] is None
    assert "no node of the Ray cluster offers a cuda device" in cuda["detail"]  # decided on the driver
    assert "no metal device on this machine" in metal["detail"]  # sent to the node offering `metal`, which said so
    assert adapter.asked == []


def resumed_across(first, second, tasks, sandbox, results_dir) -> dict:
    """A sweep graded by `first`, cut back to its first task as if killed, resumed on `second`."""
    from sb.run import Sweep, run_draws
    sweep = Sweep([tasks["fixture_add"], tasks["fixture_add2"]], FakeAdapter(WRONG), "fake", sandbox,
                  results_dir=results_dir)
    ((doc, path),) = run_draws(sweep, executor=first)
    doc["tasks"], doc["complete"] = doc["tasks"][:1], False
    path.write_text(json.dumps(doc))
    again = Sweep(sweep.tasks, FakeAdapter(WRONG), "fake", sandbox, results_dir=results_dir)
    ((resumed, resumed_path),) = run_draws(again, resume=True, executor=second)
    assert resumed_path == path and resumed["complete"] and resumed["resumed"] == 1
    assert resumed["tasks"][0] == doc["tasks"][0]  # kept as it was, not graded again
    return resumed


def test_a_sweep_started_on_ray_resumes_locally(cluster_tasks, ray_executor, local_executor, bwrap_sandbox, tmp_path):
    """(Local to Ray, with a killed driver, is the two-node test's.)"""
    order = ("ray", "local")
    executors = {"local": local_executor, "ray": ray_executor}
    doc = resumed_across(*(executors[name] for name in order), cluster_tasks[1], bwrap_sandbox, tmp_path)
    assert [(e["slug"], e["status"], e["executor"]) for e in doc["tasks"]] == \
        [("fixture_add", "failed", order[0]), ("fixture_add2", "failed", order[1])]
    assert doc["tasks"][0]["failed_tests"] == doc["tasks"][1]["failed_tests"]
    assert doc["executors"] == list(order) and doc["executor"]["name"] == order[1]


# ---------------------------------------------------------------- two nodes, one lost


SLOW_TEST = "import time\nfrom adder import add\n\ndef test_slow():\n    time.sleep(1.5)\n    assert add(1, 2) == 3\n"
SLOW = [f"slow{i}" for i in range(4)]
AGENT = """#!/bin/sh
# even tasks: a right answer; odd ones: a wrong one
case "$SB_TASK" in
  *[02468]) printf 'def add(a, b):\\n    return b + a\\n' > adder.py ;;
  *) printf 'def add(a, b):\\n    return a - b\\n' > adder.py ;;
esac
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes() -> dict:
    """pid -> (parent pid, environment, command line) of every live process we may read."""
    table = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if stat[0] != "Z":
                table[int(proc.name)] = (int(stat[1]), (proc / "environ").read_bytes(), (proc / "cmdline").read_bytes())
        except OSError:
            continue
    return table


def pids_with(marker: str, in_cmdline: str = "") -> list:
    """Live processes whose environment carries `marker` and whose command line has `in_cmdline`."""
    return [pid for pid, (_, environ, cmdline) in processes().items()
            if marker.encode() in environ and in_cmdline.encode() in cmdline]


def ray_workers(marker: str) -> list:
    """The Ray workers, among the processes carrying `marker`, that have joined their raylet:
    Ray renames each `ray::IDLE` or `ray::<task>` (grade_on_node) then. Those are what
    grade. A worker still starting keeps `default_worker.py` as its command line, and a
    node's own agents are `ray::...Agent`: neither ever starts a sandbox, and how long a
    starting worker retries a dead raylet is Ray's affair, not this test's."""
    return [pid for pid, (_, environ, cmdline) in processes().items()
            if marker.encode() in environ and cmdline.startswith(b"ray::") and b"Agent" not in cmdline.split(b"\0")[0]]


def ancestors(pid: int, table: dict | None = None) -> set:
    """The pids above `pid` (its parent, that one's, and so on), from `table` (processes())."""
    table, found = table or processes(), set()
    while pid in table and pid > 1:
        pid = table[pid][0]
        found.add(pid)
    return found


def sandboxes(scratch: Path, under: str | None = None) -> list:
    """Judges (warm judges included) and solution workers grading in `scratch`; with `under`, only those whose
    ancestry has `under` in its environment (a sandbox's own environment is allow-listed)."""
    table = processes()

    def ancestry_has(pid: int) -> bool:
        return any(under.encode() in table[p][1] for p in {pid} | ancestors(pid, table) if p in table)

    return [pid for pid, (_, _, cmdline) in table.items()
            if any(f"{scratch}/sb-".encode() in cmdline and part in cmdline for part in (b"/judge_process.py",
                                                                                       b"/wire/worker_process.py"))
            and (under is None or ancestry_has(pid))]


class TwoNodes:
    """A head (one CPU) on 127.0.0.1 and a second node (two CPUs) on 127.0.0.2, with the
    slow tasks installed: the driver attaches to the head, so killing the second node's
    raylet cannot take the driver with it. Every process they start carries `marker` in
    its environment; each is killed by pid at the end. Started on a thread: a Ray node
    takes tens of seconds to come up on a small machine, time the other tests can use."""

    def __init__(self, site: Path):
        self.marker = f"sbray{os.getpid()}"
        self.scratch = Path(f"/tmp/sbt-{os.getpid()}")  # short: Ray keeps its sockets under TMPDIR
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.scratch.mkdir()
        install_copies(site, {slug: {} for slug in SLOW}, SLOW_TEST)
        self.env = sb_env(PYTHONPATH=str(site), SB_LOAD_PLUGINS=",".join(SLOW), TMPDIR=str(self.scratch),
                          SB_TEST_MARKER=self.marker, RAY_health_check_period_ms="500",
                          RAY_health_check_failure_threshold="4", **RAY_ENV)
        self.port, self.failure = free_port(), None
        self.thread = threading.Thread(target=self._start, daemon=True)
        self.thread.start()

    def _start(self) -> None:
        ray_cli = str(Path(sys.executable).parent / "ray")
        common = ["--disable-usage-stats", "--include-log-monitor=false"]
        nodes = [("head", ["--head", "--node-ip-address=127.0.0.1", f"--port={self.port}", "--num-cpus=1",
                           "--include-dashboard=false", f"--dashboard-port={free_port()}"]),
                 ("worker", [f"--address=127.0.0.1:{self.port}", "--node-ip-address=127.0.0.2", "--num-cpus=2"])]
        try:
            for name, args in nodes:
                subprocess.run([ray_cli, "start", *args, *common], env={**self.env, "SB_NODE": f"{self.marker}-{name}"},
                               check=True, capture_output=True, timeout=240)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            self.failure = f"{exc}: {(getattr(exc, 'stderr', None) or b'')[-2000:]!r}"

    def address(self) -> str:
        self.thread.join()
        assert self.failure is None, self.failure
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.thread.join()
        for pid in pids_with(self.marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.scratch, ignore_errors=True)


@pytest.fixture(scope="module", autouse=True)
def two_nodes(request, tmp_path_factory):
    """Started with the module's first test, when the two-node test is among those chosen."""
    if not any(item.name == "test_a_sweep_survives_a_killed_driver_and_a_lost_node" for item in request.session.items):
        yield None
        return
    nodes = TwoNodes(tmp_path_factory.mktemp("two-nodes-site"))
    yield nodes
    nodes.stop()


def results_of(folder: Path) -> list:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def wait_for(condition, what: str, timeout_s: float = 240, still=lambda: "") -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what} {still()}"
        time.sleep(0.1)


def left_running(scratch: Path, worker: str) -> str:
    """The lost node's Ray workers and every sandbox still alive, with their command lines
    (empty when none is): what a failure names."""
    table = processes()
    pids = set(ray_workers(worker)) | set(sandboxes(scratch))
    lines = {pid: table[pid][2].replace(b"\0", b" ")[:200].decode(errors="replace") for pid in pids if pid in table}
    return "; ".join(f"{pid} (parent {table[pid][0]}): {line}" for pid, line in sorted(lines.items()))


def live_folder_owners(scratch: Path) -> dict:
    """{folder: its owner's command line} for the `sb-*` folders whose owning process still runs."""
    from sb.interrupt import OWNER_MARKER
    table, live = processes(), {}
    for folder in scratch.glob("sb-*"):
        try:
            pid = int((folder / OWNER_MARKER).read_text().split(" ")[0])
        except (OSError, ValueError):
            continue
        if pid in table:
            live[folder.name] = table[pid][2].replace(b"\0", b" ")[:200].decode(errors="replace")
    return live


def test_a_sweep_survives_a_killed_driver_and_a_lost_node(two_nodes, tmp_path):
    """Started locally and SIGKILLed; resumed on the two-node Ray cluster, whose second
    node's raylet is killed mid-sweep: every task once, nothing lost, verdicts as the local
    ones, no sandbox left running and no grading folder left behind."""
    scratch, env = two_nodes.scratch, two_nodes.env
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT)
    agent.chmod(0o755)
    out = tmp_path / "results"
    argv = [*SB, "run", "--model", f"cmd:{agent}", "--results", str(out), "--concurrency", "4", "--jobs", "2"]
    driver = subprocess.Popen([*argv, "--executor", "local"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    wait_for(lambda: any(d["tasks"] for d in _readable(out)), "the local sweep to finish a task")
    driver.kill()  # SIGKILL: the driver gets no say
    driver.wait()
    (killed,) = results_of(out)
    assert not killed["complete"] and 1 <= len(killed["tasks"]) < len(SLOW)

    resumed = subprocess.Popen([*argv, "--resume", "--executor", "ray", "--address", two_nodes.address()], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    worker = f"SB_NODE={two_nodes.marker}-worker"
    wait_for(lambda: sandboxes(scratch, worker) or resumed.poll() is not None, "a grading on the second node")
    if resumed.poll() is not None:
        pytest.fail(f"the sweep ended (exit {resumed.returncode}) before the second node graded anything: "
                    f"{what_ended(resumed, out)}")
    graders = set(ray_workers(worker))
    assert any(ancestors(pid) & graders for pid in sandboxes(scratch, worker)), "the grading worker is not watched"
    (raylet,) = pids_with(worker, "raylet/raylet")
    os.kill(raylet, signal.SIGKILL)
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, what_ended(resumed, out, stdout, stderr)
    assert "without token authentication" not in stderr
    # a sandbox dies with its lost worker, but one that bubblewrap was still setting up stays
    # blocked for good: the first reap of the next command on this machine kills that one
    from sb.interrupt import kill_abandoned_sandboxes
    wait_for(lambda: not ray_workers(worker), "the lost node's workers to end", 60,
             lambda: left_running(scratch, worker))
    wait_for(lambda: not (kill_abandoned_sandboxes(str(scratch)) or left_running(scratch, worker)),
             "the lost node's sandboxes to end", 60, lambda: left_running(scratch, worker))

    (final,) = results_of(out)
    assert final["complete"] and final["resumed"] == 1 and final["executors"] == ["local", "ray"]
    assert sorted(e["slug"] for e in final["tasks"]) == SLOW  # every task once: nothing lost, none twice
    for entry in killed["tasks"]:
        assert entry in final["tasks"]
    by_parity = {}
    for entry in final["tasks"]:
        verdict = (entry["status"], entry["counts"], entry["failed_tests"])
        assert by_parity.setdefault(int(entry["slug"][-1]) % 2, verdict) == verdict  # local and ray alike
    assert by_parity[0][0] == "passed" and by_parity[1][0] == "failed"
    assert {e["executor"] for e in final["tasks"]} == {"local", "ray"}
    # Ray ends the job's workers, the owners of its warm judges' folders, after the driver
    # has gone, and a warm judge dies with its worker a moment later; the reap each later
    # grading on this machine does first leaves none once they have
    wait_for(lambda: not live_folder_owners(scratch), "the owners of the grading folders to end", 60,
             lambda: live_folder_owners(scratch))
    from sb.interrupt import UNMARKED_GRACE_S, reap_orphaned_folders

    def reaped_to_nothing() -> bool:
        reap_orphaned_folders(str(scratch))
        return not left_folders(scratch)

    # a lost node's worker killed between making a folder and marking it leaves it unmarked and
    # empty: a reap removes that one once it is older than the grace
    wait_for(reaped_to_nothing, "the next reap to leave no grading folder", 30 + UNMARKED_GRACE_S,
             lambda: left_folders(scratch))


def what_ended(sweep: subprocess.Popen, out: Path, stdout: str | None = None, stderr: str | None = None) -> str:
    """An ended sweep's output and each task it did not grade, with its detail: what a failure names."""
    if stdout is None:
        stdout, stderr = sweep.communicate()
    ungraded = [(e["slug"], e["status"], e.get("detail")) for d in _readable(out) for e in d["tasks"]
                if e["status"] not in ("passed", "failed")]
    return f"{stdout[-2000:]}\n{stderr[-2000:]}\nnot graded: {ungraded}"


def left_folders(scratch: Path) -> dict:
    """{`sb-*` folder: what is left in it}: what a failure to clean up names."""
    return {p.name: sorted(str(f.relative_to(p)) for f in p.rglob("*"))[:10]
            for p in scratch.iterdir() if p.name.startswith("sb-")}


def _readable(folder: Path):
    for path in sorted(folder.glob("*.json")):
        try:
            yield json.loads(path.read_text())
        except (OSError, ValueError):
            continue
