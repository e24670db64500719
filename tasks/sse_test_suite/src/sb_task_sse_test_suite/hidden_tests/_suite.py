"""The judge's side of grading the solver's test_sse.py: sb.solver_tests runs it once per
implementation of sse (_good/NAME/sse.py, _buggy/NAME/sse.py), and a buggy version counts as
caught only when the run failed AND the judge's own record shows a call on which that
version behaves differently from the correct one (exactly: an equal list of equal tuples,
or the same exception type and message). What is particular to this task: its one function,
a model of the contract written apart from every implementation, and a battery of calls
over the documented domain that the guards for the grader itself use."""
import functools
import pathlib
import random
import re

from sb.solver_tests import SolverTests, behaviour

SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_sse.py", module="sse",
                    functions=("parse_event_stream",),
                    run_order_seed=1,  # checked by the grader's own guard: a buggy version runs first, the correct ones apart
                    max_calls=500,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="decode_whole")
# The runs that must not depend on an earlier one: buggy versions that depart on many calls
# (every stream with a CR LF cut between CR and LF; every body that ends inside an event), so that
# what a run records differs.
STANDALONE_BUGGY = ("crlf_split_two_endings", "dispatch_at_eof")


# ---------------------------------------------------------------------------------------
# A model of the contract, written apart from every implementation: the whole body decoded
# at once, lines cut by a regular expression that names the three line endings, fields read
# with a regular expression.

_ENDING = re.compile(r"\r\n|\r|\n")
_FIELD = re.compile(r"([^:]*)(?::(.*))?", re.DOTALL)


def model(chunks):
    text = b"".join(chunks).decode("utf-8", "replace")
    text = text[1:] if text[:1] == "\ufeff" else text
    lines = _ENDING.split(text)[:-1]  # the last piece is closed by no line ending
    events, kind, data, last_id = [], "", None, ""
    for line in lines:
        if line == "":
            if data is not None:
                events.append((kind or "message", data, last_id))
            kind, data = "", None
            continue
        if line.startswith(":"):
            continue
        name, value = _FIELD.fullmatch(line).groups()
        value = value or ""
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            kind = value
        elif name == "data":
            data = value if data is None else data + "\n" + value
        elif name == "id" and "\x00" not in value:
            last_id = value
    return events


# ---------------------------------------------------------------------------------------
# The battery: calls on the documented domain.

BOM = "\ufeff".encode()

# Lines of every kind the contract defines, with characters a line splitter, a decoder or a
# str method might treat specially (ends are added separately).
LINES = [
    "data: hello", "data:hello", "data", "data:", "data: ", "data:  two", "data: a:b: c",
    'data: {"id": 1, "text": "hi"}', "data: [DONE]", "data:\t tab", "data: é€😀",
    "event: delta", "event:", "event: ping", "event", "id: 7", "id:", "id", "id: 3\x00x", "id: \x00",
    "retry: 100", ": keep-alive", ":", ":data: no", "Data: x", "DATA: x", "Event: x", "ID: 9",
    "data : x", " data: x", "data\t: x", "event : x", "id : 5", "   ", "\t", " ", "\x00",
    "data: a\u2028b", "data: a\u2029b", "data: a\x85b", "data: a\x0bb", "data: a\x0cb",
    "data: a\x1cb\x1db\x1eb", "data: \ufeffx", "\ufeffdata: x", "id: \ufeff",
    "data:\x00", "data: tail  ", "event:  spaced", "id:  8",
    "", "", "", "",  # empty lines dispatch: drawn often
]
ENDINGS = ["\n", "\r", "\r\n"]
BAD_BYTES = [b"\xff", b"\xe2\x82", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\x80\x80"]


def _random_body(rng):
    body = b""
    if rng.random() < 0.25:
        body += BOM * rng.choice([1, 1, 2])
    for _ in range(rng.randrange(0, 9)):
        line = "" if rng.random() < 0.3 else rng.choice(LINES)
        body += (line + rng.choice(ENDINGS)).encode()
        if rng.random() < 0.08:
            body += rng.choice(BAD_BYTES)
        if rng.random() < 0.05:
            body += BOM
    if rng.random() < 0.3:
        body += rng.choice(["", "\r", "\n", "\r\n", "data: tail"]).encode()
    return body


def _cut(rng, body):
    how = rng.random()
    if how < 0.15:
        return [body]
    if how < 0.3:
        return [body[i:i + 1] for i in range(len(body))]
    cuts = sorted(rng.randrange(len(body) + 1) for _ in range(rng.randrange(1, 7)))
    bounds = [0] + cuts + [len(body)]
    return [body[a:b] for a, b in zip(bounds, bounds[1:])]


HAND = [
    [],
    [b""],
    [b"data: hello\n\n"],
    [b"data: a\r", b"\ndata: b\r\n\r\n"],
    [b"data: a\r", b"", b"\ndata: b\r\n\r\n"],
    [b"data: a\r\r"],
    [b"data: a\n\r"],
    [b"data: a\r\n\r\n"],
    [b"data: a\n"],
    [b"data: a\n\ndata: b"],
    [b"data: caf\xc3", b"\xa9\n\n"],
    [b"data: \xf0\x9f", b"\x98", b"\x80\n\n"],
    [b"data: \xff\xe2\x82\n\n"],
    [BOM + b"data: x\n\n"],
    [BOM[:1], BOM[1:] + b"data: x\n\n"],
    [b"", BOM + b"data: x\n\n"],
    [BOM + BOM + b"data: x\n\n"],
    [b"data: x\n", BOM + b"data: y\n\n"],
    [b"data: x\n\n", BOM + b"data: y\n\n"],
    ["data: x\u2028y\n\n".encode()],
    ["data: a\x85b\n\ndata: c\x0bd\x0ce\x1cf\n\n".encode()],
    [b"data:  two spaces\n\n"],
    [b"data: a:b:c\n\n"],
    [b"data : x\n\n", b"data: y\n\n"],
    [b"data: x\n \n\n"],
    [b"data: x\n\t\ndata: y\n\n"],
    [b"id: 1\x002\ndata: x\n\n"],
    [b"id: 5\ndata: x\n\ndata: y\n\n"],
    [b"id: 5\n\ndata: y\n\nid:\ndata: z\n\n"],
    [b"event: a\ndata: x\n\ndata: y\n\n"],
    [b"event: a\n\ndata: y\n\n"],
    [b"event:\ndata: x\n\n"],
    [b"data:\n\n"],
    [b"data\n\n"],
    [b"data: a\ndata:\n\n"],
    [b"Data: x\nDATA: y\nEvent: e\nID: 3\n\n"],
    [b": comment\ndata: x\n:\n\n"],
    [b"retry: 10\ndata: x\n\n"],
    [b"data: x\r"],
    [b"data: x\r\r", b"data: y\n\n"],
]


@functools.lru_cache(maxsize=None)
def battery() -> list:
    rng = random.Random(20261205)
    cases = [list(chunks) for chunks in HAND]
    for _ in range(1500):
        cases.append(_cut(rng, _random_body(rng)))
    return [("parse_event_stream", (chunks,), {}) for chunks in cases]


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """Guard for the grader itself: the buggy version departs somewhere on the documented domain."""
    return SUITE.differs_somewhere(name, battery())


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_model() -> bool:
    """Guard for the grader itself: every correct implementation equals the model of the
    contract, exactly, over the battery."""
    modules = [SUITE.load("good", name) for name in SUITE.good]
    return all(SUITE.alike(behaviour(m, call), ("returns", model(*call[1]), [])) for call in battery() for m in modules)
