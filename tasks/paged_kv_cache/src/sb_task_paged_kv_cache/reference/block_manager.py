"""A block manager for a paged KV cache with automatic prefix caching."""
import heapq
from collections import OrderedDict


class NoFreeBlocksError(RuntimeError):
    """The pool cannot supply the blocks a request needs; the manager is unchanged."""


class _Sequence:
    def __init__(self, tokens, table, keys):
        self.tokens = tokens  # every token of the sequence, prompt and generated
        self.table = table    # physical block ids, one per (possibly partial) logical block
        self.keys = keys      # the chain key of each FULL block, derived from the tokens


class BlockManager:
    def __init__(self, num_blocks, block_size):
        if num_blocks < 1 or block_size < 1:
            raise ValueError("num_blocks and block_size must be at least 1")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self._ref = [0] * num_blocks
        self._key = [None] * num_blocks        # the key a block is registered under, or None
        self._cache = {}                       # key -> the one block registered under it
        self._keyless_free = list(range(num_blocks))  # a heap: lowest id first
        self._cached_free = OrderedDict()      # free blocks with a key, least recently freed first
        self._seqs = {}

    # -- queries ---------------------------------------------------------------------------

    def num_free_blocks(self):
        return len(self._keyless_free) + len(self._cached_free)

    def block_table(self, seq_id):
        return list(self._seqs[seq_id].table)

    # -- operations --------------------------------------------------------------------------

    def allocate(self, seq_id, prompt):
        if seq_id in self._seqs:
            raise ValueError(f"sequence {seq_id!r} already exists")
        prompt = list(prompt)
        if not prompt:
            raise ValueError("the prompt is empty")
        size = self.block_size
        keys = self._chain_keys(prompt, [], 0)
        hits = []
        for key in keys[:(len(prompt) - 1) // size]:
            block = self._cache.get(key)
            if block is None:
                break
            hits.append(block)
        needed = -(-len(prompt) // size) - len(hits)
        available = self.num_free_blocks() - sum(1 for b in hits if self._ref[b] == 0)
        if needed > available:
            raise NoFreeBlocksError(f"need {needed} fresh blocks, {available} available")
        for block in hits:
            self._claim_cached(block)
        table = hits + [self._take_fresh() for _ in range(needed)]
        for i in range(len(hits), len(keys)):
            self._register(table[i], keys[i])
        self._seqs[seq_id] = _Sequence(prompt, table, keys)
        return list(table), len(hits) * size

    def append(self, seq_id, tokens):
        seq = self._seqs[seq_id]
        tokens = list(tokens)
        if not tokens:
            raise ValueError("no tokens to append")
        size, length = self.block_size, len(seq.tokens)
        copy_on_write = length % size != 0 and self._ref[seq.table[-1]] > 1
        new_blocks = -(-(length + len(tokens)) // size) - len(seq.table)
        needed = int(copy_on_write) + new_blocks
        if needed > self.num_free_blocks():
            raise NoFreeBlocksError(f"need {needed} fresh blocks, {self.num_free_blocks()} available")
        copies = []
        if copy_on_write:
            old, new = seq.table[-1], self._take_fresh()
            self._ref[old] -= 1
            seq.table[-1] = new
            copies.append((old, new))
        seq.table.extend(self._take_fresh() for _ in range(new_blocks))
        seq.tokens.extend(tokens)
        first_new = len(seq.keys)
        seq.keys = self._chain_keys(seq.tokens, seq.keys, first_new)
        for i in range(first_new, len(seq.keys)):
            self._register(seq.table[i], seq.keys[i])
        return copies

    def fork(self, parent_id, child_id):
        parent = self._seqs[parent_id]
        if child_id in self._seqs:
            raise ValueError(f"sequence {child_id!r} already exists")
        for block in parent.table:
            self._ref[block] += 1
        self._seqs[child_id] = _Sequence(list(parent.tokens), list(parent.table), list(parent.keys))

    def free(self, seq_id):
        seq = self._seqs.pop(seq_id)
        for block in reversed(seq.table):
            self._release(block)

    # -- internals ---------------------------------------------------------------------------

    def _chain_keys(self, tokens, keys, start):
        """The keys of every full block of `tokens`, extending `keys` (the first `start`)."""
        size = self.block_size
        keys = list(keys[:start])
        for i in range(start, len(tokens) // size):
            parent = keys[i - 1] if i else None
            keys.append((parent, tuple(tokens[i * size:(i + 1) * size])))
        return keys

    def _claim_cached(self, block):
        if self._ref[block] == 0:
            del self._cached_free[block]
        self._ref[block] += 1

    def _take_fresh(self):
        if self._keyless_free:
            block = heapq.heappop(self._keyless_free)
        else:
            block, _ = self._cached_free.popitem(last=False)
            del self._cache[self._key[block]]
            self._key[block] = None
        self._ref[block] = 1
        return block

    def _register(self, block, key):
        if key not in self._cache:
            self._cache[key] = block
            self._key[block] = key

    def _release(self, block):
        self._ref[block] -= 1
        if self._ref[block] == 0:
            if self._key[block] is None:
                heapq.heappush(self._keyless_free, block)
            else:
                self._cached_free[block] = None
