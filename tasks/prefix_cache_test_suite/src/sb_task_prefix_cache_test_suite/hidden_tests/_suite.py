"""The judge's side of grading the solver's test_prefix_cache.py: sb.solver_tests runs it once
per implementation of prefix_cache (_good/NAME/prefix_cache.py, _buggy/NAME/prefix_cache.py),
and a buggy version counts as caught only when the run failed AND the judge's own record shows
a call on which that version behaves differently from the correct one. What is particular to
this task: how alike two behaviours must be (results equal as data; an exception of the same
type, its message free), and the battery of calls over the documented domain that the guards
for the grader itself use."""
import functools
import pathlib
import random

from sb.solver_tests import SolverTests, behaviour

RESULT_KEYS = {"reused", "computed", "evicted"}


def _well_formed(result) -> bool:
    """A list of dicts with exactly the three keys, each an int (a bool is not one)."""
    return type(result) is list and all(
        type(item) is dict and set(item) == RESULT_KEYS and all(type(v) is int for v in item.values())
        for item in result)


def alike(a: tuple, b: tuple) -> bool:
    """Two behaviours alike: both raise the same exception type (the prompt leaves messages
    free), or both return well-formed, equal results (the key order of a dict is free)."""
    if a[0] != b[0]:
        return False
    if a[0] == "raises":
        return a[1] == b[1]
    return _well_formed(a[1]) and _well_formed(b[1]) and a[1] == b[1]


SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_prefix_cache.py", module="prefix_cache",
                    functions=("simulate",), alike=alike,
                    run_order_seed=3,  # chosen so that a buggy version runs first and the correct ones run far apart
                    max_calls=400,  # the prompt's budget of calls per run; the next call raises
                    standalone_correct="prefix_trie")
# The runs that must not depend on an earlier one: buggy versions that depart on common
# sequences (a false hit on a repeated block; an eviction order by insertion).
STANDALONE_BUGGY = ("own_tokens_key", "lru_by_insertion")


# ---------------------------------------------------------------------------------------
# Worked examples, by hand from the rules (an absolute check, independent of every version):
# (requests, block_size, num_blocks, [(reused, computed, evicted), ...] or ValueError).
WORKED = [
    # bs 2, pool 4: a miss; a fully cached prompt recomputes its last block; a cached prefix
    # with one more token reuses every full block; a long miss evicts a whole chain of one last
    # use; the capped last block is itself the least recent candidate; ties go deepest first.
    ([[1, 2, 3, 4, 5], [1, 2, 3, 4], [1, 2, 3, 4, 9], [7, 8, 7, 8, 7, 8, 7], [1, 2], [7, 8, 7, 8, 7, 8],
      [3, 3, 3], [7, 8, 7, 8]], 2, 4,
     [(0, 5, 0), (2, 2, 0), (4, 1, 0), (0, 7, 2), (0, 2, 0), (4, 2, 1), (0, 3, 2), (2, 2, 0)]),
    # bs 2, pool 3: [9, 9] evicts the tail (1, 2, 3, 4), not the head (1, 2), of the first
    # chain, so the last request still reuses (1, 2) and evicts the two others for its room.
    ([[1, 2, 3, 4], [5, 6], [9, 9], [1, 2, 3, 4, 5]], 2, 3, [(0, 4, 0), (0, 2, 0), (0, 2, 1), (2, 3, 2)]),
    # a block's identity is its whole prefix: [3, 4] after [1, 2] is not the block [3, 4].
    ([[1, 2, 3, 4], [3, 4, 5], [1, 2, 3, 4, 5]], 2, 8, [(0, 4, 0), (0, 3, 0), (4, 1, 0)]),
    # bs 1: every token is a block; a one-token prompt never reuses anything.
    ([[5], [5], [5, 6], [5, 6]], 1, 2, [(0, 1, 0), (0, 1, 0), (1, 1, 0), (1, 1, 1)]),
    # a request that fills the pool exactly fits; one block more raises for the whole call.
    ([[1, 2, 3, 4, 5, 6]], 2, 3, [(0, 6, 0)]),
    ([[1, 2], [1, 2, 3, 4, 5, 6, 7]], 2, 3, ValueError),
    # a cached prefix does not make a request of more blocks than the pool fit.
    ([[1, 2, 3, 4], [1, 2, 3, 4, 5, 6, 7]], 2, 3, ValueError),
    # the recomputed (1, 2, 3, 4) takes request 2 as its last use, so [7, 7, 7] evicts (5, 6).
    ([[1, 2, 3, 4], [5, 6], [1, 2, 3, 4], [7, 7, 7], [1, 2, 3, 4, 0], [5, 6]], 2, 4,
     [(0, 4, 0), (0, 2, 0), (2, 2, 0), (0, 3, 1), (4, 1, 0), (0, 2, 0)]),
    # free blocks are used before any eviction: one free, two needed, one evicted.
    ([[1, 2, 3, 4], [5, 6, 7, 8]], 2, 3, [(0, 4, 0), (0, 4, 1)]),
]


def worked_calls() -> list:
    return [("simulate", (requests,), {"block_size": bs, "num_blocks": nb}) for requests, bs, nb, _ in WORKED]


def matches_worked(name: str) -> bool:
    """One correct version on every worked example."""
    module = SUITE.load("good", name)
    for call, (_, _, _, want) in zip(worked_calls(), WORKED):
        seen = behaviour(module, call)
        if want is ValueError:
            if seen[:2] != ("raises", "ValueError"):
                return False
        elif seen[0] != "returns" or not _well_formed(seen[1]) or \
                [(r["reused"], r["computed"], r["evicted"]) for r in seen[1]] != want:
            return False
    return True


# ---------------------------------------------------------------------------------------
# A battery of seeded calls over the documented domain: small vocabularies (so blocks repeat
# at other positions and after other prefixes), tight and roomy pools, prompts that repeat,
# extend, cut, shift and splice earlier ones, and requests that exactly fill or overflow the pool.

def _next_request(rng: random.Random, history: list, bs: int, nb: int, vocab: int) -> list:
    def fresh(length):
        return [rng.randrange(vocab) for _ in range(length)]
    if not history or rng.random() < 0.2:
        return fresh(rng.randint(1, 3 * bs + 2))
    old = rng.choice(history)
    move = rng.randrange(7)
    if move == 0:
        return list(old)
    if move == 1:
        return old[: rng.randint(1, len(old))]
    if move == 2:
        return old + fresh(rng.randint(1, 2 * bs))
    if move == 3:
        return old[bs:] + fresh(rng.randint(1, bs)) if len(old) > bs else fresh(bs)
    if move == 4:
        other = rng.choice(history)
        cut = rng.randint(0, len(old) // bs) * bs
        return (old[:cut] + other[cut:]) or fresh(1)
    if move == 5:
        return fresh(rng.randint(1, bs)) + old
    return fresh(max(1, nb * bs - rng.randrange(2))) if rng.random() < 0.8 else fresh(nb * bs + 1)


@functools.lru_cache(maxsize=None)
def battery() -> list:
    rng = random.Random(20261204)
    calls = worked_calls()
    for _ in range(2500):
        bs, nb, vocab = rng.choice((1, 2, 2, 3, 4)), rng.randint(1, 9), rng.choice((1, 2, 3, 5, 40))
        history = []
        for _ in range(rng.randint(1, 14)):
            request = _next_request(rng, history, bs, nb, vocab)
            history.append(request)
            if -(-len(request) // bs) > nb and rng.random() < 0.85:
                history.pop()  # keep most sequences runnable to their end
        calls.append(("simulate", (history,), {"block_size": bs, "num_blocks": nb}))
    return calls


@functools.lru_cache(maxsize=None)
def _battery_behaviour(kind: str, name: str, index: int) -> tuple:
    return behaviour(SUITE.load(kind, name), battery()[index])


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """A buggy version must behave differently from the correct one somewhere on the
    documented domain, or no test file could be asked to catch it."""
    return SUITE.differs_somewhere(name, battery())


@functools.lru_cache(maxsize=None)
def correct_versions_agree() -> bool:
    """Every correct version matches the worked examples and behaves alike on the battery."""
    if not all(matches_worked(name) for name in SUITE.good):
        return False
    return all(alike(_battery_behaviour("good", name, i), _battery_behaviour("good", SUITE.reference, i))
               for name in SUITE.good for i in range(len(battery())))
