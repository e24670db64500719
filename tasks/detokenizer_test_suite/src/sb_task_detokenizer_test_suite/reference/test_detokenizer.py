"""Tests for detokenizer.detokenize: every call is compared, delta by delta, with a model that
after each token computes the final text for continuations reaching every outcome and keeps
what they all share."""
import pytest

from detokenizer import detokenize

R = "\ufffd"
# every single byte, token i being bytes([i]), then an empty token and tokens of several bytes
VOCAB = [bytes([byte]) for byte in bytes.maketrans(b"", b"")] + [b"", "é€".encode(), b"\xe2\x82\xac\xe2"]
SAMPLES = b"\x80\x8f\x90\x9f\xa0\xbf"  # the ends of every range a second byte may need
FILLS = (b"", b"\x80", b"\x80\x80")


def final(data, stops, include):
    text = data.decode("utf-8", "replace")
    hits = [(at, -len(stop)) for stop in stops for at in range(len(text)) if text.startswith(stop, at)]
    if not hits:
        return text, False
    at, minus = min(hits)
    return text[:at - minus if include else at], True


def one_char(raw):
    try:
        return len(raw.decode("utf-8")) == len(raw[:1])
    except UnicodeDecodeError:
        return False


def open_tail(data):
    """The incomplete character at the end: the tail some continuation bytes complete."""
    tails = [data[at:] for at in range(len(data))]
    return max((tail for tail in tails
                if any(one_char(tail + bytes([byte]) + fill) for byte in SAMPLES for fill in FILLS)),
               key=len, default=b"")


def next_chars(tail, stops):
    """{character that can come next: bytes that make it}: every stop character that can, one
    character no stop holds, and U+FFFD (which always can)."""
    found = {char: char.encode()[len(tail):] for char in "".join(stops) if char.encode().startswith(tail)}
    made = [tail + bytes([byte]) + fill for byte in (SAMPLES if tail else b"~^") for fill in FILLS]
    other = next(raw for raw in made if one_char(raw) and raw.decode() not in "".join(stops))
    found[other.decode()] = other[len(tail):]
    found[R] = b"" if tail else b"\xff"
    return found


def model(ids, stops, include, limit):
    data, deltas, sent = b"", [], ""
    for count, token in enumerate(ids, 1):
        data += VOCAB[token]
        if count == limit:
            text, stopped = final(data, stops, include)
            return deltas + [text[len(sent):], ""], stopped
        ends = {final(data + raw + rest.encode(), stops, include)[0]
                for char, raw in next_chars(open_tail(data), stops).items()
                for rest in [""] + [stop[k + 1:] for stop in stops for k in range(len(stop)) if stop[k] == char]}
        ends.add(final(data, stops, include)[0])
        low, high = min(ends), max(ends)
        size = next((i for i, (a, b) in enumerate(zip(low, high)) if a != b), len(low))
        deltas.append(low[len(sent):size])
        sent = low[:size]
        if len(ends) == 1:
            return deltas + [""], True
    text, stopped = final(data, stops, include)
    return deltas + [text[len(sent):]], stopped


def check(ids, stops, include, limit=None):
    got = detokenize(list(VOCAB), list(ids), list(stops), include, limit)
    assert got == model(ids, stops, include, limit), (ids, stops, include, limit)


# Streams with the stops they are cut by: characters split anywhere, sequences no continuation
# can complete (a surrogate's first bytes, overlong and out-of-range leads, C0, C1, F5), U+FFFD
# in stops, self-overlapping stops, stops inside stops, and stop prefixes an incomplete
# character at the end can or cannot continue.
STREAMS = [
    (b"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", []),
    (b"\xed\xa0\x80x\xed\x9f\xbf", []),
    (b"\xe0\x80x\xe0\xa0\x80\xf0\x80\xf0\x90\x80\x80\xf4\x90\xf4\x8f\xbf\xbf", []),
    (b"\xc0\xaf\xc1\xf5\x80\xff\xc2", []),
    (b"ab\xe2\x82", []),
    (b"say STOP now", ["STOP"]),
    (b"xabd", ["abc", "b"]),
    (b"xabc", ["abc", "b"]),
    (b"zab", ["b", "a"]),
    (b"zabc!", ["ab", "abc"]),
    (b"zabx", ["abc", "ab"]),
    (b"aaab", ["aab"]),
    (b"xa\xc3\xa9", ["ab"]),
    (b"xa\xc3!", ["a" + R]),
    (b"xa\xc3", ["a" + R]),
    (b"a\xe2\x82\xac\xe2\x82", ["\u20ac" + R, "x"]),
]


@pytest.mark.parametrize("data, stops", STREAMS)
@pytest.mark.parametrize("include", [False, True])
def test_streams_one_byte_a_token(data, stops, include):
    check(list(data), stops, include)


@pytest.mark.parametrize("sent", [b"a", b"ab\xe2", b"ab\xe2\x82"])
def test_max_tokens(sent):
    check(list(b"ab\xe2\x82c"), ["bc"], False, len(sent))


def test_tokens_of_several_bytes_and_empty_ones():
    tokens = [b"a", b"", "é€".encode(), b"", b"\xe2\x82\xac\xe2", b"\x82"]
    check([VOCAB.index(token) for token in tokens], ["\u20acx"], False)
    check([VOCAB.index(token) for token in [b"\xe2\x82\xac\xe2", b"b"]], ["\u20ac" + R + "b"], False)


def test_literal_results():
    # written out by hand, so that the model itself is checked
    vocab = list(VOCAB)
    assert detokenize(vocab, list(b"a\xe2\x82\xac"), ["\u20ac"], True, None) == (["a", "", "", "\u20ac", ""], True)
    assert detokenize(vocab, list(b"a\xed\xa0b"), ["b"], True, None) == (["a", "", R + R, "b", ""], True)
    assert detokenize(vocab, list(b"xab"), ["ab"], False, None) == (["x", "", "", ""], True)
    assert detokenize(vocab, list(b"xabz"), ["ab", "abc"], True, None) == (["x", "a", "b", "", ""], True)
    assert detokenize(vocab, list(b"xa\xc3"), ["a" + R], False, len(b"xa\xc3")) == (["x", "", "", ""], True)
