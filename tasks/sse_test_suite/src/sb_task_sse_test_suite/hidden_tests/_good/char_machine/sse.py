"""Server-Sent Events as a character state machine fed by a BOM-aware incremental decoder."""
import codecs

# states of the line reader
IN_LINE, AFTER_CR = 0, 1


class _Stream:
    def __init__(self):
        self.events = []
        self.line = []
        self.state = IN_LINE
        self.event_type = None
        self.data = None
        self.last_id = ""

    def feed(self, text):
        for char in text:
            if self.state == AFTER_CR:
                self.state = IN_LINE
                if char == "\n":
                    continue
            if char == "\r":
                self.state = AFTER_CR
                self.end_line()
            elif char == "\n":
                self.end_line()
            else:
                self.line.append(char)

    def end_line(self):
        line = "".join(self.line)
        self.line = []
        if line == "":
            if self.data is not None:
                self.events.append((self.event_type or "message", "\n".join(self.data), self.last_id))
            self.event_type, self.data = None, None
        elif not line.startswith(":"):
            name, sep, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "event":
                self.event_type = value
            elif name == "data":
                self.data = (self.data or []) + [value]
            elif name == "id" and value.find("\0") < 0:
                self.last_id = value


def parse_event_stream(chunks):
    decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")
    stream = _Stream()
    for chunk in chunks:
        stream.feed(decoder.decode(chunk))
    stream.feed(decoder.decode(b"", True))
    return stream.events
