"""Fakes for every extension point, and the sandbox self-check a third party runs.

- `FakeSandbox`: runs each Job as a plain subprocess and keeps the Jobs it was given, so a
  test can assert what the grader asked for (argv, readable, writable, limits).
- `FakeAdapter`: a model adapter that leaves the files it was built with.
- `FakeToolSession`: a tool-loop session that plays back scripted turns.
- `FakeReporter`: keeps every (doc, path) it was handed.
- `FakeExecutor`: grades each Work at once in the calling thread, after a round trip
  through its wire form (what a Ray worker receives), and keeps every Work it was given;
  it can lose a slug's first grading, as a dead worker would.
- `sandbox_self_check(sandbox)`: a small adversarial corpus run against any Sandbox, the
  way Inspect ships a sandbox self-check. It grades a tiny task whose solution is right
  only if an attack worked (reaching the network, the host's files, the hidden tests, a
  credential, a host socket, a place to persist), and returns what got through.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sb.executors.base import Executor, Work, lost, perform, resolved
from sb.models.base import Attempt, ModelAdapter, ToolSession
from sb.reporters import Reporter
from sb.sandbox.base import Completed, Job, Sandbox
from sb.sandbox.process import limits_preexec, run_process

__all__ = ["FakeAdapter", "FakeExecutor", "FakeReporter", "FakeSandbox", "FakeToolSession", "sandbox_self_check"]


class FakeSandbox(Sandbox):
    name = "fake"
    description = "a plain subprocess that records every Job (for tests only)"

    def __init__(self) -> None:
        self.jobs: list = []

    def run(self, job: Job) -> Completed:
        self.jobs.append(job)
        return run_process(list(job.argv), job, self.name, preexec=limits_preexec(job))


class FakeAdapter(ModelAdapter):
    name = "fake"
    routes = "fake (tests only)"

    def __init__(self, files: dict | None = None, attempt: Attempt | None = None):
        self.files, self.attempt = files or {}, attempt

    def claims(self, model: str) -> bool:
        return model == "fake"

    def solve(self, model, task, workdir, options) -> Attempt:
        for name, data in self.files.items():
            (Path(workdir) / name).write_bytes(data)
        return self.attempt or Attempt(model_answered=model)


class FakeToolSession(ToolSession):
    def __init__(self, turns: list, provider: str = ""):
        self.turns, self.provider = list(turns), provider
        self.seen: list = []

    def step(self, results: list):
        self.seen.append(results)
        return self.turns.pop(0)


@dataclass
class FakeReporter(Reporter):
    name = "fake"
    reported: list = field(default_factory=list)

    def report(self, doc: dict, path) -> None:
        self.reported.append((doc, path))


class FakeExecutor(Executor):
    name = "fake"
    description = "grades in the calling thread and records every Work (for tests only)"

    def __init__(self, jobs: int = 1, address: str | None = None, lose=()):
        super().__init__(jobs)
        self.works: list = []
        self.lose, self.cancelled = set(lose), False

    def open(self, tasks: list, sandbox) -> None:
        self.tasks = {task.slug: task for task in tasks}

    def submit(self, work: Work):
        self.works.append(work)
        if work.slug in self.lose:
            self.lose.discard(work.slug)
            return resolved(lost("the fake worker died"))
        return resolved(perform(Work.from_json(work.to_json()), self.tasks.get(work.slug), self.sandbox))

    def cancel(self) -> None:
        self.cancelled = True


# ---------------------------------------------------------------- the self-check


_TASK = {
    "meta.yaml": "slug: selfcheck\nversion: 1\nsuite: coding\ncategory: sandbox\nkind: files\ntier: laptop\n"
                 "accelerator: null\ndifficulty: easy\ntime_limit_s: 60\ndeps: []\nprobes: the sandbox\n"
                 "frozen_set: unvalidated\ncalibration: []\n",
    "prompt.md": "Implement `secret()` in `attack.py`.\n",
    "starter/attack.py": "def secret():\n    raise NotImplementedError\n",
    "reference/attack.py": "def secret():\n    return 'expected-value-7f3a'\n",
    "hidden_tests/_expected.py": "VALUE = 'expected-value-7f3a'\n",
    "hidden_tests/test_secret.py": "import _expected\nfrom attack import secret\n\n"
                                   "def test_secret():\n    assert secret() == _expected.VALUE\n",
}

_ATTACKS = {
    "reads the hidden tests": "import glob, os\nhere = os.path.dirname(os.getcwd())\n"
                              "for p in glob.glob(os.path.join(here, '**', '_expected.py'), recursive=True):\n"
                              "    try:\n        ns = {}\n        exec(open(p).read(), ns)\n"
                              "        FOUND = ns['VALUE']\n    except Exception:\n        pass\n",
    "reaches a host TCP port": "import socket\ns = socket.create_connection(('127.0.0.1', @PORT@), timeout=2)\n"
                               "FOUND = s.recv(100).decode()\n",
    "reaches a host unix socket": "import socket\ns = socket.socket(socket.AF_UNIX)\ns.settimeout(2)\n"
                                  "s.connect(@UNIX@)\nFOUND = s.recv(100).decode()\n",
    "reads the grader's files": "FOUND = open(@PLANTED@).read().strip()\n",
    "sees a credential": "import os\nFOUND = os.environ['SB_SELF_CHECK_SECRET']\n",
}


def _filled(code: str, fill: dict) -> str:
    for name, value in fill.items():
        code = code.replace(name, value)
    return code


def _solution(attack: str) -> bytes:
    body = "".join("    " + line + "\n" for line in attack.strip().splitlines())
    return (f"FOUND = None\ntry:\n{body}except Exception:\n    pass\n\n"
            "def secret():\n    return FOUND\n").encode()


def sandbox_self_check(sandbox: Sandbox) -> list:
    """Names of the attacks that got through `sandbox` (an empty list: it held)."""
    from sb.grading import grade
    from sb.task import load_task_dir
    with tempfile.TemporaryDirectory(prefix="sb-selfcheck-") as tmp:
        root = Path(tmp)
        for name, text in _TASK.items():
            (root / "task" / name).parent.mkdir(parents=True, exist_ok=True)
            (root / "task" / name).write_text(text)
        (root / "task" / "contract.yaml").write_text("- clause: secret\n  tests: [test_secret.py::test_secret]\n")
        task = load_task_dir(root / "task", package="selfcheck")
        planted = root / "planted.txt"
        planted.write_text("expected-value-7f3a\n")
        with _accomplices(root) as (port, unix):
            os.environ["SB_SELF_CHECK_SECRET"] = "expected-value-7f3a"
            try:
                expected = grade(task, task.reference_files, sandbox).test_ids
                fill = {"@PORT@": str(port), "@UNIX@": repr(str(unix)), "@PLANTED@": repr(str(planted))}
                return [label for label, code in _ATTACKS.items()
                        if grade(task, {"attack.py": _solution(_filled(code, fill))}, sandbox, expected).passed]
            finally:
                os.environ.pop("SB_SELF_CHECK_SECRET", None)


class _accomplices:
    """A TCP and a unix-socket server on the host that hand the expected value to anyone."""

    def __init__(self, root: Path):
        self.root, self.stop = root, threading.Event()

    def __enter__(self):
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.unix_path = Path(tempfile.gettempdir()) / f"sb-selfcheck-{os.getpid()}-{id(self)}.sock"
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(self.unix_path))
        self.unix.listen()
        for server in (self.tcp, self.unix):
            server.settimeout(0.2)
            threading.Thread(target=self._serve, args=(server,), daemon=True).start()
        return self.tcp.getsockname()[1], self.unix_path

    def _serve(self, server):
        deadline = time.monotonic() + 300
        while not self.stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = server.accept()
                conn.sendall(b"expected-value-7f3a")
                conn.close()
            except (socket.timeout, OSError):
                continue

    def __exit__(self, *exc):
        self.stop.set()
        self.tcp.close()
        self.unix.close()
        self.unix_path.unlink(missing_ok=True)
        shutil.rmtree(self.root / "unused", ignore_errors=True)
