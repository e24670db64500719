"""Run totals: the sum of the task costs that exist, and whether every task that used
tokens has one. A task that used no tokens never makes a run unpriced."""

from sb.costs import check_totals, run_cost


def entry(tokens, cost):
    return {"tokens": tokens, "usd_cost": cost}


def test_a_task_without_usage_does_not_make_the_run_unpriced():
    entries = [entry({"input": 10, "output": 5}, 0.25), entry(None, None)]
    assert run_cost(entries) == (0.25, True)


def test_an_unpriced_task_with_tokens_makes_the_total_partial():
    entries = [entry({"input": 10}, 0.25), entry({"input": 10}, None)]
    assert run_cost(entries) == (0.25, False)


def test_no_cost_at_all_is_none_not_zero():
    assert run_cost([entry(None, None)]) == (None, True)
    assert run_cost([entry({"input": 3}, None)]) == (None, False)


def test_check_totals_flags_a_wrong_total_and_a_wrong_flag():
    doc = {"tasks": [entry({"input": 1}, 0.5), entry({"input": 1}, None)], "usd_cost": 0.75,
           "cost_complete": True, "tokens": {"input": 2}}
    problems = check_totals(doc)
    assert any("usd_cost 0.75" in p for p in problems)
    assert any("cost_complete True" in p for p in problems)


# ---------------------------------------------------------------- usage is checked, never trusted


def test_missing_usage_on_a_priced_model_makes_the_cost_unknown_not_zero():
    assert run_cost([{**entry(None, None), "usage_missing": True}]) == (None, False)


def test_negative_or_implausible_usage_is_an_adapter_error_with_the_numbers(tmp_path):
    from sb.models.exchange import Reply, conclude
    from sb.outcome import Status

    class FakeTask:
        class meta:
            kind = "reply"
        declared_files = ("reply.md",)

    for usage, words in (({"input": -5, "output": 3}, "-5 input"), ({"input": 10, "output": 10**12}, "1000000000000")):
        reply = Reply(text="hi", usage=usage, model="claude-sonnet-4-5")
        attempt = conclude("anthropic", "claude-sonnet-4-5", FakeTask, tmp_path, reply, 0)
        assert attempt.status == Status.ADAPTER_ERROR and words in attempt.detail
        assert attempt.usd_cost is None


def test_check_cost_refuses_negative_and_implausible_tokens():
    from datetime import date
    from sb.costs import check_entry
    doc = {"adapter": "anthropic", "model": "claude-sonnet-4-5"}
    for tokens in ({"input": -1, "output": 0}, {"input": 10**13, "output": 0}):
        problem, _ = check_entry(doc, {"tokens": tokens, "usd_cost": 0.0}, date(2026, 1, 1))
        assert problem and "recorded" in problem
    problem, _ = check_entry(doc, {"tokens": {"input": 1}, "usd_cost": -0.5}, date(2026, 1, 1))
    assert "not a non-negative number" in problem


def test_a_tool_loop_is_priced_turn_by_turn_at_each_answering_models_rate():
    from datetime import date
    from sb.costs import check_entry
    from sb.models import prices
    on = date(2026, 1, 1)
    turns = [{"model": "claude-opus-4-1", "tokens": {"input": 1000, "output": 100}},
             {"model": "claude-haiku-4-5", "tokens": {"input": 1000, "output": 100}}]
    for turn in turns:
        turn["usd_cost"] = prices.cost("anthropic", turn["model"], turn["tokens"], on)[0]
    total = round(sum(t["usd_cost"] for t in turns), 8)
    single_rate = prices.cost("anthropic", "claude-haiku-4-5", {"input": 2000, "output": 200}, on)[0]
    assert total > single_rate  # pricing the whole loop at the substitute's rate would under-cost it
    doc = {"adapter": "anthropic", "model": "claude-opus-4-1"}
    entry_ = {"tokens": {"input": 2000, "output": 200}, "usd_cost": total, "turn_costs": turns}
    assert check_entry(doc, entry_, on)[0] is None
    assert "not the sum of its turns" in check_entry(doc, {**entry_, "usd_cost": single_rate}, on)[0]


def test_the_endpoint_used_is_recorded_and_an_unofficial_one_is_refused_by_publish(tmp_path, monkeypatch):
    import json
    import pytest
    from sb.errors import SbError
    from sb.models.anthropic import AnthropicAdapter
    from sb.models.base import ModelOptions
    from sb.report.publish import publish
    from test_report import entry, make_doc
    adapter = AnthropicAdapter()
    assert adapter.endpoint(ModelOptions()) == "https://api.anthropic.com"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9999")
    assert adapter.endpoint(ModelOptions()) == "http://127.0.0.1:9999"  # where the SDK will really go
    path = make_doc(tmp_path / "results", "claude-x", "g1", 1, [entry("alpha", "passed")], adapter="anthropic")
    doc = json.loads(path.read_text())
    doc.update(endpoint="http://127.0.0.1:9999", official_endpoint="https://api.anthropic.com")
    path.write_text(json.dumps(doc))
    with pytest.raises(SbError, match="not the provider's own API"):
        publish(path, tmp_path / "leaderboard")
    assert publish(path, tmp_path / "leaderboard", allow_endpoint=True)["published"]
    from sb.report.leaderboard import leaderboard
    (row,) = leaderboard(tmp_path / "leaderboard")
    assert (row["served_at"], row["model"]) == ("127.0.0.1:9999", "claude-x @ 127.0.0.1:9999")
