"""The judge's side of grading the solver's test_money.py: sb.solver_tests runs it once per
implementation of money (_good/NAME/money.py, _buggy/NAME/money.py), and a buggy version
counts as caught only through a call on which it behaves differently from the correct one.
What is particular to this task: its two functions, and the calls over the documented
domain that the guards for the grader itself use."""
import functools
import pathlib

from sb.solver_tests import SolverTests, behaviour

SUITE = SolverTests(pathlib.Path(__file__).parent, test_file="test_money.py", module="money",
                    functions=("split_amount", "format_cents"),
                    run_order_seed=1,  # chosen so that a buggy version runs first and the correct ones run far apart
                    standalone_correct="rewritten")
# The runs that must not depend on an earlier one: a buggy version of each function, the one
# that departs on the most inputs (remainder_dropped: every uneven split; sign_after_dollar:
# every negative amount), so that what a run records differs.
STANDALONE_BUGGY = ("remainder_dropped", "sign_after_dollar")


def battery() -> list:
    """Calls over the documented domain (ints, bools are ints too), for the guards below."""
    calls = [("split_amount", (t, p), {}) for t in range(-3, 40) for p in range(-2, 8)]
    calls += [("split_amount", (t, p), {}) for t in (10**6 + 7, 2**64 + 5) for p in (1, 3, 7, 12)]
    calls += [("split_amount", (True, 2), {}), ("split_amount", (5, True), {})]
    cents = list(range(-1500, 1500, 7)) + [10**k + d for k in range(3, 25) for d in (-1, 0, 1, 999)]
    calls += [("format_cents", (c,), {}) for c in cents + [-c for c in cents] + [True, False]]
    return calls


@functools.lru_cache(maxsize=None)
def version_really_differs(name: str) -> bool:
    """Guard for the grader itself: the buggy version departs somewhere on the documented domain."""
    return SUITE.differs_somewhere(name, battery())


@functools.lru_cache(maxsize=None)
def correct_versions_agree() -> bool:
    """Guard for the grader itself: every correct implementation behaves the same on ints."""
    modules = [SUITE.load("good", name) for name in SUITE.good]
    return all(SUITE.alike(behaviour(m, c), behaviour(modules[0], c)) for c in battery() for m in modules[1:])
