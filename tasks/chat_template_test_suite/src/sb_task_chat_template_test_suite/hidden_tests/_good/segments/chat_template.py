"""A correct encoder written as a list of segments: ("special", id) or ("text", str)."""

SPECIAL = {"begin": 256, "start": 257, "end": 258, "sep": 259}
ALLOWED_ROLES = frozenset({"system", "user", "assistant", "tool"})


def _validated(messages):
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise TypeError("message must be a dict")
        if "content" not in m or "role" not in m or len(m) != 2:
            raise ValueError("message must have exactly the keys role and content")
        # content is checked before role here: which error wins when both are wrong is unspecified
        if not isinstance(m["content"], str):
            raise TypeError("content must be a str")
        if not isinstance(m["role"], str):
            raise TypeError("role must be a str")
        if m["role"] not in ALLOWED_ROLES:
            raise ValueError("unknown role")
        if i > 0 and m["role"] == "system":
            raise ValueError("system message after the first")
        out.append((m["role"], m["content"]))
    return out


def _segments(pairs, add_generation_prompt):
    yield ("special", SPECIAL["begin"])
    for role, content in pairs:
        yield ("special", SPECIAL["start"])
        yield ("text", role)
        yield ("special", SPECIAL["sep"])
        yield ("text", content)
        yield ("special", SPECIAL["end"])
    if add_generation_prompt:
        yield ("special", SPECIAL["start"])
        yield ("text", "assistant")
        yield ("special", SPECIAL["sep"])


def encode_chat(messages, add_generation_prompt=False):
    pairs = _validated(messages)
    ids = []
    for kind, payload in _segments(pairs, add_generation_prompt):
        if kind == "special":
            ids.append(payload)
        else:
            ids += list(bytes(payload, "utf-8"))
    return ids
