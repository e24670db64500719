"""Grade the solver's test_lowp.py by running it (in the solution's process, one run per
implementation, see _suite.py): it must pass against every correct implementation, hold
enough real tests, fail against every buggy version of lowp.py for a reason that shows in
what the run asked that version, and decide the same when an earlier run went first."""
from sb.solver_tests import standard_checks

from _suite import STANDALONE_BUGGY, SUITE, correct_versions_meet_the_contract, version_really_differs

# a guard for the grader itself: every correct implementation returns the codes of an
# exact rational model of the contract, and all of them the same bits on every call
globals().update(standard_checks(
    SUITE,
    min_tests=10,
    correct_versions_hold=correct_versions_meet_the_contract,
    really_differs=version_really_differs,
    standalone=STANDALONE_BUGGY,
    shown_file_unchanged=True,
))
