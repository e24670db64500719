"""Probe: the four passes run in the solution's process on views of one batch array.

A training loop hands out slices of its own x and dy and reuses them in later passes; this
file does the same and reports what came back and what the arrays hold afterwards. The
bounds of every pass come from the judge; nothing here knows what any result should be.
"""
import numpy as np

from chunked_bn import ChunkedBatchNorm


def run(x, dy, gamma, beta, eps, accumulate, apply_forward, apply_backward):
    x, dy = np.array(x, copy=True), np.array(dy, copy=True)
    gamma, beta = np.array(gamma, copy=True), np.array(beta, copy=True)
    bn = ChunkedBatchNorm(gamma, beta, eps=eps)
    for lo, hi in accumulate:
        bn.forward_accumulate(x[lo:hi])
    ys = [bn.forward_apply(x[lo:hi]) for lo, hi in apply_forward]
    for lo, hi in accumulate:
        bn.backward_accumulate(x[lo:hi], dy[lo:hi])
    dxs = [bn.backward_apply(x[lo:hi], dy[lo:hi]) for lo, hi in apply_backward]
    views = [*ys, *dxs]
    shares = [isinstance(v, np.ndarray) and any(np.shares_memory(v, a) for a in (x, dy, gamma, beta)) for v in views]
    return {"ys": ys, "dxs": dxs, "grad_gamma": bn.grad_gamma(), "grad_beta": bn.grad_beta(),
            "x_after": x, "dy_after": dy, "gamma_after": gamma, "beta_after": beta, "shares": shares}


def forward_outputs(xs, gamma, beta, eps, chunks):
    """y of a fresh instance for each batch in xs (passes 1 and 2 over the same chunks)."""
    outputs = []
    for x in xs:
        bn = ChunkedBatchNorm(gamma, beta, eps=eps)
        for lo, hi in chunks:
            bn.forward_accumulate(x[lo:hi])
        outputs.append([bn.forward_apply(x[lo:hi]) for lo, hi in chunks])
    return outputs
