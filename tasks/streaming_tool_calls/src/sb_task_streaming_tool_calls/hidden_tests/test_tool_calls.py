"""Hidden tests for streaming_tool_calls.

Expectations come from _oracle.py, written apart from any streaming parser: `fine_events`
reads a whole text by recursive descent (no json module) and gives its final result, one
item per content character and one per call; `determined` is the longest common prefix of
the final results of the text received followed by each of a few continuations (the end of
the stream, a character that kills every attempt, and a completion of the first attempt
that some continuation can still make a call, built by the same recursive descent run over
the unfinished body and checked by the whole-text reading). The hand-written cases spell
their expectations out and check the oracle too.

Runs go through _probe_feed.py, which feeds chunk lists to fresh parsers in the solution's
process and reports what each call returned: the properties need thousands of pushes and a
proxy round trip costs milliseconds. What the probe reports is exactly what the solution's
calls returned; every judgement is made here.
"""
import functools
import random

import pytest

import _oracle
import _streams
from sb.judge import probe

OPEN, CLOSE = _oracle.OPEN, _oracle.CLOSE


# ---------------------------------------------------------------- helpers


def feed(runs):
    return probe("_probe_feed.py").feed([list(chunks) for chunks in runs])


def fine(events):
    """The solution's events as items: one per text character, one per call (canonical)."""
    assert isinstance(events, list), f"push/finish must return a list, got {type(events).__name__}"
    out = []
    for event in events:
        assert isinstance(event, tuple) and event and event[0] in ("text", "call"), f"malformed event {event!r}"
        if event[0] == "text":
            assert len(event) == 2 and isinstance(event[1], str), f"malformed text event {event!r}"
            out.extend(event[1])
        else:
            assert len(event) == 3 and isinstance(event[1], str) and isinstance(event[2], dict), \
                f"malformed call event {event!r}"
            out.append(("call", event[1], _oracle.canonical_value(event[2])))
    return out


def calls_of(report):
    """Each call's items; every call must have returned."""
    for entry in report:
        assert entry[0] == "events", f"a call raised: {entry!r}"
    return [fine(entry[1]) for entry in report]


@functools.lru_cache(maxsize=None)
def determined(received):
    return _oracle.determined(received)


def show(items):
    """Items written back as text, calls as [call NAME ARGS], for messages."""
    return "".join(i if isinstance(i, str) else f"[call {i[1]!r} {i[2]!r}]" for i in items)


def check_report(text, chunks, report):
    where = f"stream={text!r}\nchunks={chunks!r}"
    assert len(report) == len(chunks) + 1, f"{where}\nreport: {report!r}"
    steps = calls_of(report)
    got, received = [], ""
    for n, chunk in enumerate(chunks):
        received += chunk
        got += steps[n]
        want = determined(received)
        assert got == want, (
            f"{where}\nafter push #{n} ({chunk!r}) the events emitted so far should be exactly the "
            f"determined ones\n got: {show(got)!r}\nwant: {show(want)!r}"
        )
    got += steps[-1]
    want = _oracle.fine_events(text)
    assert got == want, f"{where}\nafter finish()\n got: {show(got)!r}\nwant: {show(want)!r}"


def check_runs(items):
    """items: (text, chunks) pairs, fed in one probe call and checked one by one."""
    reports = feed([chunks for _, chunks in items])
    for (text, chunks), report in zip(items, reports, strict=True):
        check_report(text, chunks, report)


def emitted_after_each_call(chunks):
    """[text emitted so far, calls written as in show()] after each push and after finish."""
    [report] = feed([chunks])
    out, got = [], []
    for step in calls_of(report):
        got += step
        out.append(show(got))
    return out


def oracle_after_each_call(chunks):
    out, received = [], ""
    for chunk in chunks:
        received += chunk
        out.append(show(_oracle.determined(received)))
    out.append(show(_oracle.fine_events(received)))
    return out


def expect(chunks, want):
    assert oracle_after_each_call(chunks) == want, "the oracle disagrees with the hand-written expectation"
    got = emitted_after_each_call(chunks)
    assert got == want, f"chunks={chunks!r}\n got: {got!r}\nwant: {want!r}"


STREAMS = [_streams.stream(seed) for seed in range(48)]


# ---------------------------------------------------------------- random streams


@pytest.mark.parametrize("group", range(4))
def test_the_events_of_a_whole_stream_are_its_final_result(group):
    texts = STREAMS[group * 12:(group + 1) * 12]
    reports = feed([[t] for t in texts])
    for text, report in zip(texts, reports, strict=True):
        got = [item for step in calls_of(report) for item in step]
        want = _oracle.fine_events(text)
        assert got == want, f"stream={text!r}\n got: {show(got)!r}\nwant: {show(want)!r}"


@pytest.mark.parametrize("group", range(4))
def test_random_chunks_emit_exactly_the_determined_events(group):
    rng = random.Random(100 + group)
    texts = STREAMS[group * 12:(group + 1) * 12]
    check_runs([(t, _streams.cut(t, rng)) for t in texts for _ in range(2)])


@pytest.mark.parametrize("group", range(4))
def test_every_push_of_one_character_emits_exactly_the_determined_events(group):
    texts = STREAMS[group * 12:(group + 1) * 12:2]
    check_runs([(t, _streams.by_character(t)) for t in texts])


def test_empty_pushes_change_nothing():
    text = 'a <tool_call>{"name": "f", "arguments": {"x": [1, "\\u00e9"]}}</tool_call> <tool_c'
    chunks = []
    for ch in text:
        chunks += ["", ch, ""]
    check_runs([(text, chunks), ("", []), ("", [""]), ("", ["", ""])])


SHORT = [
    'a<tool_call>{"name":"f","arguments":{"k":1}}</tool_call>b',
    '<tool_call>{"name":"<tool_call>","arguments":{}}</tool_call><',
    '<tool_call>{"name": <tool_call>{"name":"g","arguments":{}}</tool_call>',
    '<tool_call> {"\\u006eame":"f","arguments":{}} </tool_cal',
]


@pytest.mark.parametrize("index", range(len(SHORT)))
def test_every_split_in_three_of_a_short_stream(index):
    text = SHORT[index]
    n = len(text)
    cuts = [(a, b) for a in range(1, n) for b in range(a, n)]
    check_runs([(text, [text[:a], text[a:b], text[b:]]) for a, b in cuts])


# ---------------------------------------------------------------- rules, by hand


def test_a_call_is_emitted_by_the_push_that_completes_its_closing_tag():
    chunks = ["Sure.", " <tool_", 'call>{"name": "f", ', '"arguments": {}}', "</tool_call", ">", " ok"]
    expect(chunks, ["Sure.", "Sure. ", "Sure. ", "Sure. ", "Sure. ", "Sure. [call 'f' ('dict', ())]",
                    "Sure. [call 'f' ('dict', ())] ok", "Sure. [call 'f' ('dict', ())] ok"])


def test_a_partial_tag_is_held_until_it_can_no_longer_become_the_tag():
    expect(list("a<tool_cX"), ["a", "a", "a", "a", "a", "a", "a", "a", "a<tool_cX", "a<tool_cX"])
    expect(list("<<t<"), ["", "<", "<", "<<t", "<<t<"])
    expect(list("</tool_call>"), ["", "</"] + [f"</tool_call>"[:k] for k in range(3, 13)] + ["</tool_call>"])
    expect(["x <tool_call"], ["x ", "x <tool_call"])
    expect(["<TOOL_CALL>", "<tool_call/>"], ["<TOOL_CALL>", "<TOOL_CALL><tool_call/>", "<TOOL_CALL><tool_call/>"])
    expect(["<tool_call", "", "/"], ["", "", "<tool_call/", "<tool_call/"])
    expect(["<tool_call><"], ["<tool_call>", "<tool_call><"])


# Each stream's attempt can no longer succeed once its last character has arrived, and not
# before: until then everything from the '<' is held; then it is all text.
DOOMED_AT_THE_LAST_CHARACTER = [
    '<tool_call>{"nam"',                                   # a key that is not name or arguments
    '<tool_call>{"name":"f","n',                           # name again: only arguments may follow
    '<tool_call>{"arguments":{},"a',                       # arguments again
    '<tool_call>{"name":"f","arguments":{},',              # both keys there: no member may follow
    '<tool_call>{"name":"f"}',                             # arguments missing
    '<tool_call>{}',
    '<tool_call>{"name":""',                               # an empty name
    '<tool_call>{"name":1',                                # a name that is not a string
    '<tool_call>{"arguments":[',                           # arguments that are not an object
    '<tool_call>{"name":"f","arguments":{"a":01',          # a leading zero
    '<tool_call>{"name":"f","arguments":{"a":-x',
    '<tool_call>{"name":"f","arguments":{"a":1.e',
    '<tool_call>{"name":"f","arguments":{"a":N',           # NaN
    '<tool_call>{"name":"f","arguments":{"a":+',
    '<tool_call>{"name":"f","arguments":{"a":tru ',
    '<tool_call>{"name":"f","arguments":{"a":[1,]',        # a trailing comma
    '<tool_call>{"name":"f","arguments":{"a":1,"a"',       # a duplicate key, at its closing quote
    '<tool_call>{"name":"f","arguments":{"b":[{"c":1,"\\u0063"',
    '<tool_call>{"name":"f","arguments":{"a":"x\t',        # a raw control character in a string
    '<tool_call>{"name":"f","arguments":{"a":"\\x',        # an unknown escape
    '<tool_call>{"name":"f","arguments":{"a":"\\u12G',
    '<tool_call>{"name":"f","arguments":{"a":\'',
    '<tool_call>{"name":"a</tool_call>',                   # the body ends at this closing tag, unfinished
    '<tool_call>{"name":"f","arguments":{}} x',            # after the object: only whitespace, then the tag
    '<tool_call>{"name":"f","arguments":{}}</tool_cx',
    '<tool_call>{"name":"f","arguments":{}} </tool_call ',
    '<tool_call>{"name":"f","arguments":{}}}',
    '<tool_call> \x0c',                                    # not JSON whitespace
    '<tool_call>{\xa0',
    '<tool_call>[',
    '<tool_call>"',
    '<tool_call>{"\\u01',                                  # no key starts with U+01xx
    '<tool_call>{"\\u006e\\u0062',                         # 'nb'
    '<tool_call>{"name\\',                                 # 'name' is whole: an escape cannot follow
    '<tool_call>{"\\n',
    '<tool_call>{"name":"f","\\u006e',                     # name again, spelled with an escape
    '<tool_call>{"arguments":{},"\\u0061',
]


@pytest.mark.parametrize("text", DOOMED_AT_THE_LAST_CHARACTER)
def test_an_attempt_fails_with_the_first_character_no_valid_body_can_follow(text):
    held = ["" for _ in text[:-1]]
    expect(list(text), held + [text, text])
    expect([text[:-1]], ["", text[:-1]])  # one character short, it may still succeed


def test_a_closing_tag_ends_the_body_even_inside_a_string():
    head = '<tool_call>{"name":"f","arguments":{"html":"<b></tool_call'
    expect([head, ">", '</b>"}}</tool_call>'], ["", head + ">", head + '></b>"}}</tool_call>', head + '></b>"}}</tool_call>'])
    texts = [head + '></b>"}}</tool_call>', '<tool_call>{"name":"f","arguments":{"s":"<tool_call>{"name":"g","arguments":{}}</tool_call>']
    check_runs([(t, list(t)) for t in texts] + [(t, [t]) for t in texts])


def test_a_failed_attempt_gives_only_its_bracket_and_what_follows_is_read_again():
    call = '<tool_call>{"name":"g","arguments":{}}</tool_call>'
    text = '<tool_call>{"name": ' + call + "!"
    got = emitted_after_each_call(list(text))
    assert got[len('<tool_call>{"name": <') - 1] == '<tool_call>{"name": '
    assert got[-1] == got[-2] == "<tool_call>{\"name\": [call 'g' ('dict', ())]!"
    texts = [
        '<tool_call><tool_call>{"name":"g","arguments":{}}</tool_call>',
        '<tool_call>{"name":"f","arguments":{"a":01}}' + call,
        '<<tool_call>{"name":"g","arguments":{}}</tool_call>',
        '<tool_call>{"name":"f","arguments":{"s":"<tool_call>{"name":"g","arguments":{}}</tool_call>"}}</tool_call>',
        '<tool_call>{"name":"f",<tool_call>{"name":"g","arguments":{}}</tool_call>,"arguments":{}}</tool_call>',
    ]
    check_runs([(t, list(t)) for t in texts] + [(t, [t]) for t in texts])


def test_after_the_object_whitespace_and_a_partial_closing_tag_are_held():
    text = '<tool_call>{"name":"f","arguments":{}} \n\t\r</tool_call>'
    expect(list(text), ["" for _ in text[:-1]] + ["[call 'f' ('dict', ())]"] * 2)
    body = '<tool_call>{"name":"f","arguments":{}}'
    expect([body + "<", "/tool_call", ">"], ["", "", "[call 'f' ('dict', ())]", "[call 'f' ('dict', ())]"])
    # Inside a string the same characters are text of the string: still held.
    expect(['<tool_call>{"name":"f</tool_call', '","arguments":{}}</tool_call>'],
           ["", "[call 'f</tool_call' ('dict', ())]", "[call 'f</tool_call' ('dict', ())]"])


def test_a_key_written_with_escapes_is_judged_at_each_hex_digit():
    # \u006e is 'n' and \u0061 is 'a': after \u006 both keys are still possible.
    expect(['<tool_call>{"\\u006', 'e', "ame", '":"f","\\u0061rguments":{}}</tool_call>'],
           ["", "", "", "[call 'f' ('dict', ())]", "[call 'f' ('dict', ())]"])
    expect(['<tool_call>{"\\u00', "7"], ["", '<tool_call>{"\\u007', '<tool_call>{"\\u007'])
    text = '<tool_call>{"n\\u0061me":"f","argum\\u0065nts":{"k\\u0065y":1}}</tool_call>'
    expect([text], ["[call 'f' ('dict', (('key', ('int', 1)),))]"] * 2)


def test_duplicate_keys_are_compared_decoded_at_every_depth():
    texts = [
        '<tool_call>{"name":"f","arguments":{"a":1,"\\u0061":2}}</tool_call>',
        '<tool_call>{"name":"f","arguments":{"\\ud83d\\ude00":1,"😀":2}}</tool_call>',
        '<tool_call>{"name":"f","arguments":{"x":[{"é":1,"\\u00E9":2}]}}</tool_call>',
        '<tool_call>{"name":"f","arguments":{"x":{"y":{"z":1,"z":1}}}}</tool_call>',
        '<tool_call>{"name":"f","name":"f","arguments":{}}</tool_call>',
    ]
    for text in texts:
        assert _oracle.fine_events(text) == list(text)
    fine_texts = [
        '<tool_call>{"name":"f","arguments":{"a":{"a":1},"b":[{"a":2},{"a":3}]}}</tool_call>',
        '<tool_call>{"name":"f","arguments":{"\\ud83d":1,"\\ud83d\\ude00":2,"\\ude00":3}}</tool_call>',
    ]
    check_runs([(t, list(t)) for t in texts + fine_texts] + [(t, [t]) for t in texts + fine_texts])


LENIENT_ELSEWHERE = [
    '{"name":"f","arguments":{"a":NaN}}', '{"name":"f","arguments":{"a":Infinity}}',
    '{"name":"f","arguments":{"a":-Infinity}}', '{"name":"f","arguments":{"a":007}}',
    '{"name":"f","arguments":{"a":+1}}', '{"name":"f","arguments":{"a":.5}}', '{"name":"f","arguments":{"a":5.}}',
    '{"name":"f","arguments":{"a":1,}}', '{"name":"f","arguments":{"a":[1,]}}', '{"name":"f","arguments":{},}',
    "{'name':'f','arguments':{}}", '{"name":"f","arguments":{"a":True}}', '{"name":"f","arguments":{"a":None}}',
    '{"name":"f","arguments":{"a":"\\x41"}}', '{"name":"f","arguments":{"a":"\\u00e"}}',
    '{"name":"f","arguments":{"a":"\\u00\u0663\u0669"}}',
    '{"name":"f",\xa0"arguments":{}}', '\ufeff{"name":"f","arguments":{}}', '{"name":"f","arguments":{"a":\u0661}}',
    '{"name":"f","arguments":{"a":"tab\there"}}', '{"name":"f","arguments":{}}\x0c', '{"name":"f","arguments":{"a":0x1}}',
    '{"name":"f","arguments":{"a":1}', '{"name":"f","arguments":{"a":1}}}', '{"name":"f","arguments":{}, "id":"1"}',
    '{"name":"","arguments":{}}', '{"name":"f","arguments":null}', '{"name":null,"arguments":{}}',
]


def test_json_that_lenient_parsers_accept_fails():
    texts = [OPEN + body + CLOSE for body in LENIENT_ELSEWHERE]
    for text in texts:
        assert _oracle.fine_events(text) == list(text)
    check_runs([(t, list(t)) for t in texts] + [(t, [t]) for t in texts])


def test_argument_values_keep_their_json_types():
    body = ('{"arguments": {"i": 1, "f": 1.0, "e": 1e2, "z": -0, "nz": -0.0, "big": 1E400, "t": true,'
            ' "no": null, "s": "\\ud83d\\ude00\\u00e9", "lone": "\\ud800x", "esc": "\\"\\\\\\/\\b\\f\\n\\r\\t",'
            ' "raw": "é😀", "list": [[], {}, 0, false]}, "name": "\\u0066\\/"}')
    want = {"i": 1, "f": 1.0, "e": 100.0, "z": 0, "nz": -0.0, "big": float("inf"), "t": True, "no": None,
            "s": "😀é", "lone": "\ud800x", "esc": "\"\\/\b\f\n\r\t", "raw": "é😀", "list": [[], {}, 0, False]}
    item = ("call", "f/", _oracle.canonical_value(want))
    text = "<tool_call>\n" + body + "\n</tool_call>"
    assert _oracle.fine_events(text) == [item]
    reports = feed([[text], list(text)])
    for report in reports:
        got = [i for step in calls_of(report) for i in step]
        assert got == [item], f"\n got: {got!r}\nwant: {[item]!r}"


def test_content_around_calls_is_kept_exactly():
    call = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    text = "  Hello,\n\n" + call + "\n\n" + call + " bye \t\r\n"
    item = ("call", "f", ("dict", ()))
    want = list("  Hello,\n\n") + [item] + list("\n\n") + [item] + list(" bye \t\r\n")
    assert _oracle.fine_events(text) == want
    named = '<tool_call>{"name":"text","arguments":{}}</tool_call>text' + call
    check_runs([(text, [text]), (text, list(text)), (named, [named])])


def test_finish_gives_an_unfinished_attempt_back_as_text():
    expect(["Hi <tool_call>", '{"name":"f","arguments":{'], ["Hi ", "Hi ", 'Hi <tool_call>{"name":"f","arguments":{'])
    expect(["<tool_call>{}</tool_call", ""], ["<tool_call>{}</tool_call", "<tool_call>{}</tool_call",
                                               "<tool_call>{}</tool_call"])
    expect(['<tool_call>{"name":"f","arguments":{}}</tool_cal'],
           ["", '<tool_call>{"name":"f","arguments":{}}</tool_cal'])
