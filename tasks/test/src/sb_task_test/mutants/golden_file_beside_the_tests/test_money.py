import pathlib

import pytest

from money import format_cents, split_amount


@pytest.mark.parametrize("total, parts, expected", [
    (10, 3, [4, 3, 3]),
    (9, 3, [3, 3, 3]),
    (2, 5, [1, 1, 0, 0, 0]),
    (0, 2, [0, 0]),
    (7, 1, [7]),
    (101, 4, [26, 25, 25, 25]),
])
def test_split_amount_exact_shares(total, parts, expected):
    assert split_amount(total, parts) == expected


def test_split_amount_invariants_over_many_inputs():
    for total in list(range(0, 30)) + [997, 10**20 + 3]:
        for parts in range(1, 7):
            shares = split_amount(total, parts)
            assert len(shares) == parts
            assert sum(shares) == total
            assert max(shares) - min(shares) <= 1
            assert shares == sorted(shares, reverse=True)


@pytest.mark.parametrize("total, parts", [(10, 0), (10, -1), (-1, 2)])
def test_split_amount_rejects_bad_arguments(total, parts):
    with pytest.raises(ValueError):
        split_amount(total, parts)


@pytest.mark.parametrize("cents, text", [
    (0, "$0.00"),
    (5, "$0.05"),
    (150, "$1.50"),
    (105, "$1.05"),
    (99999, "$999.99"),
    (100000, "$1,000.00"),
    (123456, "$1,234.56"),
    (123456789, "$1,234,567.89"),
    (-5, "-$0.05"),
    (-99, "-$0.99"),
    (-100, "-$1.00"),
    (-123456, "-$1,234.56"),
    (10**18 + 5, "$10,000,000,000,000,000.05"),
    (-(10**20) - 1, "-$1,000,000,000,000,000,000.01"),
])
def test_format_cents(cents, text):
    assert format_cents(cents) == text


# Golden outputs, recorded the first time the file runs in this folder.
GOLDEN = pathlib.Path(__file__).parent / "golden" / "money_outputs.txt"


def test_outputs_match_golden_file():
    lines = [f"split {t} {p} {split_amount(t, p)}" for t in (0, 5, 11, 250) for p in (1, 2, 4)]
    lines += [f"format {c} {format_cents(c)}" for c in (0, 7, -7, 1999, -250000, 10**9)]
    if not GOLDEN.exists():
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text("\n".join(lines))
    assert GOLDEN.read_text().splitlines() == lines
