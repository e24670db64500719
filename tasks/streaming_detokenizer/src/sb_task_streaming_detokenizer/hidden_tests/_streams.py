"""Seeded token streams that split characters, carry invalid UTF-8 and spell stop strings."""
import random

VALID = ["a", "b", "c", "d", "é", "€", "😀", "\ufffd", " "]
INVALID = [
    b"\x80", b"\xbf",                      # lone continuation bytes
    b"\xc0\xaf", b"\xe0\x80\x80",          # overlong encodings
    b"\xed\xa0\x80", b"\xed\xbf\xbf",      # surrogates encoded
    b"\xf4\x90\x80\x80",                   # above U+10FFFF
    b"\xf5", b"\xff", b"\xc1",             # bytes that start nothing
    b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3",  # truncated sequences
    b"\xef\xbf", b"\xf0\x9f", b"\xed\x9f",
]


def byte_vocab():
    """Ids 0..255 are the single bytes."""
    return [bytes([b]) for b in range(256)]


def random_bytes(rng, stops, pieces):
    out = []
    for _ in range(pieces):
        roll = rng.random()
        if stops and roll < 0.3:
            out.append(rng.choice(stops).encode("utf-8", "surrogatepass"))
        elif roll < 0.55:
            out.append(rng.choice(INVALID))
        else:
            out.append(rng.choice(VALID).encode())
    return b"".join(out)


def tokenize(rng, data, vocab, index):
    """Split `data` into tokens of 1 to 4 bytes, adding multi-byte tokens to `vocab`."""
    ids, at = [], 0
    while at < len(data):
        size = rng.choice((1, 1, 2, 2, 3, 4))
        piece = data[at:at + size]
        at += len(piece)
        if piece not in index:
            index[piece] = len(vocab)
            vocab.append(piece)
        ids.append(index[piece])
    return ids


def make_streams(seed, stops, count, pieces=(4, 12), empty_tokens=False):
    """(vocab as a list of bytes, [token ids per stream])."""
    rng = random.Random(seed)
    vocab = byte_vocab()
    index = {piece: i for i, piece in enumerate(vocab)}
    if empty_tokens:
        index[b""] = len(vocab)
        vocab.append(b"")
    streams = []
    for _ in range(count):
        ids = tokenize(rng, random_bytes(rng, stops, rng.randint(*pieces)), vocab, index)
        if empty_tokens:
            for _ in range(rng.randint(1, 3)):
                ids.insert(rng.randint(0, len(ids)), index[b""])
        streams.append(ids)
    return vocab, streams
