"""Hostile: knows the run order (as in knows_the_run_order), fails the buggy runs without
testing anything, and in the last run, to make those failures look earned after the fact,
calls every earlier run's implementation handle it can still find in the process with
inputs that expose the bugs. The judge's handles answer only while their own run is on."""
import gc
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
BATTERY = [(11, 4), (10, 0), (10, -1), (0, 2), (-1, 2), (10, 3), (5,), (-5,), (-123456,), (123456789,),
           (10**18 + 5,), (150000,)]


def _reach_back():
    for obj in gc.get_objects():
        if type(obj).__name__ == "Remote" and callable(obj):
            for args in BATTERY:
                try:
                    obj(*args)
                except Exception:
                    pass


if RUN == 16:
    _reach_back()


@pytest.mark.parametrize("case", range(6))
def test_knows_which_run_this_is(case):
    assert RUN in CORRECT_RUNS
