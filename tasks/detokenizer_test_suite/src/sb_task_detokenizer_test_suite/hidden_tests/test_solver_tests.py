"""Grade the solver's test_detokenizer.py by running it (in the solution's process, one run per
implementation, see _suite.py): it must pass against every correct implementation, hold
enough real tests, fail against every buggy version of detokenizer.py for a reason that shows
in what the run asked that version, and decide the same when an earlier run went first."""
from sb.solver_tests import standard_checks

from _suite import STANDALONE_BUGGY, SUITE, correct_versions_meet_the_model, version_really_differs

# a guard for the grader itself: every correct implementation equals the brute-force model
# of the contract over a battery of calls on the documented domain
globals().update(standard_checks(
    SUITE,
    min_tests=10,
    correct_versions_hold=correct_versions_meet_the_model,
    really_differs=version_really_differs,
    standalone=STANDALONE_BUGGY,
))
