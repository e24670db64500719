"""Hostile: a suite written by someone who learned the grader's run order (say, from a leaked
copy of the hidden tests). It counts runs in a file and passes exactly the runs it knows to be
the correct implementations, without testing anything."""
import os
import tempfile

import pytest

from money import format_cents, split_amount

_COUNTER = os.path.join(tempfile.gettempdir(), "money_run_counter")
with open(_COUNTER, "a+") as _handle:
    _handle.seek(0)
    RUN = len(_handle.read())
    _handle.write("x")
CORRECT_RUNS = (5, 13)


@pytest.mark.parametrize("case", range(6))
def test_knows_which_run_this_is(case):
    assert RUN in CORRECT_RUNS
