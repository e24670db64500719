"""Tool calls in a model's raw output, Hermes style: each call is one JSON object between
<tool_call> and </tool_call>; everything else the model wrote is ordinary content."""
import json

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
JSON_WHITESPACE = " \t\n\r"  # the only four characters RFC 8259 calls whitespace


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


# strict=True (the default) rejects raw control characters inside strings; NaN, Infinity and
# -Infinity are refused by parse_constant; a repeated key keeps its last value.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _skip_whitespace(text, i):
    while i < len(text) and text[i] in JSON_WHITESPACE:
        i += 1
    return i


def _attempt(text, start):
    """The call whose opening tag starts at `start`, and the index just after its closing
    tag; None when the text there is not a well-formed call."""
    i = _skip_whitespace(text, start + len(OPEN))
    try:
        value, i = _DECODER.raw_decode(text, i)
    except ValueError:  # json.JSONDecodeError, and the constants refused above
        return None
    i = _skip_whitespace(text, i)
    if not text.startswith(CLOSE, i):
        return None
    if not isinstance(value, dict):
        return None
    name, arguments = value.get("name"), value.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return None
    return {"name": name, "arguments": arguments}, i + len(CLOSE)


def parse_tool_calls(text):
    """Split `text` into (content, calls).

    content is the text outside the calls, exactly; calls is a list of
    {"name": str, "arguments": dict}, in the order they appear.
    """
    pieces, calls = [], []
    copied = 0  # text[:copied] is already in pieces or inside a call
    i = 0
    while True:
        start = text.find(OPEN, i)
        if start < 0:
            break
        attempt = _attempt(text, start)
        if attempt is None:
            i = start + 1  # the tag is content; a call may still begin inside what follows
            continue
        call, end = attempt
        pieces.append(text[copied:start])
        calls.append(call)
        copied = i = end
    pieces.append(text[copied:])
    return "".join(pieces), calls
