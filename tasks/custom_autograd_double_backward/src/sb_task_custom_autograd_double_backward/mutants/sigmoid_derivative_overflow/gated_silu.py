"""A gated SiLU as a hand-written autograd Function that supports double backward."""
import torch


class GatedSiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, scale):
        # Save inputs only: anything computed here is a constant to autograd, so a gate
        # saved from forward would silently drop its dependence on x, w, b in the
        # second derivative. Backward recomputes it with differentiable ops instead.
        ctx.save_for_backward(x, w, b)
        ctx.scale = scale
        return x * torch.sigmoid(scale * (x * w + b))

    @staticmethod
    def backward(ctx, grad_out):
        x, w, b = ctx.saved_tensors
        scale = ctx.scale
        z = scale * (x * w + b)
        gate = torch.sigmoid(z)
        e = torch.exp(-z)
        dgate = e / (1 + e) ** 2  # d sigmoid(z) / dz
        through_gate = grad_out * x * dgate * scale
        grad_x = grad_out * gate + through_gate * w
        grad_w = through_gate * x
        grad_b = through_gate
        return (
            grad_x.sum_to_size(x.shape),
            grad_w.sum_to_size(w.shape),
            grad_b.sum_to_size(b.shape),
            None,
        )


def gated_silu(x, w, b, scale=1.0):
    return GatedSiLU.apply(x, w, b, scale)
