"""Byte-level BPE, written as a search of the merge list in order at every step."""


def _present(tokens, left, right):
    return any(a == left and b == right for a, b in zip(tokens, tokens[1:]))


def encode(text, merges):
    tokens = [text.encode("utf-8")[i:i + 1] for i in range(len(text.encode("utf-8")))]
    while True:
        # the first entry of the list present in the sequence is the lowest rank present;
        # a later duplicate of an entry is never reached before the entry itself
        best = next(((a, b) for a, b in merges if _present(tokens, a, b)), None)
        if best is None:
            return tokens
        out = []
        for token in tokens:
            if out and out[-1] == best[0] and token == best[1] and not _fresh(out, best):
                out[-1] = best[0] + best[1]
                _mark(out)
            else:
                out.append(token)
        _unmark(out)
        tokens = list(out)


class _Merged(bytes):
    """A token made in the current step: it may not be merged again in the same step."""


def _fresh(out, best):
    return type(out[-1]) is _Merged


def _mark(out):
    out[-1] = _Merged(out[-1])


def _unmark(out):
    for i, token in enumerate(out):
        out[i] = bytes(token)


def decode(tokens):
    pieces, pending = [], b""
    for token in tokens:
        pending += token
        try:
            pieces.append(pending.decode("utf-8"))
        except UnicodeDecodeError:
            continue
        pending = b""
    pieces.append(pending.decode("utf-8", errors="replace"))
    return "".join(pieces)
