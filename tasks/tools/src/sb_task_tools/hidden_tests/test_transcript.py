"""Grade the harness's transcript of the tool loop the model drove."""

import json
import re
from pathlib import Path

import jsonschema

from _world import MAX_TURNS, QUESTION_REGION, QUESTION_SKU, SCHEMAS, STOCK, WAREHOUSES, expected_total_kg

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


def test_the_last_turn_has_no_tool_call_and_gives_the_answer():
    transcript = load()
    turns = transcript.get("turns") or [{}]
    assert turns[-1].get("calls") == [], "the last turn still calls tools"
    assert transcript.get("final_answer") == turns[-1].get("text")


def test_the_warehouses_were_listed_before_they_were_looked_up():
    """The warehouses are not known in advance: list_warehouses for the region first, then
    get_stock, in a later turn, for each warehouse it returned."""
    turns = load().get("turns", [])
    listed = [i for i, turn in enumerate(turns) for c in turn.get("calls", [])
              if c.get("name") == "list_warehouses" and c.get("arguments") == {"region": QUESTION_REGION}]
    assert listed, "list_warehouses was never called for the region"
    after = {c["arguments"].get("warehouse_id") for turn in turns[listed[0] + 1:] for c in turn.get("calls", [])
             if c.get("name") == "get_stock" and isinstance(c.get("arguments"), dict)
             and c["arguments"].get("sku") == QUESTION_SKU}
    missing = sorted(set(WAREHOUSES[QUESTION_REGION]) - after)
    assert not missing, f"not looked up after the listing: {missing}"


def test_every_conversion_was_made_with_convert():
    """Each warehouse of the region that records the SKU in g or lb had that quantity
    converted by the convert tool, from its own unit (any conversion done by hand breaks
    "use convert for any conversion")."""
    conversions = [(c["arguments"].get("quantity"), c["arguments"].get("from_unit"))
                   for c in calls(load())
                   if c.get("name") == "convert" and isinstance(c.get("arguments"), dict)]
    needed = [STOCK[(w, QUESTION_SKU)] for w in WAREHOUSES[QUESTION_REGION]
              if (w, QUESTION_SKU) in STOCK and STOCK[(w, QUESTION_SKU)][1] != "kg"]
    assert needed  # the data holds conversions to make: 300 lb and 2500 g
    for quantity, unit in needed:
        assert any(isinstance(q, (int, float)) and not isinstance(q, bool) and q == quantity and u == unit
                   for q, u in conversions), f"{quantity} {unit} was never passed to convert"


def test_every_warehouse_of_the_region_was_looked_up():
    looked_up = {c["arguments"].get("warehouse_id") for c in calls(load())
                 if c.get("name") == "get_stock" and isinstance(c.get("arguments"), dict)
                 and c["arguments"].get("sku") == QUESTION_SKU}
    assert set(WAREHOUSES[QUESTION_REGION]) <= looked_up


def test_the_final_answer_has_the_stated_form():
    answer = (load().get("final_answer") or "").strip()
    assert ANSWER.fullmatch(answer), f"final answer {answer!r} is not exactly 'ANSWER: <number with 2 decimals>'"


def test_the_final_answer_is_right():
    match = ANSWER.fullmatch((load().get("final_answer") or "").strip())
    assert match, "no well-formed final answer"
    # exact: the expected total is computed with fractions and rounded to the 2 decimals asked for
    assert match.group(1) == f"{expected_total_kg():.2f}"
