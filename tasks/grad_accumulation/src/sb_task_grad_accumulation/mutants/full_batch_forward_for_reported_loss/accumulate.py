"""One optimiser step on a batch, computed from micro-batches."""
import torch


def accumulation_step(model, optimizer, loss_fn, inputs, targets, micro_batch_size):
    if micro_batch_size < 1:
        raise ValueError(f"micro_batch_size must be at least 1, got {micro_batch_size}")
    batch_size = inputs.shape[0]
    optimizer.zero_grad()
    for start in range(0, batch_size, micro_batch_size):
        stop = min(start + micro_batch_size, batch_size)
        loss = loss_fn(model(inputs[start:stop]), targets[start:stop])
        (loss * ((stop - start) / batch_size)).backward()
    with torch.no_grad():
        full_batch_loss = loss_fn(model(inputs), targets).item()
    optimizer.step()
    return full_batch_loss
