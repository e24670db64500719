"""Read the CSV a person exported from a spreadsheet."""
import csv
import io


class CsvFormatError(ValueError):
    def __init__(self, line, message):
        super().__init__(f"line {line}: {message}")
        self.line = line


def read_records(data):
    text = data.decode("utf-8-sig")
    reader = csv.DictReader(io.StringIO(text, newline=""), skipinitialspace=True)
    try:
        return [dict(row) for row in reader]
    except csv.Error as exc:
        raise CsvFormatError(reader.line_num, str(exc))
