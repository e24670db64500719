"""A gated SiLU as a hand-written autograd Function that supports double backward."""
import torch


class GatedSiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, scale):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_out):
        raise NotImplementedError


def gated_silu(x, w, b, scale=1.0):
    raise NotImplementedError
