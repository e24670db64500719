"""How sandbox/process.py waits for a job: its end, its limit or its cancellation, the same
through a pidfd (Linux) as through Popen's polling (elsewhere)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from sb.sandbox.base import Job
from sb.sandbox.process import run_process


MODES = ["pidfd", "polled"] if sys.platform.startswith("linux") else ["polled"]  # a pidfd is Linux's


@pytest.fixture(params=MODES)
def wait_mode(request, monkeypatch):
    if request.param == "polled":
        def no_pidfd(pid):
            raise OSError("no pidfd here")
        monkeypatch.setattr(os, "pidfd_open", no_pidfd, raising=False)
    return request.param


def _job(tmp_path, code: str, timeout_s: float = 30, cancel=None) -> Job:
    return Job(argv=[sys.executable, "-c", code], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, timeout_s=timeout_s,
               cancel=cancel)


def test_a_job_that_ends_gives_its_exit_status_and_output(tmp_path, wait_mode):
    job = _job(tmp_path, "print('ran'); raise SystemExit(3)")
    done = run_process(job.argv, job, "none")
    assert done.returncode == 3 and not done.timed_out and "ran" in done.output


def test_a_job_past_its_limit_is_killed_as_timed_out(tmp_path, wait_mode):
    job = _job(tmp_path, "import time; time.sleep(60)", timeout_s=0.5)
    done = run_process(job.argv, job, "none")
    assert done.timed_out and done.returncode is None and done.duration_s < 30


def test_a_cancelled_job_is_killed_and_not_timed_out(tmp_path, wait_mode):
    cancel = threading.Event()
    job = _job(tmp_path, "import time; time.sleep(60)", cancel=cancel)
    threading.Timer(0.3, cancel.set).start()
    done = run_process(job.argv, job, "none")
    assert not done.timed_out and done.returncode is not None and done.duration_s < 30


def test_a_pidfd_closed_elsewhere_loses_neither_the_limit_nor_the_end(tmp_path, monkeypatch):
    """Its number reused by a readable descriptor (a double close elsewhere in the grader):
    the wait falls back to polling the child instead of taking readiness for its end."""
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"x")  # always readable, as another file reusing the pidfd's number would be
    handed: list = []

    def not_a_pidfd(pid):
        handed.append(os.dup(read_fd))
        return handed[-1]
    monkeypatch.setattr(os, "pidfd_open", not_a_pidfd)
    try:
        job = _job(tmp_path, "import time; time.sleep(60)", timeout_s=0.5)
        done = run_process(job.argv, job, "none")
        assert done.timed_out and done.duration_s < 30
        job = _job(tmp_path, "import time; time.sleep(0.3); raise SystemExit(4)")
        done = run_process(job.argv, job, "none")
        assert done.returncode == 4 and not done.timed_out
    finally:
        for fd in (read_fd, write_fd, *handed):  # the wait never closes a number it no longer trusts
            os.close(fd)
