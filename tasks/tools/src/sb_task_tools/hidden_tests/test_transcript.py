"""Grade the harness's transcript of the tool loop the model drove."""

import json
import re
from pathlib import Path

import jsonschema

from _world import MAX_TURNS, QUESTION_SKU, SCHEMAS, WAREHOUSES, expected_total_kg

ANSWER = re.compile(r"ANSWER: (-?[0-9]+\.[0-9]{2})")


def load() -> dict:
    data = json.loads(Path("transcript.json").read_text())
    return data if isinstance(data, dict) else {}


def calls(transcript: dict) -> list:
    return [call for turn in transcript.get("turns", []) for call in turn.get("calls", [])]


def test_the_loop_ends_with_a_final_answer():
    transcript = load()
    assert transcript.get("ended") == "answer", f"the loop ended by {transcript.get('ended')!r}, not an answer"
    assert isinstance(transcript.get("final_answer"), str)


def test_the_loop_stays_within_its_turn_bound():
    transcript = load()
    assert transcript.get("turns"), "no turn was recorded"
    assert len(transcript["turns"]) <= MAX_TURNS


def test_every_call_names_a_real_tool():
    made = calls(load())
    assert made, "no tool was called: the numbers can only come from the tools"
    unknown = [c.get("name") for c in made if c.get("name") not in SCHEMAS]
    assert not unknown, f"calls to tools that do not exist: {unknown}"


def test_every_call_has_arguments_valid_against_its_schema():
    made = calls(load())
    assert made
    for call in made:
        schema = SCHEMAS.get(call.get("name"))
        assert schema is not None, call
        assert isinstance(call.get("arguments"), dict), f"arguments are not a JSON object: {call.get('arguments')!r}"
        jsonschema.validate(call["arguments"], schema)  # raises ValidationError: a failure, not a pass


def test_every_warehouse_of_the_region_was_looked_up():
    looked_up = {c["arguments"].get("warehouse_id") for c in calls(load())
                 if c.get("name") == "get_stock" and isinstance(c.get("arguments"), dict)
                 and c["arguments"].get("sku") == QUESTION_SKU}
    assert set(WAREHOUSES["north"]) <= looked_up


def test_the_final_answer_has_the_stated_form():
    answer = (load().get("final_answer") or "").strip()
    assert ANSWER.fullmatch(answer), f"final answer {answer!r} is not exactly 'ANSWER: <number with 2 decimals>'"


def test_the_final_answer_is_right():
    match = ANSWER.fullmatch((load().get("final_answer") or "").strip())
    assert match, "no well-formed final answer"
    # exact: the expected total is computed with fractions and rounded to the 2 decimals asked for
    assert match.group(1) == f"{expected_total_kg():.2f}"
