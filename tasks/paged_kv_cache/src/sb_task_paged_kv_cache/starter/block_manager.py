"""A block manager for a paged KV cache with automatic prefix caching (see the task)."""


class NoFreeBlocksError(RuntimeError):
    """The pool cannot supply the blocks a request needs; the manager is unchanged."""


class BlockManager:
    def __init__(self, num_blocks, block_size):
        raise NotImplementedError

    def allocate(self, seq_id, prompt):
        """Create `seq_id` from a non-empty prompt; return (block table, num_cached_tokens)."""
        raise NotImplementedError

    def append(self, seq_id, tokens):
        """Add tokens to `seq_id`; return the copy operations [(src, dst), ...] to apply first."""
        raise NotImplementedError

    def fork(self, parent_id, child_id):
        """Create `child_id` sharing every block of `parent_id`."""
        raise NotImplementedError

    def free(self, seq_id):
        """Remove `seq_id`, releasing its blocks from the end of its table to the start."""
        raise NotImplementedError

    def block_table(self, seq_id):
        raise NotImplementedError

    def num_free_blocks(self):
        raise NotImplementedError
