"""Independent oracles for the CTC tests (judge side only).

Two of them, neither sharing code with any solution:

- `enumerate_sequence`: every path of length T over C classes, collapsed by the CTC rule
  (merge runs, drop blanks) and kept when it equals the labels. Loss and gradient follow
  straight from the definition: p = sum of path probabilities, loss = -log p, and
  d loss / d log_probs[t, c] = -(sum of P(path) over kept paths with path[t] = c) / p.
- `torch_reference`: torch.nn.functional.ctc_loss in float64. Its loss is the oracle's
  loss. Its autograd gradient assumes log_softmax inputs: for a leaf log_probs, at
  t < input_length, it returns w * (exp(log_probs) - gamma) where the definition here asks
  for -w * gamma (checked against finite differences of torch's float64 forward loss when
  this task was written; the solution meets both oracles and finite differences). So w * exp(log_probs) is subtracted back, over the
  valid steps of the finite sequences only. Where log_probs is -inf the true gradient is 0
  (every path through it has probability 0) and torch computes -inf - (-inf) = nan, so
  those entries are set to 0; sequences with no alignment are given gradient 0 by the
  definition (torch leaves nan there), so their gradient is set to 0 too.
"""
import itertools

import numpy as np
import torch

F = torch.nn.functional


def collapse(path, blank):
    out, prev = [], None
    for c in path:
        if c != prev and c != blank:
            out.append(c)
        prev = c
    return tuple(out)


def enumerate_sequence(log_probs, labels, blank):
    """(loss, grad) of one sequence from all C**T paths; log_probs is (T, C) float64."""
    steps, classes = log_probs.shape
    labels = tuple(int(x) for x in labels)
    kept = [p for p in itertools.product(range(classes), repeat=steps)
            if collapse(p, blank) == labels]
    grad = np.zeros((steps, classes))
    if not kept:
        return np.inf, grad
    paths = np.array(kept)
    path_lp = log_probs[np.arange(steps)[None, :], paths].sum(axis=1)
    weights = np.exp(path_lp)
    total = weights.sum()
    if total == 0.0:
        return np.inf, grad
    for t in range(steps):
        np.add.at(grad[t], paths[:, t], -weights / total)
    return -np.log(total), grad


def reduction_weights(target_lengths, reduction, batch):
    if reduction == "mean":
        return 1.0 / (batch * np.maximum(np.asarray(target_lengths, dtype=np.float64), 1.0))
    return np.ones(batch)


def enumerate_batch(log_probs, labels, input_lengths, blank, reduction, zero_infinity):
    """The whole batch by enumeration: (loss, grad) as the prompt defines them, float64."""
    steps, batch, classes = log_probs.shape
    losses = np.zeros(batch)
    grad = np.zeros((steps, batch, classes))
    for n in range(batch):
        length = int(input_lengths[n])
        losses[n], grad[:length, n] = enumerate_sequence(
            log_probs[:length, n].astype(np.float64), labels[n], blank)
        if zero_infinity and np.isinf(losses[n]):
            losses[n] = 0.0
    if reduction == "none":
        return losses, grad
    w = reduction_weights([len(x) for x in labels], reduction, batch)
    return np.sum(losses * w), grad * w[None, :, None]


def padded_targets(labels, width, fill):
    """(N, width) int64 targets; entries past each length hold `fill` (an int or an array)."""
    out = np.empty((len(labels), width), dtype=np.int64)
    out[:] = fill
    for n, lab in enumerate(labels):
        out[n, :len(lab)] = lab
    return out


def torch_reference(log_probs, labels, input_lengths, blank, reduction, zero_infinity):
    """(loss, grad) in float64 from torch's ctc_loss, the gradient corrected as above."""
    x = np.array(log_probs, dtype=np.float64)
    steps, batch, _ = x.shape
    valid = np.arange(steps)[:, None] < np.asarray(input_lengths)[None, :]
    x = np.where(valid[..., None], x, 0.0)  # padding steps: torch never reads them; keep them finite
    width = max([len(lab) for lab in labels] + [1])
    targets = torch.from_numpy(padded_targets(labels, width, blank))
    il = torch.tensor(np.asarray(input_lengths), dtype=torch.long)
    tl = torch.tensor([len(lab) for lab in labels], dtype=torch.long)
    w = reduction_weights(tl.numpy(), reduction, batch)
    leaf = torch.from_numpy(x).requires_grad_()
    losses = F.ctc_loss(leaf, targets, il, tl, blank=blank, reduction="none")
    (losses * torch.from_numpy(w)).sum().backward()
    finite = np.isfinite(losses.detach().numpy())
    if reduction == "none":
        loss = np.where(finite | (not zero_infinity), losses.detach().numpy(), 0.0)
    else:
        loss = F.ctc_loss(torch.from_numpy(x), targets, il, tl, blank=blank, reduction=reduction,
                          zero_infinity=zero_infinity).numpy()
    grad = leaf.grad.numpy().copy()
    keep = valid[..., None] & finite[None, :, None]
    grad -= np.where(keep, w[None, :, None] * np.exp(x), 0.0)
    grad[np.isneginf(x) | ~keep] = 0.0
    return loss, grad


def finite_difference(log_probs, labels, input_lengths, blank, reduction, h=1e-5):
    """Central differences of torch's float64 forward loss, entry by entry (finite sequences)."""
    x = np.array(log_probs, dtype=np.float64)
    width = max([len(lab) for lab in labels] + [1])
    targets = torch.from_numpy(padded_targets(labels, width, blank))
    il = torch.tensor(np.asarray(input_lengths), dtype=torch.long)
    tl = torch.tensor([len(lab) for lab in labels], dtype=torch.long)

    def f(z):
        return F.ctc_loss(torch.from_numpy(z), targets, il, tl, blank=blank,
                          reduction=reduction).item()

    grad = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        grad[idx] = (f(up) - f(down)) / (2 * h)
    return grad
