"""Tool-call parsing with a regular-expression tokenizer and an explicit stack (no recursion);
string tokens, once matched strictly, are decoded by json.loads."""
import json
import re

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
WHITESPACE = re.compile(r"[ \t\n\r]*")
STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
LITERALS = (("true", True), ("false", False), ("null", None))


class Bad(Exception):
    pass


def _ws(text, i):
    return WHITESPACE.match(text, i).end()


def _string(text, i):
    m = STRING.match(text, i)
    if m is None:
        raise Bad(i)
    return json.loads(m.group()), m.end()


def _key(text, i):
    key, i = _string(text, i)
    i = _ws(text, i)
    if not text.startswith(":", i):
        raise Bad(i)
    return key, _ws(text, i + 1)


def _scalar(text, i):
    if text.startswith('"', i):
        return _string(text, i)
    m = NUMBER.match(text, i)
    if m is not None:
        is_float = m.group(1) is not None or m.group(2) is not None
        return (float if is_float else int)(m.group()), m.end()
    for word, value in LITERALS:
        if text.startswith(word, i):
            return value, i + len(word)
    raise Bad(i)


def read_value(text, i):
    """One JSON value starting at text[i] (no leading whitespace): (value, end)."""
    stack = []  # open containers, innermost last: [container, key it awaits (objects)]
    while True:
        if i < len(text) and text[i] in "{[":
            container, closer = ({}, "}") if text[i] == "{" else ([], "]")
            i = _ws(text, i + 1)
            if not text.startswith(closer, i):
                key = None
                if closer == "}":
                    key, i = _key(text, i)
                stack.append([container, key])
                continue
            value, i = container, i + 1
        else:
            value, i = _scalar(text, i)
        while True:  # a value is complete: store it, then see what follows
            if not stack:
                return value, i
            container, key = stack[-1]
            if isinstance(container, dict):
                container[key] = value
            else:
                container.append(value)
            i = _ws(text, i)
            if text.startswith(",", i):
                i = _ws(text, i + 1)
                if isinstance(container, dict):
                    stack[-1][1], i = _key(text, i)
                break
            if text.startswith("}" if isinstance(container, dict) else "]", i):
                stack.pop()
                value, i = container, i + 1
                continue
            raise Bad(i)


def _call_at(text, start):
    try:
        value, end = read_value(text, _ws(text, start + len(OPEN)))
    except Bad:
        return None
    end = _ws(text, end)
    if not text.startswith(CLOSE, end) or not isinstance(value, dict):
        return None
    name, arguments = value.get("name"), value.get("arguments")
    if isinstance(name, str) and isinstance(arguments, dict):
        return {"name": name, "arguments": arguments}, end + len(CLOSE)
    return None


def parse_tool_calls(text):
    starts = [m.start() for m in re.finditer(re.escape(OPEN), text)]
    kept, calls, done = [], [], 0
    for start in starts:
        if start < done:
            continue  # inside a call already taken
        found = _call_at(text, start)
        if found is not None:
            kept.append(text[done:start])
            calls.append(found[0])
            done = found[1]
    kept.append(text[done:])
    return "".join(kept), calls
