"""A correct detokenizer by recomputation: after every token, the final text of the whole byte
string is computed for a set of continuations that reaches every outcome, and what all of them
share is what has been determined."""

import codecs

REPLACEMENT = "\ufffd"


def final_text(data, stops, include_stop):
    decoded = data.decode("utf-8", "replace")
    best = None
    for stop in stops:
        at = decoded.find(stop)
        if at >= 0 and (best is None or at < best[0] or (at == best[0] and len(stop) > best[1])):
            best = (at, len(stop))
    if best is None:
        return decoded, False
    return decoded[:best[0] + best[1] * include_stop], True


def open_part(data):
    """The trailing bytes that are still an incomplete character: those Python's incremental
    decoder keeps back, except a surrogate's first two bytes, which nothing can complete."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    decoder.decode(data[-3:])
    held = decoder.getstate()[0]
    if held[:1] == b"\xed" and held[1:2] >= b"\xa0":
        return b""
    return held


def _characters_after(held):
    """Every character whose encoding starts with the incomplete `held`, in code point order."""
    size = 2 if held[0] < 0xE0 else 3 if held[0] < 0xF0 else 4
    for byte in range(0x80, 0xC0):
        longer = held + bytes([byte])
        if len(longer) == size:
            yield longer.decode("utf-8")
        elif open_part(longer) == longer:
            yield from _characters_after(longer)


def next_characters(held, stop_chars):
    """The characters worth trying next after the incomplete `held`: every stop character that
    can come next, U+FFFD (which always can), and one more that no stop holds."""
    if held:
        candidates = _characters_after(held)
        found = {char for char in stop_chars if char.encode("utf-8").startswith(held)}
    else:
        candidates = map(chr, range(0x21, 0x110000))
        found = set(stop_chars)
    other = next((char for char in candidates if char not in found and char != REPLACEMENT), None)
    return found | {REPLACEMENT} | ({other} if other else set())


def continuations(data, stops):
    """Byte strings that may follow `data`: nothing, or one next character, alone or followed by
    the rest of any stop that holds it."""
    held = open_part(data)
    found = [b""]
    for char in next_characters(held, {char for stop in stops for char in stop}):
        if char == REPLACEMENT:
            lead = b"" if held else b"\xff"  # a byte no character can start: one U+FFFD
        else:
            lead = char.encode("utf-8")[len(held):]
        rests = [""] + [stop[k + 1:] for stop in stops for k in range(len(stop)) if stop[k] == char]
        found += [lead + rest.encode("utf-8") for rest in rests]
    return found


def common_prefix(texts):
    first = min(texts)
    last = max(texts)
    size = 0
    while size < len(first) and first[size] == last[size]:
        size += 1
    return first[:size]


def detokenize(vocab, token_ids, stops=(), include_stop=False, max_tokens=None):
    data, deltas, sent = b"", [], ""
    for count, token_id in enumerate(token_ids, 1):
        data += vocab[token_id]
        if count == max_tokens:
            break
        outcomes = {final_text(data + more, stops, include_stop)[0] for more in continuations(data, stops)}
        known = common_prefix(list(outcomes))
        deltas.append(known[len(sent):])
        sent = known
        if len(outcomes) == 1:
            return deltas + [""], True
    else:
        final, stopped = final_text(data, stops, include_stop)
        return deltas + [final[len(sent):]], stopped
    final, stopped = final_text(data, stops, include_stop)
    return deltas + [final[len(sent):], ""], stopped
