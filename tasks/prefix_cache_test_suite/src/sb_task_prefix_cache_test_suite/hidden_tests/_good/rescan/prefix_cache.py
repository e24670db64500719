"""A correct prefix cache by brute force: a flat list of cached blocks, each its whole prefix
and its last use, scanned from scratch for every question."""


def simulate(requests, *, block_size, num_blocks):
    entries = []  # [prefix as a list, last use]
    results = []
    for r, request in enumerate(requests):
        n = len(request)
        need_total = n // block_size + (1 if n % block_size else 0)
        if need_total > num_blocks:
            raise ValueError("too many blocks")

        def is_cached(prefix):
            return any(entry[0] == prefix for entry in entries)

        full = [list(request[:end]) for end in range(block_size, n + 1, block_size)]
        reusable = 0
        for prefix in full:
            if reusable * block_size >= n - 1 - (n - 1) % block_size or not is_cached(prefix):
                break
            reusable += 1
        evicted = 0
        while need_total - reusable > num_blocks - len(entries):
            best = None
            for entry in entries:
                if any(entry[0] == prefix for prefix in full[:reusable]):
                    continue
                if best is None or entry[1] < best[1] or (entry[1] == best[1] and len(entry[0]) > len(best[0])):
                    best = entry
            entries.remove(best)
            evicted += 1
        for prefix in full:
            for entry in entries:
                if entry[0] == prefix:
                    entry[1] = r
                    break
            else:
                entries.append([prefix, r])
        results.append(dict(evicted=evicted, computed=n - reusable * block_size, reused=reusable * block_size))
    return results
