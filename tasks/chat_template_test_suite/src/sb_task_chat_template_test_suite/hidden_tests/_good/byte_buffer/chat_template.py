"""A correct encoder that renders to one bytes object and keeps the special tokens' places
aside: bytes cannot hold an id above 255, so the render records where each special id goes."""
import codecs

_ROLES = {"system", "user", "assistant", "tool"}


def encode_chat(messages, add_generation_prompt=False):
    # the last broken rule found wins here: the contract leaves open which one is reported
    problem = None
    for n, message in enumerate(messages):
        if not isinstance(message, dict):
            problem = TypeError("not a dict")
            continue
        if sorted(map(repr, message)) != ["'content'", "'role'"]:
            problem = ValueError("keys")
            continue
        role, content = message["role"], message["content"]
        if not isinstance(content, str):
            problem = TypeError("content")
        elif not isinstance(role, str):
            problem = TypeError("role")
        elif role not in _ROLES:
            problem = ValueError("role")
        elif role == "system" and n:
            problem = ValueError("system")
    if problem is not None:
        raise problem

    rendered = bytearray()
    specials = []  # (offset in rendered, id)

    def special(token_id):
        specials.append((len(rendered), token_id))

    special(256)
    for message in messages:
        special(257)
        rendered += codecs.encode(message["role"], "utf-8")
        special(259)
        rendered += codecs.encode(message["content"], "utf-8")
        special(258)
    if add_generation_prompt:
        special(257)
        rendered += b"assistant"
        special(259)

    ids, copied = [], 0
    for offset, token_id in specials:
        ids.extend(rendered[copied:offset])
        ids.append(token_id)
        copied = offset
    ids.extend(rendered[copied:])
    return ids
