"""Top-k routing with capacity in torch, vectorised per rank."""
import numpy as np
import torch


def route(logits, *, k, capacity):
    x = torch.from_numpy(np.array(logits, dtype=np.float64, copy=True))
    if x.dim() != 2:
        raise ValueError("logits must be (T, E)")
    tokens, n_experts = x.shape
    if not (1 <= k <= n_experts) or capacity < 0:
        raise ValueError("k or capacity out of range")
    if not bool(torch.isfinite(x).all()):
        raise ValueError("non-finite logits")

    # torch.topk's order among equal values is unspecified: a stable sort fixes it
    values, index = torch.sort(x, dim=1, descending=True, stable=True)
    values, index = values[:, :k], index[:, :k]
    gates = torch.softmax(values, dim=1)

    experts = torch.full((tokens, k), -1, dtype=torch.int64)
    load = torch.zeros(n_experts, dtype=torch.int64)
    for rank in range(k):
        order = torch.sort(gates[:, rank], descending=True, stable=True).indices
        wanted = index[order, rank]
        one_hot = torch.nn.functional.one_hot(wanted, n_experts)
        position = (torch.cumsum(one_hot, dim=0) * one_hot).sum(dim=1) - 1  # place in this rank's queue
        accepted = load[wanted] + position < capacity
        experts[order[accepted], rank] = wanted[accepted]
        load += torch.bincount(wanted[accepted], minlength=n_experts)
    out = torch.where(experts >= 0, gates, torch.zeros_like(gates))
    return experts.numpy(), out.numpy()
