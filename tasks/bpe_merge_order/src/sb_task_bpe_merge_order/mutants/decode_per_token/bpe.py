"""Byte-level BPE encoding and decoding with a ranked merge list."""

NUM_BYTES = 256


def _ranks(merges):
    return {(left, right): rank for rank, (left, right) in enumerate(merges)}


def _best_pair(tokens, ranks):
    """The adjacent pair with the lowest rank, or None when no adjacent pair is a merge."""
    best = None
    for pair in zip(tokens, tokens[1:]):
        rank = ranks.get(pair)
        if rank is not None and (best is None or rank < ranks[best]):
            best = pair
    return best


def _merge_all(tokens, pair):
    """Replace every occurrence of `pair`, scanning left to right without overlap."""
    merged, i = [], 0
    while i < len(tokens):
        if i + 1 < len(tokens) and (tokens[i], tokens[i + 1]) == pair:
            merged.append(tokens[i] + tokens[i + 1])
            i += 2
        else:
            merged.append(tokens[i])
            i += 1
    return merged


def encode(text, merges):
    ranks = _ranks(merges)
    tokens = [bytes([b]) for b in text.encode("utf-8")]
    while (pair := _best_pair(tokens, ranks)) is not None:
        tokens = _merge_all(tokens, pair)
    ids_of = {left + right: NUM_BYTES + rank for rank, (left, right) in enumerate(merges)}
    return [tok[0] if len(tok) == 1 else ids_of[tok] for tok in tokens]


def decode_bytes(ids, merges):
    vocab = [bytes([b]) for b in range(NUM_BYTES)] + [left + right for left, right in merges]
    out = []
    for i in ids:
        if not 0 <= i < len(vocab):
            raise ValueError(f"unknown token id {i}")
        out.append(vocab[i])
    return b"".join(out)


def decode(ids, merges):
    return "".join(decode_bytes([i], merges).decode("utf-8", errors="replace") for i in ids)
