"""Tests for sse.parse_event_stream: every call is compared with a model of the contract that
decodes the whole body at once, and every body is also cut into chunks in several ways."""
import random

import pytest

from sse import parse_event_stream


def model(body):
    """The contract on the whole body: decode, skip one BOM, cut complete lines, read fields."""
    text = body.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines, start, i = [], 0, 0
    while i < len(text):
        if text[i] in "\r\n":
            lines.append(text[start:i])
            if text[i] == "\r" and text[i + 1:i + 2] == "\n":
                i += 1
            start = i + 1
        i += 1
    events, kind, data, last_id = [], "", [], ""
    for line in lines:
        if line == "":
            if data:
                events.append((kind or "message", "\n".join(data), last_id))
            kind, data = "", []
        elif line[0] != ":":
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name == "event":
                kind = value
            elif name == "data":
                data.append(value)
            elif name == "id" and "\0" not in value:
                last_id = value
    return events


def check(chunks):
    got = parse_event_stream(list(chunks))
    assert got == model(b"".join(chunks)), chunks
    assert all(type(event) is tuple for event in got)


def cuttings(body):
    """The body whole, one byte a chunk, one byte a chunk with empty chunks around."""
    yield [body]
    yield [body[i:i + 1] for i in range(len(body))]
    yield [b""] + [part for i in range(len(body)) for part in (body[i:i + 1], b"")]


BOM = "\ufeff".encode()

# Bodies that reach every rule: the three line endings and CR LF cut apart, characters that
# other line splitters end lines at, a BOM at the start, twice, and later, characters and
# invalid bytes cut across chunks, whitespace around names and values, colons in values,
# empty fields, ids with NUL, type and id across events, an event the stream never ends.
BODIES = [
    b"data: hello\n\n",
    b"data: a\r\ndata: b\r\n\r\ndata: c\rdata: d\r\r",
    b"data: a\r\rdata: b\n\r",
    "data: a\u2028b\u2029c\x85d\x0be\x0cf\x1cg\x1dh\x1ei\n\n".encode(),
    BOM + b"data: x\n\n",
    BOM + BOM + b"data: x\n\n" + BOM + b"data: y\n\n",
    "data: caf\u00e9 \u20ac \U0001F600\n\n".encode(),
    b"data: \xff|\xe2\x82|\xf0\x9f\x98|\xed\xa0\x80\n\n",
    b"data:  two\ndata:x\ndata:\ndata\n\n",
    b"data: a:b: c\nevent: x:y\n\n",
    b"data : no\n data: no\nData: no\nEVENT: no\nId: 9\n\n",
    b"data: a\n \n\t\ndata: b\n\n",
    b"data: a\ndata:\n\n",
    b"data:\n\ndata\n\n",
    b"id: 1\ndata: a\n\ndata: b\n\nid:\ndata: c\n\nid: 2\x003\ndata: d\n\n",
    b"id: 7\n\ndata: after\n\n",
    b"event: e\ndata: a\n\ndata: b\n\nevent: f\n\ndata: c\n\nevent:\ndata: d\n\n",
    b": comment\n:\nretry: 10\nfoo: bar\ndata: x\n\n",
    b"data: first\n\ndata: never dispatched\n",
    b"data: a\n\ndata: b",
    b"data: a\r",
]


@pytest.mark.parametrize("body", BODIES)
def test_every_cutting_of_a_body(body):
    for chunks in cuttings(body):
        check(chunks)


@pytest.mark.parametrize("body", [
    b"data: a\r\ndata: b\r\n\r\n",
    BOM + b"data: x\r\n\r\n",
    "data: \u00e9\u20ac\r\n\r\n".encode(),
])
def test_every_cut_in_two(body):
    for cut in range(len(body) + 1):
        check([body[:cut], body[cut:]])
        check([body[:cut], b"", body[cut:]])


def test_bodies_cut_at_random():
    rng = random.Random(7)
    lines = ["data: x", "data:y z", "data", "data:", "event: e", "event:", "id: 4", "id:",
             ": c", "", "", "", "data: \u00e9\u2028", "Data: q", "data :q", " ", "id: \0"]
    for _ in range(60):
        body = b"".join((rng.choice(lines) + rng.choice(["\n", "\r", "\r\n"])).encode()
                        for _ in range(rng.randrange(1, 8)))
        cuts = sorted(rng.randrange(len(body) + 1) for _ in range(rng.randrange(1, 5)))
        bounds = [0] + cuts + [len(body)]
        check([body[a:b] for a, b in zip(bounds, bounds[1:])])


def test_literal_results():
    # written out by hand, so that the model itself is checked
    assert parse_event_stream([]) == []
    assert parse_event_stream([b"data: a\r", b"\n\r\n"]) == [("message", "a", "")]
    assert parse_event_stream([b"event: t\nid: 5\ndata: a\ndata:\n\n"]) == [("t", "a\n", "5")]
    assert parse_event_stream([b"data: a\n\nid: 6\n\nevent: u\n\ndata: b\n\n"]) == [
        ("message", "a", ""), ("message", "b", "6")]
    assert parse_event_stream([BOM[:2], BOM[2:] + BOM + b"data: x\n\n"]) == []
    assert parse_event_stream([b"data: x\n\ndata: y\n"]) == [("message", "x", "")]
