"""`--executor ray`: gradings on a Ray cluster (`pip install 'scratchbench[ray]'`).

`--address HOST:PORT` (or RAY_ADDRESS) joins a running cluster; with neither, a Ray
instance on this machine (node address 127.0.0.1, with a token: Ray's default for a new
local instance) is started for the command and stopped after it. Each grading is one
Ray task that takes a Work as JSON and returns its result as JSON: no pickled objects or
code cross (the function is found by name in the node's own `sb`). The node loads the
task by slug from its own installation and refuses, in one line, when the task's content
hash, the toolchain fingerprint or the grader differs from the driver's.

A grading is idempotent, so Ray retries it when its node, or Ray's process on it, dies; model calls stay
on the driver and are never retried by Ray. A CUDA task asks for a GPU, a Metal task for
the custom resource `metal` (`ray start --resources='{"metal": 1}'` on a Mac): with no such
node in the cluster the task is needs_accelerator before any model is called.

Graded code runs on the cluster's machines, so the ray executor refuses `--isolation
none` (unsandboxed code could reach the cluster and submit jobs of its own), and warns
when the cluster it uses does not ask for a token: Ray's ports listen on every interface
(docs/scaling.md).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from concurrent.futures import Future
from functools import lru_cache
from importlib.util import find_spec

from sb.errors import SbError
from sb.executors.base import Executor, Work, lost, perform
from sb.hookspecs import hookimpl
from sb.outcome import Outcome, Status

GRADING_RETRIES = 3  # a grading whose node, or Ray's process on it, died runs again (idempotent); model calls never do
RESOURCE_OF_DEVICE = {"cuda": "GPU", "metal": "metal"}


class RayExecutor(Executor):
    name = "ray"
    description = "a Ray cluster: --address HOST:PORT or RAY_ADDRESS, else a local Ray instance for the command"
    takes_address = True

    @classmethod
    def unavailable_reason(cls) -> str | None:
        if find_spec("ray") is None:
            return "ray is not installed: pip install 'scratchbench[ray]'"
        return None

    def open(self, tasks: list, sandbox) -> None:
        if sandbox.name == "none":
            raise SbError("the ray executor refuses --isolation none: graded code could reach the cluster "
                          "and submit jobs to it (use bwrap)")
        from sb import toolchain
        toolchain.fingerprint()  # taken before ray puts its vendored packages on sys.path, as a local run's
        import ray
        self.pending: set = set()
        self.lock = threading.Lock()
        self.joined = self.address or os.environ.get("RAY_ADDRESS")
        self.owns_connection = not ray.is_initialized()
        if self.owns_connection:
            self._connect(ray)
        if not token_authentication():
            where = f"the Ray cluster at {self.joined} was joined" if self.joined else "the Ray instance runs"
            self.warnings.append(f"{where} without token authentication: anyone who reaches its ports can run "
                                 "code on it (docs/scaling.md)")
        self.resources = ray.cluster_resources()
        self.remote = _remote_grading(ray)

    def _connect(self, ray) -> None:
        quiet = {"logging_level": logging.ERROR, "log_to_driver": False, "configure_logging": True}
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            if self.joined:
                ray.init(address=self.joined, **quiet)
            else:  # a laptop's cluster: this machine only (its ports still listen on every interface)
                ray.init(num_cpus=self.jobs, include_dashboard=False, _node_ip_address="127.0.0.1", **quiet)
        except Exception as exc:  # noqa: BLE001 - ConnectionError, AuthenticationError, a bad address: one line, exit 2
            where = self.joined or "a local instance"
            raise SbError(f"cannot start Ray ({where}): {_first_line(exc)}") from None

    def precheck(self, task) -> Outcome | None:
        """Only what the cluster as a whole lacks: deps are the node's to check."""
        from sb.executors.base import needed_device
        device = needed_device(task)
        if device and self.resources.get(RESOURCE_OF_DEVICE[device], 0) < 1:
            return Outcome(task.slug, Status.NEEDS_ACCELERATOR,
                           detail=f"no node of the Ray cluster offers a {device} device "
                                  f"(resource {RESOURCE_OF_DEVICE[device]!r})")
        return None

    def submit(self, work: Work) -> Future:
        out: Future = Future()
        try:
            ref = self.remote.options(**_resources(work)).remote(work.to_json())
        except Exception as exc:  # noqa: BLE001 - a grading Ray refuses is lost, not the sweep
            out.set_result(lost(f"Ray refused the grading: {_first_line(exc)}"))
            return out
        with self.lock:
            self.pending.add(ref)
        ref.future().add_done_callback(lambda done: self._finished(ref, done, out))
        return out

    def _finished(self, ref, done: Future, out: Future) -> None:
        with self.lock:
            self.pending.discard(ref)
        try:
            out.set_result(json.loads(done.result()))
        except Exception as exc:  # noqa: BLE001 - the node died past every retry, or the task was cancelled
            out.set_result(lost(f"the Ray task was lost: {_first_line(exc)}"))

    def cancel(self) -> None:
        if not self.started:
            return
        import ray
        with self.lock:
            pending = list(self.pending)
        for ref in pending:
            try:
                ray.cancel(ref)  # KeyboardInterrupt on the node: its sandboxes are killed, its folders removed
            except Exception:  # noqa: BLE001 - a task already done or gone has nothing to cancel
                pass

    def close(self) -> None:
        if self.started and self.owns_connection:
            import ray
            ray.shutdown()  # a local instance stops; a joined cluster is only left

    def describe(self) -> dict:
        import ray
        nodes = [n for n in ray.nodes() if n.get("Alive")] if ray.is_initialized() else []
        return {"name": self.name, "address": self.joined or "local", "nodes": len(nodes),
                "cpus": int(self.resources.get("CPU", 0)), "gpus": int(self.resources.get("GPU", 0)),
                "metal": int(self.resources.get("metal", 0))}


def token_authentication() -> bool:
    """Whether this process talks to Ray with a token (Ray reads RAY_AUTH_MODE, and sets it
    itself when it finds a token for a cluster it discovered)."""
    return os.environ.get("RAY_AUTH_MODE", "").lower() == "token"


def _resources(work: Work) -> dict:
    if work.accelerator == "cuda":
        return {"num_gpus": 1}
    if work.accelerator == "metal":
        return {"resources": {"metal": 1}}
    return {}


def _remote_grading(ray):
    return ray.remote(num_cpus=1, max_retries=GRADING_RETRIES, retry_exceptions=False)(grade_on_node)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:300]}" if text else type(exc).__name__


# ---------------------------------------------------------------- on a Ray node


def grade_on_node(text: str) -> str:
    """One Work, graded where Ray placed it, with this node's tasks and sandbox."""
    import socket
    import ray
    work = Work.from_json(text)
    node = f"{socket.gethostname()}/{ray.get_runtime_context().get_node_id()[:8]}"
    return json.dumps(perform(work, _installed_tasks().get(work.slug), _sandbox(work.isolation), node))


def _installed_tasks() -> dict:
    from sb.session import default_session
    return default_session().tasks()


@lru_cache(maxsize=4)
def _sandbox(name: str):
    from sb.session import default_session
    try:
        return default_session().sandbox(name)
    except SbError:
        return None  # perform() refuses: the isolation cannot run on this node


@hookimpl
def register_executors(register):
    register(RayExecutor)
