"""A correct token_loss whose log-softmax and logsumexp run in the logits' own dtype; the
weighting, z term and reduction run in float64."""
import numpy as np


def token_loss(logits, labels, *, ignore_index=-100, label_smoothing=0.0, reduction="mean", z_loss=0.0):
    if reduction not in {"mean", "sum", "none"}:
        raise ValueError(f"reduction {reduction!r} is not mean, sum or none")
    y = np.asarray(labels, dtype=np.int64)
    rows, vocab = logits.shape
    keep = y != ignore_index
    if not np.all(((y >= 0) & (y < vocab))[keep]):
        raise ValueError("a label outside [0, V) that is not ignore_index")
    row_max = np.max(logits, axis=1, keepdims=True)
    centred = logits - row_max  # in the logits' dtype; a new array
    log_norm = np.log(np.sum(np.exp(centred), axis=1, keepdims=True))
    logp = (centred - log_norm).astype(np.float64)
    lse = (row_max + log_norm).astype(np.float64)[:, 0]
    picked = np.take_along_axis(logp, np.where(keep, y, 0)[:, None], axis=1)[:, 0]
    per = -(1 - label_smoothing) * picked - label_smoothing * logp.mean(axis=1) + z_loss * lse * lse
    per[~keep] = 0.0
    if reduction == "none":
        return per.astype(logits.dtype)
    kept = int(np.count_nonzero(keep))
    total = float(np.sum(per))
    if reduction == "mean":
        total = total / kept if kept else 0.0
    return logits.dtype.type(total)
