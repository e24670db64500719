import pytest

from money import format_cents, split_amount


def test_split_amount():
    assert split_amount(10, 3) == [4, 3, 3]
    assert split_amount(2, 5) == [1, 1, 0, 0, 0]
    with pytest.raises(ValueError):
        split_amount(10, 0)
    with pytest.raises(ValueError):
        split_amount(-1, 2)


def test_format_cents():
    assert format_cents(123456789) == "$1,234,567.89"
    assert format_cents(105) == "$1.05"
    assert format_cents(-5) == "-$0.05"
