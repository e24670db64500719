"""Seeded random streams: content, valid calls, near-miss calls (one fault each, of every way
a body can fail), tag fragments, attempts nested in failed bodies and closing tags inside
strings; and random ways to cut a stream into chunks. Only text is made here: what a stream
means is the oracle's business."""
import random

OPEN = "<tool_call>"
CLOSE = "</tool_call>"

WORDS = ["Sure", "let", "me", "check", "the", "weather", "ok", "I'll", "call", "tools", "x", "é", "😀",
         "a<b", "<", ">", "<<", "tool_call", "</", "<tool", "==", "{", "}", '"', "\\"]
JSON_WS = ["", "", "", " ", "\n", "  ", "\t", "\r\n", " \n "]
NUMBERS = ["0", "-0", "7", "12", "-3", "3.25", "-0.5", "1e3", "2E-3", "1.5e+2", "0.0", "-0.0", "1E400", "10", "100"]
KEYS = ["a", "b", "city", "unit", "q", "x1", "é", "k\\u0065y", "\\u0061", "😀", "a b"]
STRINGS = ["Paris", "", "é😀", "line\\nbreak", "tab\\t", "quote\\\"", "back\\\\slash", "\\/", "\\u00e9",
           "\\ud83d\\ude00", "\\uD834\\uDD1E", "\\ud800", "<tool_call>", "</tool_cal", "a</", "<", "</tool_call",
           "\\u003c/tool_call>", "{\\\"name\\\":1}", "\\b\\f\\r", "100%"]
NAMES = ["get_weather", "f", "search", "n\\u0061me", "\\u0066", "é", "😀", "a b", "\\u00e9\\ud83d\\ude00"]
# Mostly plain, sometimes spelled with escapes (which decode to the same key).
NAME_KEYS = ["name"] * 6 + ["n\\u0061me", "\\u006eame", "nam\\u0065", "\\u006E\\u0061\\u006D\\u0065"]
ARG_KEYS = ["arguments"] * 6 + ["\\u0061rguments", "argum\\u0065nts", "\\u0061\\u0072guments"]

# Each fault is one way a body can fail, by where it strikes.
BAD_TOP_KEYS = ["nam", "names", "Name", "id", "", "arg", "argumentss", "\\u004eame", "na\\u006D", "\\u0061rgs",
                "name\\u0000", "\\n", "\\u006", "argument"]
BAD_NAMES = ['""', "42", "null", '["f"]', '{"a":1}', "true", "f", "'f'", '"a\nb"']
BAD_ARGUMENTS = ["[]", '"x"', "null", "1", '"{}"', "[{}]", "true", "{"]
BAD_NUMBERS = ["01", "-", "1.", ".5", "+1", "1e", "1e+", "0x1F", "NaN", "Infinity", "-Infinity", "1.5.2", "--1", "-01",
               "00", "1.e3", "\u0663", "1\u00b2", "-.5", "1E+-2"]
BAD_LITERALS = ["True", "nul", "tru", "falsy", "None", "undefined", "nulll", "FALSE", "t"]
BAD_STRINGS = ['"a\nb"', '"\tx"', '"\x01"', '"\\x41"', "\"\\'\"", '"\\u12G4"', '"\\u12"', '"\\U0001F600"', "'x'",
               '"a\\"', '"\\ "']
BAD_WHITESPACE = ["\xa0", "\x0c", "\x0b", "\u2028", "\u3000", "\x85"]
AFTER_OBJECT = [" x", "}", " {}", ",", " <x", "</tool_cal x", "</tool_callx>", "</tool_call >", "<", " </", "\n\n."]
NOT_OBJECTS = ['["name", "f"]', '"f"', "", "   ", "null", "name: f", "{{}}", "<tool_call>"]
FRAGMENTS = ["<", "<t", "<tool_cal", "<tool_call", "<tool_callx>", "<TOOL_CALL>", "</tool_call>", "<<tool_call>",
             "< tool_call>", "<tool-call>", "<tool_call/>", "<tool_call<tool_call>", "</tool_call", "<tool_call >"]


class _Writer:
    def __init__(self, rng):
        self.rng = rng

    def ws(self):
        return self.rng.choice(JSON_WS)

    def string(self):
        return '"' + self.rng.choice(STRINGS) + '"'

    def value(self, depth):
        rng = self.rng
        kinds = ["string", "number", "literal"] + (["object", "array"] * 2 if depth < 3 else [])
        kind = rng.choice(kinds)
        if kind == "string":
            return self.string()
        if kind == "number":
            return rng.choice(NUMBERS)
        if kind == "literal":
            return rng.choice(["true", "false", "null"])
        if kind == "array":
            items = [self.value(depth + 1) for _ in range(rng.randint(0, 3))]
            return "[" + self.ws() + ("," + self.ws()).join(items) + self.ws() + "]"
        return self.object(depth + 1)

    def object(self, depth, keys=None):
        rng = self.rng
        if keys is None:
            keys = list(dict.fromkeys(rng.choice(KEYS) for _ in range(rng.randint(0, 3))))
            keys = [k for k in keys if k not in ("a", "\\u0061")] + [k for k in keys if k in ("a", "\\u0061")][:1]
        members = [self.ws() + '"' + k + '"' + self.ws() + ":" + self.ws() + self.value(depth) + self.ws() for k in keys]
        return "{" + ",".join(members) + ("" if members else self.ws()) + "}"

    def call(self, name=None, arguments=None, members=None):
        """A call's text: members is a list of (key text, value text) in order."""
        rng = self.rng
        if members is None:
            name = name if name is not None else '"' + rng.choice(NAMES) + '"'
            arguments = arguments if arguments is not None else self.object(1)
            members = [(rng.choice(NAME_KEYS), name), (rng.choice(ARG_KEYS), arguments)]
            rng.shuffle(members)
        inner = ",".join(self.ws() + '"' + k + '"' + self.ws() + ":" + self.ws() + v + self.ws() for k, v in members)
        return "{" + inner + "}"

    def tag(self, body):
        return OPEN + self.ws() + body + self.ws() + CLOSE


def valid_call(w):
    return w.tag(w.call())


def _replace_in_arguments(w, bad):
    """Arguments holding a bad value at some depth."""
    inner = "[" + w.value(2) + "," + w.ws() + bad + "]" if w.rng.random() < 0.5 else '{"z":' + w.ws() + bad + "}"
    return '{"q":' + w.ws() + inner + w.ws() + "}"


def near_miss(w):
    """A call with one fault; returns its text."""
    rng = w.rng
    fault = rng.choice(["top_key", "extra_key", "missing_key", "duplicate_top", "duplicate_nested", "name",
                        "arguments", "number", "literal", "string", "structure", "whitespace", "after_object",
                        "close_in_string", "not_object", "nested_attempt", "nested_attempt_in_string"])
    if fault == "top_key":
        members = [(rng.choice(BAD_TOP_KEYS), '"f"'), ("arguments", "{}")]
        rng.shuffle(members)
        return w.tag(w.call(members=members))
    if fault == "extra_key":
        members = [("name", '"f"'), ("arguments", w.object(1)), (rng.choice(["id", "type", "name"]), '"x"')]
        rng.shuffle(members)
        return w.tag(w.call(members=members))
    if fault == "missing_key":
        return w.tag(rng.choice(['{"name": "f"}', '{"arguments": {}}', "{}", '{"name":"f",}', '{"arguments":{},}']))
    if fault == "duplicate_top":
        members = [("name", '"f"'), ("arguments", "{}"), rng.choice([("name", '"g"'), ("arguments", "{}"),
                                                                    ("n\\u0061me", '"g"')])]
        rng.shuffle(members)
        return w.tag(w.call(members=members))
    if fault == "duplicate_nested":
        pair = rng.choice([('"a"', '"a"'), ('"a"', '"\\u0061"'), ('"\\ud83d\\ude00"', '"😀"'), ('"é"', '"\\u00E9"')])
        dup = "{" + pair[0] + ":1," + w.ws() + '"b":[],' + pair[1] + ":2}"
        args = dup if rng.random() < 0.5 else '{"list":[' + w.value(2) + "," + dup + "]}"
        return w.tag(w.call(arguments=args))
    if fault == "name":
        return w.tag(w.call(name=rng.choice(BAD_NAMES)))
    if fault == "arguments":
        return w.tag(w.call(arguments=rng.choice(BAD_ARGUMENTS)))
    if fault == "number":
        return w.tag(w.call(arguments=_replace_in_arguments(w, rng.choice(BAD_NUMBERS))))
    if fault == "literal":
        return w.tag(w.call(arguments=_replace_in_arguments(w, rng.choice(BAD_LITERALS))))
    if fault == "string":
        return w.tag(w.call(arguments=_replace_in_arguments(w, rng.choice(BAD_STRINGS))))
    if fault == "structure":
        bad = rng.choice(['{"a":1,}', '{"a" 1}', '{"a":1 "b":2}', '{"a"=1}', "{'a':1}", '{"a":[1,]}',
                          '{"a":[1 2]}', '{"a":1}}', '{"a":]}', '{,}', '{"a":1,,"b":2}', '{a:1}'])
        return w.tag(w.call(arguments=bad))
    if fault == "whitespace":
        text = valid_call(w)
        spots = [i for i, ch in enumerate(text) if ch in ":,{" and i > len(OPEN)]
        i = rng.choice(spots)
        return text[:i + 1] + rng.choice(BAD_WHITESPACE) + text[i + 1:]
    if fault == "after_object":
        return OPEN + w.call() + rng.choice(AFTER_OBJECT) + w.ws() + CLOSE
    if fault == "close_in_string":
        return w.tag(w.call(arguments='{"html":"<b>' + CLOSE + '</b>"}'))
    if fault == "not_object":
        return OPEN + rng.choice(NOT_OBJECTS) + CLOSE
    if fault == "nested_attempt":
        head = rng.choice(['{"name": ', '{"name":"f","arguments":', "{", " ", '{"name":"f",'])
        return OPEN + head + valid_call(w)
    # an attempt inside a string of an attempt: the outer body ends at the inner closing tag
    return OPEN + '{"name":"f","arguments":{"s":"' + valid_call(w)


def content(rng):
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
    return "".join(w + rng.choice([" ", " ", "", "\n", ". "]) for w in words)


def stream(seed, pieces=(3, 7)):
    """One stream: content, calls, near misses and fragments; it may end inside a call."""
    rng = random.Random(seed)
    w = _Writer(rng)
    parts = []
    for _ in range(rng.randint(*pieces)):
        roll = rng.random()
        if roll < 0.3:
            parts.append(valid_call(w))
        elif roll < 0.65:
            parts.append(near_miss(w))
        elif roll < 0.8:
            parts.append(rng.choice(FRAGMENTS))
        else:
            parts.append(content(rng))
        if rng.random() < 0.5:
            parts.append(content(rng))
    text = "".join(parts)
    if rng.random() < 0.3:  # the stream ends inside a call, at a random place in it
        call = valid_call(w) if rng.random() < 0.7 else near_miss(w)
        text += call[:rng.randint(1, len(call) - 1)]
    return text


def cut(text, rng, most=12):
    """Random chunks of 0 to `most` characters (empty ones included) covering text."""
    chunks, i = [], 0
    while i < len(text):
        size = rng.choice([0, 1, 1, 2, 3, rng.randint(1, most)])
        chunks.append(text[i:i + size])
        i += size
    return chunks


def by_character(text):
    return list(text)
