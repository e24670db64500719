"""Grade the solver's test_chat_template.py by running it (in the solution's process, one run
per implementation, see _suite.py): it must pass against every correct implementation, hold
enough real tests, fail against every buggy version of chat_template.py for a reason that
shows in what the run asked that version, and decide the same when an earlier run went first."""
from sb.solver_tests import standard_checks

from _suite import STANDALONE_BUGGY, SUITE, correct_versions_meet_the_model, version_really_differs

# a guard for the grader itself: every correct implementation keeps a model of the contract
# written apart from them (exact ids, allowed exception types) over a battery of calls
globals().update(standard_checks(
    SUITE,
    min_tests=10,
    correct_versions_hold=correct_versions_meet_the_model,
    really_differs=version_really_differs,
    standalone=STANDALONE_BUGGY,
))
