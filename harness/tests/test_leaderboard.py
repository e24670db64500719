"""The published leaderboard: SET_MANIFESTS.yaml and the committed chart re-derive from the
results files in leaderboard/; `sb publish` copies a draw in and refuses what does not hold."""

from __future__ import annotations

import json
from pathlib import Path
from datetime import date

import pytest

from conftest import REPO
from sb.errors import SbError
from sb.models import prices
from sb.report import manifests
from sb.report.draws import load_dir
from sb.report.publish import MANIFEST_NAME, publish, stable_name
from test_docs import load_tool
from test_report import entry, make_doc, sb

LEADERBOARD = REPO / "leaderboard"


def test_published_results_are_finished_draws():
    docs = load_dir(LEADERBOARD, complete_only=False)
    assert docs, "leaderboard/ holds no results file"
    assert all(d["complete"] for d in docs)


def test_set_manifests_rederive_from_the_published_results():
    derived = manifests.derive(load_dir(LEADERBOARD))
    assert derived, "no published set"
    committed = (LEADERBOARD / MANIFEST_NAME).read_text(encoding="utf-8")
    assert committed == manifests.render(derived), "re-derive: publish again or regenerate the manifest"
    assert manifests.read(LEADERBOARD / MANIFEST_NAME) == derived


def test_committed_chart_equals_a_fresh_render(capsys):
    assert load_tool("render_chart").main(["--leaderboard", str(LEADERBOARD), "--check"]) == 0, capsys.readouterr().out


def test_charts_use_the_font_bundled_with_matplotlib():
    """A system DejaVu of another version would change the glyph paths, and the committed chart with them."""
    import matplotlib
    from matplotlib import font_manager
    from sb.report.charts import RC
    found = font_manager.findfont(font_manager.FontProperties(family=RC["font.family"]), fallback_to_default=False)
    assert found.startswith(matplotlib.get_data_path()), found


def test_render_chart_check_fails_on_a_stale_chart(tmp_path, capsys):
    make_doc(tmp_path, "fake-a", "g", 1, [entry("alpha", "passed")])
    tool = load_tool("render_chart")
    assert tool.main(["--leaderboard", str(tmp_path)]) == 0
    assert tool.main(["--leaderboard", str(tmp_path), "--check"]) == 0
    make_doc(tmp_path, "fake-b", "h", 1, [entry("alpha", "failed", ["t::a"])])
    assert tool.main(["--leaderboard", str(tmp_path), "--check"]) == 1
    assert "differs from a fresh render" in capsys.readouterr().out


def test_published_costs_rederive():
    assert load_tool("check_cost").main([str(LEADERBOARD)]) == 0


def test_publish_copies_under_a_stable_name_and_writes_the_manifest(tmp_path):
    source = make_doc(tmp_path / "runs", "fake-a", "g1", 1, [entry("alpha", "passed")], task_set="warmup")
    board = tmp_path / "board"
    done = publish(source, board)
    assert done == {"published": True, "path": str(board / "fake-a--g1-d1.json"), "manifest_updated": True}
    assert json.loads((board / "fake-a--g1-d1.json").read_text()) == json.loads(source.read_text())
    assert manifests.read(board / MANIFEST_NAME) == {"warmup": {"alpha": 1}}
    assert publish(source, board)["published"] is False


def test_publish_refuses_a_cost_that_does_not_rederive(tmp_path):
    tokens = {"input": 1000, "output": 200, "cache_read": 0, "cache_write": 0}
    right, _ = prices.cost("anthropic", "claude-sonnet-4-5", tokens, date(2026, 1, 2))
    good = make_doc(tmp_path / "ok", "claude-sonnet-4-5", "g1", 1,
                    [entry("alpha", "passed", usd=right, tokens=tokens)], adapter="anthropic")
    bad = make_doc(tmp_path / "bad", "claude-sonnet-4-5", "g2", 1,
                   [entry("alpha", "passed", usd=right * 2, tokens=tokens)], adapter="anthropic")
    assert publish(good, tmp_path / "board")["published"]
    with pytest.raises(SbError, match="cost does not re-derive"):
        publish(bad, tmp_path / "board")
    assert not (tmp_path / "board" / stable_name(json.loads(bad.read_text()))).exists()


def test_publish_refuses_an_unfinished_draw_and_a_changed_set(tmp_path):
    board = tmp_path / "board"
    unfinished = make_doc(tmp_path / "a", "fake-a", "g1", 1, [entry("alpha", "passed")], complete=False)
    with pytest.raises(SbError, match="did not finish"):
        publish(unfinished, board)
    publish(make_doc(tmp_path / "b", "fake-a", "g2", 1, [entry("alpha", "passed")], task_set="warmup"), board)
    grown = make_doc(tmp_path / "c", "fake-b", "g3", 1, [entry("alpha", "passed"), entry("beta", "passed")],
                     task_set="warmup")
    with pytest.raises(SbError, match="set warmup differs"):
        publish(grown, board)


def test_publish_refuses_a_draw_in_which_nothing_was_measured(tmp_path):
    empty = make_doc(tmp_path / "a", "fake-a", "g1", 1,
                     [entry("alpha", "adapter_error"), entry("beta", "adapter_error")])
    done = sb("publish", str(empty), "--leaderboard", str(tmp_path / "board"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "nothing was measured (2 adapter_error)" in done.stderr and not list((tmp_path / "board").glob("*"))
    one = make_doc(tmp_path / "b", "fake-a", "g2", 1, [entry("alpha", "adapter_error"), entry("beta", "timeout")])
    assert publish(one, tmp_path / "board")["published"]
    secret = entry("beta", "passed")
    secret["holdout"] = True  # its pass is withheld from the row: the row itself measured nothing
    only_hidden = make_doc(tmp_path / "c", "fake-b", "g3", 1, [entry("alpha", "adapter_error"), secret])
    done = sb("publish", str(only_hidden), "--leaderboard", str(tmp_path / "board"))
    assert done.returncode == 2 and "nothing was measured" in done.stderr, done.stderr


def test_a_long_model_name_publishes_under_a_name_a_file_system_takes(tmp_path):
    agent = "/opt/agents/" + "really-long-directory/" * 15 + "agent.sh --model big --budget 100"
    doc = make_doc(tmp_path / "a", agent, "g1", 1, [entry("alpha", "passed")], adapter="fake")
    published = publish(doc, tmp_path / "board")
    assert published["published"] and len(Path(published["path"]).name) < 200
    assert Path(published["path"]).name.endswith("--g1-d1.json")


@pytest.mark.parametrize("model, name", [
    ("./my-agent.sh", "__my-agent.sh"), (".hidden", "_hidden"), ("..", "_."), ("", "_"),
    ("openai-compatible:qwen2.5", "openai-compatible_qwen2.5"),
])
def test_a_model_name_never_becomes_a_hidden_or_empty_file_name(model, name):
    from sb.names import safe_name
    assert safe_name(model) == name
    assert not stable_name({"model": model, "run_id": "g-d1"}).startswith(".")


def test_publish_refuses_a_different_file_under_the_same_name(tmp_path):
    source = make_doc(tmp_path / "a", "fake-a", "g1", 1, [entry("alpha", "passed")])
    publish(source, tmp_path / "board")
    other = make_doc(tmp_path / "b", "fake-a", "g1", 1, [entry("alpha", "failed", ["t::a"])])
    with pytest.raises(SbError, match="already holds a different file"):
        publish(other, tmp_path / "board")


def test_cli_publish(tmp_path):
    source = make_doc(tmp_path / "runs", "fake-a", "g1", 1, [entry("alpha", "passed")], task_set="warmup")
    done = sb("publish", str(source), "--leaderboard", str(tmp_path / "board"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"published: {tmp_path / 'board' / 'fake-a--g1-d1.json'} · SET_MANIFESTS.yaml updated\n"
    again = sb("publish", str(source), "--leaderboard", str(tmp_path / "board"), "--json")
    assert json.loads(again.stdout)["published"] is False
    missing = sb("publish", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and missing.stderr.startswith("sb: error:")


def test_reports_doc_shows_the_real_leaderboard_output():
    """docs/reports.md quotes `sb report` over leaderboard/: the quote must be what it prints."""
    done = sb("report", "--leaderboard", str(LEADERBOARD))
    assert done.returncode == 0, done.stderr
    printed = "\n".join(line.rstrip() for line in done.stdout.splitlines())
    doc = (REPO / "docs" / "reports.md").read_text(encoding="utf-8")
    assert f"```\n{printed}\n```" in doc, printed


def test_controls_on_five_tasks_are_not_distinguishable_as_the_doc_says():
    """docs/reports.md: reference against starter on the five v1 tasks, 5 to 0, p = 0.0625."""
    from sb.report.compare import compare
    data = compare(load_dir(LEADERBOARD), "reference", "starter")
    assert (data["wins_a"], data["wins_b"], data["p_value"], data["distinguishable"]) == (5, 0, 0.0625, False)
    assert "reference against the starter (5 to\n0) gives p = 0.0625" in (REPO / "docs" / "reports.md").read_text()
