"""Turn an OpenAI-style conversation into the token ids a byte-level chat model reads.

The vocabulary: ids 0 to 255 are the 256 byte values, and four special tokens follow.

    256  <|begin|>    once, at the very start
    257  <|start|>    opens a message
    258  <|end|>      closes a message
    259  <|sep|>      between a message's role and its content

A message is START, the UTF-8 bytes of its role, SEP, the UTF-8 bytes of its content, END.
The ids of a str are exactly the bytes of its .encode("utf-8"), one id per byte, in order.
Special ids come only from the template: text that spells a special token is plain text.
"""

BEGIN, START, END, SEP = 256, 257, 258, 259
ROLES = ("system", "user", "assistant", "tool")


def encode_chat(messages, add_generation_prompt=False):
    """[BEGIN], then every message in order, then START + b"assistant" + SEP when
    add_generation_prompt is true. Every message is checked before anything is encoded:

    - not a dict: TypeError
    - its keys are not exactly "role" and "content": ValueError
    - role not a str: TypeError; a str other than the four ROLES: ValueError
    - content not a str: TypeError
    - role "system" anywhere but the first message: ValueError
    """
    for position, message in enumerate(messages):
        _check(position, message)
    ids = [BEGIN]
    for message in messages:
        ids.append(START)
        ids.extend(message["role"].encode("utf-8"))
        ids.append(SEP)
        ids.extend(message["content"].encode("utf-8"))
        ids.append(END)
    if add_generation_prompt:
        ids.append(START)
        ids.extend("assistant".encode("utf-8"))
        ids.append(SEP)
    return ids


def _check(position, message):
    if not isinstance(message, dict):
        raise TypeError(f"message {position} is a {type(message).__name__}, not a dict")
    if set(message) != {"role", "content"}:
        raise ValueError(f"message {position} has keys {sorted(map(repr, message))}, not role and content")
    role, content = message["role"], message["content"]
    if not isinstance(role, str):
        raise TypeError(f"message {position}: role is a {type(role).__name__}, not a str")
    if role not in ROLES:
        raise ValueError(f"message {position}: unknown role {role!r}")
    if not isinstance(content, str):
        raise TypeError(f"message {position}: content is a {type(content).__name__}, not a str")
    if role == "system" and position != 0:
        raise ValueError(f"message {position}: a system message may only come first")
