"""Read the CSV a person exported from a spreadsheet."""


class CsvFormatError(ValueError):
    def __init__(self, line, message):
        super().__init__(f"line {line}: {message}")
        self.line = line


def read_records(data):
    lines = data.decode("utf-8-sig").splitlines()
    header, records = None, []
    for number, line in enumerate(lines, start=1):
        fields = [f.strip().strip('"') for f in line.split(",")]
        if all(f == "" for f in fields):
            continue
        if header is None:
            header = fields
            continue
        if any(fields[len(header):]):
            raise CsvFormatError(number, "too many fields")
        fields = fields[: len(header)] + [""] * (len(header) - len(fields))
        records.append(dict(zip(header, fields)))
    return records
