"""Activation checkpointing for a residual MLP block with dropout."""
import torch


def _block(x, w1, b1, w2, b2, p, generator, activation):
    a = activation(x @ w1.T + b1)
    keep = torch.rand(a.shape, generator=generator, dtype=torch.float32) >= p
    dropped = a * keep.to(a.dtype) / (1.0 - p)
    return x + dropped @ w2.T + b2


class _CheckpointedBlock(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w1, b1, w2, b2, p, generator, activation):
        # Stash the state BEFORE the mask is drawn: backward replays from here.
        ctx.rng_state = generator.get_state()
        ctx.p, ctx.generator, ctx.activation = p, generator, activation
        ctx.save_for_backward(x, w1, b1, w2, b2)
        return _block(x, w1, b1, w2, b2, p, generator, activation)

    @staticmethod
    def backward(ctx, grad_y):
        inputs = [t.detach().requires_grad_(True) for t in ctx.saved_tensors]
        generator = ctx.generator
        state_on_entry = generator.get_state()
        generator.set_state(ctx.rng_state)
        try:
            with torch.enable_grad():
                y = _block(*inputs, ctx.p, generator, ctx.activation)
        finally:
            # Whatever was drawn since forward must not be disturbed by the replay.
            generator.set_state(state_on_entry)
        grads = torch.autograd.grad(y, inputs, grad_y)
        grads = [g if need else None for g, need in zip(grads, ctx.needs_input_grad)]
        return (*grads, None, None, None)


def checkpointed_mlp_block(x, w1, b1, w2, b2, p, generator, activation=torch.tanh):
    if p < 0.0 or p >= 1.0:
        raise ValueError(f"dropout probability must lie in [0, 1), got {p}")
    return _CheckpointedBlock.apply(x, w1, b1, w2, b2, p, generator, activation)
