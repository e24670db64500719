"""A correct prefix cache kept as a trie of blocks: a node per full block, its children keyed by
the next block's tokens, so a node stands for the whole prefix from the root to it."""


class _Node:
    __slots__ = ("parent", "children", "depth", "cached", "last_use")

    def __init__(self, parent):
        self.parent, self.children = parent, {}
        self.depth = 0 if parent is None else parent.depth + 1
        self.cached, self.last_use = False, -1


def _ceil_div(a, b):
    return (a + b - 1) // b


def simulate(requests, *, block_size, num_blocks):
    root, cached_nodes, out = _Node(None), set(), []
    for index, request in enumerate(requests):
        tokens = list(request)
        total = _ceil_div(len(tokens), block_size)
        if total > num_blocks:
            raise ValueError("request does not fit in the pool")
        chain, node = [], root
        for start in range(0, len(tokens) - block_size + 1, block_size):
            node = node.children.setdefault(tuple(tokens[start:start + block_size]), _Node(node))
            chain.append(node)
        hits = 0
        for node in chain:
            if not node.cached:
                break
            hits += 1
        keep = min(hits, (len(tokens) - 1) // block_size)
        pinned = set(map(id, chain[:keep]))
        free = num_blocks - len(cached_nodes)
        shortfall = total - keep - free
        evicted = 0
        while shortfall > 0:
            victim = min((n for n in cached_nodes if id(n) not in pinned), key=lambda n: (n.last_use, -n.depth))
            victim.cached = False
            cached_nodes.discard(victim)
            shortfall -= 1
            evicted += 1
        for node in chain:
            node.cached, node.last_use = True, index
            cached_nodes.add(node)
        out.append({"reused": keep * block_size, "computed": len(tokens) - keep * block_size, "evicted": evicted})
    return out
