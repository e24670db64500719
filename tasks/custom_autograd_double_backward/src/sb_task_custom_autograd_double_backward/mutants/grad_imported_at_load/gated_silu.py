"""A gated SiLU as a hand-written autograd Function that supports double backward."""
import torch
from torch.autograd import grad


class GatedSiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, scale):
        # Save inputs only; backward rebuilds the forward from them.
        ctx.save_for_backward(x, w, b)
        ctx.scale = scale
        return x * torch.sigmoid(scale * (x * w + b))

    @staticmethod
    def backward(ctx, grad_out):
        x, w, b = ctx.saved_tensors
        scale = ctx.scale
        # Keep the graph of the gradients only when someone will differentiate them again.
        need_graph = torch.is_grad_enabled()
        with torch.enable_grad():
            leaves = [t if t.requires_grad else t.detach().requires_grad_(True) for t in (x, w, b)]
            y = leaves[0] * torch.sigmoid(scale * (leaves[0] * leaves[1] + leaves[2]))
            grads = grad(y, leaves, grad_out, create_graph=need_graph)
        return (*grads, None)


def gated_silu(x, w, b, scale=1.0):
    return GatedSiLU.apply(x, w, b, scale)
