"""A distributed batch sampler: every rank derives the same epoch order and takes a stride of it."""
import numpy as np


def epoch_order(num_samples, seed, epoch, shuffle=True):
    """The global order of one epoch, a function of (seed, epoch) only.

    A generator kept across epochs would make a resumed job (or a rank that skipped an
    epoch) disagree with the others; seeding afresh from the pair cannot drift.
    """
    if not shuffle:
        return list(range(num_samples))
    return np.random.default_rng([seed, epoch]).permutation(num_samples).tolist()


class ShardedSampler:
    """Yields this rank's batches of dataset indices for the current epoch."""

    def __init__(self, num_samples, *, world_size, rank, batch_size, seed=0, shuffle=True,
                 drop_last=False):
        if num_samples < 1 or world_size < 1 or batch_size < 1:
            raise ValueError("num_samples, world_size and batch_size must be positive")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} outside [0, {world_size})")
        self.num_samples = num_samples
        self.world_size = world_size
        self.rank = rank
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.epoch = 0
        self.batches_consumed = 0

    def __len__(self):
        """Batches per epoch: the same on every rank."""
        per_step = self.world_size * self.batch_size
        if self.drop_last:
            return self.num_samples // per_step
        return -(-self.num_samples // per_step)

    def set_epoch(self, epoch):
        self.epoch = epoch
        self.batches_consumed = 0

    def _rank_indices(self):
        order = epoch_order(self.num_samples, self.seed, self.epoch, self.shuffle)
        total = len(self) * self.world_size * self.batch_size
        # wrap around from the START of the order, as many times as a tiny dataset needs
        padded = [order[i % len(order)] for i in range(total)]
        return padded[self.rank::self.world_size]

    def __iter__(self):
        mine = self._rank_indices()
        for b in range(self.batches_consumed, len(self)):
            self.batches_consumed = b + 1
            yield mine[b * self.batch_size:(b + 1) * self.batch_size]

    def state_dict(self):
        return {"epoch": self.epoch, "batches_consumed": self.batches_consumed, "seed": self.seed,
                "rank": self.rank, "world_size": self.world_size}

    def load_state_dict(self, state):
        self.epoch = int(state["epoch"])
        self.batches_consumed = int(state["batches_consumed"])
