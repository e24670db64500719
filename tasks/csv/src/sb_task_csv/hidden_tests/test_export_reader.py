import csv
import io
import random

import pytest

from export_reader import CsvFormatError, read_records


def test_plain_file_with_windows_line_endings():
    data = b"name,city,amount\r\nAda,London,12\r\nGrace,Arlington,7\r\n"
    assert read_records(data) == [
        {"name": "Ada", "city": "London", "amount": "12"},
        {"name": "Grace", "city": "Arlington", "amount": "7"},
    ]


def test_unix_line_endings_and_no_final_newline():
    data = b"name,city\nAda,London\nGrace,Arlington"
    assert read_records(data) == [
        {"name": "Ada", "city": "London"},
        {"name": "Grace", "city": "Arlington"},
    ]


def test_byte_order_mark_is_not_part_of_the_first_header():
    data = "\ufeffsku,price\r\nA-1,3.50\r\n".encode("utf-8")
    assert read_records(data) == [{"sku": "A-1", "price": "3.50"}]


def test_utf8_text_survives():
    data = "name,note\r\nZoë,naïve café – 5€\r\n".encode("utf-8")
    assert read_records(data) == [{"name": "Zoë", "note": "naïve café – 5€"}]


def test_quoted_field_keeps_its_commas():
    data = b'name,address\r\nAda,"12 Baker St, London, UK"\r\n'
    assert read_records(data) == [{"name": "Ada", "address": "12 Baker St, London, UK"}]


def test_doubled_quotes_inside_quotes_are_one_quote():
    data = b'id,title\r\n1,"The ""Difference"" Engine"\r\n2,""""\r\n3,"say ""hi"", then go"\r\n'
    assert read_records(data) == [
        {"id": "1", "title": 'The "Difference" Engine'},
        {"id": "2", "title": '"'},
        {"id": "3", "title": 'say "hi", then go'},
    ]


def test_embedded_newlines_stay_in_the_field():
    data = b'id,notes,done\r\n1,"first line\r\nsecond line\r\n\r\nafter a gap",yes\r\n2,"unix\nbreak",no\r\n'
    assert read_records(data) == [
        {"id": "1", "notes": "first line\nsecond line\n\nafter a gap", "done": "yes"},
        {"id": "2", "notes": "unix\nbreak", "done": "no"},
    ]


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
        b"nuts,9\r\n"
        b"\r\n\r\n"
    )
    assert read_records(data) == [{"name": "bolts", "qty": "4"}, {"name": "nuts", "qty": "9"}]


def test_short_rows_are_padded_with_empty_strings():
    data = b"a,b,c\r\n1\r\n1,2\r\n1,2,3\r\n"
    assert read_records(data) == [
        {"a": "1", "b": "", "c": ""},
        {"a": "1", "b": "2", "c": ""},
        {"a": "1", "b": "2", "c": "3"},
    ]


def test_empty_trailing_cells_beyond_the_header_are_dropped():
    data = b"a,b\r\n1,2,,\r\n3,4, ,\r\n"
    assert read_records(data) == [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}]


def test_data_beyond_the_header_is_an_error_with_its_line():
    data = b'a,b\r\n1,"two\r\nlines"\r\n3,4,surprise\r\n'
    with pytest.raises(CsvFormatError) as info:
        read_records(data)
    assert info.value.line == 4


def test_stray_whitespace_around_bare_fields_is_trimmed():
    data = b" name , qty \r\n  bolts\t,  4  \r\n"
    assert read_records(data) == [{"name": "bolts", "qty": "4"}]


def test_whitespace_inside_quotes_is_kept_and_around_them_ignored():
    data = b'k,v\r\n1,  "  padded  "  \r\n2,"\ttab"\r\n'
    assert read_records(data) == [{"k": "1", "v": "  padded  "}, {"k": "2", "v": "\ttab"}]


def test_quote_inside_a_bare_field_is_an_ordinary_character():
    data = b'item,size\r\nmonitor,27" wide\r\npizza,12"\r\n'
    assert read_records(data) == [
        {"item": "monitor", "size": '27" wide'},
        {"item": "pizza", "size": '12"'},
    ]


def test_unterminated_quote_is_an_error_at_the_record_start():
    data = b'a,b\r\n1,2\r\n3,"never\r\nclosed\r\n'
    with pytest.raises(CsvFormatError) as info:
        read_records(data)
    assert info.value.line == 3


def test_text_after_a_closing_quote_is_an_error():
    data = b'a,b\r\n1,"x"y\r\n'
    with pytest.raises(CsvFormatError) as info:
        read_records(data)
    assert info.value.line == 2


def test_empty_and_blank_files_have_no_records():
    assert read_records(b"") == []
    assert read_records(b"\r\n\r\n") == []
    assert read_records("\ufeff".encode("utf-8")) == []
    assert read_records(b"name,qty\r\n") == []


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
    with pytest.raises(CsvFormatError) as info:
        read_records(data)
    assert info.value.line == 2  # the unquoted "1.200,50" is two fields: one too many
    fixed = data.replace(b"1.200,50", b'"1.200,50"')
    assert read_records(fixed) == [
        {"Customer": "Müller GmbH", "Email": "info@mueller.de", "Notes": "Ships Mon, Wed", "Total": "1.200,50"},
        {"Customer": "O'Brien, Pat", "Email": "pat@example.com", "Notes": 'Said "call me"\nafter 5pm', "Total": "40"},
        {"Customer": "Lee", "Email": "", "Notes": "", "Total": ""},
        {"Customer": "Zed", "Email": "", "Notes": "", "Total": ""},
    ]


ALPHABET = ["a", "Z", "7", " ", ",", '"', "\n", "é", "€", "x"]


def _random_value(rng):
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 9)))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_round_trip_through_the_standard_library_writer(seed):
    """An independent writer (Python's csv module, quoting every field so edge
    whitespace is protected) produces the bytes; we must read back what it wrote."""
    rng = random.Random(seed)
    header = ["id", "left", "middle", "right"]
    rows = [[f"r{i}"] + [_random_value(rng) for _ in range(3)] for i in range(40)]
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)
    data = ("\ufeff" + buf.getvalue()).encode("utf-8")
    assert read_records(data) == [dict(zip(header, row)) for row in rows]
