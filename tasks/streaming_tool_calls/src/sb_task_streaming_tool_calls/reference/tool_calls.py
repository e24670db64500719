"""Hermes-style tool calls extracted from a model's streamed text, each event emitted as soon
as every possible continuation of the stream agrees on it."""
import json

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
WHITESPACE = " \t\n\r"
DIGITS = "0123456789"
HEX_DIGITS = "0123456789abcdefABCDEF"
TOP_KEYS = ("name", "arguments")
LITERALS = {"t": "true", "f": "false", "n": "null"}
SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

ALIVE, DEAD, CALLED = "alive", "dead", "called"

# The number automaton: state -> {character class: next state}. A state in NUMBER_ENDS may end
# the number; any character it has no edge for then belongs to what follows the number.
NUMBER = {
    "minus": {"0": "zero", "1": "int"},
    "zero": {".": "dot", "e": "e"},
    "int": {"0": "int", "1": "int", ".": "dot", "e": "e"},
    "dot": {"0": "frac", "1": "frac"},
    "frac": {"0": "frac", "1": "frac", "e": "e"},
    "e": {"+": "sign", "0": "exp", "1": "exp"},
    "sign": {"0": "exp", "1": "exp"},
    "exp": {"0": "exp", "1": "exp"},
}
NUMBER_ENDS = {"zero", "int", "frac", "exp"}


def _number_class(ch):
    if ch == "0":
        return "0"
    if ch in DIGITS:
        return "1"
    if ch in "eE":
        return "e"
    if ch in "+-":
        return "+"
    return ch


class ToolCallParser:
    """Reads one stream. Everything before the held text is emitted; the held text is empty
    or begins with the '<' of a partial opening tag or of an attempt still able to succeed."""

    def __init__(self):
        self._held = ""
        self._body = None

    def push(self, chunk):
        events = []
        text = chunk
        while text:
            text = self._read(text, events)
        return events

    def finish(self):
        # No closing tag can follow: a held tag or attempt fails, and so does every attempt
        # starting inside it (none has a closing tag after it either). All of it is text.
        events = []
        _add_text(events, self._held)
        self._held, self._body = "", None
        return events

    def _read(self, text, events):
        """Reads text until an attempt or a partial tag fails; returns what is left to read:
        the failed part after its '<', then the rest of text."""
        for i, ch in enumerate(text):
            if not self._held and ch != "<":
                _add_text(events, ch)
                continue
            self._held += ch
            if self._body is None:
                if not OPEN.startswith(self._held):
                    return self._release(events) + text[i + 1:]
                if self._held == OPEN:
                    self._body = _Body()
                continue
            verdict = self._body.read(ch)
            if verdict == CALLED:
                call = json.loads(self._held[len(OPEN):-len(CLOSE)])
                events.append(("call", call["name"], call["arguments"]))
                self._held, self._body = "", None
            elif verdict == DEAD:
                return self._release(events) + text[i + 1:]
        return ""

    def _release(self, events):
        """The held tag or attempt failed: its '<' is text, the rest is read again."""
        rest = self._held[1:]
        _add_text(events, "<")
        self._held, self._body = "", None
        return rest


def _add_text(events, text):
    if not text:
        return
    if events and events[-1][0] == "text":
        events[-1] = ("text", events[-1][1] + text)
    else:
        events.append(("text", text))


class _Frame:
    """An open object or array. kind: 'top' (the call object), 'object' or 'array'. phase:
    'first' after the opening bracket, 'item' after a comma, 'colon' after a key, 'value'
    after a colon, 'next' after a value."""

    def __init__(self, kind):
        self.kind = kind
        self.phase = "first"
        self.keys = set()
        self.key = None


class _Body:
    """The body of one attempt, read a character at a time. read() says whether the body so
    far can still be followed by text that makes it valid up to a closing tag (ALIVE), cannot
    (DEAD), or has just been completed by its closing tag (CALLED)."""

    def __init__(self):
        self.mode = "before"  # before, struct, string, number, literal, after
        self.frames = []
        self.close = 0  # length of the longest suffix of the body that begins CLOSE
        self.tail = 0  # characters of CLOSE read after the object
        self.purpose = None  # the string being read: 'topkey', 'key', 'name' or 'value'
        self.source = []  # the string's characters as written, escapes undecoded
        self.escape = None  # None, or what follows the backslash so far ('' right after it)
        self.prefix = ""  # a top-level key's decoded characters so far
        self.number = None
        self.rest = ""

    def read(self, ch):
        if self.mode == "after":
            return self._after(ch)
        if not self._json(ch):
            return DEAD
        # Still JSON: but a closing tag completed inside a string ends the body there, unfinished.
        self.close = self.close + 1 if ch == CLOSE[self.close] else int(ch == "<")
        return DEAD if self.close == len(CLOSE) else ALIVE

    def _after(self, ch):
        if self.tail == 0 and ch in WHITESPACE:
            return ALIVE
        if ch != CLOSE[self.tail]:
            return DEAD
        self.tail += 1
        return CALLED if self.tail == len(CLOSE) else ALIVE

    def _json(self, ch):
        if self.mode == "string":
            return self._string(ch)
        if self.mode == "literal":
            if ch != self.rest[0]:
                return False
            self.rest = self.rest[1:]
            if not self.rest:
                self.mode = "struct"
            return True
        if self.mode == "number":
            step = NUMBER[self.number].get(_number_class(ch))
            if step is not None:
                self.number = step
                return True
            if self.number not in NUMBER_ENDS:
                return False
            self.mode = "struct"
        if self.mode == "before":
            if ch in WHITESPACE:
                return True
            if ch != "{":
                return False
            self.frames.append(_Frame("top"))
            self.mode = "struct"
            return True
        return ch in WHITESPACE or self._struct(ch)

    def _struct(self, ch):
        frame = self.frames[-1]
        phase = frame.phase
        if phase == "colon":
            if ch != ":":
                return False
            frame.phase = "value"
            return True
        if phase == "next":
            return self._after_value(frame, ch)
        if phase == "first" and ch == ("]" if frame.kind == "array" else "}"):
            return frame.kind != "top" and self._close_frame()
        if frame.kind == "array" or phase == "value":
            frame.phase = "next"
            if frame.kind == "top":
                return self._top_value(frame, ch)
            return self._value(ch)
        if ch != '"':
            return False
        self._start_string("topkey" if frame.kind == "top" else "key")
        return True

    def _after_value(self, frame, ch):
        if ch == ",":
            frame.phase = "item"
            return frame.kind != "top" or len(frame.keys) < len(TOP_KEYS)
        if ch != ("]" if frame.kind == "array" else "}"):
            return False
        return (frame.kind != "top" or len(frame.keys) == len(TOP_KEYS)) and self._close_frame()

    def _close_frame(self):
        self.frames.pop()
        if not self.frames:
            self.mode = "after"
        return True

    def _top_value(self, frame, ch):
        if frame.key == "name":
            if ch != '"':
                return False
            self._start_string("name")
            return True
        if ch != "{":
            return False
        self.frames.append(_Frame("object"))
        return True

    def _value(self, ch):
        if ch == '"':
            self._start_string("value")
        elif ch in "{[":
            self.frames.append(_Frame("object" if ch == "{" else "array"))
        elif ch == "-" or ch in DIGITS:
            self.mode, self.number = "number", {"-": "minus", "0": "zero"}.get(ch, "int")
        elif ch in LITERALS:
            self.mode, self.rest = "literal", LITERALS[ch][1:]
        else:
            return False
        return True

    def _start_string(self, purpose):
        self.mode, self.purpose = "string", purpose
        self.source, self.escape, self.prefix = [], None, ""

    def _string(self, ch):
        if self.escape is None:
            if ch == '"':
                return self._end_string()
            if ch < " ":
                return False
            self.source.append(ch)
            if ch == "\\":
                self.escape = ""
                return self._key_char(0, 0xFFFF)
            return self._key_char(ord(ch), ord(ch))
        self.source.append(ch)
        if self.escape == "":
            if ch == "u":
                self.escape = "u"
                return True
            if ch not in SIMPLE_ESCAPES:
                return False
            self.escape = None
            code = ord(SIMPLE_ESCAPES[ch])
            return self._key_char(code, code)
        if ch not in HEX_DIGITS:
            return False
        self.escape += ch
        digits = self.escape[1:]
        low, high = int(digits.ljust(4, "0"), 16), int(digits.ljust(4, "f"), 16)
        if len(digits) == 4:
            self.escape = None
        return self._key_char(low, high)

    def _key_char(self, low, high):
        """A top-level key's next character is one of low..high (one when low == high): can
        the key still become an unused one of TOP_KEYS?"""
        if self.purpose != "topkey":
            return True
        frame, n = self.frames[-1], len(self.prefix)
        nexts = {k[n] for k in TOP_KEYS if k not in frame.keys and k.startswith(self.prefix) and len(k) > n}
        if not any(low <= ord(c) <= high for c in nexts):
            return False
        if low == high:
            self.prefix += chr(low)
        return True

    def _end_string(self):
        self.mode = "struct"
        frame = self.frames[-1]
        if self.purpose == "name":
            return bool(self.source)
        if self.purpose == "value":
            return True
        key = self.prefix if self.purpose == "topkey" else json.loads('"' + "".join(self.source) + '"')
        if key in frame.keys or (self.purpose == "topkey" and key not in TOP_KEYS):
            return False
        frame.keys.add(key)
        frame.key = key
        frame.phase = "colon"
        return True
