"""Continuous batching: one engine step at a time, with a paged KV budget, chunked prefill
and preemption by recomputation."""
from collections import deque

import numpy as np


def sample(logits, seed, index):
    """The index-th generated token of a request with this seed (the prompt's rule)."""
    u = np.random.default_rng([seed, index]).random(len(logits))
    return int(np.argmax(logits - np.log(-np.log(u))))


class _Request:
    def __init__(self, request_id, prompt, max_new_tokens, stop_token, seed):
        self.id = request_id
        self.prompt = list(prompt)
        self.max_new_tokens = max_new_tokens
        self.stop_token = stop_token
        self.seed = seed
        self.generated = []
        self.computed = 0          # leading context tokens whose KV is in the cache

    def context(self):
        return self.prompt + self.generated

    def wanted(self):
        return len(self.prompt) + len(self.generated) - self.computed


class Engine:
    def __init__(self, model, *, block_size, num_blocks, token_budget):
        self.model = model
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.token_budget = token_budget
        self.waiting = deque()
        self.running = []          # in arrival order (admission keeps it so: see _schedule)

    def add_request(self, request_id, prompt, max_new_tokens, stop_token, seed):
        self.waiting.append(_Request(request_id, prompt, max_new_tokens, stop_token, seed))

    def _blocks(self, tokens):
        return -(-tokens // self.block_size)

    def _free(self, planned):
        """Free blocks once every running request holds the cache for what it is planned to feed."""
        return self.num_blocks - sum(self._blocks(r.computed + planned.get(r, 0)) for r in self.running)

    def _schedule(self):
        """The running requests first, in arrival order, preempting the latest-arrived one while
        blocks are short; then, in a step without preemption, the waiting queue in order."""
        budget, planned, preempted = self.token_budget, {}, []
        i = 0
        while i < len(self.running):
            req = self.running[i]
            n = min(req.wanted(), budget)
            lacking = self._blocks(req.computed + n) - self._blocks(req.computed)
            while req in self.running and lacking > self._free(planned):
                victim = self.running.pop()
                victim.computed = 0
                self.waiting.appendleft(victim)
                preempted.append(victim.id)
            if req in self.running:
                planned[req] = n
                budget -= n
            i += 1
        while not preempted and self.waiting and budget > 0:
            req = self.waiting[0]
            n = min(req.wanted(), budget)
            if self._blocks(n) > self._free(planned):
                break
            self.running.append(self.waiting.popleft())
            planned[req] = n
            budget -= n
        return planned, preempted

    def step(self):
        planned, preempted = self._schedule()
        emitted = {}
        if planned:
            batch = [(req.id, req.computed, req.context()[req.computed:req.computed + n]) for req, n in planned.items()]
            rows = self.model(batch)
            for (req, n), row in zip(planned.items(), rows):
                req.computed += n
                if req.wanted() == 0:
                    self._sample(req, np.asarray(row, dtype=np.float64), emitted)
        return {"emitted": emitted, "preempted": preempted}

    def _sample(self, req, row, emitted):
        token = sample(row, req.seed, len(req.generated))
        req.generated.append(token)
        emitted[req.id] = token
        if token == req.stop_token or len(req.generated) == req.max_new_tokens:
            self.running.remove(req)   # its blocks are free from the next step on
