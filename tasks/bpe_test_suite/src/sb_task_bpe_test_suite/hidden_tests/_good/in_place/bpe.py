"""Byte-level BPE over a doubly linked list of tokens, merged in place."""
import codecs


def encode(text, merges):
    rank = {}
    for index in range(len(merges) - 1, -1, -1):  # walking backwards, the first occurrence is written last
        rank[tuple(merges[index])] = index
    data = text.encode("utf-8")
    token = [data[i:i + 1] for i in range(len(data))]
    nxt = list(range(1, len(data) + 1))
    alive = [True] * len(data)
    while True:
        best = None
        i = 0 if data else len(data)
        while i < len(data) and nxt[i] < len(data):
            r = rank.get((token[i], token[nxt[i]]))
            if r is not None and (best is None or r < best):
                best = r
            i = nxt[i]
        if best is None:
            break
        left, right = merges[best][0], merges[best][1]
        i = 0
        while i < len(data) and nxt[i] < len(data):
            j = nxt[i]
            if token[i] == left and token[j] == right:
                token[i] = left + right
                alive[j] = False
                nxt[i] = nxt[j]
            i = nxt[i]
    return [token[i] for i in range(len(data)) if alive[i]]


def decode(tokens):
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = "".join(decoder.decode(token) for token in tokens)
    return text + decoder.decode(b"", final=True)
