"""Random operation sequences that make prefix sharing, forks, duplicates and evictions common.

Tokens come from a tiny vocabulary and prompts from a few shared stems (or from the tokens
of a live sequence), so full blocks are hit often, sequences fill blocks with the same
tokens independently (two blocks, one key), the pool runs dry and cached blocks are
evicted. The next operation depends only on the caller's view (live sequences and their
tokens), so the same seed drives the same requests whatever the manager answers."""
import random


def next_operation(rng, live_tokens, block_size, counter, stems):
    """One operation: ("allocate", id, prompt) | ("append", id, tokens) | ("fork", p, c) | ("free", id)."""
    live = sorted(live_tokens)
    roll = rng.random()
    if not live or (roll < 0.32 and len(live) < 5):
        return ("allocate", f"s{counter}", _prompt(rng, live_tokens, block_size, stems))
    seq = rng.choice(live)
    if roll < 0.64 and len(live_tokens[seq]) < 7 * block_size:
        return ("append", seq, _continuation(rng, seq, live_tokens, block_size))
    if roll < 0.74 and len(live) < 5:
        return ("fork", seq, f"s{counter}")
    return ("free", seq)


def make_stems(rng, block_size):
    return [[rng.randrange(3) for _ in range(rng.randint(2, 4) * block_size + rng.randrange(block_size))]
            for _ in range(3)]


def _prompt(rng, live_tokens, block_size, stems):
    if live_tokens and rng.random() < 0.3:
        base = live_tokens[rng.choice(sorted(live_tokens))]
    else:
        base = rng.choice(stems)
    head = base[:rng.randint(0, len(base))]
    tail = [rng.randrange(3) for _ in range(rng.randint(0 if head else 1, block_size + 1))]
    return head + tail


def _continuation(rng, seq, live_tokens, block_size):
    """Often the continuation another sequence (or a stem) with the same tokens so far has."""
    tokens = live_tokens[seq]
    count = rng.randint(1, block_size + 1)
    sources = [t for t in live_tokens.values() if len(t) > len(tokens) and t[:len(tokens)] == tokens]
    if sources and rng.random() < 0.6:
        source = rng.choice(sources)
        extra = source[len(tokens):len(tokens) + count]
        return extra + [rng.randrange(3) for _ in range(count - len(extra))]
    return [rng.randrange(3) for _ in range(count)]


def operations(seed, block_size, count, live_tokens_of):
    """Yield `count` operations; `live_tokens_of()` gives the caller's current view."""
    rng = random.Random(seed)
    stems = make_stems(rng, block_size)
    for counter in range(count):
        yield next_operation(rng, live_tokens_of(), block_size, counter, stems)
