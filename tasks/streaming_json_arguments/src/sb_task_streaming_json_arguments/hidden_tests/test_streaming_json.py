"""Hidden tests for streaming_json_arguments.

Expectations come from _oracle.py, written apart from any streaming parser: `scan` reads a
whole text by recursive descent and says after how many characters each fine event (one per
string character) is determined and where the text stops being a prefix of a valid text;
`strict_loads` is json.loads made strict and decides validity and value of complete texts;
`witness_determined` is the brute-force meaning of "determined" (the common events of many
valid completions, each confirmed by strict_loads). The hand-written cases spell their
expectations out as well.

Most runs go through _probe_feed.py, which feeds chunk lists to fresh parsers in the
solution's process and reports each call's outcome: a call through the proxy costs a round
trip of milliseconds, and these properties need tens of thousands of pushes. What the probe
reports is exactly what the solution's calls returned; every judgement is made here.
"""
import random

import pytest

import _docs
import _oracle
from sb.judge import probe
from streaming_json import StreamingJSONParser

EVENT_ARITY = {"begin": 3, "text": 3, "value": 3, "end": 2}


# ---------------------------------------------------------------- helpers


def feed(runs):
    return probe("_probe_feed.py").feed([list(chunks) for chunks in runs])


def split(text, cuts):
    bounds = [0] + list(cuts) + [len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def fine(events):
    """The solution's events as fine events (one per text character), values with types."""
    assert isinstance(events, list), f"push/finish must return a list, got {type(events).__name__}"
    out = []
    for event in events:
        assert isinstance(event, tuple) and event and event[0] in EVENT_ARITY, f"malformed event {event!r}"
        assert len(event) == EVENT_ARITY[event[0]], f"malformed event {event!r}"
        assert isinstance(event[1], tuple), f"path must be a tuple: {event!r}"
        if event[0] == "text":
            assert isinstance(event[2], str) and event[2], f"a text delta is a non-empty str: {event!r}"
            out.extend(("text", event[1], c) for c in event[2])
        else:
            out.append(_oracle.canon(event))
    return out


def steps_of(report):
    """Each call's events, written fine; every call must have returned (none raised)."""
    for entry in report:
        assert entry[0] == "events", f"a call did not return events: {entry!r}"
    return [fine(entry[1]) for entry in report]


def want_after(outcome, received):
    return [_oracle.canon(e) for e in outcome.determined(received)]


def check_report(text, chunks, report, outcome=None):
    """One run's report against the oracle: the events after every push, and the push
    (or the finish) that raises."""
    outcome = outcome or _oracle.scan(text)
    where = f"text={text!r} chunks={chunks!r}"
    got, received = [], 0
    for n, chunk in enumerate(chunks):
        received += len(chunk)
        entry = report[n] if n < len(report) else None
        if outcome.error_index is not None and outcome.error_index < received:
            assert entry == ["ValueError"], (
                f"{where}: push #{n} ({chunk!r}) holds the first character no valid JSON text "
                f"can have there ({text[outcome.error_index]!r} at {outcome.error_index}); "
                f"expected ValueError, got {entry!r}"
            )
            return
        assert entry is not None and entry[0] == "events", f"{where}: push #{n} ({chunk!r}) gave {entry!r}"
        got += fine(entry[1])
        want = want_after(outcome, received)
        assert got == want, (
            f"{where}: after push #{n} ({chunk!r}) the events emitted so far should be exactly "
            f"the determined ones\n got: {got!r}\nwant: {want!r}"
        )
    entry = report[len(chunks)] if len(report) > len(chunks) else None
    if not outcome.complete:
        assert entry == ["ValueError"], f"{where}: finish() on an incomplete text must raise ValueError, got {entry!r}"
        return
    assert entry is not None and entry[0] == "events", f"{where}: finish() gave {entry!r}"
    got += fine(entry[1])
    want = want_after(outcome, _oracle.FINISH)
    assert got == want, f"{where}: after finish()\n got: {got!r}\nwant: {want!r}"


def check_runs(items):
    """items: (text, chunks) pairs, fed in one probe call and checked one by one."""
    reports = feed([chunks for _, chunks in items])
    outcomes = {}
    for (text, chunks), report in zip(items, reports, strict=True):
        if text not in outcomes:
            outcomes[text] = _oracle.scan(text)
        check_report(text, chunks, report, outcomes[text])


def by_character(text):
    return list(text)


def random_cuts(rng, text, most=8):
    if len(text) < 2:
        return []
    return sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, most))))


def all_splits(text, most_cuts=3):
    """Every split of a text of up to 12 characters; of a longer one, every split into at
    most most_cuts + 1 chunks."""
    n = len(text) - 1
    for mask in range(2**n):
        cuts = [k + 1 for k in range(n) if mask >> k & 1]
        if len(text) <= 12 or len(cuts) <= most_cuts:
            yield cuts


def rebuild(events):
    """The JSON value the events describe (the test's own reading of the event format)."""
    holder, containers, strings = {}, {}, {}

    def attach(path, value):
        if not path:
            assert "value" not in holder, "a second top-level value"
            holder["value"] = value
            return
        parent = containers[path[:-1]]
        if isinstance(parent, list):
            assert path[-1] == len(parent), f"array index {path[-1]} after {len(parent)} items"
            parent.append(value)
        else:
            assert path[-1] not in parent, f"key {path[-1]!r} twice"
            parent[path[-1]] = value

    for event in events:
        kind, path = event[0], event[1]
        if kind == "begin" and event[2] == "string":
            strings[path] = []
        elif kind == "begin":
            containers[path] = {} if event[2] == "object" else []
            attach(path, containers[path])
        elif kind == "text":
            strings[path].append(event[2])
        elif kind == "value":
            attach(path, event[2])
        elif path in strings:
            attach(path, "".join(strings.pop(path)))
    return holder["value"]


def same_value(a, b):
    """Equal with types: True is not 1, 1.0 is not 1, -0.0 is not 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    return repr(a) == repr(b)


VALID = _docs.documents(seed=101, count=120, depth=3)
BROKEN = _docs.broken_documents(seed=202, count=240, oracle=_oracle)


# ---------------------------------------------------------------- properties


def test_events_rebuild_the_strict_json_value():
    texts = VALID[:60] + ['"\\ud83d\\ude00\\u00e9\\uD834\\uDD1E😀"', "-0", "-0.0", "1E400", "[1.5e-3,-0e0]"]
    reports = feed([[t] for t in texts])
    for text, report in zip(texts, reports, strict=True):
        assert len(report) == 2 and report[0][0] == "events" and report[1][0] == "events", (text, report)
        events = list(report[0][1]) + list(report[1][1])
        fine(events)
        want = _oracle.strict_loads(text)
        got = rebuild(events)
        assert same_value(got, want), f"text={text!r}\n got: {got!r}\nwant: {want!r}"


@pytest.mark.parametrize("group", range(4))
def test_every_push_of_one_character_emits_exactly_the_determined_events(group):
    texts = VALID[group * 30 : (group + 1) * 30]
    check_runs([(t, by_character(t)) for t in texts])


@pytest.mark.parametrize("group", range(4))
def test_random_chunks_emit_exactly_the_determined_events(group):
    rng = random.Random(1000 + group)
    texts = VALID[group * 30 : (group + 1) * 30]
    check_runs([(t, split(t, random_cuts(rng, t))) for t in texts for _ in range(4)])


SHORT = [
    "[12,-3]",
    '["\\ud83d\\ude00"]',
    '{"k":"\\u00e9"}',
    '[tru\\',
    "[0, 1e+2]",
    '{"a":[f]}',
    '"\\udd00"',
    "-0.5E1 ",
    '[null ,"\\/"]',
]


@pytest.mark.parametrize("text", SHORT)
def test_every_split_of_a_short_text(text):
    check_runs([(text, split(text, cuts)) for cuts in all_splits(text)])


@pytest.mark.parametrize("group", range(4))
def test_errors_surface_in_the_first_impossible_chunk(group):
    rng = random.Random(2000 + group)
    texts = BROKEN[group * 60 : (group + 1) * 60]
    items = [(t, by_character(t)) for t in texts]
    items += [(t, split(t, random_cuts(rng, t))) for t in texts]
    check_runs(items)


BRUTE_FORCE = [
    '[1.5,"a\\n"]',
    '{"x":tru',
    '"\\uD83D\\uDE00" ',
    "[-0e1, []]",
    '{"\\u00e9":{}}',
    '[nul',
]


@pytest.mark.parametrize("text", BRUTE_FORCE)
def test_emission_agrees_with_the_brute_force_over_continuations(text):
    [report] = feed([by_character(text)])
    outcome = _oracle.scan(text)
    got = []
    for k in range(len(text)):
        if k:
            entry = report[k - 1]
            assert entry[0] == "events", (text, k, entry)
            got += fine(entry[1])
        agreed = _oracle.witness_determined(text[:k], text + (outcome.tail or ""))
        assert len(got) == agreed, (
            f"after {text[:k]!r}: every valid continuation agrees on {agreed} events, "
            f"{len(got)} were emitted: {got!r}"
        )
        assert len(outcome.determined(k)) == agreed  # the two oracles agree


# ---------------------------------------------------------------- rules, by hand


def test_a_literal_is_determined_by_its_first_character():
    [report] = feed([["[t", "r", "ue", ",", "f", "alse,n", "u", "ll]"]])
    assert steps_of(report) == [
        [("begin", (), "array"), ("value", (0,), "bool", "True")],
        [],
        [],
        [],
        [("value", (1,), "bool", "False")],
        [("value", (2,), "NoneType", "None")],
        [],
        [("end", ())],
        [],
    ]
    texts = ["true", "false", "null", ' {"a" : true}', "[null,false]"]
    check_runs([(t, by_character(t)) for t in texts])


def test_a_number_waits_for_a_character_that_cannot_continue_it():
    reports = feed([["[1.0", "0", "]"], ["12", " "], ["-0"], ["[7", ",8", "]"]])
    steps = [steps_of(report) for report in reports]
    assert steps[0] == [[("begin", (), "array")], [], [("value", (0,), "float", "1.0"), ("end", ())], []]
    assert steps[1] == [[], [("value", (), "int", "12")], []]
    assert steps[2] == [[], [("value", (), "int", "0")]]
    assert steps[3] == [[("begin", (), "array")], [("value", (0,), "int", "7")], [("value", (1,), "int", "8"), ("end", ())], []]
    texts = ["[12,3]", "0.5e-3 ", "[1e5]", '{"a":-0.0}', "7", "-12.75E+08", "[0,-0,0e0,0.0]"]
    check_runs([(t, split(t, cuts)) for t in texts for cuts in ([], list(range(1, len(t))))])


def test_split_escapes_wait_and_a_surrogate_pair_is_one_character():
    [report] = feed([['"x\\', 'n\\u00', "e9", "\\ud83d", "\\", "u", "DE0", '0"']])
    steps = steps_of(report)
    assert steps == [
        [("begin", (), "string"), ("text", (), "x")],
        [("text", (), "\n")],
        [("text", (), "é")],
        [],
        [],
        [],
        [],
        [("text", (), "😀"), ("end", ())],
        [],
    ]
    texts = ['"\\uD834\\udd1e"', '{"\\ud83d\\ude00":"\\udbff\\udfff"}', '["\\"\\\\\\/\\b\\f\\n\\r\\t"]']
    check_runs([(t, by_character(t)) for t in texts])


SURROGATE_ERRORS = [
    '"\\udc00"',  # a low surrogate cannot start a pair: fails at its third digit
    '"\\uDE00\\ud83d"',
    '"\\ud83d\\u0041"',  # the escape after a high surrogate must be a low one
    '"\\ud83dx"',
    '"\\ud83d"',
    '"\\ud83d\\n"',
    '"\\ud83d\\ud83d"',
    '"\\ud83d\\ude00\\udc00"',  # a low surrogate right after a complete pair
    '"\\uD83D\\uDBFF"',
    '{"\\udfff":1}',
    '"a\ud800"',  # a raw surrogate code point is not a character
    "[\udc00]",
    '"\udbff',
]


ESCAPE_TEXTS = _docs.escape_texts(seed=303, count=150)


def test_surrogate_escapes_valid_or_not_near_the_surrogate_ranges():
    rng = random.Random(3000)
    check_runs([(t, by_character(t)) for t in ESCAPE_TEXTS] + [(t, split(t, random_cuts(rng, t))) for t in ESCAPE_TEXTS])


SURROGATE_NEIGHBOURS = ['"\ud7ff\ue000"', '"\\ud7ff\\ue000\\uD7FF"', '["\udfff"]', '"\\udbff\\udfff\ud7ff"']


def test_surrogate_errors_surface_at_the_first_impossible_character():
    texts = SURROGATE_ERRORS + SURROGATE_NEIGHBOURS
    check_runs([(t, by_character(t)) for t in texts] + [(t, [t]) for t in texts])
    [report] = feed([['"ab\\u', "dc"]])
    assert report[0] == ["events", [("begin", (), "string"), ("text", (), "ab")]]
    assert report[1] == ["ValueError"]


LENIENT_ELSEWHERE = [
    "NaN", "[Infinity]", "-Infinity", '{"a": NaN}', "\ufeff{}", "[1,]", '{"a":1,}', "'a'",
    "[01]", "[.5]", "[+1]", "[1.]", "[1.e3]", "[0x10]", "[1 2]", "{1:2}", '{"a" 1}', "[,1]",
    "{,}", "tRUE", "nul!", "True", '"\\x41"', "\"\\'\"", "[]]", "{} {}", "1 2", '"a"b',
]


def test_text_that_python_or_other_parsers_accept_is_rejected_at_its_first_impossible_character():
    check_runs([(t, by_character(t)) for t in LENIENT_ELSEWHERE] + [(t, [t]) for t in LENIENT_ELSEWHERE])


NOT_JSON_WHITESPACE_OR_DIGITS = [
    "[\xa01]", "[1\x0c]", "\x0b1", "[\u20281]", "{\u3000}", "[1]\x85",
    "[\u0663]", "[1\u00b2]", "[\uff11]", "[1.\u0665]", "[1e\u0661]", "-\u0661",
]


def test_only_json_whitespace_and_ascii_digits():
    texts = NOT_JSON_WHITESPACE_OR_DIGITS + [" \t\n\r[ \t\n\r1 \t\n\r, \t\n\r2] \t\n\r"]
    check_runs([(t, by_character(t)) for t in texts] + [(t, [t]) for t in texts])


HEX_ESCAPES = ['"\\u+123"', '"\\u 123"', '"\\u1_23"', '"\\u12g4"', '"\\u-123"', '"\\u\u0661\u0662\u0663\u0664"',
               '"\\u\uff21000"', '"\\u12"', '"\\uABCD\\uabcd\\uAbCd"']


def test_unicode_escape_digits_are_checked_one_by_one():
    check_runs([(t, by_character(t)) for t in HEX_ESCAPES] + [(t, [t]) for t in HEX_ESCAPES])


def test_raw_control_characters_only_below_u0020_are_rejected_in_strings():
    texts = ['"a\x00b"', '"\x1f"', '"\n"', '{"a\tb":1}', '"\x7f\x80\x85\x9f\u2028\u2029\ufeff\uffff"']
    check_runs([(t, by_character(t)) for t in texts] + [(t, [t]) for t in texts])


def test_incomplete_text_raises_at_finish():
    texts = ["", "   ", "[", '{"a":1', '"abc', "tru", "-", "1.", "1e+", '"\\u00', '"\\ud83d"'[:-1], "[1,"]
    check_runs([(t, [t]) for t in texts] + [(t, by_character(t)) for t in texts])


def test_empty_chunks_change_nothing():
    text = '{"a":[12,"\\ud83d\\ude00",true]}'
    chunks = []
    for ch in text:
        chunks += ["", ch, ""]
    check_runs([(text, chunks)])


def test_after_an_error_or_finish_every_call_raises():
    parser = StreamingJSONParser()
    parser.push("[1")
    with pytest.raises(ValueError):
        parser.push("x")
    with pytest.raises(ValueError):
        parser.push("]")
    with pytest.raises(ValueError):
        parser.finish()
    parser = StreamingJSONParser()
    assert parser.push("[1]") == [("begin", (), "array"), ("value", (0,), 1), ("end", ())]
    assert parser.finish() == []
    with pytest.raises(ValueError):
        parser.push(" ")
    with pytest.raises(ValueError):
        parser.finish()
    parser = StreamingJSONParser()
    with pytest.raises(ValueError):
        parser.finish()
    with pytest.raises(ValueError):
        parser.push("1")


def test_nesting_thousands_of_levels_deep():
    depth = 2500
    text = '{"k":[' * depth + "-1" + "]}" * depth
    outline = probe("_probe_feed.py").feed_outline(split(text, range(1000, len(text), 1000)))
    events = []
    for entry in outline:
        assert entry[0] == "events", entry
        events += entry[1]
    want = []
    for level in range(depth):
        want.append(("begin", 2 * level, None if level == 0 else 0, "object"))
        want.append(("begin", 2 * level + 1, "k", "array"))
    want.append(("value", 2 * depth, 0, -1))
    for level in reversed(range(depth)):
        want.append(("end", 2 * level + 1, "k"))
        want.append(("end", 2 * level, None if level == 0 else 0))
    assert events == want
