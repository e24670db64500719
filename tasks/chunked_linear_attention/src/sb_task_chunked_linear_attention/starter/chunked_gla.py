"""Gated linear attention in its chunked parallel form."""
import math

import torch


def chunked_gla(q, k, v, g, chunk_size, initial_state=None):
    """Return (o, final_state) computed chunk by chunk (see prompt.md)."""
    raise NotImplementedError
