import csv
import io
import random
import re

import pytest
from sb.judge import probe

from export_reader import CsvFormatError, read_records


def _errors():
    return probe("_probe_errors.py")


def _error_line(data):
    """The line of the CsvFormatError read_records raises on `data` (read in the worker,
    where the exception object lives); fails the test if anything else happens."""
    seen = _errors().outcome(data)
    assert seen["raised"] == "CsvFormatError", f"expected CsvFormatError, got {seen}"
    assert seen["value_error"] is True
    assert seen["line_type"] == "int", f"line must be an int, got {seen['line_type']}"
    return seen["line"]


def _assert_records(data, expected):
    got = read_records(data)
    assert type(got) is list
    assert got == expected
    for record, want in zip(got, expected):
        assert type(record) is dict
        assert list(record) == list(want), "keys must follow the header's order"
        assert all(type(v) is str for v in record.values())


# --------------------------------------------------------------------------- the format


def test_plain_file_with_windows_line_endings():
    data = b"name,city,amount\r\nAda,London,12\r\nGrace,Arlington,7\r\n"
    _assert_records(data, [
        {"name": "Ada", "city": "London", "amount": "12"},
        {"name": "Grace", "city": "Arlington", "amount": "7"},
    ])


def test_unix_line_endings_and_no_final_newline():
    data = b"name,city\nAda,London\nGrace,Arlington"
    _assert_records(data, [
        {"name": "Ada", "city": "London"},
        {"name": "Grace", "city": "Arlington"},
    ])


def test_lone_carriage_returns_end_records():
    """Old Macintosh exports end every record with a bare \\r."""
    _assert_records(b"name,qty\rbolts,4\rnuts,9\r", [{"name": "bolts", "qty": "4"}, {"name": "nuts", "qty": "9"}])
    _assert_records(b"name,qty\r\rbolts,4\r\n\nnuts,9", [{"name": "bolts", "qty": "4"}, {"name": "nuts", "qty": "9"}])


def test_no_other_character_ends_a_record():
    """str.splitlines() also breaks at these; the format does not."""
    others = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]
    body = "".join(f"x{c}y" for c in others)
    data = f"k,v\n1,{body}\n2,\"q{body}\"\n3,end{others[0]}".encode("utf-8")
    _assert_records(data, [
        {"k": "1", "v": body},
        {"k": "2", "v": "q" + body},
        {"k": "3", "v": "end\u2028"},
    ])


def test_byte_order_mark_is_not_part_of_the_first_header():
    data = "\ufeffsku,price\r\nA-1,3.50\r\n".encode("utf-8")
    _assert_records(data, [{"sku": "A-1", "price": "3.50"}])
    quoted = '\ufeff"sku",price\r\nA-1,3.50\r\n'.encode("utf-8")
    _assert_records(quoted, [{"sku": "A-1", "price": "3.50"}])


def test_a_byte_order_mark_later_in_the_file_is_an_ordinary_character():
    data = 'sku,note\r\nA-1,"\ufeffmid\ufeff"\r\nA-2,x\ufeffy\r\n'.encode("utf-8")
    _assert_records(data, [{"sku": "A-1", "note": "\ufeffmid\ufeff"}, {"sku": "A-2", "note": "x\ufeffy"}])


def test_utf8_text_survives():
    data = "name,note\r\nZoë,naïve café – 5€\r\n".encode("utf-8")
    _assert_records(data, [{"name": "Zoë", "note": "naïve café – 5€"}])


def test_only_commas_separate_fields():
    data = b"a;b,c\tdi\r\n1;2,3\t4\r\n"
    _assert_records(data, [{"a;b": "1;2", "c\tdi": "3\t4"}])


def test_quoted_field_keeps_its_commas():
    data = b'name,address\r\nAda,"12 Baker St, London, UK"\r\n'
    _assert_records(data, [{"name": "Ada", "address": "12 Baker St, London, UK"}])


def test_doubled_quotes_inside_quotes_are_one_quote():
    data = b'id,title\r\n1,"The ""Difference"" Engine"\r\n2,""""\r\n3,"say ""hi"", then go"\r\n'
    _assert_records(data, [
        {"id": "1", "title": 'The "Difference" Engine'},
        {"id": "2", "title": '"'},
        {"id": "3", "title": 'say "hi", then go'},
    ])


def test_embedded_newlines_stay_in_the_field():
    data = b'id,notes,done\r\n1,"first line\r\nsecond line\r\n\r\nafter a gap",yes\r\n2,"unix\nbreak",no\r\n'
    _assert_records(data, [
        {"id": "1", "notes": "first line\nsecond line\n\nafter a gap", "done": "yes"},
        {"id": "2", "notes": "unix\nbreak", "done": "no"},
    ])


def test_a_lone_carriage_return_inside_quotes_is_kept():
    data = b'id,notes\r1,"a\rb\r\rc\r"\r2,"\r\r\n"'
    _assert_records(data, [{"id": "1", "notes": "a\rb\r\rc\r"}, {"id": "2", "notes": "\r\n"}])


def test_quoted_field_at_the_very_end_of_the_file():
    _assert_records(b'a,b\n1,"x"', [{"a": "1", "b": "x"}])
    _assert_records(b'a,b\r\n1,"say ""hi"""', [{"a": "1", "b": 'say "hi"'}])
    _assert_records(b'a,b\r\n1,""', [{"a": "1", "b": ""}])
    _assert_records(b'a,b\r\n1,""""', [{"a": "1", "b": '"'}])
    _assert_records(b'a,b\n1,"x"  \t', [{"a": "1", "b": "x"}])
    _assert_records(b'a,b\n"1","two\r\nlines"', [{"a": "1", "b": "two\nlines"}])
    _assert_records(b'"a","b"', [])
    _assert_records(b'"a","b"\n"",""', [])


def test_unterminated_quote_at_the_very_end_of_the_file():
    assert _error_line(b'a,b\n1,"x') == 2
    assert _error_line(b'a,b\n1,"x""') == 2
    assert _error_line(b'a,b\n1,"') == 2
    assert _error_line(b'a,"b') == 1


def test_blank_rows_are_skipped():
    data = (
        b"\r\n"
        b"   \r\n"
        b"name,qty\r\n"
        b"\r\n"
        b"bolts,4\r\n"
        b",\r\n"
        b" , \t\r\n"
        b'"",""\r\n'
        b",,,,,,\r\n"
        b'  ""\t, "" ,\r\n'
        b"nuts,9\r\n"
        b"\r\n\r\n"
    )
    _assert_records(data, [{"name": "bolts", "qty": "4"}, {"name": "nuts", "qty": "9"}])


def test_a_row_of_quoted_whitespace_is_not_blank():
    """Blankness is decided on the fields' values: a quoted space is the value " "
    (characters inside quotes are kept exactly), so its row is a record, not a blank."""
    _assert_records(b'name,note\n" ",""\nbob,hi\n', [{"name": " ", "note": ""}, {"name": "bob", "note": "hi"}])
    _assert_records(b'a,b\r\n"\t", " " \r\n"", "  "\r\n', [{"a": "\t", "b": " "}, {"a": "", "b": "  "}])
    _assert_records(b'a,b\r\n"\r\n",\r\n"\n"\r"\r"\r\n', [  # a quoted line break is a value too
        {"a": "\n", "b": ""}, {"a": "\n", "b": ""}, {"a": "\r", "b": ""},
    ])
    _assert_records('a,b\r\n\xa0,\r\n ,"\u3000"\r\n\x0c\r\n'.encode("utf-8"), [  # bare: only spaces and tabs go
        {"a": "\xa0", "b": ""}, {"a": "", "b": "\u3000"}, {"a": "\x0c", "b": ""},
    ])
    # the first row that is not skipped is the header, even when its names are blanks
    _assert_records(b'\r\n"", ""\r\n" ",,"\t"\r\n1,2,3\r\n', [dict([(" ", "1"), ("", "2"), ("\t", "3")])])


# (written, value a correct reader returns): the first five are empty, the rest are not
NEAR_BLANK_FIELDS = [
    ("", ""), (" ", ""), ("\t \t", ""), ('""', ""), (' "" \t', ""),
    ('" "', " "), ('"\t"', "\t"), ('  " \t "\t', " \t "), ('"\r\n"', "\n"), ('"\n"', "\n"), ('"\r"', "\r"),
    ("\xa0", "\xa0"), (" \u3000\t", "\u3000"), ("\x0c", "\x0c"), ('"\xa0"', "\xa0"), ("\u2028", "\u2028"),
]


@pytest.mark.parametrize("seed", range(4))
def test_rows_of_blanks_and_near_blanks_are_told_apart(seed):
    """Rows made only of empty-looking fields: each is skipped exactly when every value
    the writer put in it is the empty string (the writer's own record, not a parser's)."""
    rng = random.Random(3000 + seed)
    empty, nonempty = NEAR_BLANK_FIELDS[:5], NEAR_BLANK_FIELDS[5:]
    text, expected, skipped = "a,b,c" + rng.choice(["\r\n", "\n", "\r"]), [], 0
    for _ in range(60):
        width = rng.randrange(1, 4)
        fields = [rng.choice(nonempty if rng.random() < 0.25 else empty) for _ in range(width)]
        # trailing empty cells (past the header's width when the row is full)
        fields += [rng.choice(empty) for _ in range(rng.choice([0, 0, 0, 2]))]
        values = [value for _, value in fields]
        if all(value == "" for value in values):
            skipped += 1
        else:
            expected.append(dict(zip(["a", "b", "c"], (values + ["", "", ""])[:3])))
        text += ",".join(written for written, _ in fields) + rng.choice(["\r\n", "\n", "\r"])
    assert skipped >= 10 and len(expected) >= 10  # the file holds both kinds of row
    _assert_records(text.encode("utf-8"), expected)


def test_the_header_keeps_every_field_in_order():
    _assert_records(b"zeta,,alpha\r\n1,2,3\r\n", [dict([("zeta", "1"), ("", "2"), ("alpha", "3")])])
    _assert_records(b"b,a,\r\n1,2,3\r\n4,5\r\n", [
        dict([("b", "1"), ("a", "2"), ("", "3")]),
        dict([("b", "4"), ("a", "5"), ("", "")]),
    ])


def test_records_follow_header_order_not_sorted_order():
    data = b"zeta,mid,alpha\r\n1,2,3\r\n"
    got = read_records(data)
    assert [list(r) for r in got] == [["zeta", "mid", "alpha"]]
    assert got == [{"zeta": "1", "mid": "2", "alpha": "3"}]


def test_short_rows_are_padded_with_empty_strings():
    data = b"a,b,c\r\n1\r\n1,2\r\n1,2,3\r\n"
    _assert_records(data, [
        {"a": "1", "b": "", "c": ""},
        {"a": "1", "b": "2", "c": ""},
        {"a": "1", "b": "2", "c": "3"},
    ])


def test_empty_trailing_cells_beyond_the_header_are_dropped():
    data = b'a,b\r\n1,2,,\r\n3,4, ,\r\n5,6,"", \t""\r\n'
    _assert_records(data, [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}, {"a": "5", "b": "6"}])


def test_data_beyond_the_header_is_an_error_with_its_line():
    data = b'a,b\r\n1,"two\r\nlines"\r\n3,4,surprise\r\n'
    with pytest.raises(CsvFormatError):
        read_records(data)
    assert _error_line(data) == 4
    assert _error_line(b'a,b\r\n1,2,," "\r\n') == 2  # a quoted space is not empty
    assert _error_line(b"a,b\r\n1,2,,,,x\r\n") == 2


def test_stray_whitespace_around_bare_fields_is_trimmed():
    data = b" name , qty \r\n  bolts\t,  4  \r\n\tnew  york \t,\t 5 \t\r\n"
    _assert_records(data, [{"name": "bolts", "qty": "4"}, {"name": "new  york", "qty": "5"}])


def test_only_spaces_and_tabs_are_trimmed():
    data = "k,v\r\n1,\xa0Ada\u3000\r\n2, \t\xa0x\x0c \t\r\n3,\u2009\r\n".encode("utf-8")
    _assert_records(data, [
        {"k": "1", "v": "\xa0Ada\u3000"},
        {"k": "2", "v": "\xa0x\x0c"},
        {"k": "3", "v": "\u2009"},
    ])


def test_whitespace_inside_quotes_is_kept_and_around_them_ignored():
    data = b'k,v\r\n1,  "  padded  "  \r\n2,"\ttab"\r\n3,\t"x"\t\r\n4, \t "y" \t ,\r\n'
    _assert_records(data, [
        {"k": "1", "v": "  padded  "},
        {"k": "2", "v": "\ttab"},
        {"k": "3", "v": "x"},
        {"k": "4", "v": "y"},
    ])


def test_other_whitespace_before_a_quote_makes_the_field_bare():
    data = 'k,v\r\n1,\xa0"x"\r\n'.encode("utf-8")
    _assert_records(data, [{"k": "1", "v": '\xa0"x"'}])


def test_quote_inside_a_bare_field_is_an_ordinary_character():
    data = b'item,size\r\nmonitor,27" wide\r\npizza,12"\r\nsign,5 "a"b\r\n'
    _assert_records(data, [
        {"item": "monitor", "size": '27" wide'},
        {"item": "pizza", "size": '12"'},
        {"item": "sign", "size": '5 "a"b'},
    ])


# --------------------------------------------------------------------------- errors


def test_unterminated_quote_is_an_error_at_the_record_start():
    data = b'a,b\r\n1,2\r\n3,"never\r\nclosed\r\n'
    with pytest.raises(CsvFormatError):
        read_records(data)
    assert _error_line(data) == 3


def test_unterminated_quote_opened_on_a_later_line_of_its_record():
    data = b'a,b,c\n1,2,3\nx,"two\nlines","never\nclosed\n'
    assert _error_line(data) == 3


def test_text_after_a_closing_quote_is_an_error():
    data = b'a,b\r\n1,"x"y\r\n'
    with pytest.raises(CsvFormatError):
        read_records(data)
    assert _error_line(data) == 2
    assert _error_line(b'a,b\r\n1,"x" y\r\n') == 2
    assert _error_line(b'a,b\r\n1,2\r\n3,"x"""z"\r\n') == 3
    assert _error_line('a,b\r\n1,"x"\xa0\r\n'.encode("utf-8")) == 2
    assert _error_line(b'"a"b,c\r\n1,2\r\n') == 1


def test_error_lines_count_every_physical_line():
    data = (
        b"\r\n"                       # 1
        b"\n"                         # 2
        b"\r"                         # 3
        b'id,"multi\r\nline head"\n'  # 4-5
        b'1,"a\rb"\r\n'               # 6-7: the lone \r inside quotes breaks a line
        b'2,"c\nd\r\ne"\r'            # 8-10
        b"\r\n"                       # 11
        b'3,"x"oops\n'                # 12
    )
    assert _error_line(data) == 12
    fixed = data.replace(b'"x"oops', b'"x"')
    _assert_records(fixed, [
        {"id": "1", "multi\nline head": "a\rb"},
        {"id": "2", "multi\nline head": "c\nd\ne"},
        {"id": "3", "multi\nline head": "x"},
    ])


def test_the_first_error_in_the_file_is_reported():
    data = b'a,b\n1,2\n3,4,5\n6,"x"y\n7,"never'
    assert _error_line(data) == 3


def test_empty_and_blank_files_have_no_records():
    _assert_records(b"", [])
    _assert_records(b"\r\n\r\n", [])
    _assert_records(b"\r\r", [])
    _assert_records("\ufeff".encode("utf-8"), [])
    _assert_records(b"name,qty\r\n", [])
    _assert_records(b"name,qty", [])
    _assert_records(b"\n\n name , qty \n\n,\n", [])


def test_calls_do_not_share_state():
    first = b"a,b\n1,2\n"
    second = b"x\ny\n"
    assert read_records(first) == [{"a": "1", "b": "2"}]
    assert read_records(second) == [{"x": "y"}]
    assert _error_line(b"a\n1,2\n") == 2
    assert read_records(first) == [{"a": "1", "b": "2"}]


def test_a_realistic_export():
    data = (
        "\ufeffCustomer , Email,Notes,Total\r\n"
        'Müller GmbH, info@mueller.de ,"Ships Mon, Wed",1.200,50\r\n'
        "\r\n"
        '"O\'Brien, Pat",pat@example.com,"Said ""call me""\r\nafter 5pm", 40\r\n'
        "Lee,,,\r\n"
        "  Zed  \r\n"
        ",,,\r\n"
    ).encode("utf-8")
    with pytest.raises(CsvFormatError):
        read_records(data)
    assert _error_line(data) == 2  # the unquoted "1.200,50" is two fields: one too many
    fixed = data.replace(b"1.200,50", b'"1.200,50"')
    _assert_records(fixed, [
        {"Customer": "Müller GmbH", "Email": "info@mueller.de", "Notes": "Ships Mon, Wed", "Total": "1.200,50"},
        {"Customer": "O'Brien, Pat", "Email": "pat@example.com", "Notes": 'Said "call me"\nafter 5pm', "Total": "40"},
        {"Customer": "Lee", "Email": "", "Notes": "", "Total": ""},
        {"Customer": "Zed", "Email": "", "Notes": "", "Total": ""},
    ])


# --------------------------------------------------------------------------- independent writers

ALPHABET = ["a", "Z", "7", " ", ",", '"', "\n", "\r", "\t", "é", "€", "x", ";", "\u2028", "\x85", "\xa0"]


def _random_value(rng, alphabet=ALPHABET):
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 9)))


@pytest.mark.parametrize("seed,terminator,final", [
    (0, "\r\n", True), (1, "\r\n", False), (2, "\n", True), (3, "\n", False), (4, "\r\n", True),
])
def test_round_trip_through_the_standard_library_writer(seed, terminator, final):
    """An independent writer (Python's csv module, quoting every field so edge
    whitespace is protected) produces the bytes; we must read back what it wrote,
    with a \\r\\n inside a value read as \\n."""
    rng = random.Random(seed)
    header = ["id", "left", "middle", "right"]
    rows = [[f"r{i}"] + [_random_value(rng) for _ in range(3)] for i in range(40)]
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator=terminator)
    writer.writerow(header)
    writer.writerows(rows)
    text = buf.getvalue()
    if not final:
        text = text[: -len(terminator)]
    data = ("\ufeff" + text).encode("utf-8")
    expected = [dict(zip(header, [v.replace("\r\n", "\n") for v in row])) for row in rows]
    _assert_records(data, expected)


BARE_ALPHABET = ["a", "Z", "7", " ", "\t", "é", "€", ";", "\xa0", "\u2028", "\u2029", "\x85", "\x0c", "\x0b",
                 "\u3000", "\ufeff"]
BLANK_ROWS = ["", " ", "\t ", ",,", ' "" , ""', ",,,,,,", '""']
HEADER = ["id", "left", "middle", "right"]


def _written_field(rng, value):
    """(text written, value a correct reader returns) for one field of the hand writer."""
    if any(c in value for c in ',"\r\n') or rng.random() < 0.3:
        pad = lambda: rng.choice(["", "", " ", "\t", " \t "])  # noqa: E731
        return pad() + '"' + value.replace('"', '""') + '"' + pad(), value.replace("\r\n", "\n")
    return value, value.strip(" \t")


def _hand_written_file(rng, n_rows=40):
    """A file written by hand, field by field, with everything the format allows: random
    quoting with blanks around quotes, bare fields with any other whitespace, short rows,
    empty cells beyond the header, blank rows, all three line breaks, an optional BOM and
    final line break. Returns (text, [(start offset of each data row, expected dict)])."""
    text = "\ufeff" if rng.random() < 0.5 else ""
    rows = []

    def blank_rows():
        nonlocal text
        while rng.random() < 0.2:
            text += rng.choice(BLANK_ROWS) + rng.choice(["\r\n", "\n", "\r"])

    blank_rows()
    text += ",".join(_written_field(rng, name)[0] for name in HEADER) + rng.choice(["\r\n", "\n", "\r"])
    for i in range(n_rows):
        blank_rows()
        values = [f"r{i}"] + [_random_value(rng, rng.choice([ALPHABET, BARE_ALPHABET])) for _ in range(3)]
        width = rng.choice([4, 4, 4, 1, 2, 3])
        parts, expected = [], {}
        for name, value in zip(HEADER, values):
            written, read = _written_field(rng, value) if len(parts) < width else (None, "")
            if written is not None:
                parts.append(written)
            expected[name] = read
        if width == 4:
            parts += [rng.choice(["", " ", '""', ' "" \t']) for _ in range(rng.choice([0, 0, 1, 3]))]
        rows.append((len(text), expected))
        text += ",".join(parts) + rng.choice(["\r\n", "\n", "\r"])
    blank_rows()
    if rng.random() < 0.5:
        text = re.sub(r"(\r\n|\r|\n)$", "", text)
    return text, rows


def _line_of(text, offset):
    """The physical line at `offset`: one plus the line breaks before it, counted here
    with a regular expression (\\r\\n, then a lone \\r or \\n), independently of any parser."""
    return len(re.findall(r"\r\n|\r|\n", text[:offset])) + 1


@pytest.mark.parametrize("seed", range(6))
def test_a_hand_written_file_reads_back(seed):
    rng = random.Random(1000 + seed)
    text, rows = _hand_written_file(rng)
    _assert_records(text.encode("utf-8"), [expected for _, expected in rows])


@pytest.mark.parametrize("seed", range(9))
def test_an_error_in_a_hand_written_file_names_its_line(seed):
    rng = random.Random(2000 + seed)
    text, rows = _hand_written_file(rng, n_rows=25)
    kind = ["after_quote", "beyond", "unterminated"][seed % 3]
    if kind == "unterminated":
        start = rows[-1][0]
        data = text[:start] + 'r_last,"two\r\nlines","never closed, ' + _random_value(rng, BARE_ALPHABET) + "\rmore\n"
    else:
        start = rows[rng.randrange(1, len(rows))][0]
        bad = 'r_bad,"x" y\n' if kind == "after_quote" else "r_bad,1,2,3,,surplus\n"
        data = text[:start] + bad + text[start:]
    assert _error_line(data.encode("utf-8")) == _line_of(data, start)
