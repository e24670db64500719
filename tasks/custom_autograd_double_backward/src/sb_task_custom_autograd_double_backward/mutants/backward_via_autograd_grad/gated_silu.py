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
        with torch.enable_grad():
            y = x * torch.sigmoid(scale * (x * w + b))
            grads = torch.autograd.grad(y, (x, w, b), grad_out, create_graph=True)
        return (*grads, None)


def gated_silu(x, w, b, scale=1.0):
    return GatedSiLU.apply(x, w, b, scale)
