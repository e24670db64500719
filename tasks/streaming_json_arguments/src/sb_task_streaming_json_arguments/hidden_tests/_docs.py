"""Seeded generators of JSON texts: valid ones written with every spelling JSON allows
(escapes of every kind, surrogate pairs in either case, raw non-BMP characters, every
number shape, whitespace anywhere it may go), and invalid ones made from them."""
import random

SPACE = ["", "", "", " ", "\n", "\t", "\r\n", "  "]
STRING_PIECES = [
    "a", "b", "Z", " ", "0", "7", "é", "ß", "€", "😀", "𝄞", "\u2028", "\x7f", "\ufffd",
    "\uffff", "\x85", "\x9f", "'", ":", ",", "{", "]", "tru", "-1",
    '\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t",
    "\\u00e9", "\\u00E9", "\\u0000", "\\u001f", "\\u2028", "\\uFFFF", "\\u0041",
    "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\uD834\\udd1e", "\\udbff\\udfff", "\\ud800\\udc00",
]


def ws(rng):
    return rng.choice(SPACE)


def string_text(rng, max_pieces=5):
    return '"' + "".join(rng.choice(STRING_PIECES) for _ in range(rng.randint(0, max_pieces))) + '"'


def number_text(rng):
    text = rng.choice(["", "", "-"])
    text += rng.choice(["0", "0", str(rng.randint(1, 9)), str(rng.randint(10, 10**12))])
    if rng.random() < 0.4:
        text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.3:
        text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 40))
    return text


def value_text(rng, depth):
    kinds = ["string", "number", "literal"] + (["array", "object"] * 2 if depth > 0 else [])
    kind = rng.choice(kinds)
    if kind == "string":
        return string_text(rng)
    if kind == "number":
        return number_text(rng)
    if kind == "literal":
        return rng.choice(["true", "false", "null"])
    n = rng.choice([0, 1, 2, 3, 4])
    if kind == "array":
        items = [ws(rng) + value_text(rng, depth - 1) + ws(rng) for _ in range(n)]
        return "[" + (",".join(items) if items else ws(rng)) + "]"
    members = []
    for k in range(n):
        key = string_text(rng, 2)[:-1] + str(k) + '"'  # the trailing digit keeps keys distinct
        members.append(ws(rng) + key + ws(rng) + ":" + ws(rng) + value_text(rng, depth - 1) + ws(rng))
    return "{" + (",".join(members) if members else ws(rng)) + "}"


def document(rng, depth=3):
    return ws(rng) + value_text(rng, depth) + ws(rng)


def documents(seed, count, depth=3, max_len=None):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        text = document(rng, depth)
        if max_len is None or len(text) <= max_len:
            out.append(text)
    return out


# Characters that break a text somewhere, spliced into valid texts.
BREAKERS = [
    "x", ",", "]", "}", "[", "{", "0", "1", "-", ".", "e", "+", '"', "\\", ":", "u", "d",
    "\x00", "\x1f", "\n", "\xa0", "\ufeff", "\u0663", "\u00b2", "\ud800", "\udc00", "N", "I",
    "\x0c", "\x0b", "\u2028", "t", "f", "n", " ",
]


def broken_documents(seed, count, oracle):
    """Texts that are not valid JSON, each with at least one character past the point
    where it stopped being a prefix of a valid text, or that ends too early."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        text = document(rng, 2)
        at = rng.randrange(len(text) + 1)
        if rng.random() < 0.5:
            broken = text[:at] + rng.choice(BREAKERS) + text[at:]
        else:
            broken = text[:at] + rng.choice(BREAKERS) + text[at + 1 :]
        if not oracle.scan(broken).complete:
            out.append(broken)
    return out


def escape_texts(seed, count):
    """Strings of \\u escapes near and inside the surrogate ranges, valid or not, in either
    case, each inside a small document."""
    rng = random.Random(seed)
    starts = ["d8", "d9", "db", "dc", "dd", "df", "d7", "e0", "00", "D8", "DB", "DC", "DF", "Db", "dC"]
    out = []
    for _ in range(count):
        escapes = []
        for _ in range(rng.randint(1, 3)):
            escapes.append("\\u" + rng.choice(starts) + "".join(rng.choice("0123456789abcdefABCDEF") for _ in range(2)))
        body = "".join(escapes)
        out.append(rng.choice(['"{}"', '["{}"]', '{{"{}":0}}', '{{"k":"x{}y"}}']).format(body))
    return out
