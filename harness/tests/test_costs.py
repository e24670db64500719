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
