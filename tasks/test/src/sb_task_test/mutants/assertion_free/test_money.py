from money import format_cents, split_amount


def test_split_amount_runs():
    split_amount(10, 3)
    split_amount(0, 4)


def test_format_cents_runs():
    format_cents(123456)
    format_cents(-5)


def test_split_many():
    for total in range(50):
        for parts in range(1, 6):
            split_amount(total, parts)


def test_format_many():
    for cents in range(-500, 500, 7):
        format_cents(cents)


def test_types():
    print(type(split_amount(5, 2)), type(format_cents(5)))


def test_more_formats():
    format_cents(10**9)
