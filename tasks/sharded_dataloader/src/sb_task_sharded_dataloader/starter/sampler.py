"""A distributed batch sampler: every rank derives the same epoch order and takes a stride of it."""
import numpy as np


def epoch_order(num_samples, seed, epoch, shuffle=True):
    """The global order of one epoch, a function of its arguments only."""
    raise NotImplementedError


class ShardedSampler:
    """Yields this rank's batches of dataset indices for the current epoch."""

    def __init__(self, num_samples, *, world_size, rank, batch_size, seed=0, shuffle=True,
                 drop_last=False):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def set_epoch(self, epoch):
        raise NotImplementedError

    def __iter__(self):
        raise NotImplementedError

    def state_dict(self):
        raise NotImplementedError

    def load_state_dict(self, state):
        raise NotImplementedError
