"""Buggy: each step merges the occurrences of the pair scanning from the right."""


def encode(text: str, merges: list[tuple[bytes, bytes]]) -> list[bytes]:
    """The tokens of `text` under `merges`, a list of bytes objects.

    The text's UTF-8 bytes start as one token each. A merge's rank is the index of its
    first occurrence in `merges`. At each step the adjacent pair of tokens with the lowest
    rank anywhere in the sequence is chosen, and every occurrence of that pair is merged
    into one token, scanning left to right and never reusing a token already merged in
    this step. Steps repeat until no adjacent pair has a rank.
    """
    ranks: dict[tuple[bytes, bytes], int] = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault((pair[0], pair[1]), rank)
    tokens = [bytes([byte]) for byte in text.encode("utf-8")]
    while len(tokens) > 1:
        ranked = [(ranks[pair], pair) for pair in zip(tokens, tokens[1:]) if pair in ranks]
        if not ranked:
            break
        _, (left, right) = min(ranked)
        merged, i = [], len(tokens) - 1
        while i >= 0:
            if i >= 1 and tokens[i - 1] == left and tokens[i] == right:
                merged.append(left + right)
                i -= 2
            else:
                merged.append(tokens[i])
                i -= 1
        tokens = merged[::-1]
    return tokens


def decode(tokens: list[bytes]) -> str:
    """The text of `tokens`: their bytes joined in order and decoded as UTF-8, each invalid
    or incomplete byte sequence replaced as Python's errors="replace" does (U+FFFD)."""
    return b"".join(tokens).decode("utf-8", errors="replace")
