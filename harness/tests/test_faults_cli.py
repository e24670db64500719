"""Bad input and interruption, as a user meets them: real `sb` processes, their one line,
their exit code, and nothing left behind (no process, no temporary folder, no lost task)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, fake_install, sb_env
from scripted_llm_server import Failure, ScriptedServer

SB = [sys.executable, "-c", "from sb.cli import main; main()"]


def sb(*args, env=None, cwd=None, timeout=600):
    return subprocess.run([*SB, *args], capture_output=True, text=True, env=env or sb_env(), cwd=cwd, timeout=timeout)


def one_line_error(done, code: int, words: str) -> None:
    assert done.returncode == code, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("sb: error: "), done.stderr
    assert words in done.stderr, done.stderr


@pytest.mark.parametrize("args, words", [
    (["--tasks", ""], "names no task"),
    (["--tasks", ",,"], "names no task"),
    (["--tasks", "fixture_add,"], "empty entry"),
    (["--tasks", "fixture_add,fixture_add"], "twice"),
    (["--model", ""], "model name is empty"),
    (["--model", "cmd:"], "model name is empty"),
    (["--temperature", "nan"], "finite"),
    (["--base-url", "notaurl", "--model", "openai-compatible:m"], "http:// or https://"),
    (["--base-url", "ftp://example.org", "--model", "openai-compatible:m"], "http:// or https://"),
    (["--retry-after-cap", "-1"], "--retry-after-cap"),
    (["--retry-after-cap", "nan"], "finite"),
    (["--tier", "accelerated"], "'fixture_add' is in tier 'laptop', not 'accelerated'"),
    (["--suite", "nosuch"], "unknown suite 'nosuch'; choose one of: coding"),
    (["--set", "nosuch"], "unknown set 'nosuch'; choose one of: unvalidated"),
    (["--temperature", "0.5"], "--temperature is not used by reference (no model is called)"),
    (["--timeout", "5", "--model", "starter"], "--timeout is not used by starter"),
    (["--model", "cmd:./my-agent.sh --fast"], "where ./my-agent.sh is not: name it by its full path"),
    (["--model", "cmd:KEY=1 bin/agent"], "where bin/agent is not"),
])
def test_a_bad_selection_or_setting_is_one_line_and_exit_2(fixture_env, args, words):
    base = {"--model": "reference", "--tasks": "fixture_add"}
    extra = dict(zip(args[::2], args[1::2]))
    argv = [a for k, v in {**base, **extra}.items() for a in (k, v)]
    env = {**fixture_env, "OPENAI_API_KEY": "sk-test"}
    one_line_error(sb("run", *argv, env=env), 2, words)


def test_a_closed_port_is_found_before_any_task(fixture_env):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    env = {**fixture_env, "OPENAI_API_KEY": "sk-test"}
    done = sb("run", "--model", "openai-compatible:m", "--base-url", f"http://127.0.0.1:{port}/v1",
              "--tasks", "fixture_add", env=env)
    one_line_error(done, 2, "cannot connect")


@pytest.mark.parametrize("option", ["--results", "--keep"])
def test_an_unwritable_output_is_found_before_any_task(fixture_env, tmp_path, option):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    done = sb("run", "--model", "cmd:touch CALLED", "--tasks", "fixture_add", option, str(blocked / "out"),
              env=fixture_env, cwd=tmp_path)
    one_line_error(done, 2, "cannot write there")
    assert not list(tmp_path.rglob("CALLED"))  # the agent never ran: nothing was paid for


def test_export_publish_and_speed_into_unwritable_places(fixture_env, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    one_line_error(sb("export", "fixture_add", str(blocked / "d"), env=fixture_env), 2, "cannot write there")
    results = tmp_path / "r.json"
    results.write_text("{}")
    one_line_error(sb("publish", str(results), "--leaderboard", str(blocked / "lb"), env=fixture_env), 2,
                   "cannot write there")
    done = sb("speed", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--results", str(blocked / "s"),
              env=fixture_env)
    one_line_error(done, 2, "cannot write there")


def test_export_json(fixture_env, tmp_path):
    done = sb("export", "fixture_add", str(tmp_path / "out"), "--reference", "--json", env=fixture_env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"slug": "fixture_add", "dest": str(tmp_path / "out"), "files": ["adder.py"],
                                       "what": "reference"}


def test_compare_refuses_a_model_against_itself(tmp_path):
    (tmp_path / "results").mkdir()
    one_line_error(sb("compare", "reference", "reference", "--results", str(tmp_path / "results")), 2,
                   "two different models")


def test_a_closed_stdout_stops_the_printing_not_the_sweep(fixture_env, tmp_path):
    proc = subprocess.Popen([*SB, "run", "--model", "reference", "--tasks", "fixture_add", "--repeat", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=fixture_env, cwd=tmp_path)
    proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    docs = [json.loads(p.read_text()) for p in (tmp_path / "results").glob("*.json")]
    assert len(docs) == 2 and all(d["complete"] for d in docs)


def _first_results(folder: Path) -> Path:
    (path,) = sorted(folder.glob("*.json"))
    return path


def test_resume_refuses_a_damaged_results_file(fixture_env, tmp_path):
    args = ["run", "--model", "reference", "--tasks", "fixture_add"]
    assert sb(*args, env=fixture_env, cwd=tmp_path).returncode == 0
    path = _first_results(tmp_path / "results")
    doc = json.loads(path.read_text())
    doc["complete"] = False
    del doc["tasks"][0]["status"]
    path.write_text(json.dumps(doc))
    one_line_error(sb(*args, "--resume", env=fixture_env, cwd=tmp_path), 2, "field 'status'")
    path.write_text(path.read_text()[:200])  # torn by hand
    one_line_error(sb(*args, "--resume", env=fixture_env, cwd=tmp_path), 2, "cannot resume")


def test_two_resumes_of_one_sweep_cannot_both_run(fixture_env, tmp_path):
    args = ["run", "--model", "reference", "--tasks", "fixture_add"]
    assert sb(*args, env=fixture_env, cwd=tmp_path).returncode == 0
    path = _first_results(tmp_path / "results")
    doc = json.loads(path.read_text())
    doc["complete"], doc["tasks"] = False, []
    path.write_text(json.dumps(doc))
    from sb.run import Sweep, lock_path
    sweep = Sweep([], None, "m", None, results_dir=tmp_path / "results", group_id=doc["group_id"])
    with open(lock_path(sweep), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another resume is running
        one_line_error(sb(*args, "--resume", env=fixture_env, cwd=tmp_path), 2, "another sb process")
    assert sb(*args, "--resume", env=fixture_env, cwd=tmp_path).returncode == 0


def test_report_and_publish_refuse_a_broken_results_file(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "x.json").write_text(json.dumps({"schema_version": 1, "tasks": [], "run_at": "yesterday"}))
    one_line_error(sb("report", "--variance", "--results", str(folder)), 2, "x.json")
    one_line_error(sb("publish", str(folder / "x.json"), "--leaderboard", str(tmp_path / "lb")), 2, "x.json")


def test_a_broken_task_package_is_skipped_with_a_warning(fixture_env, tmp_path):
    site = Path(fixture_env["PYTHONPATH"])
    broken = tmp_path / "sb_task_broken"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise RuntimeError('this package is broken')\n")
    fake_install(site, broken, "broken")
    env = {**fixture_env, "SB_LOAD_PLUGINS": "fixture_add,broken"}
    listed = sb("list", "--json", env=env)
    assert listed.returncode == 0 and [r["slug"] for r in json.loads(listed.stdout)] == ["fixture_add"]
    assert "skipped a broken package" in listed.stderr and "broken" in listed.stderr
    asked = sb("validate", "broken", env=env)
    one_line_error(asked, 1, "cannot be loaded")


# ---------------------------------------------------------------- a refused key, the retry-after cap

def _compatible_run(env: dict, cwd: Path, steps: list, *extra):
    """`sb run` of openai-compatible against a scripted server: (the finished process, its requests)."""
    env = {k: v for k, v in env.items() if k != "OPENAI_COMPATIBLE_API_KEY"}
    with ScriptedServer(steps) as server:
        done = sb("run", "--model", "openai-compatible:m", "--base-url", server.url + "/v1", "--tasks", "fixture_add",
                  *extra, env=env, cwd=cwd)
    return done, server.requests


def test_a_refused_key_stops_sb_run_at_once_with_one_line_naming_the_status(fixture_env, tmp_path):
    """Before: one adapter_error per task, each with its own refused requests, and exit 1 only
    because nothing was measured; now the sweep stops at the first refusal, --resume continues."""
    refused = Failure(401, "invalid api key", retry_after_ms=None, error_type="authentication_error")
    done, requests = _compatible_run(fixture_env, tmp_path, [refused])
    one_line_error(done, 1, "stopped at once: the openai-compatible API rejected the placeholder key "
                            "(OPENAI_COMPATIBLE_API_KEY is not set): HTTP 401 from the API: invalid api key "
                            "(authentication_error) (1 request sent); finished tasks are kept, --resume continues")
    assert len(requests) == 1
    doc = json.loads(_first_results(tmp_path / "results").read_text())
    assert doc["complete"] is False and [e["status"] for e in doc["tasks"]] == ["adapter_error"]


def test_the_retry_after_cap_is_an_option_recorded_in_the_settings(fixture_env, tmp_path):
    slow_down = Failure(429, "slow down", retry_after_ms=None, retry_after="10", error_type="rate_limit_error")
    done, requests = _compatible_run(fixture_env, tmp_path, [slow_down], "--retry-after-cap", "5", "--json")
    doc = json.loads(done.stdout)
    assert doc["settings"] == {"retry_after_cap_s": 5.0}
    assert json.loads(_first_results(tmp_path / "results").read_text())["settings"] == {"retry_after_cap_s": 5.0}
    entry, = doc["tasks"]
    assert (entry["status"], entry["detail"]) == ("adapter_error", "rate limited: retry-after 10 s exceeds the 5 s cap "
                                                                    "(1 request sent)")
    assert len(requests) == 1 and done.returncode == 1  # nothing was measured


def test_every_sb_run_option_is_documented_in_its_section():
    from sb.cli import cli
    text = (REPO / "docs" / "cli.md").read_text()
    section = text[text.index("## `sb run`"):]
    section = section[:section.index("\n## ", 1)]
    missing = [o for p in cli.commands["run"].params for o in getattr(p, "opts", []) if o.startswith("--")
               and f"`{o}" not in section and f"[{o}" not in section]
    assert missing == [], f"docs/cli.md's sb run section does not document {missing}"


# ---------------------------------------------------------------- interruption


def _alive_with(marker: str) -> list:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline or marker.encode() in environ:
            found.append(int(proc.name))
    return found


def _interrupt(argv: list, env: dict, cwd: Path, sig: int, after_s: float, marker: str, started=None):
    """Start `sb`, wait until `started()` says the work is under way (the agent or the
    sandbox is running), then `after_s` more, and send `sig`."""
    proc = subprocess.Popen([*SB, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while started and not started() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(after_s)
    sent = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    elapsed = time.monotonic() - sent
    time.sleep(0.5)
    return proc, err.decode(), elapsed


def _is_agent(pid: int, marker: str) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        return b"time.sleep" in cmdline and b"sb.cli" not in cmdline  # the agent, not sb naming it
    except OSError:
        return False


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_interrupting_a_run_stops_everything_at_once(fixture_env, tmp_path, sig, code, jobs):
    marker = f"sbint{os.getpid()}x{sig}x{jobs}"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**fixture_env, "TMPDIR": str(scratch), "SB_TEST_MARKER": marker}
    agent = f"cmd:python3 -c 'import time; time.sleep(120)' {marker}"
    proc, err, elapsed = _interrupt(["run", "--model", agent, "--tasks", "fixture_add", "--jobs", jobs,
                                     "--concurrency", jobs], env, tmp_path, sig, 0.5, marker,
                                    started=lambda: any(p for p in _alive_with(marker) if _is_agent(p, marker)))
    assert proc.returncode == code, err
    assert elapsed < 5, f"took {elapsed:.1f}s to stop"
    assert "stopped every task in flight" in err and "--resume" in err
    assert _alive_with(marker) == []
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("command", ["validate", "grade"])
def test_interrupting_a_grading_leaves_nothing(fixture_env, task_copy, tmp_path, command):
    marker = f"sbgrade{os.getpid()}{command}"
    site = tmp_path / "slow-site"
    site.mkdir()
    slow = task_copy(time_limit_s=120)
    (slow / "hidden_tests" / "test_slow.py").write_text(
        "import time\nfrom adder import add\n\ndef test_slow():\n    time.sleep(100)\n    assert add(1, 2) == 3\n")
    fake_install(site, slow, "fixture_add")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**fixture_env, "PYTHONPATH": str(site), "TMPDIR": str(scratch), "SB_TEST_MARKER": marker}
    solution = tmp_path / "solution"
    solution.mkdir()
    (solution / "adder.py").write_text("def add(a, b):\n    return a + b\n")
    argv = ["validate", "fixture_add", "--isolation", "none"] if command == "validate" else \
        ["grade", "fixture_add", str(solution), "--isolation", "none"]
    proc, err, elapsed = _interrupt(argv, env, tmp_path, signal.SIGINT, 1.0, str(scratch),
                                    started=lambda: any(scratch.iterdir()))
    assert proc.returncode == 130, err
    assert elapsed < 5
    assert _alive_with(str(scratch)) == []
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("args, message", [
    (["report", "--html", "/proc/no-such-folder/site"], "--html /proc/no-such-folder/site: cannot write there"),
    (["export", "fixture_add", "OUT", "--mutant", "nope"], "its mutants: ignores_negatives, off_by_one"),
    (["run", "--model", "reference", "--tasks", "fixture_add", "--resume"], "nothing to resume"),
    (["run", "--model", "reference", "--tasks", "fixture_add", "--base-url", "http://127.0.0.1:1"],
     "--base-url is not used by the reference adapter"),
])
def test_first_hour_mistakes_are_one_line_and_exit_2(fixture_env, tmp_path, args, message):
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    one_line_error(sb(*args, env=fixture_env, cwd=tmp_path), 2, message)


def test_resume_says_what_it_resumes(fixture_env, tmp_path):
    args = ["run", "--model", "reference", "--tasks", "fixture_add"]
    assert sb(*args, env=fixture_env, cwd=tmp_path).returncode == 0
    path = _first_results(tmp_path / "results")
    doc = json.loads(path.read_text())
    doc["complete"], doc["tasks"] = False, []
    path.write_text(json.dumps(doc))
    done = sb(*args, "--resume", env=fixture_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"sb: resuming sweep {doc['group_id']} (reference:" in done.stderr and "0 task(s) graded" in done.stderr


def test_new_takes_json(tmp_path):
    done = sb("new", "json_demo", "--dir", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"slug": "json_demo", "path": str(tmp_path / "json_demo")}


def test_keep_refuses_a_folder_an_earlier_run_left_unless_resuming(fixture_env, tmp_path):
    kept = tmp_path / "kept"
    first = sb("run", "--model", "reference", "--tasks", "fixture_add", "--keep", str(kept), "--results",
               str(tmp_path / "r"), env=fixture_env)
    assert first.returncode == 0, first.stderr
    (kept / "fixture_add" / "precious.txt").write_text("mine\n")
    again = sb("run", "--model", "starter", "--tasks", "fixture_add", "--keep", str(kept), "--results",
               str(tmp_path / "r"), env=fixture_env)
    one_line_error(again, 2, "holds files from an earlier run")
    assert (kept / "fixture_add" / "precious.txt").read_text() == "mine\n"
    assert "a + b" in (kept / "fixture_add" / "adder.py").read_text()  # the reference's answer, not the starter
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "fixture_add").write_text("a file where the task's folder would go\n")
    one_line_error(sb("run", "--model", "reference", "--tasks", "fixture_add", "--keep", str(tmp_path / "flat"),
                      "--results", str(tmp_path / "r"), env=fixture_env), 2, "holds files from an earlier run")
