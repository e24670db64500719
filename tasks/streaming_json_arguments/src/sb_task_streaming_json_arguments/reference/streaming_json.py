"""Incremental parser for a tool call's JSON arguments, streamed in chunks.

A character-level state machine with an explicit stack, so that any chunk boundary is just
a pause between two characters and nesting depth costs no Python recursion.
"""

WHITESPACE = " \t\n\r"
DIGITS = "0123456789"
HEX_DIGITS = "0123456789abcdefABCDEF"
SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
LITERALS = {"t": ("rue", True), "f": ("alse", False), "n": ("ull", None)}

# Number states: which characters may follow, and whether the token could end here.
NUMBER_NEXT = {
    "minus": {"digit0": "zero", "digit": "int"},
    "zero": {".": "dot", "e": "exp"},
    "int": {"digit0": "int", "digit": "int", ".": "dot", "e": "exp"},
    "dot": {"digit0": "frac", "digit": "frac"},
    "frac": {"digit0": "frac", "digit": "frac", "e": "exp"},
    "exp": {"+": "exp_sign", "-": "exp_sign", "digit0": "exp_int", "digit": "exp_int"},
    "exp_sign": {"digit0": "exp_int", "digit": "exp_int"},
    "exp_int": {"digit0": "exp_int", "digit": "exp_int"},
}
NUMBER_ACCEPTING = {"zero", "int", "frac", "exp_int"}


def _number_class(ch):
    if ch == "0":
        return "digit0"
    if ch in DIGITS:
        return "digit"
    if ch in "eE":
        return "e"
    return ch


class StreamingJSONParser:
    def __init__(self):
        self._stack = []  # frames: [kind, path, index (array) or key (object)]
        self._mode = "value"
        self._closed = False
        self._events = None
        self._is_key = False
        self._key = []
        self._string_path = None
        self._hex = ""
        self._high = None
        self._number = ""
        self._number_state = None
        self._number_path = None
        self._literal_rest = ""

    # ------------------------------------------------------------------ public

    def push(self, chunk):
        if self._closed:
            raise ValueError("the parser is closed")
        self._events = []
        try:
            for ch in chunk:
                self._step(ch)
        except ValueError:
            self._closed = True
            raise
        return self._events

    def finish(self):
        if self._closed:
            raise ValueError("the parser is closed")
        self._closed = True
        self._events = []
        if self._mode == "number" and not self._stack and self._number_state in NUMBER_ACCEPTING:
            self._end_number()
        if self._mode != "after_value" or self._stack:
            raise ValueError("the JSON text is incomplete")
        return self._events

    # ------------------------------------------------------------------ events

    def _emit(self, event):
        self._events.append(event)

    def _emit_char(self, ch):
        if self._is_key:
            self._key.append(ch)
            return
        last = self._events[-1] if self._events else None
        if last is not None and last[0] == "text" and last[1] == self._string_path:
            self._events[-1] = ("text", last[1], last[2] + ch)
        else:
            self._emit(("text", self._string_path, ch))

    def _value_path(self):
        if not self._stack:
            return ()
        frame = self._stack[-1]
        return frame[1] + (frame[2],)

    # ------------------------------------------------------------------ dispatch

    def _step(self, ch):
        getattr(self, "_on_" + self._mode)(ch)

    def _on_value(self, ch, closer=None):
        if ch in WHITESPACE:
            return
        if ch == closer:
            self._close_container()
            return
        path = self._value_path()
        if ch == "{":
            self._emit(("begin", path, "object"))
            self._stack.append(["object", path, None])
            self._mode = "key_or_close"
        elif ch == "[":
            self._emit(("begin", path, "array"))
            self._stack.append(["array", path, 0])
            self._mode = "value_or_close"
        elif ch == '"':
            self._emit(("begin", path, "string"))
            self._is_key = False
            self._string_path = path
            self._mode = "string"
        elif ch in LITERALS:
            rest, value = LITERALS[ch]
            self._emit(("value", path, value))
            self._literal_rest = rest
            self._mode = "literal"
        elif ch == "-" or ch in DIGITS:
            self._number = ch
            self._number_state = "minus" if ch == "-" else ("zero" if ch == "0" else "int")
            self._number_path = path
            self._mode = "number"
        else:
            raise ValueError(f"unexpected {ch!r} where a value must start")

    def _on_value_or_close(self, ch):
        self._on_value(ch, closer="]")

    def _on_key_or_close(self, ch):
        self._on_key(ch, closer="}")

    def _on_key(self, ch, closer=None):
        if ch in WHITESPACE:
            return
        if ch == closer:
            self._close_container()
        elif ch == '"':
            self._is_key = True
            self._key = []
            self._mode = "string"
        else:
            raise ValueError(f"unexpected {ch!r} where a key must start")

    def _on_colon(self, ch):
        if ch in WHITESPACE:
            return
        if ch != ":":
            raise ValueError(f"expected ':' after a key, got {ch!r}")
        self._mode = "value"

    def _on_after_value(self, ch):
        if ch in WHITESPACE:
            return
        if not self._stack:
            raise ValueError(f"unexpected {ch!r} after the complete value")
        frame = self._stack[-1]
        if ch == ",":
            if frame[0] == "array":
                frame[2] += 1
                self._mode = "value"
            else:
                self._mode = "key"
        elif ch == ("]" if frame[0] == "array" else "}"):
            self._close_container()
        else:
            raise ValueError(f"unexpected {ch!r} after a value")

    def _close_container(self):
        frame = self._stack.pop()
        self._emit(("end", frame[1]))
        self._mode = "after_value"

    # ------------------------------------------------------------------ strings

    def _on_string(self, ch):
        if ch == '"':
            if self._is_key:
                self._stack[-1][2] = "".join(self._key)
                self._is_key = False
                self._mode = "colon"
            else:
                self._emit(("end", self._string_path))
                self._mode = "after_value"
        elif ch == "\\":
            self._mode = "escape"
        elif ord(ch) < 0x20:
            raise ValueError(f"raw control character {ch!r} in a string")
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            raise ValueError("a raw surrogate code point is not a character")
        else:
            self._emit_char(ch)

    def _on_escape(self, ch):
        if ch in SIMPLE_ESCAPES:
            self._emit_char(SIMPLE_ESCAPES[ch])
            self._mode = "string"
        elif ch == "u":
            self._hex = ""
            self._mode = "hex"
        else:
            raise ValueError(f"invalid escape \\{ch}")

    def _on_hex(self, ch):
        if ch not in HEX_DIGITS:
            raise ValueError(f"{ch!r} is not a hex digit")
        position = len(self._hex)
        if self._high is not None:
            # Only a low surrogate, DC00..DFFF, may follow a high one.
            if (position == 0 and ch not in "dD") or (position == 1 and ch not in "cdefCDEF"):
                raise ValueError("a high surrogate must be followed by a low surrogate")
        elif position == 1 and self._hex in "dD" and ch in "cdefCDEF":
            raise ValueError("a low surrogate without a high surrogate before it")
        self._hex += ch
        if len(self._hex) < 4:
            return
        code = int(self._hex, 16)
        if self._high is not None:
            code = 0x10000 + ((self._high - 0xD800) << 10) + (code - 0xDC00)
            self._high = None
        elif 0xD800 <= code <= 0xDBFF:
            self._high = code
            self._mode = "after_high"
            return
        self._emit_char(chr(code))
        self._mode = "string"

    def _on_after_high(self, ch):
        if ch != "\\":
            raise ValueError("a high surrogate must be followed by a low surrogate")
        self._mode = "after_high_backslash"

    def _on_after_high_backslash(self, ch):
        if ch != "u":
            raise ValueError("a high surrogate must be followed by a low surrogate")
        self._hex = ""
        self._mode = "hex"

    # ------------------------------------------------------------------ scalars

    def _on_literal(self, ch):
        if ch != self._literal_rest[0]:
            raise ValueError(f"unexpected {ch!r} in a literal")
        self._literal_rest = self._literal_rest[1:]
        if not self._literal_rest:
            self._mode = "after_value"

    def _on_number(self, ch):
        following = NUMBER_NEXT[self._number_state].get(_number_class(ch))
        if following is not None:
            self._number += ch
            self._number_state = following
            return
        if self._number_state not in NUMBER_ACCEPTING:
            raise ValueError(f"unexpected {ch!r} in a number")
        self._end_number()
        self._step(ch)

    def _end_number(self):
        text = self._number
        is_integer = self._number_state in ("zero", "int")
        self._emit(("value", self._number_path, int(text) if is_integer else float(text)))
        self._mode = "after_value"
