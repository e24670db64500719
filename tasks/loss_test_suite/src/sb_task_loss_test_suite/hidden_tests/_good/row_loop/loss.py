"""A correct token_loss written row by row in Python floats (float64), with math.fsum."""
import math

import numpy as np


def token_loss(logits, labels, *, ignore_index=-100, label_smoothing=0.0, reduction="mean", z_loss=0.0):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError("unknown reduction " + repr(reduction))
    vocab = logits.shape[1]
    label_list = [int(y) for y in np.asarray(labels).tolist()]
    for y in label_list:
        if y != ignore_index and not 0 <= y < vocab:
            raise ValueError(f"label {y} is outside [0, {vocab})")
    losses, count = [], 0
    for row, y in zip(logits.tolist(), label_list):
        if y == ignore_index:
            losses.append(0.0)
            continue
        count += 1
        top = max(row)
        log_total = math.log(math.fsum(math.exp(v - top) for v in row))
        minus_logp = [(top - v) + log_total for v in row]
        lse = top + log_total
        smooth = math.fsum(minus_logp) / vocab
        losses.append(math.fsum([(1.0 - label_smoothing) * minus_logp[y], label_smoothing * smooth,
                                 z_loss * lse * lse]))
    if reduction == "none":
        return np.array(losses, dtype=logits.dtype)
    total = math.fsum(losses)
    if reduction == "mean":
        total = total / count if count else 0.0
    return logits.dtype.type(total)
