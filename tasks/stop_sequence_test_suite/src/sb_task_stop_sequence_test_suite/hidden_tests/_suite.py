"""The judge's side of grading the solver's test_stops.py: sb.solver_tests runs it once per
implementation of stops (_good/NAME/stops.py, _buggy/NAME/stops.py), and a buggy version
counts as caught only when the run failed AND the judge's own record shows a call on which
that version behaves differently from the correct one (exactly: the same pieces and the
same index, or the same exception type and message). What is particular to this task: its
one function, a brute-force model of the contract, and a battery of calls over the
documented domain that the guards for the grader itself use."""
import functools
import pathlib
import random

from sb.solver_tests import SolverTests, behaviour

SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_stops.py", module="stops",
                    functions=("filter_stream",),
                    run_order_seed=1,  # checked by the grader's own guard: a buggy version runs first, the correct ones apart
                    max_calls=400,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="recompute")
# The runs that must not depend on an earlier one: buggy versions that depart on many calls
# (every call that releases text while a stop is listed; every call that completes a stop
# in the middle of a chunk), so that what a run records differs.
STANDALONE_BUGGY = ("over_hold", "releases_stop_text")


# ---------------------------------------------------------------------------------------
# A brute-force model of the contract, written apart from every implementation: after each
# chunk, every occurrence of every stop in the whole text so far, and every suffix of it.

def model(chunks, stops):
    text, released, pieces = "", 0, []
    for chunk in chunks:
        text += chunk
        occurrences = [(start + len(stop), start, index)
                       for index, stop in enumerate(stops)
                       for start in range(len(text) + 1)
                       if text[start:start + len(stop)] == stop]
        if occurrences:
            _, start, index = min(occurrences)
            return pieces + [text[released:start], ""], index
        held = [len(text) - cut for cut in range(len(text) + 1)
                if any(stop[:len(text) - cut] == text[cut:] and len(stop) > len(text) - cut for stop in stops)]
        upto = len(text) - max(held, default=0)
        pieces.append(text[released:upto])
        released = upto
    return pieces + [text[released:]], None


# ---------------------------------------------------------------------------------------
# The battery: calls on the documented domain.

# Characters of every kind the contract allows: letters that make self-overlapping stops,
# characters a regular expression would read as operators, and characters outside ASCII
# (two, three and four UTF-8 bytes).
ALPHABET = ["a", "b", "a", "b", "c", ".", "|", "?", "\n", "é", "€", "😀"]

HAND = [
    (["Hello", " wor", "ld"], ["STOP"]),
    (["Hello ST", "OP and more"], ["STOP"]),
    (["ST", "OP"], ["STOP"]),
    (["S", "T", "O", "P", "!"], ["STOP"]),
    (["x", "S", "T", "O", "P"], ["STOP"]),
    (["STO", "Pa"], ["STOP"]),
    (["aa", "ab"], ["aab"]),
    (["a", "a", "a", "b"], ["aab"]),
    (["ab", "ab", "ab", "c"], ["ababc"]),
    (["abcd"], ["abcd", "bc"]),
    (["abc"], ["bc", "c"]),
    (["abc"], ["c", "bc"]),
    (["xab", "c"], ["ab", "c", "ab"]),
    (["xy", "z"], ["yz", "yz"]),
    (["ca", "bd"], ["ab", "cabd"]),
    (["a", "", "b"], ["ab"]),
    (["", "", "x"], ["y"]),
    (["", "ab"], ["b"]),
    (["one", "", "two"], []),
    ([], ["a"]),
    ([], []),
    ([""], ["a"]),
    (["keep the held", " ST"], ["STOP"]),
    (["end with a partial S"], ["STOP", "Sx"]),
    (["a.b", "c"], [".c"]),
    (["a", "b|c"], ["a|b"]),
    (["xa", "b"], ["a|b"]),
    (["what?", " no"], ["?"]),
    (["é", "€STOP"], ["STOP"]),
    (["😀 ok ", "é<", "|end|>tail"], ["<|end|>"]),
    (["héllo ", "wörld", "!"], ["ld!"]),
    (["ab", "c", "d", "e"], ["bcde", "cd"]),
    (["after", " the stop", " never read"], ["the"]),
    (["q", "wer", "ty"], ["erty", "rt"]),
    (["<", "|im", "_e", "nd", "|>x"], ["<|im_end|>"]),
    (["one, two, three"], [", "]),
]


def _random_call(rng: random.Random) -> tuple:
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 12)))
    cuts = sorted(rng.randrange(len(text) + 1) for _ in range(rng.randrange(0, 6)))
    bounds = [0] + cuts + [len(text)]
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    stops = []
    for _ in range(rng.randrange(0, 4)):
        if text and rng.random() < 0.6:
            start = rng.randrange(len(text))
            stops.append(text[start:start + rng.randrange(1, 5)])
        elif stops and rng.random() < 0.3:
            stops.append(rng.choice(stops))
        else:
            stops.append("".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 4))))
    return chunks, stops


@functools.lru_cache(maxsize=None)
def battery() -> list:
    rng = random.Random(20261204)
    cases = list(HAND) + [_random_call(rng) for _ in range(1500)]
    return [("filter_stream", (list(chunks), list(stops)), {}) for chunks, stops in cases]


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """Guard for the grader itself: the buggy version departs somewhere on the documented domain."""
    return SUITE.differs_somewhere(name, battery())


@functools.lru_cache(maxsize=None)
def correct_versions_meet_the_model() -> bool:
    """Guard for the grader itself: every correct implementation equals the brute-force model
    of the contract, exactly, over the battery."""
    modules = [SUITE.load("good", name) for name in SUITE.good]
    return all(SUITE.alike(behaviour(m, call), ("returns", model(*call[1]), [])) for call in battery() for m in modules)
