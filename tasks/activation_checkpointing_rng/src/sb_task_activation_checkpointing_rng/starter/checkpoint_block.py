"""Activation checkpointing for a residual MLP block with dropout."""
import torch


def checkpointed_mlp_block(x, w1, b1, w2, b2, p, generator, activation=torch.tanh):
    raise NotImplementedError
