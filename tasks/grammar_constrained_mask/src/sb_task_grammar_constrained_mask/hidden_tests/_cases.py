"""Automata and vocabularies for the hidden tests: random small ones for the brute force, and
one moderate structured-output grammar with a few hundred tokens."""
import random

# Characters of every UTF-8 length, with shared lead bytes so that partial tokens interact.
POOL = ["a", "b", "é", "è", "€", "₭", "∀", "😀", "😁"]
# Ranges the random automata use (inclusive code points), some covering several pool
# characters, one covering every code point (surrogates included).
RANGES = [
    (0x61, 0x61), (0x62, 0x62), (0x61, 0x62), (0xE8, 0xE9), (0xE9, 0xE9),
    (0x20AC, 0x20AC), (0x20AD, 0x20AD), (0x20AC, 0x2200), (0x1F600, 0x1F600),
    (0x1F600, 0x1F601), (0x1F601, 0x1F601), (0x80, 0x10FFFF), (0x0, 0x10FFFF),
]
JUNK = [b"\xff", b"\x80", b"\xc0\xa1", b"\xed\xa0\x80", b"\xa9", b"\x82\xac"]


def _disjoint(ranges):
    ranges = sorted(ranges)
    return all(a[1] < b[0] for a, b in zip(ranges, ranges[1:]))


def random_automaton(rng):
    """A deterministic automaton of 2 to 5 states (dead ones and loops likely) plus an
    unreachable accepting state."""
    n = rng.randint(2, 5)
    transitions = []
    for src in range(n):
        chosen = []
        wanted = rng.randint(1, 4)
        for lo_hi in rng.sample(RANGES, len(RANGES)):
            if len(chosen) == wanted:
                break
            if _disjoint(chosen + [lo_hi]):
                chosen.append(lo_hi)
        for lo, hi in chosen:
            transitions.append((src, lo, hi, rng.randrange(n)))
    accepting = sorted(rng.sample(range(n), rng.randint(1, max(1, n - 1))))
    # an unreachable accepting state with its own loop, which must never make anything live
    transitions.append((n, 0x0, 0x10FFFF, n))
    accepting.append(n)
    return {"start": 0, "accepting": accepting, "transitions": transitions}


def random_pieces(rng):
    """The bytes of 1 to 3 pool characters, whole or cut at random byte offsets into
    consecutive pieces (so a split character can usually be completed), or junk."""
    roll = rng.random()
    if roll < 0.05:
        return [b""]
    if roll < 0.13:
        return [rng.choice(JUNK)]
    data = "".join(rng.choice(POOL) for _ in range(rng.randint(1, 3))).encode("utf-8")
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(0, 2))))
    bounds = [0] + cuts + [len(data)]
    return [data[i:j] for i, j in zip(bounds, bounds[1:])]


def random_vocab(rng, size):
    """`size` tokens, EOS at a random id with bytes that would matter if they were text."""
    vocab = []
    while len(vocab) < size - 1:
        vocab.extend(random_pieces(rng))
    vocab = vocab[:size - 1]
    rng.shuffle(vocab)
    eos_id = rng.randrange(size)
    vocab.insert(eos_id, rng.choice([b"", b"a", "€".encode(), b"</s>"]))
    return vocab, eos_id


# ------------------------------------------------------------------ the moderate grammar

DIGITS = (0x30, 0x39)


def list_grammar():
    """A JSON-like list of numbers and strings: [ item (, item)* ] with
    item = [0-9]+ | " (any character except '"', '\\' and C0 controls)* "."""
    t = []
    t.append((0, 0x5B, 0x5B, 1))                 # [
    t.append((1, *DIGITS, 2))                     # number
    t.append((1, 0x22, 0x22, 3))                  # open string
    t.append((2, *DIGITS, 2))
    t.append((2, 0x2C, 0x2C, 4))                  # ,
    t.append((2, 0x5D, 0x5D, 5))                  # ]
    t.append((3, 0x20, 0x21, 3))                  # string body, skipping " and \
    t.append((3, 0x22, 0x22, 6))                  # close string
    t.append((3, 0x23, 0x5B, 3))
    t.append((3, 0x5D, 0x10FFFF, 3))              # includes the surrogates: never taken
    t.append((3, 0x5C, 0x5C, 7))                  # a backslash leads to a dead state
    t.append((7, 0x0, 0x10FFFF, 7))
    t.append((6, 0x2C, 0x2C, 4))
    t.append((6, 0x5D, 0x5D, 5))
    t.append((4, 0x20, 0x20, 8))                  # ", " before the next item
    t.append((8, *DIGITS, 2))
    t.append((8, 0x22, 0x22, 3))
    return {"start": 0, "accepting": [5], "transitions": t}


WORDS = ["ab", "x", "10", "7", "é", "naïve", "€5", "中文", "😀", "ok", "Ω", "ß", "日本"]


def list_corpus(rng, count):
    items = []
    for _ in range(count):
        if rng.random() < 0.4:
            items.append(str(rng.randint(0, 999)))
        else:
            items.append('"' + "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3))) + '"')
    return "[" + ", ".join(items) + "]"


def list_vocab(seed, size=300):
    """Byte pieces of random lists cut at random byte offsets (so many split characters),
    every ASCII character the grammar uses, a few bytes that are never valid, one
    backslash piece and EOS; deduplicated, shuffled, `size` tokens in all."""
    rng = random.Random(seed)
    pieces = set()
    for ch in '[]," 0123456789abxok':
        pieces.add(ch.encode())
    pieces.update([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b'\\"', b"\xe4", b"\xb8\xad"])
    while len(pieces) < size - 1:
        data = list_corpus(rng, rng.randint(1, 3)).encode("utf-8")
        i = rng.randrange(len(data))
        j = min(len(data), i + rng.randint(1, 6))
        pieces.add(data[i:j])
    vocab = sorted(pieces)
    rng.shuffle(vocab)
    eos_id = rng.randrange(size)
    vocab.insert(eos_id, b"]")
    return vocab, eos_id


def small_case(seed):
    """(automaton, vocab, eos_id, max_tokens, brute force) for `seed`: random draws are
    retried until the start allows at least two tokens and some finished generation uses
    three tokens or more, so that a trajectory has decisions to make."""
    import _oracle

    rng = random.Random(seed)
    while True:
        automaton = random_automaton(rng)
        vocab, eos_id = random_vocab(rng, rng.randint(6, 8))
        max_tokens = rng.randint(3, 7)
        while (len(vocab) - 1) ** (max_tokens - 1) > 5000:  # keeps the enumeration small
            max_tokens -= 1
        brute = _oracle.BruteForce(automaton, vocab, eos_id, max_tokens)
        if sum(brute.mask(())) >= 2 and any(len(s) >= 2 for s in brute.finishes):
            return automaton, vocab, eos_id, max_tokens, brute
