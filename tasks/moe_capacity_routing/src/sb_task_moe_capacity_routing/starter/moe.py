"""Mixture-of-experts layer with top-k routing, expert capacity and a load-balancing loss.

Forward and a hand-written backward, numpy only (see the task description).
"""
import math

import numpy as np


def route(x, w_router, k, capacity_factor):
    """Return (experts, gates, slots), each of shape (T, k)."""
    raise NotImplementedError


def moe_forward(x, w_router, w_experts, b_experts, k, capacity_factor, aux_coef):
    """Return (y, aux): y of shape (T, h) in x's dtype, aux a Python float."""
    raise NotImplementedError


def moe_backward(x, w_router, w_experts, b_experts, k, capacity_factor, aux_coef, dy):
    """Return (dx, dw_router, dw_experts, db_experts) for L = sum(dy * y) + aux."""
    raise NotImplementedError
