"""Seeded, table-driven toy language models served from the judge.

A model maps a prefix (bos followed by the generated tokens) to one row of log-probabilities
over the vocabulary, always the same row for the same prefix: each row is drawn from a
generator seeded by (seed, *prefix), so nothing depends on the order of the calls.
"""
import numpy as np


class NormalTable:
    """Normalised rows: log_softmax of normal logits, EOS pushed up as the prefix grows."""

    def __init__(self, seed, vocab_size, eos, scale=1.5, eos_bias=-1.0, eos_growth=0.4):
        self.seed, self.vocab_size, self.eos = seed, vocab_size, eos
        self.scale, self.eos_bias, self.eos_growth = scale, eos_bias, eos_growth

    def row(self, prefix):
        rng = np.random.default_rng([self.seed, *prefix])
        logits = rng.normal(0.0, self.scale, self.vocab_size)
        logits[self.eos] += self.eos_bias + self.eos_growth * len(prefix)
        shifted = logits - logits.max()
        return shifted - np.log(np.exp(shifted).sum())


class DyadicTable:
    """Unnormalised rows of multiples of -1/4: every sum is exact, so ties are exact."""

    def __init__(self, seed, vocab_size, eos, levels=4, eos_levels=None, allow_zero=False):
        self.seed, self.vocab_size, self.eos = seed, vocab_size, eos
        self.levels, self.eos_levels, self.allow_zero = levels, eos_levels, allow_zero

    def row(self, prefix):
        rng = np.random.default_rng([self.seed, *prefix])
        low = 0 if self.allow_zero else 1
        row = -rng.integers(low, low + self.levels, self.vocab_size) / 4.0
        if self.eos_levels is not None:
            row[self.eos] = -float(rng.integers(low, low + self.eos_levels)) / 4.0
        return row


class ExplicitTable:
    """Rows given by hand for some prefixes (generated tokens only), a default row elsewhere."""

    def __init__(self, rows, default, bos):
        self.rows = {tuple(k): np.asarray(v, dtype=np.float64) for k, v in rows.items()}
        self.default = np.asarray(default, dtype=np.float64)
        self.bos = bos
        self.vocab_size = len(default)

    def row(self, prefix):
        assert prefix[0] == self.bos
        return self.rows.get(tuple(prefix[1:]), self.default).copy()


class Recorder:
    """The judge's record of what the solution asked: one entry per call, its prefixes."""

    def __init__(self, model):
        self.model = model
        self.calls = []

    def __call__(self, prefixes):
        asked = [tuple(int(t) for t in prefix) for prefix in prefixes]
        self.calls.append(asked)
        rows = [self.model.row(prefix) for prefix in asked]
        return np.array(rows, dtype=np.float64).reshape(len(asked), self.model.vocab_size)
