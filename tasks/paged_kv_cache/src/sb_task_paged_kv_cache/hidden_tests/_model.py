"""A brute-force model of the block manager the prompt defines, written for clarity, not speed.

It shares no data structure with a real implementation: every lookup is a scan over all
blocks, a block's key is the flat tuple of ALL tokens up to the end of the block (equal
exactly when the chain keys of the prompt are equal), eviction order is an explicit
release counter, and atomicity is a snapshot restored when the pool runs dry part-way
through an operation (no up-front counting)."""
import copy


class OutOfBlocks(Exception):
    pass


class Model:
    def __init__(self, num_blocks, block_size):
        self.size = block_size
        self.ref = [0] * num_blocks
        self.key = [None] * num_blocks       # registered key (flat prefix tuple) or None
        self.freed_at = [None] * num_blocks  # release counter value when the block became free
        self.clock = 0
        self.seqs = {}                       # seq_id -> {"tokens": [...], "table": [...]}

    # -- helpers -------------------------------------------------------------------------

    def _full_keys(self, tokens):
        return [tuple(tokens[:(i + 1) * self.size]) for i in range(len(tokens) // self.size)]

    def _registered(self, key):
        owners = [b for b in range(len(self.ref)) if self.key[b] == key]
        assert len(owners) <= 1
        return owners[0] if owners else None

    def _fresh(self):
        free = [b for b in range(len(self.ref)) if self.ref[b] == 0]
        keyless = [b for b in free if self.key[b] is None]
        if keyless:
            block = min(keyless)
        elif free:
            block = min(free, key=lambda b: self.freed_at[b])
            self.key[block] = None
        else:
            raise OutOfBlocks()
        self.ref[block] = 1
        self.freed_at[block] = None
        return block

    def _register(self, block, key):
        if self._registered(key) is None:
            self.key[block] = key

    def _atomic(self, operation):
        saved = copy.deepcopy(self.__dict__)
        try:
            return operation()
        except OutOfBlocks:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    # -- operations ------------------------------------------------------------------------

    def num_free_blocks(self):
        return sum(1 for r in self.ref if r == 0)

    def block_table(self, seq_id):
        return list(self.seqs[seq_id]["table"])

    def allocate(self, seq_id, prompt):
        return self._atomic(lambda: self._allocate(seq_id, list(prompt)))

    def _allocate(self, seq_id, prompt):
        keys = self._full_keys(prompt)
        table = []
        for key in keys[:(len(prompt) - 1) // self.size]:
            block = self._registered(key)
            if block is None:
                break
            self.ref[block] += 1
            self.freed_at[block] = None
            table.append(block)
        hits = len(table)
        while len(table) * self.size < len(prompt):
            table.append(self._fresh())
        for i in range(hits, len(keys)):
            self._register(table[i], keys[i])
        self.seqs[seq_id] = {"tokens": prompt, "table": table}
        return list(table), hits * self.size

    def append(self, seq_id, tokens):
        return self._atomic(lambda: self._append(seq_id, list(tokens)))

    def _append(self, seq_id, tokens):
        seq = self.seqs[seq_id]
        copies = []
        table, old_len = seq["table"], len(seq["tokens"])
        if old_len % self.size and self.ref[table[-1]] >= 2:
            new = self._fresh()
            self.ref[table[-1]] -= 1
            copies.append((table[-1], new))
            table[-1] = new
        while len(table) * self.size < old_len + len(tokens):
            table.append(self._fresh())
        seq["tokens"] = seq["tokens"] + tokens
        keys = self._full_keys(seq["tokens"])
        for i in range(old_len // self.size, len(keys)):
            self._register(table[i], keys[i])
        return copies

    def fork(self, parent_id, child_id):
        parent = self.seqs[parent_id]
        for block in parent["table"]:
            self.ref[block] += 1
        self.seqs[child_id] = {"tokens": list(parent["tokens"]), "table": list(parent["table"])}

    def free(self, seq_id):
        seq = self.seqs.pop(seq_id)
        for block in seq["table"][::-1]:
            self.ref[block] -= 1
            if self.ref[block] == 0:
                self.clock += 1
                self.freed_at[block] = self.clock
