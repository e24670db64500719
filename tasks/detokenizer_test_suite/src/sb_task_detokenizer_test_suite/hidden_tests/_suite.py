"""The judge's side of grading the solver's test_detokenizer.py: sb.solver_tests runs it once
per implementation of detokenizer (_good/NAME/detokenizer.py, _buggy/NAME.patch), and a buggy
version counts as caught only when the run failed AND the judge's own record shows a call on
which that version behaves differently from the correct one (exactly: the same deltas and the
same flag, or the same exception type and message). What is particular to this task: its one
function, a brute-force model of the contract over continuations, and a battery of calls over
the documented domain that the guards for the grader itself use."""
import functools
import pathlib
import random

from sb.solver_tests import SolverTests, behaviour

SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_detokenizer.py", module="detokenizer",
                    functions=("detokenize",),
                    run_order_seed=1,  # checked by the grader's own guard: a buggy version runs first, the correct ones apart
                    max_calls=400,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="recompute")
# The runs that must not depend on an earlier one: buggy versions that depart on many calls
# (every character split across tokens; every stream that ends while a stop prefix is held),
# so that what a run records differs.
STANDALONE_BUGGY = ("decodes_each_token_alone", "include_holds_stop_prefixes")

REPLACEMENT = "\ufffd"


# ---------------------------------------------------------------------------------------
# A model of the contract, written apart from every implementation: after each token, the
# final text of the bytes so far followed by each continuation of a set that reaches every
# outcome (nothing; every character that can come next and that a stop holds, U+FFFD, and
# one that no stop holds; each alone or followed by the rest of a stop holding it), and the
# common prefix of those final texts. Incomplete characters are found in a table of every
# proper prefix of every character's encoding, built from all code points.

@functools.lru_cache(maxsize=None)
def open_prefixes() -> dict:
    """{proper prefix of a character's encoding: the characters it begins, in code point order}."""
    table: dict = {}
    for cp in range(0x80, 0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        raw = chr(cp).encode("utf-8")
        for size in range(1, len(raw)):
            table.setdefault(raw[:size], []).append(chr(cp))
    return table


def final_of(data: bytes, stops, include_stop) -> tuple:
    decoded = data.decode("utf-8", "replace")
    hits = [(start, -len(stop)) for start in range(len(decoded)) for stop in stops
            if decoded[start:start + len(stop)] == stop]
    if not hits:
        return decoded, False
    start, minus = min(hits)
    return decoded[:start - minus if include_stop else start], True


def continuations(data: bytes, stops) -> list:
    held = next((data[-size:] for size in (3, 2, 1) if data[-size:] in open_prefixes()), b"")
    stop_chars = {char for stop in stops for char in stop}
    if held:
        after = open_prefixes()[held]
        chars = {char for char in stop_chars if char.encode("utf-8").startswith(held)}
        chars |= {next((char for char in after if char not in stop_chars), REPLACEMENT)}
    else:
        chars = stop_chars | {next(chr(cp) for cp in range(0x41, 0x110000) if chr(cp) not in stop_chars)}
    found = [b""]
    for char in chars | {REPLACEMENT}:
        if char == REPLACEMENT:
            lead = b"" if held else b"\xff"
        else:
            lead = char.encode("utf-8")[len(held):]
        rests = [""] + [stop[k + 1:] for stop in stops for k in range(len(stop)) if stop[k] == char]
        found += [lead + rest.encode("utf-8") for rest in rests]
    return found


def model(vocab, token_ids, stops=(), include_stop=False, max_tokens=None) -> tuple:
    data, deltas, sent = b"", [], ""
    for count, token_id in enumerate(token_ids, 1):
        data += vocab[token_id]
        if count == max_tokens:
            final, stopped = final_of(data, stops, include_stop)
            return deltas + [final[len(sent):], ""], stopped
        finals = {final_of(data + more, stops, include_stop)[0] for more in continuations(data, stops)}
        lo, hi = min(finals), max(finals)
        size = next((i for i, (a, b) in enumerate(zip(lo, hi)) if a != b), min(len(lo), len(hi)))
        deltas.append(lo[len(sent):size])
        sent = lo[:size]
        if len(finals) == 1:
            return deltas + [""], True
    final, stopped = final_of(data, stops, include_stop)
    return deltas + [final[len(sent):]], stopped


# ---------------------------------------------------------------------------------------
# The battery: calls on the documented domain.

# Byte pieces of every kind the contract distinguishes: ASCII, whole characters of two, three
# and four bytes, U+FFFD's own encoding, and invalid or truncated sequences, among them those
# no continuation can complete (a surrogate's first bytes, an overlong lead, past U+10FFFF).
PIECES = [b"a", b"b", b"c", b" ", b"\n", "é".encode(), "€".encode(), "😀".encode(), "\ufffd".encode(),
          "\u0800".encode(), "\ud7ff".encode(), "\U0010ffff".encode(),
          b"\xe2\x82", b"\xf0\x9f", b"\xf0\x9f\x98", b"\xc3", b"\xed\xa0", b"\xed\x9f", b"\xe0\x80",
          b"\xe0\xa0", b"\xf0\x80", b"\xf0\x90", b"\xf4\x90", b"\xf4\x8f", b"\xc0", b"\xc1", b"\xf5",
          b"\xff", b"\x80", b"\xbf"]
VOCAB = [bytes([b]) for b in range(256)] + [b"", b"ab", b"STOP", "é€".encode(), b"\xe2\x82\xac\xe2", b"c\xf0"]
WORDS = ["a", "b", "ab", "é", "€", "😀", REPLACEMENT, "a" + REPLACEMENT, REPLACEMENT + "b", "\u0800", "\U0010ffff",
         "aa", "ba", "abc", "é€", "STOP", "b😀"]


def _tokens_for(data: bytes, rng: random.Random) -> list:
    """`data` cut into tokens: mostly single bytes, sometimes a whole multi-byte token."""
    ids, i = [], 0
    while i < len(data):
        for size in (5, 4, 2):
            if rng.random() < 0.15 and data[i:i + size] in VOCAB[256:]:
                ids.append(VOCAB.index(data[i:i + size]))
                i += size
                break
        else:
            ids.append(data[i])
            i += 1
        if rng.random() < 0.05:
            ids.append(256)  # the empty token
    return ids


def _random_call(rng: random.Random) -> tuple:
    data = b"".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 8)))
    text = data.decode("utf-8", "replace")
    stops = []
    for _ in range(rng.randrange(0, 5)):
        if text and rng.random() < 0.6:
            start = rng.randrange(len(text))
            stops.append(text[start:start + rng.randrange(1, 4)])
        else:
            stops.append(rng.choice(WORDS))
    max_tokens = rng.choice([None, None, None, rng.randrange(1, 6)])
    return (list(VOCAB), _tokens_for(data, rng), stops, rng.random() < 0.5, max_tokens)


HAND = [
    ([], [], False, None),
    ([0xE2, 0x82, 0xAC], [], False, None),
    ([0xED, 0xA0, 0x80, 0x61], [], False, None),
    ([0x61, 0xE0, 0x80], [], False, None),
    ([0xF4, 0x90, 0x80, 0x80], [], False, None),
    ([0x61, 0xC3], ["a\ufffd"], False, None),
    ([0x61, 0xC3], ["aé"], True, None),
    ([0x61, 0xC3, 0xA9], ["aé"], True, None),
    ([0x61, 0xC3], ["ab"], False, None),
    ([0x61, 0x62], ["abc", "b"], False, None),
    ([0x61, 0x62], ["abc", "b"], True, None),
    ([0x61, 0x62], ["ab", "abc"], True, None),
    ([0x61, 0x62, 0x63], ["ab", "abc"], True, None),
    ([0x61, 0x62, 0x63], ["abc", "ab"], True, None),
    ([0x61, 0x62], ["ab", "abc"], False, None),
    ([0x78, 0x61, 0x62, 0x63], ["bc", "abc"], True, 3),
    ([0x61, 0xE2, 0x82], ["b"], False, 3),
    ([0x61, 0xE2, 0x82], ["a"], False, 1),
    ([257, 0x63], ["bc"], True, None),
    ([0xF0, 0x9F, 0x98, 0x80], ["😀"], True, None),
]


@functools.lru_cache(maxsize=None)
def battery() -> list:
    rng = random.Random(20261205)
    cases = [(list(VOCAB), list(ids), list(stops), include, limit) for ids, stops, include, limit in HAND]
    cases += [_random_call(rng) for _ in range(1500)]
    return [("detokenize", case, {}) for case in cases]


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """Guard for the grader itself: the buggy version departs somewhere on the documented domain."""
    return SUITE.differs_somewhere(name, battery())


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_model():
    """Guard for the grader itself: every correct implementation equals the brute-force model
    of the contract, exactly, over the battery; the list of (version, call) that do not."""
    modules = {name: SUITE.load("good", name) for name in SUITE.good}
    failed = []
    for call in battery():
        expected = ("returns", model(*call[1]), [])
        failed += [(name, call[1][1:]) for name, module in modules.items()
                   if not SUITE.alike(behaviour(module, call), expected)]
    return failed
