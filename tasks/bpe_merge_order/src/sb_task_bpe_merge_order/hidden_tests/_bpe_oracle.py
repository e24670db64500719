"""An independent, deliberately plain statement of the encoding rule, plus a tiny BPE trainer.

Tokens are tuples of byte values here (not bytes objects), and every step re-lists all
candidate positions from scratch: slow, obvious, and written separately from any solution.
"""
import random

WORDS = [
    "the", "then", "there", "token", "tokens", "banana", "bandana", "aaaa", "abab",
    "naïve", "café", "Straße", "über", "日本語", "日本", "語彙", "🙂", "🙂🙂", "e\u0301",
    "Ωμέγα", "\t", "\n", "  ", "x=1;", "x==1", "ab", "ba", "\r\n", "\u00a0", "\u2028", "a\u3000b",
]


def oracle_encode(text, merges):
    rank_of = {}
    for rank, (left, right) in enumerate(merges):
        rank_of[(tuple(left), tuple(right))] = rank
    tokens = [(b,) for b in text.encode("utf-8")]
    while True:
        candidates = [
            (rank_of[(tokens[k], tokens[k + 1])], k)
            for k in range(len(tokens) - 1)
            if (tokens[k], tokens[k + 1]) in rank_of
        ]
        if not candidates:
            break
        best_rank = min(candidates)[0]
        best_left, best_right = (tuple(part) for part in merges[best_rank])
        out = []
        k = 0
        while k < len(tokens):
            if k + 1 < len(tokens) and tokens[k] == best_left and tokens[k + 1] == best_right:
                out.append(tokens[k] + tokens[k + 1])
                k += 2
            else:
                out.append(tokens[k])
                k += 1
        tokens = out
    ids = []
    for tok in tokens:
        if len(tok) == 1:
            ids.append(tok[0])
        else:
            matches = [r for r, (l, rt) in enumerate(merges) if tuple(l + rt) == tok]
            assert len(matches) == 1
            ids.append(256 + matches[0])
    return ids


def train_merges(corpus, num_merges):
    """Classic BPE training on the raw bytes of `corpus`: most frequent adjacent pair first.

    Ties go to the smallest (left, right); a pair whose concatenation is already a token
    is skipped, so every merge yields a distinct byte string.
    """
    seq = [bytes([b]) for b in corpus.encode("utf-8")]
    known = set(seq)
    merges = []
    while len(merges) < num_merges:
        counts = {}
        for pair in zip(seq, seq[1:]):
            counts[pair] = counts.get(pair, 0) + 1
        ranked = sorted(counts, key=lambda p: (-counts[p], p))
        fresh = [p for p in ranked if p[0] + p[1] not in known]
        if not fresh:
            break
        pair = fresh[0]
        merges.append(pair)
        known.add(pair[0] + pair[1])
        out, k = [], 0
        while k < len(seq):
            if k + 1 < len(seq) and (seq[k], seq[k + 1]) == pair:
                out.append(pair[0] + pair[1])
                k += 2
            else:
                out.append(seq[k])
                k += 1
        seq = out
    return merges


def random_text(seed, num_words):
    rng = random.Random(seed)
    parts = []
    for _ in range(num_words):
        parts.append(rng.choice(WORDS))
        parts.append(rng.choice([" ", " ", " ", "", "\n", ", "]))
    return "".join(parts)


CORPUS = "".join(random_text(1000 + i, 40) for i in range(6))
TRAINED = train_merges(CORPUS, 80)


def shuffled(merges, seed):
    """The same merges in another order: ranks no longer follow creation order."""
    out = list(merges)
    random.Random(seed).shuffle(out)
    return out
