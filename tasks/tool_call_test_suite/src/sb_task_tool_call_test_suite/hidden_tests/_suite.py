"""The judge's side of grading the solver's test_toolcalls.py: sb.solver_tests runs it once per
implementation of toolcalls (_good/NAME/toolcalls.py, _buggy/NAME/toolcalls.py), and a buggy
version counts as caught only when the run failed AND the judge's own record shows a call on
which that version behaves differently from the correct one. What is particular to this
task: results compare as JSON-typed values (see `alike`), a brute-force model of the
contract, and a battery of calls over the documented domain that the guards for the grader
itself use."""
import functools
import json
import pathlib
import random

from sb.solver_tests import SolverTests, behaviour

OPEN, CLOSE = "<tool_call>", "</tool_call>"


def typed_form(value):
    """A comparable form of a result: every scalar by its type and repr (so True, 1 and 1.0
    differ, and so do 0.0 and -0.0; NaN equals NaN), lists in order, dicts by their items
    whatever their order."""
    kind = type(value)
    if kind is dict:
        return ("dict", tuple(sorted(((typed_form(k), typed_form(v)) for k, v in value.items()), key=repr)))
    if kind in (list, tuple):
        return (kind.__name__, tuple(typed_form(item) for item in value))
    return (kind.__name__, repr(value))


def alike(a: tuple, b: tuple) -> bool:
    """Two behaviours alike: the same exception type, or results of the same typed form (the
    argument is a str, never written to)."""
    if a[0] != b[0]:
        return False
    if a[0] == "raises":
        return a[1] == b[1]
    return typed_form(a[1]) == typed_form(b[1])


SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_toolcalls.py", module="toolcalls",
                    functions=("parse_tool_calls",), alike=alike,
                    run_order_seed=3,  # checked by the grader's own guard: a buggy version runs first, the correct ones apart
                    max_calls=500,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="recursive_descent")
# The runs that must not depend on an earlier one: buggy versions that depart on many calls
# (any content with surrounding whitespace; any text after a call), so what a run records differs.
STANDALONE_BUGGY = ("content_stripped", "text_after_first_call_dropped")


# ---------------------------------------------------------------------------------------
# A brute-force model of the contract, written apart from every implementation: for every
# opening tag, every later closing tag, and json.loads (which allows JSON whitespace around
# one value and nothing else) on the text between them.

def _refuse(name):
    raise ValueError(name)


def model(text):
    content, calls, copied, start = [], [], 0, text.find(OPEN)
    while start >= 0:
        taken = None
        close = text.find(CLOSE, start + len(OPEN))
        while close >= 0 and taken is None:
            try:
                value = json.loads(text[start + len(OPEN):close], parse_constant=_refuse)
            except ValueError:
                value = None
            if (type(value) is dict and type(value.get("name")) is str
                    and type(value.get("arguments")) is dict):
                taken = ({"name": value["name"], "arguments": value["arguments"]}, close + len(CLOSE))
            close = text.find(CLOSE, close + 1)
        if taken is None:
            start = text.find(OPEN, start + 1)
            continue
        content.append(text[copied:start])
        calls.append(taken[0])
        copied = taken[1]
        start = text.find(OPEN, copied)
    content.append(text[copied:])
    return "".join(content), calls


# ---------------------------------------------------------------------------------------
# The battery: calls on the documented domain.

def _call(name, arguments, **extra):
    return OPEN + json.dumps({"name": name, "arguments": arguments, **extra}) + CLOSE


HAND = [
    "",
    "plain text, no call",
    _call("get_weather", {"city": "Paris", "days": 3}),
    "Sure.\n" + _call("f", {}) + "\n",
    "  lead " + _call("a", {"x": 1}) + " mid " + _call("b", {"y": [1, 2.5, None, True]}) + " tail  ",
    '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>',
    '<tool_call> \t\r\n{"name": "f", "arguments": {}} \t\r\n</tool_call>',
    # whitespace outside JSON's four
    '<tool_call>\x0c{"name": "f", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {}}\x0b</tool_call>',
    '<tool_call>\u00a0{"name": "f", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {}}\u2028</tool_call>',
    # constants outside JSON
    '<tool_call>{"name": "f", "arguments": {"x": NaN}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"x": -Infinity}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"x": [Infinity]}}</tool_call>',
    # raw control characters in a string, and escaped ones
    '<tool_call>{"name": "f", "arguments": {"code": "a\nb"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"code": "a\tb"}}</tool_call>',
    '<tool_call>{"name": "f\x00", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"code": "a\\nb\\t\\u0000"}}</tool_call>',
    # repeated keys
    '<tool_call>{"name": "f", "arguments": {"a": 1, "a": 2}}</tool_call>',
    '<tool_call>{"name": "f", "name": "g", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": "x", "arguments": {"k": "v"}}</tool_call>',
    # tags in other cases
    '<TOOL_CALL>{"name": "f", "arguments": {}}</TOOL_CALL>',
    '<tool_call>{"name": "f", "arguments": {}}</Tool_Call>',
    '<Tool_call>{"name": "f", "arguments": {}}</tool_call>',
    # the closing tag, braces and escaped quotes inside strings
    '<tool_call>{"name": "f", "arguments": {"html": "</tool_call>"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "}"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "{"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\"}"}}</tool_call>',
    '<tool_call>{"name": "say \\"hi\\"", "arguments": {}}</tool_call>',
    # names and arguments of other types
    '<tool_call>{"name": "", "arguments": {}}</tool_call>',
    '<tool_call>{"name": 5, "arguments": {}}</tool_call>',
    '<tool_call>{"name": null, "arguments": {}}</tool_call>',
    '<tool_call>{"arguments": {}}</tool_call>',
    '<tool_call>{"name": "f"}</tool_call>',
    '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>',
    '<tool_call>{"name": "f", "arguments": [1]}</tool_call>',
    '<tool_call>{"name": "f", "arguments": null}</tool_call>',
    '<tool_call>["f", {}]</tool_call>',
    '<tool_call>{"name": "f", "arguments": {}, "id": 7}</tool_call>',
    # numbers
    '<tool_call>{"name": "f", "arguments": {"n": 12345678901234567891}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"n": -9007199254740993}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"a": 1.0, "b": 1e2, "c": -0.0, "d": -0, "e": 2E-3}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"n": \uff11\uff12}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"n": 1\u0663}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"n": 2\u00b2}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"n": 01}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"n": 1.}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"n": +1}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"n": 1e400}}</tool_call>',
    # \\u escapes
    '<tool_call>{"name": "f", "arguments": {"s": "\\u0041\\u00e9"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\u+041"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\u0_41"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\u 41 "}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\u0x41"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\u-041"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\u12G4"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\ud83d\\ude00"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\ud83d"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\ud83d\\u0041"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\udbff\\uffff \\ud83d\\ud83d\\ude00"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"s": "\\ude00\\ud83d"}}</tool_call>',
    '<tool_call>{"name": "\\ud83d\\ude00", "arguments": {}}</tool_call>',
    # malformed calls, cut-off calls, junk before the closing tag
    '<tool_call>{"name": "f", "arguments": {}}',
    '<tool_call>{"name": "f", "arguments": {}}  \n',
    '<tool_call>{"name": "f", "arguments": {}',
    '<tool_call>{"name": "f", "arguments": {}} x</tool_call>',
    '<tool_call>{"name": "f", "arguments": {}},</tool_call>',
    '<tool_call>{"name": "f", "arguments": {},}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {}}{}</tool_call>',
    '<tool_call></tool_call> then ' + _call("g", {"k": 1}),
    'a <tool_call>oops</tool_call> b ' + _call("g", {}) + " c",
    '<tool_call>{"name": "f", <tool_call>{"name": "g", "arguments": {}}</tool_call>',
    '<tool_call><tool_call>{"name": "g", "arguments": {}}</tool_call></tool_call>',
    '<tool_call>{"name": "f", "arguments": {}}</tool_call></tool_call>',
    'x</tool_call>y<tool_call',
    '<tool_call>{"name": "f", "arguments": {"x": "<tool_call>"}}</tool_call>',
    '<<tool_call>{"name": "f", "arguments": {}}</tool_call>>',
]


# Fragments a random text is built from: plain text in several scripts, whitespace of every
# kind, stray tags, and calls written in several styles.
PLAIN = ["Hello", " ", "\n", "I'll check.", "é€😀", "a < b", "{}", '"q"', "\t", "\u00a0", "tool_call", "<", ">"]


def _random_json(rng, depth=0):
    pick = rng.randrange(9 if depth < 2 else 6)
    if pick == 0:
        return rng.randrange(-1000, 1000)
    if pick == 1:
        return rng.choice([0.5, -2.25, 1.0, 3e-05, 1e20, -0.0])
    if pick == 2:
        return rng.choice([True, False, None])
    if pick in (3, 4, 5):
        return "".join(rng.choice(["a", "B", " ", "\n", '"', "\\", "é", "😀", "}", "{", "</tool_call>", "/"])
                       for _ in range(rng.randrange(4)))
    if pick in (6, 7):
        return {rng.choice(["k", "x", "path", ""]): _random_json(rng, depth + 1) for _ in range(rng.randrange(3))}
    return [_random_json(rng, depth + 1) for _ in range(rng.randrange(3))]


def _random_call(rng):
    value = {"name": rng.choice(["f", "get_weather", "", "run code"]),
             "arguments": {rng.choice(["a", "b", "c"]): _random_json(rng) for _ in range(rng.randrange(3))}}
    if rng.random() < 0.2:
        value[rng.choice(["name", "arguments"])] = _random_json(rng)
    if rng.random() < 0.1:
        del value[rng.choice(["name", "arguments"])]
    body = json.dumps(value, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, None, 2]))
    ws = [" ", "\n", "\t", "\r\n", ""]
    text = OPEN + rng.choice(ws) + body + rng.choice(ws)
    cut = rng.random()
    if cut < 0.1:
        return text  # no closing tag
    if cut < 0.15:
        return text[:rng.randrange(len(text))]
    if cut < 0.2:
        text += rng.choice(["x", ",", "}"])
    return text + CLOSE


def _random_text(rng):
    parts = []
    for _ in range(rng.randrange(6)):
        r = rng.random()
        parts.append(_random_call(rng) if r < 0.45 else rng.choice([OPEN, CLOSE]) if r < 0.55 else rng.choice(PLAIN))
    return "".join(parts)


@functools.lru_cache(maxsize=None)
def battery() -> list:
    rng = random.Random(20261204)
    texts = list(HAND) + [_random_text(rng) for _ in range(1500)]
    return [("parse_tool_calls", (text,), {}) for text in texts]


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """Guard for the grader itself: the buggy version departs somewhere on the documented domain."""
    return SUITE.differs_somewhere(name, battery())


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_model() -> bool:
    """Guard for the grader itself: every correct implementation equals the brute-force model
    of the contract, exactly (typed), over the battery."""
    modules = [SUITE.load("good", name) for name in SUITE.good]
    return all(alike(behaviour(m, call), ("returns", model(*call[1]), [])) for call in battery() for m in modules)
