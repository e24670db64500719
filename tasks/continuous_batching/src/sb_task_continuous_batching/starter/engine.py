"""Continuous batching: one engine step at a time, with a paged KV budget, chunked prefill
and preemption by recomputation."""
import numpy as np


def sample(logits, seed, index):
    """The index-th generated token of a request with this seed (the prompt's rule)."""
    u = np.random.default_rng([seed, index]).random(len(logits))
    return int(np.argmax(logits - np.log(-np.log(u))))


class Engine:
    def __init__(self, model, *, block_size, num_blocks, token_budget):
        raise NotImplementedError

    def add_request(self, request_id, prompt, max_new_tokens, stop_token, seed):
        raise NotImplementedError

    def step(self):
        raise NotImplementedError
