"""The task's meaning, written apart from any streaming parser.

`fine_events(text)` is the final result of a whole text, read by plain recursive descent (no
json module): content one character per item, each call one item. `determined(text)` is the
brute-force meaning of emission: the longest common prefix of the final results of the text
followed by each of a set of continuations that is proved to hold a witness (see
`continuations`); a completion is built by the same recursive descent run over an unfinished
body (`complete_body`), and every completion is checked by the whole-text reading before it
is used.
"""
import functools

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
WHITESPACE = " \t\n\r"
DIGITS = "0123456789"
HEX_DIGITS = "0123456789abcdefABCDEF"
TOP_KEYS = ("name", "arguments")
MEMBER_TEXT = {"name": '"name":"f"', "arguments": '"arguments":{}'}
ESCAPED = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# A character no attempt can take anywhere: a control character is invalid inside a JSON
# string and outside one, is not whitespace, and begins no tag.
KILL = "\x00"


class Bad(Exception):
    """The text cannot be (or begin) a valid body."""


class Cut(Exception):
    """The text ended where more was expected; `tail` is text that finishes it validly."""

    def __init__(self, tail):
        super().__init__(tail)
        self.tail = tail


# ---------------------------------------------------------------- bodies


class _Descent:
    """Recursive descent over a body. Where the text ends early: Bad, or, when completing,
    Cut(tail) whose tail finishes every construct still open (each parse function is given
    `after`, the text that finishes everything outside it)."""

    def __init__(self, text, completing=False):
        self.text, self.i, self.completing = text, 0, completing

    def at_end(self):
        return self.i == len(self.text)

    def ended(self, tail):
        if self.completing and tail is not None:
            raise Cut(tail)
        raise Bad("the text ends here")

    def take(self, tail):
        if self.at_end():
            self.ended(tail)
        self.i += 1
        return self.text[self.i - 1]

    def peek(self):
        return None if self.at_end() else self.text[self.i]

    def skip_whitespace(self):
        while self.peek() is not None and self.peek() in WHITESPACE:
            self.i += 1

    # -- the call object

    def body(self):
        self.skip_whitespace()
        call = self.call_object()
        self.skip_whitespace()
        if not self.at_end():
            raise Bad("text after the object")
        return call

    def call_object(self):
        if self.take("{" + _missing_members({}, first=True)) != "{":
            raise Bad("not an object")
        members = {}
        self.skip_whitespace()
        if self.peek() == "}":
            raise Bad("no members")
        while True:
            key = self.top_key(members)
            self.skip_whitespace()
            members[key] = None
            if self.take(":" + _member_value(key) + _missing_members(members)) != ":":
                raise Bad("no colon")
            self.skip_whitespace()
            members[key] = self.top_value(key, _missing_members(members))
            self.skip_whitespace()
            ch = self.take(_missing_members(members))
            missing = [k for k in TOP_KEYS if k not in members]
            if ch == "}" and not missing:
                return members["name"], members["arguments"]
            if ch != "," or not missing:
                raise Bad("after a member")
            self.skip_whitespace()

    def top_key(self, members):
        missing = [k for k in TOP_KEYS if k not in members]

        def finish(decoded, escape):
            return _finish_top_key(decoded, escape, missing, members)

        if self.take('"' + finish("", None)) != '"':
            raise Bad("a key is a string")
        key = self.string(finish)
        if key not in missing:
            raise Bad(f"key {key!r}")
        return key

    def top_value(self, key, after):
        if key == "name":
            if self.take('"f"' + after) != '"':
                raise Bad("name is not a string")
            name = self.string(lambda decoded, escape: _fill_escape(escape) + ("" if decoded or escape is not None else "f") + '"' + after)
            if not name:
                raise Bad("empty name")
            return name
        if self.take("{}" + after) != "{":
            raise Bad("arguments is not an object")
        return self.object(after)

    # -- JSON values

    def value(self, after):
        ch = self.take("0" + after)
        if ch == '"':
            return self.string(lambda decoded, escape: _fill_escape(escape) + '"' + after)
        if ch == "{":
            return self.object(after)
        if ch == "[":
            return self.array(after)
        for word, meaning in (("true", True), ("false", False), ("null", None)):
            if ch == word[0]:
                for j in range(1, len(word)):
                    if self.take(word[j:] + after) != word[j]:
                        raise Bad("literal")
                return meaning
        if ch == "-" or ch in DIGITS:
            self.i -= 1
            return self.number(after)
        raise Bad(f"no value starts with {ch!r}")

    def number(self, after):
        start = self.i
        if self.peek() == "-":
            self.i += 1
        first = self.take("0" + after)
        if first not in DIGITS:
            raise Bad("number")
        if first != "0":
            self.digits()
        if self.peek() == ".":
            self.i += 1
            self.need_digit(after)
        if self.peek() is not None and self.peek() in "eE":
            self.i += 1
            if self.peek() is not None and self.peek() in "+-":
                self.i += 1
            self.need_digit(after)
        token = self.text[start:self.i]
        if any(c in token for c in ".eE"):
            return float(token)
        return int(token)

    def digits(self):
        while self.peek() is not None and self.peek() in DIGITS:
            self.i += 1

    def need_digit(self, after):
        if self.take("0" + after) not in DIGITS:
            raise Bad("a digit is needed")
        self.digits()

    def string(self, finish):
        """After the opening quote, up to and including the closing one. finish(decoded,
        escape) gives the tail that ends the string (escape: None, or what follows the
        backslash so far), or None where nothing can."""
        units = []
        while True:
            if self.at_end():
                self.ended(finish(_decode(units), None))
            ch = self.take(None)
            if ch == '"':
                return _decode(units)
            if ch < " ":
                raise Bad("control character")
            if ch != "\\":
                units.append(ch)
                continue
            if self.at_end():
                self.ended(finish(_decode(units), ""))
            kind = self.take(None)
            if kind in ESCAPED:
                units.append(ESCAPED[kind])
            elif kind == "u":
                hex_digits = ""
                while len(hex_digits) < 4:
                    if self.at_end():
                        self.ended(finish(_decode(units), "u" + hex_digits))
                    digit = self.take(None)
                    if digit not in HEX_DIGITS:
                        raise Bad("hex digit")
                    hex_digits += digit
                units.append(chr(int(hex_digits, 16)))
            else:
                raise Bad("escape")

    def object(self, after):
        result = {}
        self.skip_whitespace()
        if self.peek() == "}":
            self.i += 1
            return result
        if self.at_end():
            self.ended("}" + after)
        while True:
            def finish(decoded, escape, keys=set(result)):
                return _finish_unique_key(decoded, escape, keys) + ":0}" + after

            if self.take('"' + _unique("", set(result)) + '":0}' + after) != '"':
                raise Bad("a key is a string")
            key = self.string(finish)
            if key in result:
                raise Bad(f"duplicate key {key!r}")
            self.skip_whitespace()
            if self.take(":0}" + after) != ":":
                raise Bad("no colon")
            self.skip_whitespace()
            result[key] = self.value("}" + after)
            self.skip_whitespace()
            ch = self.take("}" + after)
            if ch == "}":
                return result
            if ch != ",":
                raise Bad("after a member")
            self.skip_whitespace()

    def array(self, after):
        result = []
        self.skip_whitespace()
        if self.peek() == "]":
            self.i += 1
            return result
        while True:
            result.append(self.value("]" + after))
            self.skip_whitespace()
            ch = self.take("]" + after)
            if ch == "]":
                return result
            if ch != ",":
                raise Bad("after an element")
            self.skip_whitespace()


def _decode(units):
    """Characters from escapes and raw text; a high surrogate right before a low one is one
    character (only \\u escapes make surrogates: the streams hold no raw ones)."""
    out, i = [], 0
    while i < len(units):
        a = units[i]
        if "\ud800" <= a <= "\udbff" and i + 1 < len(units) and "\udc00" <= units[i + 1] <= "\udfff":
            out.append(chr(0x10000 + ((ord(a) - 0xD800) << 10) + (ord(units[i + 1]) - 0xDC00)))
            i += 2
        else:
            out.append(a)
            i += 1
    return "".join(out)


def _member_value(key):
    return MEMBER_TEXT[key].split(":", 1)[1]


def _missing_members(members, first=False):
    """Text that adds the members still missing and closes the call object: right after '{'
    or ',' (first) or right after a member."""
    missing = [MEMBER_TEXT[k] for k in TOP_KEYS if k not in members]
    if first:
        return ",".join(missing) + "}"
    return "".join("," + m for m in missing) + "}"


def _fill_escape(escape):
    """Finishes an escape begun in a string (any finished escape will do)."""
    if escape is None:
        return ""
    if escape == "":
        return "n"
    return "0" * (5 - len(escape))


def _finish_top_key(decoded, escape, missing, members):
    """The tail that makes a call-object key in progress one of the missing keys, then gives
    it a value and closes the object; None when the key can no longer become one."""
    for key in missing:
        if not key.startswith(decoded):
            continue
        rest = key[len(decoded):]
        if escape is None:
            spelled = rest
        elif not rest:
            continue
        else:
            code = format(ord(rest[0]), "04x")
            if escape == "":
                spelled = "u" + code + rest[1:]
            elif code.startswith(escape[1:].lower()):
                spelled = code[len(escape) - 1:] + rest[1:]
            else:
                continue
        done = dict(members, **{key: None})
        return spelled + '":' + _member_value(key) + _missing_members(done)
    return None


def _unique(decoded, keys):
    suffix = ""
    while decoded + suffix in keys:
        suffix += "k"
    return suffix


def _finish_unique_key(decoded, escape, keys):
    """The tail that ends a key in progress as a key the object does not have yet."""
    filled = _fill_escape(escape)
    if escape == "":
        decoded += "\n"
    elif escape is not None:
        decoded = _decode(list(decoded) + [chr(int(escape[1:] + filled, 16))])
    return filled + _unique(decoded, keys) + '"'


@functools.lru_cache(maxsize=4096)
def call_item(body):
    """('call', name, canonical arguments) if body is a valid body, else None (cached: the
    oracle reads the same bodies once per push)."""
    call = parse_body(body)
    return None if call is None else ("call", call[0], canonical_value(call[1]))


def parse_body(body):
    """(name, arguments) if body is a valid body, else None."""
    try:
        return _Descent(body).body()
    except Bad:
        return None


def complete_body(body):
    """Text d such that body + d is a valid body with no closing tag in it, or None if no such
    text exists."""
    try:
        _Descent(body, completing=True).body()
    except Cut as cut:
        return cut.tail
    except Bad:
        return None
    return ""


# ---------------------------------------------------------------- whole texts


def steps(text):
    """The whole-text reading, step by step: (position, item, open) where item is one
    content character or ('call', name, arguments), and open says that this is the '<' of a
    partial tag at the end or of an attempt with no closing tag after it (the only places
    a continuation can change)."""
    out, i = [], 0
    while i < len(text):
        j = text.find("<", i)
        j = len(text) if j < 0 else j
        out.extend((k, text[k], False) for k in range(i, j))
        i = j
        if i == len(text):
            break
        if text.startswith(OPEN, i):
            end = text.find(CLOSE, i + len(OPEN))
            call = None if end < 0 else call_item(text[i + len(OPEN):end])
            if call is not None:
                out.append((i, call, False))
                i = end + len(CLOSE)
                continue
            out.append((i, "<", end < 0))
        else:
            out.append((i, "<", OPEN.startswith(text[i:i + len(OPEN)])))
        i += 1
    return out


def fine_events(text):
    """The final result of a whole text: characters and calls (arguments made canonical)."""
    return [item for _, item, _ in steps(text)]


def attempt_succeeds(text, q):
    """Whether the attempt at q, read in the whole text, is a valid call."""
    if not text.startswith(OPEN, q):
        return False
    end = text.find(CLOSE, q + len(OPEN))
    return end >= 0 and parse_body(text[q + len(OPEN):end]) is not None


def completion_at(text, q):
    """A continuation of text that makes the partial tag or open attempt at q a valid call,
    or None when there is none."""
    rest = text[q:]
    if len(rest) < len(OPEN):
        return OPEN[len(rest):] + '{"name":"f","arguments":{}}' + CLOSE
    body = rest[len(OPEN):]
    for k in range(1, len(CLOSE)):  # the body may end with the start of its closing tag
        if body.endswith(CLOSE[:k]) and parse_body(body[:-k]) is not None:
            return CLOSE[k:]
    tail = complete_body(body)
    return None if tail is None else tail + CLOSE


def first_completion(text):
    """(position, continuation) for the first open step of the reading that some
    continuation makes a call; None when no continuation can add a call there."""
    for q, _, is_open in steps(text):
        if is_open:
            c = completion_at(text, q)
            if c is not None:
                assert attempt_succeeds(text + c, q), f"oracle: completion {c!r} of {text[q:]!r} fails"
                return q, c
    return None


def continuations(text):
    """The end of the stream, a character that kills every attempt, and (when one exists)
    a completion of the first open step that some continuation makes a call. The readings of
    every continuation agree up to that step (the steps before it end the same whatever
    follows), and there the end of stream gives '<' while the completion gives a call; so
    the common prefix of these few is the common prefix of all continuations."""
    found = first_completion(text)
    return ["", KILL] + ([found[1]] if found else [])


def determined(text):
    """The items every continuation of text agrees on, in order."""
    results = [fine_events(text + c) for c in continuations(text)]
    common = results[0]
    for other in results[1:]:
        common = common[:_common_length(common, other)]
    return common


def _common_length(a, b):
    """Length of the longest common prefix of two lists (bisection over slice comparisons)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def canonical_value(value):
    """A comparable form that keeps JSON types apart (True is not 1, 1.0 is not 1, -0.0 is
    not 0.0); object member order does not matter."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, list):
        return ("list", tuple(canonical_value(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, canonical_value(v)) for k, v in value.items())))
    return ("other", type(value).__name__, repr(value)[:100])
