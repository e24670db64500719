"""sb runs in Inspect's viewer: the built-in `inspect` reporter (opt-in, `sb run --report
inspect:DIR`), `sb report --inspect DIR`, the logs read back with read_eval_log, and an
`inspect view bundle` built offline, served on loopback and opened in headless Chromium
(the viewer stays blank from file://)."""

from __future__ import annotations

import functools
import http.server
import math
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import sb
from test_report import entry, make_doc

TASKS = ("regex", "format")  # the fastest files task and a reply task


def sb_main(*args) -> int:
    """`sb ARGS` in this process (Inspect is imported once per session, not once per command)."""
    from sb.cli import main
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as done:
            main(list(args))
    finally:
        signal.signal(signal.SIGINT, handlers[0])
        signal.signal(signal.SIGTERM, handlers[1])
    return done.value.code


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """`sb run --model reference --report inspect:DIR`: the results folder and the log folder."""
    root = tmp_path_factory.mktemp("inspect-run")
    (root / "tmp").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(root / "tmp"))
        patch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
        code = sb_main("run", "--model", "reference", "--tasks", ",".join(TASKS), "--results", str(root / "results"),
                       "--report", f"inspect:{root / 'logs'}", "--json")
    assert code == 0
    return root


def read_only_log(folder: Path):
    from inspect_ai.log import read_eval_log
    (path,) = folder.glob("*.eval")
    return read_eval_log(str(path))


def test_each_task_is_a_sample_with_the_messages_the_files_and_the_verdict(run):
    log = read_only_log(run / "logs")
    (results_file,) = (run / "results").glob("*.json")
    assert log.status == "success" and log.eval.model == "reference/reference"
    assert log.eval.metadata["scratchbench"]["results_file"] == str(results_file)
    assert {s.id for s in log.samples} == set(TASKS)
    tasks = {t.slug: t for t in sb.find_tasks(list(TASKS))}
    for sample in log.samples:
        task, score = tasks[sample.id], sample.scores["sb_grader"]
        assert [{"role": m.role, "content": m.text} for m in sample.input] == sb.solver_messages(task)
        assert score.value == "C" and score.metadata["status"] == "passed"
        for name in task.declared_files:  # the files the model left, as it left them
            assert f"### {name}" in sample.output.completion
            assert task.reference_files[name].decode().strip() in sample.output.completion
    (score,) = log.results.scores
    assert {k: m.value for k, m in score.metrics.items()} == {"pass_rate": 1.0, "measured": 2}
    assert not list((run / "tmp").glob("sb-report-files-*"))  # the scratch copy of the files is gone


def test_tokens_cost_unmeasured_and_holdout_tasks(tmp_path):
    from sb.report.inspect_log import write_log
    tokens = {"input": 1000, "output": 200, "cache_read": 50, "cache_write": 0}
    secret = {**entry("secret", "passed"), "holdout": True}
    path = make_doc(tmp_path, "fake-model", "g", 1, [entry("alpha", "failed", failed=["t::a"], tokens=tokens,
                                                           usd=0.0123), entry("beta", "missing_deps"), secret])
    files = {"alpha": {"alpha.py": b"text = '```'\n"}}
    log = read_only_log(write_log(_load(path), tmp_path / "logs", files, path).parent)
    alpha, beta = sorted(log.samples, key=lambda s: s.id)  # the holdout task is withheld, as sb publish does
    assert log.eval.metadata["scratchbench"]["holdout_withheld"] == 1 and "secret" not in log.eval.dataset.sample_ids
    usage = alpha.model_usage["fake/fake-model"]
    assert (usage.input_tokens, usage.output_tokens, usage.input_tokens_cache_read) == (1000, 200, 50)
    assert usage.total_cost == pytest.approx(0.0123)
    assert alpha.scores["sb_grader"].explanation == "failing tests:\nt::a"
    assert "````\ntext = '```'\n````" in alpha.output.completion  # a fence longer than the file's backticks
    assert beta.scores["sb_grader"].metadata["evidence"] is False and "no files were graded" in beta.output.completion
    (score,) = log.results.scores
    assert score.metrics["pass_rate"].value == 0.0 and score.metrics["measured"].value == 1
    assert log.stats.model_usage["fake/fake-model"].total_cost == pytest.approx(0.0123)


def _load(path):
    from sb import results
    return results.load(path)


def test_nothing_measured_is_nan_never_zero(tmp_path):
    from sb.report.inspect_log import eval_log
    doc = _load(make_doc(tmp_path, "fake-gpu", "g", 1, [entry("alpha", "needs_accelerator")]))
    assert math.isnan(eval_log(doc, {}).results.scores[0].metrics["pass_rate"].value)


def test_sb_report_inspect_writes_published_draws(run, tmp_path, capsys):
    assert sb_main("report", "--inspect", str(tmp_path / "logs"), "--leaderboard", str(run / "results")) == 0
    assert capsys.readouterr().out.startswith(f"wrote 1 Inspect log(s) to {tmp_path / 'logs'}")
    log = read_only_log(tmp_path / "logs")
    assert all("not in this record" in s.output.completion for s in log.samples)  # published files keep none


def test_the_reporter_is_off_unless_asked_for(pm, tmp_path):
    from sb.reporters import chosen_reporters
    assert "inspect" not in chosen_reporters((), pm)
    chosen = chosen_reporters([f"inspect:{tmp_path}"], pm)
    assert chosen["inspect"].log_dir == tmp_path
    with pytest.raises(sb.SbError, match="--report inspect:DIR"):
        chosen_reporters(["inspect"], pm)
    with pytest.raises(sb.SbError, match="unknown reporter 'nope'; choose one of: inspect"):
        chosen_reporters(["nope"], pm)


@pytest.fixture(scope="module")
def served_bundle(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "site"
    done = subprocess.run([str(Path(sys.executable).with_name("inspect")), "view", "bundle", "--log-dir",
                           str(run / "logs"), "--output-dir", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_the_viewer_bundle_shows_the_runs_samples(served_bundle):
    from sb.report.screenshot import browser
    with browser(1400, 900) as chromium:
        chromium.get(served_bundle)
        deadline, text = time.monotonic() + 60, ""
        while time.monotonic() < deadline and not all(slug in text for slug in TASKS):
            time.sleep(0.5)
            text = chromium.execute_script("return document.body.innerText")
    assert "scratchbench" in text and "PASS_RATE" in text and "2 Samples" in text, text[:2000]
    assert all(slug in text for slug in TASKS)
