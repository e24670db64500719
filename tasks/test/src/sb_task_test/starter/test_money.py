import pytest

from money import format_cents, split_amount


def test_placeholder():
    raise NotImplementedError("write the tests for money.py here")
