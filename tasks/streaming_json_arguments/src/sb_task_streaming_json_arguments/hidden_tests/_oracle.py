"""Oracles for streaming_json_arguments, written apart from any streaming parser.

- `strict_loads(text)`: Python's json.loads made strict (no NaN/Infinity constants, no
  surrogate code point in any decoded string, whole text only). Decides validity of a
  COMPLETE text and its value, independently of everything else here.
- `scan(text)`: a recursive-descent reader of the whole text that lists the fine events
  (one per string character) each with the number of characters after which it is
  determined, and where the text first stops being a prefix of some valid text. Numbers
  are judged by a regular expression, \\u escapes by enumerating their possible digits.
  When the text ends early it also builds a completion (`tail`), so that every claim
  "this prefix is viable" can be checked by strict_loads.
- `witness_determined(prefix, events)`: the brute-force meaning of "determined": the
  common prefix of the events of many valid completions of `prefix`.
"""
import functools
import json
import re
import sys

FINISH = float("inf")  # offset of an event that only finish() determines
WHITESPACE = " \t\n\r"
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", re.ASCII)
HEX = "0123456789abcdefABCDEF"
ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}

sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))


# ---------------------------------------------------------------- strict json.loads


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def _has_surrogate(value):
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def strict_loads(text):
    """The value of a complete strict JSON text; ValueError if it is not one."""
    value = json.loads(text, parse_constant=_reject_constant)
    if _has_surrogate(value):
        raise ValueError("a surrogate code point in a string")
    return value


# ---------------------------------------------------------------- the scanner


class Bad(Exception):
    """text[index] is the first character after which no valid continuation exists."""

    def __init__(self, index):
        super().__init__(index)
        self.index = index


class Incomplete(Exception):
    """The text ended while still a proper prefix; `tail` completes it."""

    def __init__(self, tail):
        super().__init__(tail)
        self.tail = tail


def number_viable(token):
    return bool(NUMBER.fullmatch(token) or NUMBER.fullmatch(token + "0"))


@functools.lru_cache(maxsize=None)
def hex_fills(digits, after_high, high_fill):
    """The completions of a partial \\u escape's digits that are allowed there, best first."""
    fills = []
    missing = 4 - len(digits)
    order = "0123456789abcdef"[::-1] if high_fill else "0123456789abcdef"
    for n in range(16 ** missing):
        fill = ""
        for _ in range(missing):
            fill = order[n % 16] + fill
            n //= 16
        code = int(digits + fill, 16)
        is_low = 0xDC00 <= code <= 0xDFFF
        if is_low == after_high:
            return digits + fill
    return None


class Scanner:
    def __init__(self, text, high_fill=False):
        self.text = text
        self.i = 0
        self.events = []  # (fine event, offset)
        self.number_texts = {}  # event index -> the number's exact text
        self.high_fill = high_fill  # which completion to build (two witnesses differ)
        self.value_fill = "1" if high_fill else "0"

    def next(self, tail):
        if self.i >= len(self.text):
            raise Incomplete(tail)
        ch = self.text[self.i]
        self.i += 1
        return ch

    def skip_ws(self, tail):
        while True:
            ch = self.next(tail)
            if ch not in WHITESPACE:
                return ch

    def emit(self, event, offset):
        self.events.append((event, offset))

    def document(self):
        ch = self.skip_ws(self.value_fill)
        self.value((), ch)
        while self.i < len(self.text):
            if self.text[self.i] not in WHITESPACE:
                raise Bad(self.i)
            self.i += 1

    def value(self, path, ch):
        start = self.i - 1
        if ch == "{":
            self.emit(("begin", path, "object"), self.i)
            self.obj(path)
        elif ch == "[":
            self.emit(("begin", path, "array"), self.i)
            self.arr(path)
        elif ch == '"':
            self.emit(("begin", path, "string"), self.i)
            for c, offset in self.string():
                self.emit(("text", path, c), offset)
            self.emit(("end", path), self.i)
        elif ch in LITERALS:
            word, value = LITERALS[ch]
            self.emit(("value", path, value), self.i)
            for k in range(1, len(word)):
                if self.next(word[k:]) != word[k]:
                    raise Bad(self.i - 1)
        elif ch == "-" or "0" <= ch <= "9":
            self.number(path, start)
        else:
            raise Bad(start)

    def number(self, path, start):
        end = start + 1
        while end < len(self.text) and number_viable(self.text[start : end + 1]):
            end += 1
        token = self.text[start:end]
        if not number_viable(token):
            raise Bad(end - 1)
        self.i = end
        if end == len(self.text):
            if not NUMBER.fullmatch(token):
                raise Incomplete("0")
            offset = FINISH
        elif NUMBER.fullmatch(token):
            offset = end + 1  # the character that cannot continue it has arrived
        else:
            raise Bad(end)
        is_int = not any(c in token for c in ".eE")
        self.number_texts[len(self.events)] = token
        self.emit(("value", path, int(token) if is_int else float(token)), offset)

    def string(self):
        """Yield (character, offset) up to the closing quote; return after it."""
        while True:
            ch = self.next('"')
            if ch == '"':
                return
            if ch == "\\":
                yield self.escape(), self.i
            elif ord(ch) < 0x20 or 0xD800 <= ord(ch) <= 0xDFFF:
                raise Bad(self.i - 1)
            else:
                yield ch, self.i

    def escape(self):
        ch = self.next('n"')
        if ch in ESCAPES:
            return ESCAPES[ch]
        if ch != "u":
            raise Bad(self.i - 1)
        code = self.hex4(after_high=False)
        if not 0xD800 <= code <= 0xDBFF:
            return chr(code)
        low_tail = "\\u" + hex_fills("", True, self.high_fill) + '"'
        if self.next(low_tail) != "\\":
            raise Bad(self.i - 1)
        if self.next(low_tail[1:]) != "u":
            raise Bad(self.i - 1)
        low = self.hex4(after_high=True)
        return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))

    def hex4(self, after_high):
        digits = ""
        while len(digits) < 4:
            full = hex_fills(digits, after_high, self.high_fill)
            tail = full[len(digits) :]
            if not after_high and 0xD800 <= int(full, 16) <= 0xDBFF:
                tail += "\\u" + hex_fills("", True, self.high_fill)
            ch = self.next(tail + '"')
            if ch not in HEX or hex_fills(digits + ch, after_high, False) is None:
                raise Bad(self.i - 1)
            digits += ch
        return int(digits, 16)

    def key(self):
        chars = []
        for c, _ in self.string():
            chars.append(c)
        return "".join(chars)

    def obj(self, path):
        ch = self.skip_ws("}")
        if ch == "}":
            self.emit(("end", path), self.i)
            return
        while True:
            if ch != '"':
                raise Bad(self.i - 1)
            try:
                k = self.key()
            except Incomplete as e:
                raise Incomplete(e.tail + ":" + self.value_fill + "}") from None
            if self.skip_ws(":" + self.value_fill + "}") != ":":
                raise Bad(self.i - 1)
            ch = self.skip_ws(self.value_fill + "}")
            try:
                self.value(path + (k,), ch)
            except Incomplete as e:
                raise Incomplete(e.tail + "}") from None
            ch = self.skip_ws("}")
            if ch == "}":
                self.emit(("end", path), self.i)
                return
            if ch != ",":
                raise Bad(self.i - 1)
            ch = self.skip_ws('"\\u0000":' + self.value_fill + "}")

    def arr(self, path):
        ch = self.skip_ws("]")
        if ch == "]":
            self.emit(("end", path), self.i)
            return
        index = 0
        while True:
            try:
                self.value(path + (index,), ch)
            except Incomplete as e:
                raise Incomplete(e.tail + "]") from None
            ch = self.skip_ws("]")
            if ch == "]":
                self.emit(("end", path), self.i)
                return
            if ch != ",":
                raise Bad(self.i - 1)
            index += 1
            ch = self.skip_ws(self.value_fill + "]")


class Outcome:
    """What scanning a whole text says: fine events with offsets, and how it ends."""

    def __init__(self, text, high_fill=False):
        scanner = Scanner(text, high_fill)
        self.text = text
        self.error_index = None  # the push holding text[error_index] raises
        self.tail = None  # set when the text is a proper prefix (finish() raises)
        try:
            scanner.document()
        except Bad as e:
            self.error_index = e.index
        except Incomplete as e:
            self.tail = e.tail
        self.events = scanner.events
        # The identity "determined" compares: a number is its text (1.0 is not 1.00).
        self.identities = [
            ("number", event[1], scanner.number_texts[n]) if n in scanner.number_texts else canon(event)
            for n, (event, _) in enumerate(scanner.events)
        ]
        self.complete = self.error_index is None and self.tail is None

    def determined(self, received):
        """Fine events determined once `received` characters have arrived (FINISH: all)."""
        out = []
        for event, offset in self.events:
            if offset > received:
                break
            out.append(event)
        return out


def scan(text, high_fill=False):
    return Outcome(text, high_fill)


def identities(text):
    """The identities of the fine events of a complete valid text."""
    outcome = scan(text)
    assert outcome.complete, text
    return outcome.identities


# ---------------------------------------------------------------- brute force

WITNESS_CHARS = [""] + list('019-+.eE ,:[]{}"\\uabcdfnrtlsx') + ["é"]
SECOND_CHARS = list('01.e,]}" \\udc')


def _viable_completion(text, high_fill):
    outcome = scan(text, high_fill)
    if outcome.error_index is not None:
        return None
    return text + (outcome.tail or "")


def completions(prefix):
    """Valid complete texts that start with `prefix`, by brute force: one more character
    (or none), then part of a completion and one character more (or none), then a
    completion of either of two kinds. Every one is confirmed by strict_loads, so a
    wrong completion from the scanner cannot pass unnoticed."""
    out = set()
    for extra in WITNESS_CHARS:
        for high_fill in (False, True):
            text = _viable_completion(prefix + extra, high_fill)
            if text is None:
                continue
            out.add(text)
            start = len(prefix + extra)
            for cut in range(start, len(text)):
                for second in SECOND_CHARS:
                    more = _viable_completion(text[:cut] + second, high_fill)
                    if more is not None:
                        out.add(more)
    for text in out:
        strict_loads(text)
    return sorted(out)


def witness_determined(prefix, full_text):
    """How many leading fine events of `full_text` every witness completion of `prefix`
    agrees on (numbers compared by their text)."""
    want = identities(full_text)
    agreed = len(want)
    for text in completions(prefix):
        other = identities(text)
        n = 0
        while n < min(agreed, len(other)) and other[n] == want[n]:
            n += 1
        agreed = n
    return agreed


def canon(event):
    """Compare events with their values' types: True is not 1, -0.0 is not 0.0."""
    if event[0] == "value":
        value = event[2]
        return ("value", event[1], type(value).__name__, repr(value))
    return event
