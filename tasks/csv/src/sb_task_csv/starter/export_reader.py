"""Read the CSV a person exported from a spreadsheet."""


class CsvFormatError(ValueError):
    def __init__(self, line, message):
        super().__init__(f"line {line}: {message}")
        self.line = line


def read_records(data):
    raise NotImplementedError
