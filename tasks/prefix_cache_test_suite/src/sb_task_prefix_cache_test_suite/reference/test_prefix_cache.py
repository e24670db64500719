import random

import pytest

from prefix_cache import simulate


def model(requests, block_size, num_blocks):
    """The rules, one step at a time: {prefix: last use} for the cached full blocks."""
    cache, out = {}, []
    for index, tokens in enumerate(requests):
        n = len(tokens)
        total = -(-n // block_size)
        if total > num_blocks:
            raise ValueError
        full = [tuple(tokens[:end]) for end in range(block_size, n + 1, block_size)]
        hits = 0
        while hits < len(full) and full[hits] in cache:
            hits += 1
        reused = min(hits, (n - 1) // block_size)
        shortfall = max(0, total - reused - (num_blocks - len(cache)))
        candidates = sorted((p for p in cache if p not in full[:reused]), key=lambda p: (cache[p], -len(p)))
        for prefix in candidates[:shortfall]:
            del cache[prefix]
        cache.update(dict.fromkeys(full, index))
        out.append((reused * block_size, n - reused * block_size, shortfall))
    return out


def run(requests, block_size, num_blocks):
    results = simulate(requests, block_size=block_size, num_blocks=num_blocks)
    assert type(results) is list and len(results) == len(requests)
    for item in results:
        assert type(item) is dict and set(item) == {"reused", "computed", "evicted"}
        assert all(type(value) is int for value in item.values())
    return [(item["reused"], item["computed"], item["evicted"]) for item in results]


# Worked by hand from the rules: "block_size num_blocks | request ; request ... => reused
# computed evicted ; ..." (one triple per request), or "=> ValueError".
SCENARIOS = {
    "cold requests compute everything": "2 8 | 1 2 3 ; 4 5 6 7 8 => 0 3 0 ; 0 5 0",
    "a fully cached prompt recomputes its last block": "2 8 | 1 2 3 4 ; 1 2 3 4 ; 1 2 3 4 => 0 4 0 ; 2 2 0 ; 2 2 0",
    "one full block is never reused": "3 2 | 1 2 3 ; 1 2 3 => 0 3 0 ; 0 3 0",
    "block size one": "1 4 | 5 6 7 ; 5 6 7 ; 5 6 => 0 3 0 ; 2 1 0 ; 1 1 0",
    "a partial tail keeps every full block reused": "3 8 | 1 2 3 4 5 6 ; 1 2 3 4 5 6 7 => 0 6 0 ; 6 1 0",
    "the same tokens at another position are another block": "2 8 | 1 2 3 4 ; 3 4 3 4 9 => 0 4 0 ; 0 5 0",
    "repeated tokens in one prompt are distinct blocks": "1 5 | 5 5 5 5 5 ; 5 5 5 5 5 => 0 5 0 ; 4 1 1",
    "after a cached head, another path's block misses": "2 8 | 1 2 ; 3 4 5 6 ; 1 2 5 6 7 => 0 2 0 ; 0 4 0 ; 2 3 0",
    "spliced prompts only match their true prefix": "2 8 | 1 1 2 2 ; 2 2 1 1 ; 1 1 1 1 0 => 0 4 0 ; 0 4 0 ; 2 3 0",
    "a partial block is never cached": "2 2 | 1 2 3 ; 7 8 => 0 3 0 ; 0 2 0",
    "free blocks go before any eviction": "2 3 | 1 2 3 4 ; 5 6 7 8 => 0 4 0 ; 0 4 1",
    "least recently used by last use":
        "2 3 | 1 1 ; 2 2 ; 1 1 5 ; 3 3 3 3 ; 1 1 0 ; 2 2 0 => 0 2 0 ; 0 2 0 ; 2 1 0 ; 0 4 1 ; 2 1 1 ; 0 3 1",
    "one request's blocks go deepest first": "2 4 | 1 2 3 4 ; 5 6 7 8 9 9 ; 1 2 3 4 0 => 0 4 0 ; 0 6 1 ; 2 3 2",
    "reused blocks are never evicted":
        "2 4 | 1 2 3 4 ; 5 6 ; 1 2 3 4 7 8 9 ; 5 6 ; 1 2 3 4 => 0 4 0 ; 0 2 0 ; 4 3 1 ; 0 2 0 ; 2 2 1",
    "the recomputed last block may be evicted": "2 2 | 1 2 3 4 ; 1 2 3 4 ; 1 2 3 4 => 0 4 0 ; 2 2 1 ; 2 2 1",
    "the recomputed last block is not cached twice": "2 4 | 1 2 3 4 ; 1 2 3 4 ; 9 9 9 9 9 => 0 4 0 ; 2 2 0 ; 0 5 1",
    "the recomputed last block takes the request's last use":
        "2 4 | 1 2 3 4 ; 5 6 ; 1 2 3 4 ; 7 7 7 ; 1 2 3 4 0 ; 5 6 => 0 4 0 ; 0 2 0 ; 2 2 0 ; 0 3 1 ; 4 1 0 ; 0 2 0",
    "a request that fills the pool fits": "2 4 | 7 7 ; 1 2 3 4 5 6 7 => 0 2 0 ; 0 7 1",
    "a full-block request that fills the pool fits": "3 3 | 7 7 7 ; 1 2 3 4 5 6 7 8 9 => 0 3 0 ; 0 9 1",
    "one block more than the pool raises": "2 3 | 1 ; 1 2 3 4 5 6 7 => ValueError",
    "one full block more than the pool raises": "1 4 | 1 2 3 4 5 => ValueError",
    "a cached prefix does not make an oversized request fit": "2 3 | 1 2 3 4 ; 1 2 3 4 5 6 7 => ValueError",
}


def parse(text):
    head, _, rest = text.partition("|")
    block_size, num_blocks = map(int, head.split())
    requests, _, expected = rest.partition("=>")
    requests = [[int(t) for t in r.split()] for r in requests.split(";")]
    if expected.strip() == "ValueError":
        return requests, block_size, num_blocks, ValueError
    return requests, block_size, num_blocks, [tuple(map(int, e.split())) for e in expected.split(";")]


@pytest.mark.parametrize("name", SCENARIOS)
def test_worked_scenario(name):
    requests, block_size, num_blocks, want = parse(SCENARIOS[name])
    if want is ValueError:
        with pytest.raises(ValueError):
            simulate(requests, block_size=block_size, num_blocks=num_blocks)
    else:
        assert model(requests, block_size, num_blocks) == want  # the model agrees with the hand
        assert run(requests, block_size, num_blocks) == want


def random_sequence(rng, block_size, num_blocks, vocab):
    history = []
    while len(history) < 2 * num_blocks + block_size:
        fresh = [rng.randrange(vocab) for _ in range(rng.randint(1, 3 * block_size))]
        old = rng.choice(history) if history else fresh
        cut = rng.randint(1, len(old))
        request = rng.choice([fresh, old, old[:cut], old + fresh, old[block_size:] or fresh, rng.choice(history or [old])[:cut] + old[cut:]])
        if -(-len(request) // block_size) <= num_blocks:
            history.append(request)
    return history


@pytest.mark.parametrize("seed", range(6))
def test_random_sequences_follow_the_model(seed):
    rng = random.Random(seed)
    for _ in range(10):
        block_size, num_blocks, vocab = rng.randint(1, 3), rng.randint(2, 7), rng.randint(2, 6)
        requests = random_sequence(rng, block_size, num_blocks, vocab)
        assert run(requests, block_size, num_blocks) == model(requests, block_size, num_blocks)
