"""Beam search with a length penalty and an exact stopping rule."""
import numpy as np  # noqa: F401  (numpy and the standard library are allowed)


def beam_search(step, bos, eos, num_beams, max_new_tokens, length_penalty):
    """Return [(tokens, score), ...]: the best finished hypotheses, best first."""
    raise NotImplementedError
