"""Runs in the solution's process: calls read_records and reports what happened.

An exception's attributes (CsvFormatError.line) do not cross to the judge, so this probe
reads them here and returns plain observations. No expected value lives in this file.
"""

from export_reader import CsvFormatError, read_records


def outcome(data):
    try:
        records = read_records(data)
    except CsvFormatError as exc:
        line = getattr(exc, "line", None)
        return {
            "raised": "CsvFormatError",
            "value_error": isinstance(exc, ValueError),
            "line": line if isinstance(line, (int, float, str)) or line is None else repr(line),
            "line_type": type(line).__name__,
            "message": str(exc),
        }
    except Exception as exc:  # reported, never swallowed: the test fails on it
        return {"raised": type(exc).__name__, "message": str(exc)}
    return {"raised": None, "records": records}
