"""sb.testing: the fakes work as the base classes say, and the sandbox self-check tells a
sandbox that holds from one that does not."""

from __future__ import annotations

from sb.testing import FakeAdapter, FakeReporter, FakeSandbox, FakeToolSession, sandbox_self_check


def test_the_bubblewrap_sandbox_passes_its_self_check(bwrap_sandbox):
    assert sandbox_self_check(bwrap_sandbox) == []


def test_the_self_check_catches_a_sandbox_that_isolates_nothing():
    got_through = sandbox_self_check(FakeSandbox())
    # a plain subprocess reads the grader's files, the hidden tests' files and host sockets;
    # only the credential is kept out (the environment is always built from an allow-list)
    assert {"reads the grader's files", "reaches a host TCP port", "reaches a host unix socket",
            "reads the hidden tests"} <= set(got_through)
    assert "sees a credential" not in got_through


def test_the_fake_sandbox_records_the_jobs_of_a_grading(fixture_task):
    from sb.grading import grade
    sandbox = FakeSandbox()
    assert grade(fixture_task, fixture_task.reference_files, sandbox).passed
    assert len(sandbox.jobs) == 2  # the judge and the worker
    judge = next(j for j in sandbox.jobs if "judge_process.py" in " ".join(map(str, j.argv)))
    worker = next(j for j in sandbox.jobs if "worker_process.py" in " ".join(map(str, j.argv)))
    assert any(str(p).endswith("hidden_tests") for p in judge.readable)
    assert not any("hidden_tests" in str(p) for p in worker.readable + worker.writable)


def test_fake_adapter_session_and_reporter(tmp_path):
    adapter = FakeAdapter({"adder.py": b"x"})
    attempt = adapter.solve("fake", None, tmp_path, None)
    assert (tmp_path / "adder.py").read_bytes() == b"x" and attempt.produced_files
    session = FakeToolSession(["turn"])
    assert session.step([]) == "turn" and session.seen == [[]]
    reporter = FakeReporter()
    reporter.report({"run_id": "r"}, tmp_path / "r.json")
    assert reporter.reported == [({"run_id": "r"}, tmp_path / "r.json")]
