"""Author-side checks of the hidden tests' oracle against two readings written apart from it:
the reference's incremental body automaton (its verdict that an attempt can no longer
succeed must agree, character by character, with the oracle's completer finding no
completion) and Python's json module made strict (the whole-text reading of every closed
body). Runs without a model and without the harness."""
import importlib.util
import json
import pathlib
import random

import pytest

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1] / "src" / "sb_task_streaming_tool_calls"


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, PACKAGE_DIR / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


oracle = _load("sb_task_streaming_tool_calls_oracle", "hidden_tests/_oracle.py")
streams = _load("sb_task_streaming_tool_calls_streams", "hidden_tests/_streams.py")
reference = _load("sb_task_streaming_tool_calls_reference", "reference/tool_calls.py")
OPEN, CLOSE = oracle.OPEN, oracle.CLOSE
SEEDS = range(1000, 1040)


def _strict_json_body(body):
    """The body's call by json.loads with duplicate keys and NaN/Infinity refused."""
    def pairs(items):
        if len({k for k, _ in items}) != len(items):
            raise ValueError("duplicate key")
        return dict(items)

    def constant(name):
        raise ValueError(name)

    try:
        value = json.loads(body, object_pairs_hook=pairs, parse_constant=constant)
    except ValueError:
        return None
    if not body.strip(" \t\n\r").startswith("{") or not isinstance(value, dict) or set(value) != {"name", "arguments"}:
        return None
    if not isinstance(value["name"], str) or not value["name"] or not isinstance(value["arguments"], dict):
        return None
    return value["name"], oracle.canonical_value(value["arguments"])


def _attempts(text):
    q = text.find(OPEN)
    while q >= 0:
        yield q
        q = text.find(OPEN, q + 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_body_reading_agrees_with_strict_json(seed):
    text = streams.stream(seed)
    for q in _attempts(text):
        end = text.find(CLOSE, q + len(OPEN))
        if end >= 0:
            body = text[q + len(OPEN):end]
            call = oracle.parse_body(body)
            assert (None if call is None else (call[0], oracle.canonical_value(call[1]))) == _strict_json_body(body), body


@pytest.mark.parametrize("seed", SEEDS)
def test_the_completer_fails_exactly_where_the_reference_gives_up(seed):
    text = streams.stream(seed)
    for q in _attempts(text):
        body = reference._Body()
        for j in range(q + len(OPEN), len(text)):
            verdict = body.read(text[j])
            received = text[:j + 1]
            if verdict == reference.CALLED:
                assert oracle.attempt_succeeds(received, q)
                break
            if received.endswith(CLOSE):
                assert verdict == reference.DEAD and not oracle.attempt_succeeds(received, q)
                break
            completion = oracle.completion_at(received, q)
            assert (verdict == reference.ALIVE) == (completion is not None), received[q:]
            if completion is not None:
                assert oracle.attempt_succeeds(received + completion, q)
            if verdict == reference.DEAD:
                break


@pytest.mark.parametrize("seed", SEEDS[:10])
def test_the_reference_emits_what_the_oracle_determines(seed):
    text = streams.stream(seed)
    parser, got, received = reference.ToolCallParser(), [], ""
    for chunk in streams.cut(text, random.Random(seed)):
        received += chunk
        for event in parser.push(chunk):
            got += _items(event)
        assert got == oracle.determined(received)
    for event in parser.finish():
        got += _items(event)
    assert got == oracle.fine_events(text)


def _items(event):
    return list(event[1]) if event[0] == "text" else [("call", event[1], oracle.canonical_value(event[2]))]
