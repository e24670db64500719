"""The judge's side of continuous_batching: the model the engine drives, a brute-force
decoder that runs one request alone, and a replay of the stated scheduling policy.

Nothing here runs in the solution's process. The model is served from the judge: every
batch the engine runs is a call here, recorded, so the schedule (who ran, from which
position, how many tokens) is the judge's own observation, not the solution's word."""
import random

import numpy as np

VOCAB = 16
_MOD = (1 << 61) - 1
_HOLE = 1                  # a position the engine never wrote reads as this, unlike any token


def _context_key(codes):
    key = 7
    for code in codes:
        key = (key * 1_000_003 + code) % _MOD
    return (key * 31 + len(codes)) % _MOD


def logits_of(context):
    """Next-token logits after this whole context: a fixed pseudo-random function of every
    (position, token) pair, so a context that differs anywhere gives other logits."""
    return logits_of_codes([t + 2 for t in context])


def logits_of_codes(codes):
    return np.random.default_rng(_context_key(codes)).normal(0.0, 1.5, VOCAB)


def sample_token(logits, seed, index):
    """The prompt's sampling rule, written out once more here: Gumbel-max with the noise of
    generator default_rng([seed, index])."""
    gen = np.random.default_rng([seed, index])
    noise = -np.log(-np.log(gen.random(VOCAB)))
    return int(np.argmax(np.asarray(logits, dtype=np.float64) + noise))


def decode_alone(prompt, max_new_tokens, stop_token, seed):
    """Brute force: the request decoded by itself, the whole context fed at every token."""
    out = []
    while len(out) < max_new_tokens:
        token = sample_token(logits_of(list(prompt) + out), seed, len(out))
        out.append(token)
        if token == stop_token:
            break
    return out


class KVModel:
    """The model the engine drives. It keeps, per request id, the token written at each
    position; a batch entry (request_id, start, tokens) writes tokens[j] at position start+j
    and gets the logits after positions 0 .. start+len(tokens)-1 of that store. A position
    never written is a hole and reads as no token at all."""

    def __init__(self):
        self.store = {}
        self.step = None
        self.calls = []        # (step, [(request_id, start, tokens), ...]) in call order
        self.refused = []      # entries that were not (str, int >= 0, non-empty list of tokens)

    def __call__(self, batch):
        entries = [self._entry(item) for item in list(batch)]
        self.calls.append((self.step, entries))
        rows = []
        for request_id, start, tokens in entries:
            slots = self.store.setdefault(request_id, {})
            for j, token in enumerate(tokens):
                slots[start + j] = token
            codes = [slots[p] + 2 if p in slots else _HOLE for p in range(start + len(tokens))]
            rows.append(logits_of_codes(codes))
        return np.array(rows, dtype=np.float64).reshape(len(entries), VOCAB)

    def _entry(self, item):
        try:
            request_id, start, tokens = item
            tokens = [int(t) for t in list(tokens)]
            start = int(start)
            if not isinstance(request_id, str) or start < 0 or not tokens:
                raise ValueError
            return request_id, start, tokens
        except (TypeError, ValueError):
            self.refused.append(repr(item))
            return "<refused>", 0, [0]


def _blocks(tokens, block_size):
    return (tokens + block_size - 1) // block_size


def replay(requests, block_size, num_blocks, token_budget):
    """The stated policy, step by step, as a brute-force simulation.

    requests: list of dicts (id, arrival, prompt, max_new_tokens, stop_token, seed), in
    arrival order (add_request order). Returns a list of per-step records, each
    {"batch": {id: (start, n_tokens)}, "preempted": [ids], "emitted": {id: token},
    "blocks_after": {id: blocks held}}, up to the step in which the last request finished."""
    state = {r["id"]: {"req": r, "gen": [], "kv": 0, "done": False, "resumed": False} for r in requests}
    order = [r["id"] for r in requests]
    waiting, running, steps = [], [], []
    t = 0
    while True:
        for r in requests:
            if r["arrival"] == t:
                waiting.append(r["id"])
        if not waiting and not running and all(s["done"] for s in state.values()):
            break
        held = {rid: _blocks(state[rid]["kv"], block_size) for rid in running}
        budget, batch, preempted, events = token_budget, {}, [], set()

        def total(rid):
            return len(state[rid]["req"]["prompt"]) + len(state[rid]["gen"])

        # running requests, in arrival order, take their share of the budget first
        for rid in sorted(running, key=order.index):
            if rid not in running:
                break
            if budget <= 0:
                events.add("budget_starved")
                break
            s = state[rid]
            n = min(total(rid) - s["kv"], budget)
            while _blocks(s["kv"] + n, block_size) - held[rid] > num_blocks - sum(held.values()):
                victim = max(running, key=order.index)
                running.remove(victim)
                del held[victim]
                state[victim]["kv"] = 0
                waiting.insert(0, victim)
                preempted.append(victim)
                state[victim]["resumed"] = bool(state[victim]["gen"])
                if victim == rid:
                    events.add("self_preempt")
                    break
                events.add("preempt_other")
            if rid not in running:
                break
            held[rid] = _blocks(s["kv"] + n, block_size)
            batch[rid] = (s["kv"], n)
            budget -= n
        if len(preempted) > 1:
            events.add("multi_preempt")
        if preempted and waiting and budget > 0:
            head_n = min(total(waiting[0]), budget)
            if _blocks(head_n, block_size) <= num_blocks - sum(held.values()):
                events.add("admission_held_by_preemption")
        # then the waiting queue, first come first served, only in a step without preemption
        while not preempted and waiting and budget > 0:
            rid = waiting[0]
            n = min(total(rid), budget)
            if _blocks(n, block_size) > num_blocks - sum(held.values()):
                if any(_blocks(min(total(w), budget), block_size) <= num_blocks - sum(held.values())
                       for w in waiting[1:]):
                    events.add("head_of_line")
                break
            if state[rid]["resumed"] and n < total(rid):
                events.add("recompute_chunked")
            waiting.pop(0)
            running.append(rid)
            held[rid] = _blocks(n, block_size)
            batch[rid] = (0, n)
            budget -= n
        emitted = {}
        for rid, (start, n) in batch.items():
            s = state[rid]
            s["kv"] = start + n
            if s["kv"] < total(rid):
                continue
            r = s["req"]
            token = sample_token(logits_of(r["prompt"] + s["gen"]), r["seed"], len(s["gen"]))
            s["gen"].append(token)
            emitted[rid] = token
            was_resumed, s["resumed"] = s["resumed"], False
            if token == r["stop_token"] or len(s["gen"]) == r["max_new_tokens"]:
                if was_resumed:
                    events.add("resume_finish_stop" if token == r["stop_token"] else "resume_finish_max")
                s["done"] = True
                running.remove(rid)
                del held[rid]
        assert sum(held.values()) <= num_blocks
        steps.append({"batch": batch, "preempted": preempted, "emitted": emitted, "blocks_after": dict(held),
                      "events": events})
        t += 1
    return steps


def outputs_of(steps):
    out = {}
    for record in steps:
        for rid, token in record["emitted"].items():
            out.setdefault(rid, []).append(token)
    return out


def random_trace(seed, block_size, num_blocks, n_requests, span, max_prompt=18, max_new=12):
    """Requests in arrival order: prompt + max_new_tokens always fits the whole cache."""
    rnd = random.Random(seed)
    capacity = num_blocks * block_size
    requests = []
    for _ in range(n_requests):
        prompt_len = rnd.randint(1, min(max_prompt, capacity - 1))
        requests.append({"arrival": rnd.randint(0, span),
                         "prompt": [rnd.randrange(VOCAB) for _ in range(prompt_len)],
                         "max_new_tokens": rnd.randint(1, min(max_new, capacity - prompt_len)),
                         "stop_token": rnd.randrange(VOCAB),
                         "seed": rnd.randrange(1 << 31)})
    requests.sort(key=lambda r: r["arrival"])
    for i, r in enumerate(requests):
        r["id"] = f"req-{i}"
    return requests
