import pytest

from money import format_cents, split_amount


def test_split_example():
    assert split_amount(10, 3) == [4, 3, 3]


def test_split_sums():
    assert sum(split_amount(10, 3)) == 10


def test_format_example():
    assert format_cents(123456) == "$1,234.56"


def test_format_negative_example():
    assert format_cents(-5) == "-$0.05"


def test_split_rejects_zero_parts():
    with pytest.raises(ValueError):
        split_amount(10, 0)


def test_split_rejects_negative_total():
    with pytest.raises(ValueError):
        split_amount(-1, 2)
