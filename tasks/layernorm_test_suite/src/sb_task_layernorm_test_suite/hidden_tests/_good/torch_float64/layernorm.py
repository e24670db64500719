"""Normalisation by torch's own kernels, run in float64 and rounded back to x's dtype."""
import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)  # small rows: a thread pool only adds waiting


def _t(a):
    return None if a is None else torch.from_numpy(np.array(a, dtype=np.float64))


def layer_norm(x, weight=None, bias=None, *, eps=1e-5):
    y = F.layer_norm(_t(x), (x.shape[-1],), _t(weight), _t(bias), eps=eps)
    return y.numpy().astype(x.dtype)


def rms_norm(x, weight=None, *, eps=1e-6):
    y = F.rms_norm(_t(x), (x.shape[-1],), _t(weight), eps=eps)
    return y.numpy().astype(x.dtype)
