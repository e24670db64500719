"""Prefix caching of KV blocks in an inference server, simulated one request at a time.
A correct implementation: the rules in the docstring below are its contract."""


def simulate(requests, *, block_size, num_blocks):
    """Run `requests` (lists of token ids) through a prefix cache of `num_blocks` KV blocks of
    `block_size` tokens each; one dict per request: {"reused", "computed", "evicted"}.

    Requests run one after another: each starts after the previous one has finished and
    released its blocks. A request of n tokens occupies ceil(n / block_size) blocks while it
    runs; block i holds its tokens [i * block_size, (i + 1) * block_size), and is full when
    it holds block_size tokens (only the last block can be partial).

    Identity: a full block is identified by its whole prefix, tokens[: (i + 1) * block_size]
    (its own tokens and every token before it). Only full blocks are ever cached.

    Reuse: H is the number of leading full blocks of the request that are all cached
    (counting stops at the first one that is not). The request reuses the first
    R = min(H, (n - 1) // block_size) of them, so at least one token is computed: a prompt
    that is cached to its end recomputes its last block. reused = R * block_size tokens,
    computed = n - reused.

    Room: the request needs ceil(n / block_size) - R blocks besides the R it reuses. When
    fewer blocks are free, it evicts just as many cached blocks as are missing, chosen among
    the cached blocks other than the R it reuses: least recently used first, a block's last
    use being the latest earlier request that had it among its full blocks; among blocks
    with the same last use, the one with the longer prefix first. "evicted" counts them.

    Finish: every full block of the request is cached afterwards, with this request as its
    last use. A newly computed full block whose identity is still cached (the recomputed
    last block of a fully cached prompt) is not cached twice: the cached one stays. The
    partial block, if any, is freed.

    A request that needs more than num_blocks blocks raises ValueError: the whole call
    raises. Requests hold at least one token; block_size and num_blocks are at least 1.
    """
    cache = {}  # prefix (tuple) of a cached full block -> index of its last use
    results = []
    for index, request in enumerate(requests):
        tokens = tuple(request)
        n = len(tokens)
        blocks = -(-n // block_size)
        if blocks > num_blocks:
            raise ValueError(f"request {index} needs {blocks} blocks; the pool has {num_blocks}")
        prefixes = [tokens[: (i + 1) * block_size] for i in range(n // block_size)]
        hits = 0
        while hits < len(prefixes) and prefixes[hits] in cache:
            hits += 1
        reused = min(hits, (n - 1) // block_size)
        held = set(prefixes[:reused])
        missing = max(0, blocks - reused - (num_blocks - len(cache)))
        candidates = sorted((p for p in cache if p not in held), key=lambda p: (cache[p], -len(p)))
        for prefix in candidates[:missing]:
            del cache[prefix]
        for prefix in prefixes:
            cache[prefix] = index
        results.append({"reused": reused * block_size, "computed": n - reused * block_size, "evicted": missing})
    return results
