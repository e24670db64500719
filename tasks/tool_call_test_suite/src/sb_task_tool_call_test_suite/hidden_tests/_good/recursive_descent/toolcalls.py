"""Tool-call parsing with a hand-written recursive-descent JSON parser (RFC 8259, strict)."""

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
WS = frozenset(" \t\n\r")
DIGITS = frozenset("0123456789")
HEX = frozenset("0123456789abcdefABCDEF")
ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class Bad(Exception):
    pass


class Parser:
    def __init__(self, text, pos):
        self.s, self.i = text, pos

    def peek(self):
        return self.s[self.i] if self.i < len(self.s) else ""

    def ws(self):
        while self.peek() in WS and self.peek():
            self.i += 1

    def expect(self, char):
        if self.peek() != char:
            raise Bad(self.i)
        self.i += 1

    def value(self):
        c = self.peek()
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c == '"':
            return self.string()
        if c == "-" or c in DIGITS and c:
            return self.number()
        for word, result in (("true", True), ("false", False), ("null", None)):
            if self.s.startswith(word, self.i):
                self.i += len(word)
                return result
        raise Bad(self.i)

    def obj(self):
        self.expect("{")
        out = {}
        self.ws()
        if self.peek() == "}":
            self.i += 1
            return out
        while True:
            self.ws()
            if self.peek() != '"':
                raise Bad(self.i)
            key = self.string()
            self.ws()
            self.expect(":")
            self.ws()
            out[key] = self.value()
            self.ws()
            if self.peek() == ",":
                self.i += 1
                continue
            self.expect("}")
            return out

    def arr(self):
        self.expect("[")
        out = []
        self.ws()
        if self.peek() == "]":
            self.i += 1
            return out
        while True:
            self.ws()
            out.append(self.value())
            self.ws()
            if self.peek() == ",":
                self.i += 1
                continue
            self.expect("]")
            return out

    def hex4(self):
        digits = self.s[self.i:self.i + 4]
        if len(digits) != 4 or not all(d in HEX for d in digits):
            raise Bad(self.i)
        self.i += 4
        return int(digits, 16)

    def string(self):
        self.expect('"')
        chars = []
        while True:
            c = self.peek()
            if not c or ord(c) < 0x20:
                raise Bad(self.i)
            self.i += 1
            if c == '"':
                return "".join(chars)
            if c != "\\":
                chars.append(c)
                continue
            e = self.peek()
            self.i += 1
            if e in ESCAPES and e:
                chars.append(ESCAPES[e])
            elif e == "u":
                code = self.hex4()
                if 0xD800 <= code <= 0xDBFF and self.s.startswith("\\u", self.i):
                    back = self.i
                    self.i += 2
                    low = self.hex4()
                    if 0xDC00 <= low <= 0xDFFF:
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    else:
                        self.i = back  # the next escape stands on its own
                chars.append(chr(code))
            else:
                raise Bad(self.i)

    def digits(self):
        start = self.i
        while self.peek() in DIGITS and self.peek():
            self.i += 1
        if self.i == start:
            raise Bad(self.i)

    def number(self):
        start = self.i
        if self.peek() == "-":
            self.i += 1
        if self.peek() == "0":
            self.i += 1
        else:
            self.digits()
        is_float = False
        if self.peek() == ".":
            self.i += 1
            self.digits()
            is_float = True
        if self.peek() and self.peek() in "eE":
            self.i += 1
            if self.peek() and self.peek() in "+-":
                self.i += 1
            self.digits()
            is_float = True
        lexeme = self.s[start:self.i]
        return float(lexeme) if is_float else int(lexeme)


def try_call(text, start):
    p = Parser(text, start + len(OPEN))
    try:
        p.ws()
        value = p.value()
        p.ws()
    except Bad:
        return None
    if not text.startswith(CLOSE, p.i) or type(value) is not dict:
        return None
    if type(value.get("name")) is not str or type(value.get("arguments")) is not dict:
        return None
    return {"name": value["name"], "arguments": value["arguments"]}, p.i + len(CLOSE)


def parse_tool_calls(text):
    content, calls = "", []
    i = 0
    while i < len(text):
        if text.startswith(OPEN, i):
            found = try_call(text, i)
            if found is not None:
                calls.append(found[0])
                i = found[1]
                continue
        content += text[i]
        i += 1
    return content, calls
