"""Streaming detokenization: the text a server may send after each generated token, sent as
soon as no later token can change it."""

REPLACEMENT = "\ufffd"
CONTINUATION = bytes(range(0x80, 0xC0))
# Leads whose second byte has a narrower range (lower or higher would be an overlong form, a
# surrogate, or a code point past U+10FFFF).
SECOND_BYTE = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}


def _open_tail(data):
    """How many trailing bytes of `data` a continuation could still complete into a character."""
    start = len(data.rstrip(CONTINUATION)) - 1
    if start < 0:
        return 0
    tail = data[start:]
    if not 0xC2 <= tail[0] <= 0xF4:
        return 0
    size = 2 if tail[0] < 0xE0 else 3 if tail[0] < 0xF0 else 4
    low, high = SECOND_BYTE.get(tail[0], (0x80, 0xBF))
    if len(tail) >= size or (len(tail) > 1 and not low <= tail[1] <= high):
        return 0
    return len(tail)


def _earliest(text, stops):
    """(start, end) of the occurrence that counts: the smallest start, then the longest stop."""
    hits = [(start, -len(stop)) for stop in stops for start in [text.find(stop)] if start >= 0]
    if not hits:
        return None
    start, minus_length = min(hits)
    return start, start - minus_length


def _first_open(text, pending, stops):
    """The smallest start of an occurrence some continuation can still complete: a proper,
    non-empty prefix of a stop ends the text and the stop's next character can come next
    (U+FFFD always can; another one only if its encoding starts with the pending bytes)."""
    return min((len(text) - k for stop in stops for k in range(1, len(stop))
                if text.endswith(stop[:k])
                and (stop[k] == REPLACEMENT or stop[k].encode("utf-8").startswith(pending))),
               default=len(text) + 1)


def _determined(text, pending, stops, include_stop):
    """(length of the prefix of the final text that no continuation can change, whether every
    continuation gives the same final text)."""
    match = _earliest(text, stops)
    first_open = _first_open(text, pending, stops)
    if match is None:
        return (len(text) if include_stop else min(first_open, len(text))), False
    start, end = match
    if include_stop:
        return end, first_open > start
    return min(start, first_open), first_open >= start


def _final(decoded, stops, include_stop):
    """(the final text of a stream whose whole text is `decoded`, whether a stop cut it)."""
    match = _earliest(decoded, stops)
    if match is None:
        return decoded, False
    return decoded[:match[1] if include_stop else match[0]], True


def detokenize(vocab, token_ids, stops=(), include_stop=False, max_tokens=None):
    text, pending = "", b""  # the decoded text no continuation can change; the open bytes
    deltas, emitted = [], 0
    for count, token_id in enumerate(token_ids, 1):
        data = pending + vocab[token_id]
        split = len(data) - _open_tail(data)
        text, pending = text + data[:split].decode("utf-8", "replace"), data[split:]
        if count == max_tokens:
            final, stopped = _final(text + REPLACEMENT * bool(pending), stops, include_stop)
            return deltas + [final[emitted:], ""], stopped
        upto, settled = _determined(text, pending, stops, include_stop)
        deltas.append(text[emitted:upto])
        emitted = upto
        if settled:
            return deltas + [""], True
    final, stopped = _final(text + REPLACEMENT * bool(pending), stops, include_stop)
    return deltas + [final[emitted:]], stopped
