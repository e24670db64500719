from money import format_cents, split_amount


def test_split_even():
    assert split_amount(9, 3) == [3, 3, 3]


def test_split_single():
    assert split_amount(7, 1) == [7]


def test_split_zero():
    assert split_amount(0, 2) == [0, 0]


def test_format_simple():
    assert format_cents(1234) == "$12.34"


def test_format_zero():
    assert format_cents(0) == "$0.00"


def test_format_round_dollars():
    assert format_cents(500) == "$5.00"
