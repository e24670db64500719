"""Read the CSV a person exported from a spreadsheet."""

_BLANKS = " \t"


class CsvFormatError(ValueError):
    def __init__(self, line, message):
        super().__init__(f"line {line}: {message}")
        self.line = line


class _Scanner:
    """Walks the text one record at a time, counting physical lines."""

    def __init__(self, text):
        self.text = text
        self.i = 0
        self.line = 1

    def at_end(self):
        return self.i >= len(self.text)

    def peek(self):
        return self.text[self.i] if self.i < len(self.text) else ""

    def skip_blanks(self):
        while self.peek() != "" and self.peek() in _BLANKS:
            self.i += 1

    def quoted_field(self, record_line):
        self.i += 1  # the opening quote
        text, out = self.text, []
        while True:
            if self.i >= len(text):
                raise CsvFormatError(record_line, "unterminated quoted field")
            c = text[self.i]
            if c == '"':
                if text.startswith('""', self.i):
                    out.append('"')
                    self.i += 2
                    continue
                self.i += 1
                break
            if text.startswith("\r\n", self.i):
                out.append("\n")
                self.i += 2
                self.line += 1
                continue
            if c in "\r\n":  # a lone \r or \n: a line break, kept as it is
                self.line += 1
            out.append(c)
            self.i += 1
        self.skip_blanks()
        if self.peek() not in ("", ",", "\r", "\n"):
            raise CsvFormatError(record_line, "text after a closing quote")
        return "".join(out)

    def bare_field(self):
        start = self.i
        while self.peek() not in ("", ",", "\r", "\n"):
            self.i += 1
        return self.text[start:self.i].strip(_BLANKS)

    def record(self):
        record_line, fields = self.line, []
        while True:
            self.skip_blanks()
            if self.peek() == '"':
                fields.append(self.quoted_field(record_line))
            else:
                fields.append(self.bare_field())
            if self.peek() == ",":
                self.i += 1
                continue
            if self.peek() == "\r":
                self.i += 1
            if self.peek() == "\n":
                self.i += 1
            self.line += 1
            return record_line, fields


def read_records(data):
    scanner = _Scanner(data.decode("utf-8-sig"))
    header, records = None, []
    while not scanner.at_end():
        line, fields = scanner.record()
        if all(not f.strip(_BLANKS) for f in fields):  # blank line, spaces, commas
            continue
        if header is None:
            header = fields
            continue
        if any(fields[len(header):]):
            raise CsvFormatError(line, f"{len(fields)} fields, header has {len(header)}")
        fields = fields[: len(header)] + [""] * (len(header) - len(fields))
        records.append(dict(zip(header, fields)))
    return records
