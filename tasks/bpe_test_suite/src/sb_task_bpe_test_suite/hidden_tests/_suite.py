"""The judge's side of grading the solver's test_bpe.py: sb.solver_tests runs it once per
implementation of bpe (_good/NAME/bpe.py, _buggy/NAME/bpe.py), and a buggy version counts
as caught only when the run failed AND the judge's own record shows a call on which that
version behaves differently from the correct one (exactly: the same tokens, the same text,
or the same exception type and message). What is particular to this task: its two
functions, a brute-force model of the contract, and a battery of calls over the documented
domain that the guards for the grader itself use."""
import functools
import pathlib
import random

from sb.solver_tests import SolverTests, behaviour

SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_bpe.py", module="bpe",
                    functions=("encode", "decode"),
                    run_order_seed=1,  # checked by the grader's own guard: a buggy version runs first, the correct ones apart
                    max_calls=300,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="in_place")
# The runs that must not depend on an earlier one: a buggy version of each function that
# departs on many calls (greedy_longest_match on most merge lists, decode_per_token on every
# split character), so that what a run records differs.
STANDALONE_BUGGY = ("greedy_longest_match", "decode_per_token")


# ---------------------------------------------------------------------------------------
# A brute-force model of the contract, written apart from every implementation.

def model_encode(text: str, merges) -> list:
    """The contract step by step: the lowest rank present, then one left-to-right sweep."""
    seq = [bytes([b]) for b in text.encode("utf-8")]
    first_index = {}
    for index in range(len(merges)):
        first_index.setdefault(tuple(merges[index]), index)
    while True:
        present = [first_index[(seq[k], seq[k + 1])] for k in range(len(seq) - 1)
                   if (seq[k], seq[k + 1]) in first_index]
        if not present:
            return seq
        left, right = merges[min(present)]
        swept, k = [], 0
        while k < len(seq):
            if seq[k:k + 2] == [left, right]:
                swept.append(left + right)
                k += 2
            else:
                swept.append(seq[k])
                k += 1
        seq = swept


def model_decode(tokens) -> str:
    return b"".join(tokens).decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------
# The battery: calls on the documented domain.

# Texts of every kind the contract names: ASCII, spaces and other whitespace, two-, three-
# and four-byte characters, decomposed characters NFC would compose, a leading U+FEFF.
ALPHABET = ["a", "b", "c", " ", "\n", "é", "e\u0301", "€", "😀", "\ufeff", "\t"]

HAND = [
    ("aaa", [(b"a", b"a")]),
    ("aaaaa", [(b"a", b"a"), (b"aa", b"a")]),
    ("aaaa", [(b"aa", b"a"), (b"a", b"a")]),
    ("abab", [(b"ab", b"a"), (b"a", b"b")]),
    ("abc", [(b"ab", b"c"), (b"a", b"b")]),
    ("abc", [(b"b", b"c"), (b"ab", b"c")]),
    ("abc", [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]),
    ("abcab", [(b"b", b"c"), (b"a", b"b"), (b"b", b"c")]),
    ("abc", [(b"a", b"b"), (b"b", b"c"), (b"a", b"b")]),
    ("bcab", [(b"b", b"c"), (b"a", b"b"), (b"b", b"c")]),
    ("", [(b"a", b"b")]),
    ("", []),
    ("a", [(b"a", b"a")]),
    ("a b", [(b"a", b" "), (b"a ", b"b")]),
    ("a\tb", [(b"\t", b"b"), (b"a", b"\tb")]),
    ("é", [(b"\xc3", b"\xa9")]),
    ("é", []),
    ("€", [(b"\xe2", b"\x82")]),
    ("e\u0301", [(b"e", b"\xcc")]),
    ("😀a", [(b"\xf0", b"\x9f")]),
    ("ababab", [(b"a", b"b"), (b"b", b"a"), (b"ab", b"ab")]),
    ("abcd", [(b"c", b"d"), (b"a", b"b"), (b"ab", b"cd"), (b"b", b"c")]),
]

DECODE_HAND = [
    [], [b""], [b"ab", b"c"], [b"\xc3", b"\xa9"], [b"\xe2\x82", b"\xac"], [b"\xf0\x9f", b"\x98", b"\x80"],
    [b"\xff"], [b"a\xffb"], [b"\xe2\x82"], [b"a", b"\xe2\x82"], [b"\xe2\x82A"], [b"\xc3"], [b"\xf0\x9f\x98"],
    [b"\xef\xbb\xbf", b"a"], [b"\xef\xbb", b"\xbfx"], [b"\xed\xa0\x80"], [b"\x80\x80"], [b"\xc0\xaf"],
    [b"\xf4\x90\x80\x80"], [b"\xe0\x80"], [b"a\xef\xbb\xbf"],
]


def _random_text(rng: random.Random, size: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(size))


def _random_merges(rng: random.Random, text: str, count: int) -> list:
    """Pairs drawn from pieces of the text's bytes, in any order: later merges may make the
    parts of earlier ones, and some pairs repeat."""
    data = text.encode("utf-8") or b"ab"
    merges = []
    for _ in range(count):
        i = rng.randrange(len(data))
        j = rng.randrange(i, min(len(data), i + 3)) + 1
        k = min(len(data), j + rng.randrange(1, 3))
        if j < k:
            merges.append((data[i:j], data[j:k]))
        elif merges:
            merges.append(rng.choice(merges))
    return merges


@functools.lru_cache(maxsize=None)
def battery() -> list:
    rng = random.Random(20260514)
    calls = [("encode", (text, list(merges)), {}) for text, merges in HAND]
    for _ in range(600):
        text = _random_text(rng, rng.randrange(0, 9))
        calls.append(("encode", (text, _random_merges(rng, text, rng.randrange(0, 7))), {}))
    calls += [("decode", (list(tokens),), {}) for tokens in DECODE_HAND]
    for _ in range(300):
        data = _random_text(rng, rng.randrange(0, 6)).encode("utf-8")
        data = bytes(b if rng.random() > 0.15 else rng.randrange(0x80, 0x100) for b in data)
        cuts = sorted(rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randrange(1, 4))))
        cuts = [0] + cuts + [len(data)]
        calls.append(("decode", ([data[a:b] for a, b in zip(cuts, cuts[1:])],), {}))
    return calls


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """Guard for the grader itself: the buggy version departs somewhere on the documented domain."""
    return SUITE.differs_somewhere(name, battery())


def _model_behaviour(call: tuple) -> tuple:
    name, args, _ = call
    result = model_encode(*args) if name == "encode" else model_decode(*args)
    return ("returns", result, [])


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_model() -> bool:
    """Guard for the grader itself: every correct implementation equals the brute-force model
    of the contract, exactly, over the battery."""
    modules = [SUITE.load("good", name) for name in SUITE.good]
    return all(SUITE.alike(behaviour(m, c), _model_behaviour(c)) for c in battery() for m in modules)
