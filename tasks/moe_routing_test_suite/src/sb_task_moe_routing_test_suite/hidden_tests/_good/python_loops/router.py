"""Top-k routing with capacity, token by token in plain Python."""
import math

import numpy as np


def route(logits, *, k, capacity):
    if np.ndim(logits) != 2:
        raise ValueError("logits must be 2-D")
    rows = [[float(x) for x in row] for row in logits]
    n_experts = len(rows[0]) if rows else 0
    for name, value in (("k", k), ("capacity", capacity)):  # the contract asks for ints: nothing else is guessed at
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int")
    if k < 1 or k > n_experts:
        raise ValueError("bad k")
    if capacity < 0:
        raise ValueError("bad capacity")
    if any(not math.isfinite(x) for row in rows for x in row):
        raise ValueError("non-finite logit")

    choices, gates = [], []
    for row in rows:
        best = []
        remaining = list(range(n_experts))
        for _ in range(k):  # repeated arg-max; the first maximum wins a tie
            pick = remaining[0]
            for e in remaining[1:]:
                if row[e] > row[pick]:
                    pick = e
            best.append(pick)
            remaining.remove(pick)
        top = row[best[0]]
        weights = [math.exp(row[e] - top) for e in best]
        total = math.fsum(weights)
        choices.append(best)
        gates.append([w / total for w in weights])

    slots = sorted(((rank, -gates[t][rank], t) for t in range(len(rows)) for rank in range(k)))
    experts = np.full((len(rows), k), -1, dtype=np.int64)
    kept = np.zeros((len(rows), k))
    used = {}
    for rank, _, t in slots:
        e = choices[t][rank]
        if used.get(e, 0) < capacity:
            used[e] = used.get(e, 0) + 1
            experts[t, rank] = e
            kept[t, rank] = gates[t][rank]
    return experts, kept
