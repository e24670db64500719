"""Grade the solver's test_money.py by running it (in the solution's process, one run per
implementation, see _suite.py): it must pass against every correct implementation, hold
enough real tests, fail against every buggy version of money.py for a reason that shows
in what the run asked that version, and decide the same when an earlier run went first."""
from sb.solver_tests import standard_checks

from _suite import STANDALONE_BUGGY, SUITE, correct_versions_agree, version_really_differs

# a guard for the grader itself
globals().update(standard_checks(
    SUITE,
    min_tests=6,
    correct_versions_hold=correct_versions_agree,
    really_differs=version_really_differs,
    standalone=STANDALONE_BUGGY,
))
