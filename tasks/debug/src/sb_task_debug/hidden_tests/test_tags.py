"""Hidden tests for clean_tags. Every test makes more than one call or passes `exclude`,
because the reported bug is state that leaks between calls: a fix for the one example in the
bug report, or a fix that only resets the default, must still fail here.

Calls through the proxy run in the solution's process, so state the function keeps there
(its default argument) leaks between them exactly as in the bug report. But arguments are
copied into that process, so whether the CALLER's set is changed, and whether the returned
list is a new one, can only be seen there: those tests go through _probe_tags.py, which
reports what happened to live objects and leaves the judging to this file."""
import random

import pytest

from sb.judge import probe
from tags import clean_tags


def brute_force_clean(tags, exclude):
    """Independent oracle written from the docstring: an O(n^2) scan over a plain list."""
    kept = []
    for raw in tags:
        tag = raw.strip().lower()
        if tag == "" or tag in exclude or tag in kept:
            continue
        kept.append(tag)
    return kept


def run_posts(steps, initial_sets):
    return probe("_probe_tags.py").run(steps, initial_sets)


def test_second_post_keeps_tags_used_on_first_post():
    assert clean_tags(["Kotlin", "kotlin", "Swift"]) == ["kotlin", "swift"]
    assert clean_tags(["SWIFT", " kotlin", "Dart"]) == ["swift", "kotlin", "dart"]


@pytest.mark.parametrize("tags, expected", [
    (["News", "news", " NEWS "], ["news"]),
    (["a", "b", "a", "c"], ["a", "b", "c"]),
    (["Rust", "Go"], ["rust", "go"]),
])
def test_repeated_identical_calls_agree(tags, expected):
    first = clean_tags(tags)
    second = clean_tags(tags)
    assert first == expected
    assert second == expected


def test_dedupes_and_normalises_within_one_call():
    clean_tags(["alpha"])
    assert clean_tags([" Alpha", "ALPHA", "beta", "", "   ", "Beta "]) == ["alpha", "beta"]


def test_strips_any_surrounding_whitespace_and_lower_cases():
    clean_tags(["rust", "go"])
    assert clean_tags(["\tRust\n", "\r\ngo ", "GO\t", "\x0c"]) == ["rust", "go"]
    # str.lower(), not casefold(): the two spellings stay two tags.
    assert clean_tags(["Stra\u00dfe", "STRASSE", "strasse"]) == ["stra\u00dfe", "strasse"]


def test_caller_exclude_is_not_modified():
    seen = run_posts([{"tags": ["Release", "announcements", "release"], "exclude": "thread"}],
                     {"thread": ["announcements"]})
    assert seen[0]["result"] == ["release"]
    assert seen[0]["sets_after"] == {"thread": ["announcements"]}


def test_empty_exclude_set_stays_empty():
    seen = run_posts([{"tags": ["a", "B"], "exclude": "none"}, {"tags": ["b", "c"], "exclude": "none"}],
                     {"none": []})
    assert [s["result"] for s in seen] == [["a", "b"], ["b", "c"]]
    assert [s["sets_after"] for s in seen] == [{"none": []}, {"none": []}]


def test_same_exclude_reused_for_several_posts():
    seen = run_posts([{"tags": ["python", "META"], "exclude": "thread"},
                      {"tags": ["python", "typing"], "exclude": "thread"},
                      {"tags": ["meta", "typing"], "exclude": "thread"}],
                     {"thread": ["meta"]})
    assert [s["result"] for s in seen] == [["python"], ["python", "typing"], ["typing"]]
    assert all(s["sets_after"] == {"thread": ["meta"]} for s in seen)


def test_calls_with_and_without_exclude_interleaved():
    clean_tags(["ops", "infra"])
    assert clean_tags(["ops", "infra", "db"], {"db"}) == ["ops", "infra"]
    assert clean_tags(["Infra", "DB"]) == ["infra", "db"]


def test_keyword_arguments():
    assert clean_tags(tags=["X", "y"], exclude={"y"}) == ["x"]
    assert clean_tags(tags=["X", "y"]) == ["x", "y"]
    seen = run_posts([{"tags": ["Q", "r"], "exclude": "e", "keyword": True},
                      {"tags": ["Q", "r"], "exclude": None, "keyword": True}], {"e": ["r"]})
    assert [s["result"] for s in seen] == [["q"], ["q", "r"]]
    assert seen[-1]["sets_after"] == {"e": ["r"]}


def test_returns_a_new_list_every_time():
    """Already-clean input, and the same input twice: the result is a fresh list each call,
    never the caller's list and never one handed out before."""
    steps = [{"tags": ["a", "b"], "exclude": None}, {"tags": ["a", "b"], "exclude": None},
             {"tags": ["c"], "exclude": "x"}, {"tags": ["c"], "exclude": "x"}, {"tags": [], "exclude": None},
             {"tags": [], "exclude": None}]
    seen = run_posts(steps, {"x": ["z"]})
    assert [s["result"] for s in seen] == [["a", "b"], ["a", "b"], ["c"], ["c"], [], []]
    assert all(s["type"] == "list" for s in seen)
    assert not any(s["is_the_tags_argument"] for s in seen)
    assert not any(s["is_an_earlier_result"] for s in seen)


@pytest.mark.parametrize("seed", [0, 1])
def test_sequence_of_posts_matches_brute_force(seed):
    """Random posts in one process: some reuse one of three thread sets (live sets, shared
    between posts), some pass none. Every result must match the oracle, every set must be
    exactly as the caller made it, and every result must be a new list."""
    rng = random.Random(seed)
    vocabulary = ["py", "Py", " py ", "ML", "ml", "data", "", "  ", "Data ", "ops", "OPS", "web", "\tweb\n"]
    initial = {name: rng.sample(["py", "ml", "data", "ops"], rng.randrange(0, 3)) for name in ("t1", "t2", "t3")}
    steps = []
    for _ in range(60):
        tags = [rng.choice(vocabulary) for _ in range(rng.randrange(0, 7))]
        name = rng.choice(["t1", "t2", "t3", None, None])
        steps.append({"tags": tags, "exclude": name, "keyword": rng.random() < 0.3})
    seen = run_posts(steps, initial)
    frozen = {name: sorted(set(items)) for name, items in initial.items()}
    for step, got in zip(steps, seen):
        exclude = set(initial[step["exclude"]]) if step["exclude"] else set()
        assert got["result"] == brute_force_clean(step["tags"], exclude), step
        assert got["sets_after"] == frozen, step
        assert not got["is_the_tags_argument"] and not got["is_an_earlier_result"], step
