"""Drives the solution's BlockManager as an inference server would, with a simulated KV store.

The store lives here, in the judge: one list of block_size slots per physical block. After
every operation the driver does what the prompt tells the caller to do with the returned
values -- apply the copy operations in order, then write each token that needs computing
into its slot through the sequence's block table -- and checks, from nothing but the
returned values, the properties any correct manager has:

- a slot's value is the token's whole prefix (a real key/value vector depends on every
  token before it), so a block shared or reused by mistake reads back the wrong prefix;
- every live sequence reads back exactly its own prefixes, after every operation;
- a block is written only when no other live sequence's table holds it;
- the free count is the number of blocks no live table holds;
- a refused request changes nothing (free count, tables, contents).
"""


class Driver:
    def __init__(self, manager, num_blocks, block_size, free_check_period=1):
        self.mgr = manager
        self.num_blocks = num_blocks
        self.size = block_size
        self.kv = {b: [None] * block_size for b in range(num_blocks)}
        self.tokens = {}   # seq_id -> the tokens the caller knows the sequence holds
        self.tables = {}   # seq_id -> the block table the manager last reported
        # num_free_blocks() costs a round trip to the solution: read it after every
        # `free_check_period`-th operation and after every refused request.
        self.free_check_period = free_check_period
        self.operations = 0

    # -- the caller's side of each operation -----------------------------------------------

    def allocate(self, seq_id, prompt):
        prompt = list(prompt)
        try:
            table, cached = self.mgr.allocate(seq_id, prompt)
        except RuntimeError:
            self._assert_unchanged()
            raise
        table, cached = [int(b) for b in table], int(cached)
        size = self.size
        assert len(table) == -(-len(prompt) // size), f"table {table} for a prompt of {len(prompt)} tokens"
        assert len(set(table)) == len(table), f"a block appears twice in one table: {table}"
        assert cached % size == 0 and 0 <= cached <= (len(prompt) - 1) // size * size, \
            f"cached token count {cached} for a prompt of {len(prompt)} tokens, block_size {size}"
        self.tokens[seq_id], self.tables[seq_id] = prompt, table
        for pos in range(cached, len(prompt)):
            self._write(seq_id, pos)
        self._check_all()
        return table, cached

    def append(self, seq_id, new_tokens):
        new_tokens = list(new_tokens)
        old_table = self.tables[seq_id]
        try:
            copies = self.mgr.append(seq_id, new_tokens)
        except RuntimeError:
            self._assert_unchanged()
            raise
        copies = [tuple(int(b) for b in op) for op in copies]
        table = [int(b) for b in self.mgr.block_table(seq_id)]
        old_len = len(self.tokens[seq_id])
        self.tokens[seq_id] = self.tokens[seq_id] + new_tokens
        self.tables[seq_id] = table
        assert len(table) == -(-len(self.tokens[seq_id]) // self.size), f"table {table} after append"
        assert len(set(table)) == len(table), f"a block appears twice in one table: {table}"
        assert table[:old_len // self.size] == old_table[:old_len // self.size], \
            f"full blocks changed by an append: {old_table} -> {table}"
        for src, dst in copies:
            assert dst in table and not self._held_by_others(seq_id, dst), \
                f"copy {src}->{dst}: the destination is not this sequence's own block"
            self.kv[dst] = list(self.kv[src])
        for pos in range(old_len, len(self.tokens[seq_id])):
            self._write(seq_id, pos)
        self._check_all()
        return copies

    def fork(self, parent_id, child_id):
        self.mgr.fork(parent_id, child_id)
        self.tokens[child_id] = list(self.tokens[parent_id])
        self.tables[child_id] = [int(b) for b in self.mgr.block_table(child_id)]
        assert self.tables[child_id] == self.tables[parent_id], "a forked child does not share every block"
        self._check_all()

    def free(self, seq_id):
        self.mgr.free(seq_id)
        del self.tokens[seq_id], self.tables[seq_id]
        self._check_all()

    # -- checks ------------------------------------------------------------------------------

    def sweep(self):
        """Every live table as the manager reports it now equals the one it last reported."""
        for seq_id, table in self.tables.items():
            assert [int(b) for b in self.mgr.block_table(seq_id)] == table, \
                f"sequence {seq_id!r}'s table changed without an operation on it"

    def _write(self, seq_id, pos):
        block = self.tables[seq_id][pos // self.size]
        assert not self._held_by_others(seq_id, block), \
            f"sequence {seq_id!r} must write position {pos} into block {block}, which another sequence holds"
        self.kv[block][pos % self.size] = tuple(self.tokens[seq_id][:pos + 1])

    def _held_by_others(self, seq_id, block):
        return any(block in table for other, table in self.tables.items() if other != seq_id)

    def check_free_count(self):
        held = set().union(*self.tables.values()) if self.tables else set()
        assert int(self.mgr.num_free_blocks()) == self.num_blocks - len(held), \
            f"num_free_blocks() is not the number of blocks no live sequence holds ({self.num_blocks - len(held)})"

    def _assert_unchanged(self):
        """The mirror is untouched by a refused request: the manager must agree with it."""
        self.check_free_count()
        self.sweep()

    def _check_all(self):
        self.operations += 1
        if self.operations % self.free_check_period == 0:
            self.check_free_count()
        self._check_contents()

    def _check_contents(self):
        for seq_id, tokens in self.tokens.items():
            table = self.tables[seq_id]
            for pos in range(len(tokens)):
                got = self.kv[table[pos // self.size]][pos % self.size]
                assert got == tuple(tokens[:pos + 1]), \
                    f"sequence {seq_id!r} reads back the wrong key/value at position {pos}"
