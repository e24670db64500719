import random

import pytest

from bpe import decode, encode


def model_encode(text, merges):
    """The rules of encode, step by step, as plainly as they are stated."""
    tokens = [bytes([b]) for b in text.encode("utf-8")]
    rank = {}
    for index, pair in enumerate(merges):
        rank.setdefault(tuple(pair), index)
    while True:
        ranks = [rank[p] for p in zip(tokens, tokens[1:]) if p in rank]
        if not ranks:
            return tokens
        left, right = merges[min(ranks)]
        out, i = [], 0
        while i < len(tokens):
            if i + 1 < len(tokens) and tokens[i] == left and tokens[i + 1] == right:
                out.append(left + right)
                i += 2
            else:
                out.append(tokens[i])
                i += 1
        tokens = out


def model_decode(tokens):
    return b"".join(tokens).decode("utf-8", errors="replace")


def as_bytes(text):
    return [bytes([b]) for b in text.encode("utf-8")]


# (text, merges, tokens), each worked out by hand from the rules
KNOWN = [
    # a step merges every occurrence, left to right: an odd run leaves its last byte alone
    ("aaa", [(b"a", b"a")], [b"aa", b"a"]),
    ("aaaaa", [(b"a", b"a"), (b"aa", b"a")], [b"aa", b"aaa"]),
    ("ababab", [(b"a", b"b"), (b"b", b"a"), (b"ab", b"ab")], [b"abab", b"ab"]),
    # every occurrence in ONE step: the first merge made must not pair with the next byte
    # before the other occurrence is merged
    ("abab", [(b"ab", b"a"), (b"a", b"b")], [b"ab", b"ab"]),
    # a later merge makes the part of an earlier one: the earlier one then applies
    ("abc", [(b"ab", b"c"), (b"a", b"b")], [b"abc"]),
    ("aaaa", [(b"aa", b"a"), (b"a", b"a")], [b"aa", b"aa"]),
    # pairs are of tokens: a and bc are not ab and c
    ("abc", [(b"b", b"c"), (b"ab", b"c")], [b"a", b"bc"]),
    # the lowest rank wins over the most frequent pair
    ("abcbc", [(b"a", b"b"), (b"b", b"c")], [b"ab", b"c", b"bc"]),
    # a pair listed twice keeps its first rank
    ("abc", [(b"b", b"c"), (b"a", b"b"), (b"b", b"c")], [b"a", b"bc"]),
    ("abc", [(b"a", b"b"), (b"b", b"c"), (b"a", b"b")], [b"ab", b"c"]),
    # whitespace is an ordinary byte
    ("a b", [(b"a", b" "), (b"a ", b"b")], [b"a b"]),
    ("x\ty", [(b"\t", b"y"), (b"x", b"\ty")], [b"x\ty"]),
    # a merge that never applies changes nothing
    ("abc", [(b"c", b"a"), (b"x", b"y")], [b"a", b"b", b"c"]),
    # no merges at all: one token per UTF-8 byte
    ("é€😀", [], as_bytes("é€😀")),
    ("é", [(b"\xc3", b"\xa9")], [b"\xc3\xa9"]),
    # no normalisation: a decomposed character stays two code points
    ("e\u0301", [], [b"e", b"\xcc", b"\x81"]),
    ("e\u0301", [(b"\xcc", b"\x81")], [b"e", b"\xcc\x81"]),
    # the empty text has no tokens
    ("", [], []),
    ("", [(b"a", b"b")], []),
    ("a", [(b"a", b"a")], [b"a"]),
]


@pytest.mark.parametrize("text, merges, tokens", KNOWN)
def test_known_encodings(text, merges, tokens):
    assert encode(text, merges) == tokens
    assert model_encode(text, merges) == tokens  # the model agrees with the hand-worked answer


ALPHABET = ["a", "b", "c", " ", "\n", "é", "e\u0301", "€", "😀", "\ufeff"]


def random_merges(rng, text, count):
    """Pairs cut from the text's bytes, in any order (later merges may make the parts of
    earlier ones), some repeated."""
    data = text.encode("utf-8") or b"ab"
    merges = []
    for _ in range(count):
        i = rng.randrange(len(data))
        j = min(len(data), i + rng.randrange(1, 3))
        k = min(len(data), j + rng.randrange(1, 3))
        if j < k:
            merges.append((data[i:j], data[j:k]))
        if merges and rng.random() < 0.2:
            merges.append(rng.choice(merges))
    rng.shuffle(merges)
    return merges


@pytest.mark.parametrize("seed", range(8))
def test_encode_matches_the_model(seed):
    rng = random.Random(seed)
    for _ in range(15):
        text = "".join(rng.choice(ALPHABET if seed % 2 else "ab") for _ in range(rng.randrange(0, 10)))
        merges = random_merges(rng, text, rng.randrange(0, 8))
        got = encode(text, merges)
        assert got == model_encode(text, merges), (text, merges)
        assert b"".join(got) == text.encode("utf-8")


@pytest.mark.parametrize("seed", range(3))
def test_decode_inverts_encode(seed):
    rng = random.Random(100 + seed)
    for _ in range(6):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 8)))
        merges = random_merges(rng, text, 4)
        assert decode(encode(text, merges)) == text


# (tokens, text): bytes joined first, then decoded with Python's replacement rule
KNOWN_DECODES = [
    ([], ""),
    ([b""], ""),
    ([b"\xc3", b"\xa9"], "é"),
    ([b"\xf0\x9f", b"\x98", b"\x80"], "😀"),
    ([b"\xef\xbb\xbf", b"a"], "\ufeffa"),
    ([b"a\xffb"], "a\ufffdb"),
    ([b"\xe2\x82A"], "\ufffdA"),
    ([b"a", b"\xe2\x82"], "a\ufffd"),
    ([b"\xf0\x9f\x98"], "\ufffd"),
    ([b"\xc0\xaf"], "\ufffd\ufffd"),
]


@pytest.mark.parametrize("tokens, text", KNOWN_DECODES)
def test_known_decodes(tokens, text):
    assert decode(tokens) == text
    assert model_decode(tokens) == text


def test_decode_matches_the_model_on_broken_bytes():
    rng = random.Random(7)
    for _ in range(25):
        data = bytes(rng.choice([0x61, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0xFF, 0xEF, 0xBB, 0xBF])
                     for _ in range(rng.randrange(0, 7)))
        cuts = sorted(rng.sample(range(len(data) + 1), rng.randrange(0, len(data) + 1)))
        tokens = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
        assert decode(tokens) == model_decode(tokens), tokens
