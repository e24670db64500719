"""CTC loss and its gradient with respect to log_probs, by hand, in numpy."""
import numpy as np

NEG_INF = -np.inf


def _labels(targets, target_lengths):
    """Each sequence's labels, cut from the padded or concatenated targets."""
    targets = np.asarray(targets)
    lengths = [int(n) for n in target_lengths]
    if targets.ndim == 2:
        return [targets[n, :length] for n, length in enumerate(lengths)]
    starts = np.concatenate([[0], np.cumsum(lengths)])
    return [targets[starts[n]:starts[n] + lengths[n]] for n in range(len(lengths))]


def _extended(labels, blank):
    """blank, l1, blank, l2, ..., blank: 2L+1 states."""
    ext = np.full(2 * len(labels) + 1, blank, dtype=np.int64)
    ext[1::2] = labels
    return ext


def _skip_allowed(ext, blank):
    """State s may be entered from s-2 when it is a label unlike the label two back."""
    skip = np.zeros(len(ext), dtype=bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    return skip


def _forward(emit, skip):
    """alpha[t, s]: log probability of the first t+1 steps ending in state s (emission at t included)."""
    steps, states = emit.shape
    alpha = np.full((steps, states), NEG_INF)
    alpha[0, :2] = emit[0, :2]
    for t in range(1, steps):
        prev = alpha[t - 1]
        total = prev.copy()
        total[1:] = np.logaddexp(total[1:], prev[:-1])
        total[2:] = np.where(skip[2:], np.logaddexp(total[2:], prev[:-2]), total[2:])
        alpha[t] = total + emit[t]
    return alpha


def _backward(emit, skip):
    """beta[t, s]: log probability of steps t+1.. given state s at t (emission at t excluded)."""
    steps, states = emit.shape
    beta = np.full((steps, states), NEG_INF)
    beta[steps - 1, max(states - 2, 0):] = 0.0
    for t in range(steps - 2, -1, -1):
        nxt = beta[t + 1] + emit[t + 1]
        total = nxt.copy()
        total[:-1] = np.logaddexp(total[:-1], nxt[1:])
        total[:-2] = np.where(skip[2:], np.logaddexp(total[:-2], nxt[2:]), total[:-2])
        beta[t] = total
    return beta


def _sequence(log_probs, labels, blank):
    """(loss, d loss / d log_probs) of one sequence; log_probs is (T_n, C) float64."""
    ext = _extended(labels, blank)
    skip = _skip_allowed(ext, blank)
    emit = log_probs[:, ext]
    alpha = _forward(emit, skip)
    log_p = np.logaddexp.reduce(alpha[-1, max(len(ext) - 2, 0):])
    grad = np.zeros_like(log_probs)
    if log_p == NEG_INF:
        return np.inf, grad
    occupancy = np.exp(alpha + _backward(emit, skip) - log_p)
    steps = np.arange(log_probs.shape[0])[:, None]
    np.add.at(grad, (np.broadcast_to(steps, occupancy.shape), np.broadcast_to(ext, occupancy.shape)),
              -occupancy)
    return -log_p, grad


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
             reduction="mean", zero_infinity=False):
    """Return (loss, grad): the reduced CTC loss and its gradient with respect to log_probs."""
    log_probs = np.asarray(log_probs)
    dtype = log_probs.dtype
    steps, batch, _ = log_probs.shape
    labels = _labels(targets, target_lengths)
    losses = np.zeros(batch)
    grad = np.zeros(log_probs.shape)
    for n in range(batch):
        length = int(input_lengths[n])
        lp = log_probs[:length, n].astype(np.float64)
        losses[n], grad[:length, n] = _sequence(lp, labels[n], blank)
        if zero_infinity and np.isinf(losses[n]):
            losses[n] = 0.0
    if reduction == "none":
        return losses.astype(dtype), grad.astype(dtype)
    weights = np.ones(batch)
    if reduction == "mean":
        weights = 1.0 / (batch * np.maximum(np.asarray(target_lengths, dtype=np.float64), 1.0))
    loss = np.asarray(np.sum(losses * weights), dtype=dtype)
    return loss, (grad * weights[None, :, None]).astype(dtype)
