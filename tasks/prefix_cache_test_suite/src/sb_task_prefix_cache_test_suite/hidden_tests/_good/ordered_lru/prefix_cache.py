"""A correct prefix cache on an OrderedDict kept in eviction order: a finished request moves
its full blocks to the end deepest first, so its first block ends up the most recent."""
from collections import OrderedDict


def simulate(requests, *, block_size, num_blocks):
    lru = OrderedDict()  # key: (parent key, block tokens) -> None, least recently used first
    results = []
    for request in requests:
        n = len(request)
        if (n + block_size - 1) // block_size > num_blocks:
            raise ValueError("a request needs more blocks than the pool holds")
        keys, parent = [], None
        for i in range(n // block_size):
            parent = (parent, tuple(request[i * block_size:(i + 1) * block_size]))
            keys.append(parent)
        matched = 0
        while matched < len(keys) and keys[matched] in lru:
            matched += 1
        if matched * block_size == n:
            matched -= 1  # the whole prompt is cached: its last block is computed again
        pinned = set(keys[:matched])
        want = (n + block_size - 1) // block_size - matched
        evicted = 0
        for key in list(lru):
            if want <= num_blocks - len(lru):
                break
            if key not in pinned:
                del lru[key]
                evicted += 1
        for key in reversed(keys):
            lru[key] = None
            lru.move_to_end(key)
        results.append({"reused": matched * block_size, "computed": n - matched * block_size,
                        "evicted": evicted})
    return results
