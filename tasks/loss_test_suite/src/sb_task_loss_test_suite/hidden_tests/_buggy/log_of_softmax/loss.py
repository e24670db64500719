"""Token-level cross-entropy for language-model training: ignored positions, label
smoothing, a z-loss term and three reductions. A correct implementation: every rule in the
docstring is its contract."""
import numpy as np

REDUCTIONS = ("mean", "sum", "none")


def token_loss(logits, labels, *, ignore_index=-100, label_smoothing=0.0, reduction="mean", z_loss=0.0):
    """The training loss of N positions over a vocabulary of V classes.

    logits: numpy array (N, V), float32 or float64, finite. labels: integer numpy array (N,).
    A position whose label equals ignore_index is ignored: it contributes nothing and is not
    counted. Every other label must lie in [0, V); anything else raises ValueError (so does a
    reduction other than "mean", "sum" or "none").

    For a counted position with label y, eps = label_smoothing and z = z_loss:
        lse  = log(sum_c exp(logits[c]))          (computed stably, shifted by the row max)
        logp = logits - lse                        (log-softmax of the row)
        loss = -((1 - eps) * logp[y] + (eps / V) * sum_c logp[c]) + z * lse ** 2
    i.e. the target puts 1 - eps on the label plus eps / V on every class, the label included.

    reduction "none": an array (N,) of the per-position losses, 0 at ignored positions.
    reduction "sum": the sum over counted positions (0 when none is counted).
    reduction "mean": that sum divided by the number of counted positions (0 when none is).
    "sum" and "mean" return a numpy scalar; every result has the dtype of logits.
    The arguments are never modified.
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    dtype = logits.dtype
    labels = np.asarray(labels)
    n, vocab = logits.shape
    counted = labels != ignore_index
    if np.any(counted & ((labels < 0) | (labels >= vocab))):
        raise ValueError(f"labels must lie in [0, {vocab}) or equal ignore_index={ignore_index}")
    x = logits.astype(np.float64)  # a copy, so nothing below can write to the caller's logits
    top = x.max(axis=1, keepdims=True)
    shifted = x - top
    weights = np.exp(shifted)
    log_total = np.log(weights.sum(axis=1, keepdims=True))
    neg_logp = -np.log(weights / weights.sum(axis=1, keepdims=True))
    nll = neg_logp[np.arange(n), np.where(counted, labels, 0)]
    uniform = neg_logp.mean(axis=1)
    lse = (top + log_total)[:, 0]
    per_position = (1 - label_smoothing) * nll + label_smoothing * uniform + z_loss * lse * lse
    per_position = np.where(counted, per_position, 0.0)
    if reduction == "none":
        return per_position.astype(dtype)
    total = per_position.sum()
    if reduction == "sum":
        return dtype.type(total)
    count = int(counted.sum())
    return dtype.type(total / count if count else 0.0)
