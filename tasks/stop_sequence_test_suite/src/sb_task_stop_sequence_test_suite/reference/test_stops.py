"""Tests for stops.filter_stream: every call is compared, piece by piece, with a brute-force
model of the contract that looks at the whole text after every chunk."""
import pytest

from stops import filter_stream


def model(chunks, stops):
    """The contract by brute force: after each chunk, every occurrence of every stop in the
    whole text so far; otherwise release all but the longest suffix that begins a stop."""
    text, released, pieces = "", 0, []
    for chunk in chunks:
        text += chunk
        hits = [(at + len(stop), at, index) for index, stop in enumerate(stops)
                for at in range(len(text)) if text.startswith(stop, at)]
        if hits:
            _, start, index = min(hits)
            return pieces + [text[released:start], ""], index
        keep = max([size for size in range(len(text) + 1)
                    if any(stop[:size] == text[len(text) - size:] for stop in stops)], default=0)
        pieces.append(text[released:len(text) - keep])
        released = len(text) - keep
    return pieces + [text[released:]], None


def check(chunks, stops):
    got = filter_stream(list(chunks), list(stops))
    assert got == model(chunks, stops), (chunks, stops)


def splits(text):
    """The text whole, one character a chunk, with empty chunks around, and cut in two at
    every position."""
    yield [text]
    yield list(text)
    yield [""] + [part for char in text for part in (char, "")]
    for cut in range(len(text) + 1):
        yield [text[:cut], text[cut:]]


# Texts with the stops they are filtered against: self-overlapping stops, stops inside
# other stops, duplicates, characters a regular expression would read as operators, and
# characters outside ASCII before a stop.
STREAMS = [
    ("say STOP now", ["STOP"]),
    ("one, two, three", [", "]),
    ("xaaab", ["aab"]),
    ("abababc", ["ababc"]),
    ("zabcd", ["abcd", "bc"]),
    ("zabc", ["c", "bc", "c"]),
    ("xyzw", ["yz", "yz"]),
    ("a.b?c", [".c", "?c"]),
    ("x<|e|>", ["<|e|>"]),
    ("é😀STOP", ["STOP"]),
    ("cabd", ["ab", "cabd"]),
    ("STOPx", ["ST", "STOP", "S"]),
    ("a partial ST", ["STOP", "Sx"]),
    ("nothing", []),
]


@pytest.mark.parametrize("text, stops", STREAMS)
def test_every_way_of_cutting_a_stream(text, stops):
    for chunks in splits(text):
        check(chunks, stops)


@pytest.mark.parametrize("chunks, stops", [
    ([], ["a"]),
    ([], []),
    ([""], ["a"]),
    (["one", "", "two", ""], ["w"]),
    (["x", "S", "T", "O"], ["STOP", "TOP"]),
    (["<", "|im", "_e", "nd", "|>x"], ["<|im_end|>"]),
    (["€ ab", "c"], ["abc", "€ ab"]),
    (["after", " the stop", " never read"], ["the"]),
])
def test_chunk_lists(chunks, stops):
    check(chunks, stops)


def test_literal_results():
    # written out by hand, so that the model itself is checked
    assert filter_stream(["Hello ST", "OP more"], ["STOP"]) == (["Hello ", "", ""], 0)
    assert filter_stream(["a", "a", "a", "b"], ["aab"]) == (["", "", "a", "", ""], 0)
    assert filter_stream(["ab", "c"], ["abcd"]) == (["", "", "abc"], None)
    assert filter_stream(["zabc"], ["c", "bc", "bc"]) == (["za", ""], 1)
    assert filter_stream(["a", "", "b"], []) == (["a", "", "b", ""], None)
