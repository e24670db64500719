"""A correct token_loss that also rejects arguments outside the documented domain (the
contract leaves them unspecified, so raising is one allowed behaviour), computed by
logsumexp with a per-row shift and a one-hot-plus-uniform target matrix."""
import numpy as np


def token_loss(logits, labels, *, ignore_index=-100, label_smoothing=0.0, reduction="mean", z_loss=0.0):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"bad reduction {reduction!r}")
    if not isinstance(logits, np.ndarray) or logits.ndim != 2 or logits.dtype not in (np.float32, np.float64):
        raise ValueError("logits must be a float32 or float64 array of shape (N, V)")
    if not np.all(np.isfinite(logits)):
        raise ValueError("logits must be finite")
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu" or labels.shape != logits.shape[:1]:
        raise ValueError("labels must be an integer array of shape (N,)")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError("label_smoothing must lie in [0, 1]")
    if not z_loss >= 0.0:
        raise ValueError("z_loss must be >= 0")
    n, vocab = logits.shape
    valid = labels != ignore_index
    if np.any(valid & ((labels < 0) | (labels >= vocab))):
        raise ValueError("label out of range")
    x = np.array(logits, dtype=np.float64)
    peak = np.max(x, axis=1)
    log_norm = np.log(np.sum(np.exp(x - peak[:, None]), axis=1))  # lse - peak, kept apart from peak
    lse = peak + log_norm
    target = np.full((n, vocab), label_smoothing / vocab)
    rows = np.flatnonzero(valid)
    target[rows, labels[rows]] += 1.0 - label_smoothing
    # sum_c q[c] = 1, so -sum_c q[c] * (x[c] - lse) = sum_c q[c] * (peak - x[c]) + log_norm
    cross = np.sum(target * (peak[:, None] - x), axis=1) + log_norm
    per = np.zeros(n)
    per[valid] = cross[valid] + z_loss * lse[valid] * lse[valid]
    if reduction == "none":
        return per.astype(logits.dtype)
    total = np.sum(per)
    if reduction == "mean":
        total = total / rows.size if rows.size else 0.0
    return logits.dtype.type(total)
