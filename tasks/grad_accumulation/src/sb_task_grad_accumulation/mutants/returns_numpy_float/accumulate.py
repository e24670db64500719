"""One optimiser step on a batch, computed from micro-batches."""
import numpy as np


def accumulation_step(model, optimizer, loss_fn, inputs, targets, micro_batch_size):
    if micro_batch_size < 1:
        raise ValueError(f"micro_batch_size must be at least 1, got {micro_batch_size}")
    batch_size = inputs.shape[0]
    optimizer.zero_grad()
    losses, sizes = [], []
    for start in range(0, batch_size, micro_batch_size):
        stop = min(start + micro_batch_size, batch_size)
        loss = loss_fn(model(inputs[start:stop]), targets[start:stop])
        # loss_fn averages over its own micro-batch; weighting by this micro-batch's share
        # of the batch turns the sum of the pieces into the full-batch mean, even when the
        # last micro-batch is short.
        share = (stop - start) / batch_size
        (loss * share).backward()
        losses.append(loss.item())
        sizes.append(stop - start)
    optimizer.step()
    return np.average(losses, weights=sizes)
