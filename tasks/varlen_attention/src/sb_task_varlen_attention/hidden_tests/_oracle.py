"""Independent float64 oracle: dense masked attention over the WHOLE packed layout,
differentiated by torch autograd. It never splits work per sequence the way a solution
does: it writes down, pair by pair with Python loops, which packed key row each packed
query row may see, and then runs plain softmax attention per query head over all rows."""
import random

import torch


def visibility(cu_q, cu_k, causal, window):
    """(total_q, total_k) bool, built pair by pair from the definition in the prompt."""
    total_q, total_k = cu_q[-1], cu_k[-1]
    seen = torch.zeros(total_q, total_k, dtype=torch.bool)
    for s in range(len(cu_q) - 1):
        len_q, len_k = cu_q[s + 1] - cu_q[s], cu_k[s + 1] - cu_k[s]
        for i in range(len_q):
            p = len_k - len_q + i  # the query's position among its own sequence's keys
            for j in range(len_k):
                ok = (not causal or j <= p) and (window is None or j >= p - window + 1)
                seen[cu_q[s] + i, cu_k[s] + j] = ok
    return seen


def attention(q, k, v, dout, cu_q, cu_k, scale, causal, window):
    """out, lse, dq, dk, dv in float64 (whatever dtype the inputs have)."""
    q, k, v = (t.detach().to(torch.float64).requires_grad_(True) for t in (q, k, v))
    dout = dout.detach().to(torch.float64)
    n_heads, n_kv = q.shape[1], k.shape[1]
    group = n_heads // n_kv
    seen = visibility(cu_q, cu_k, causal, window)
    live = [t for t in range(seen.shape[0]) if bool(seen[t].any())]
    live_idx = torch.tensor(live, dtype=torch.long)
    outs, lses = [], []
    for h in range(n_heads):
        kv = h // group
        scores = scale * (q[:, h, :] @ k[:, kv, :].T)
        scores = scores.masked_fill(~seen, float("-inf"))[live_idx]
        row_lse = torch.logsumexp(scores, dim=-1)
        rows_out = torch.softmax(scores, dim=-1) @ v[:, kv, :]
        out_h = torch.zeros(q.shape[0], v.shape[2], dtype=torch.float64).index_copy(0, live_idx, rows_out)
        lse_h = torch.full((q.shape[0],), float("-inf"), dtype=torch.float64).index_copy(0, live_idx, row_lse)
        outs.append(out_h)
        lses.append(lse_h)
    out = torch.stack(outs, dim=1)
    lse = torch.stack(lses, dim=0)
    (out * dout).sum().backward()
    grads = [t.grad if t.grad is not None else torch.zeros_like(t) for t in (q, k, v)]
    return (out.detach(), lse.detach(), *grads)


def cu(lengths):
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    return offsets


def make_inputs(lens_q, lens_k, n_heads, n_kv, d, dv, seed, dtype=torch.float64):
    """Random q, k, v, dout for a packing; values are rounded to `dtype` first, so the
    float64 oracle differentiates exactly the numbers the solution is handed."""
    g = torch.Generator().manual_seed(seed)
    total_q, total_k = sum(lens_q), sum(lens_k)
    q = torch.randn(total_q, n_heads, d, generator=g, dtype=torch.float64) * 1.3
    k = torch.randn(total_k, n_kv, d, generator=g, dtype=torch.float64) * 1.3
    v = torch.randn(total_k, n_kv, dv, generator=g, dtype=torch.float64)
    dout = torch.randn(total_q, n_heads, dv, generator=g, dtype=torch.float64)
    return [t.to(dtype) for t in (q, k, v, dout)]


def random_case(seed):
    """A random packing: empty sequences, single rows, more queries than keys, GQA."""
    rng = random.Random(seed)
    batch = rng.randint(1, 5)
    lens_q, lens_k = [], []
    for _ in range(batch):
        kind = rng.random()
        if kind < 0.15:
            lens_q.append(rng.randint(0, 3)); lens_k.append(0)
        elif kind < 0.3:
            lens_q.append(0); lens_k.append(rng.randint(1, 6))
        elif kind < 0.5:
            n = rng.randint(1, 5); lens_q.append(n + rng.randint(1, 4)); lens_k.append(n)
        elif kind < 0.65:
            lens_q.append(1); lens_k.append(rng.randint(1, 12))
        else:
            n = rng.randint(1, 10); lens_q.append(rng.randint(1, n)); lens_k.append(n)
    if sum(lens_k) == 0 or sum(lens_q) == 0:  # at least one query row and one key row
        lens_q.append(1); lens_k.append(rng.randint(1, 4))
    n_kv = rng.choice([1, 2, 3])
    group = rng.choice([1, 2, 3, 4])
    return dict(
        lens_q=lens_q, lens_k=lens_k, n_heads=n_kv * group, n_kv=n_kv,
        d=rng.choice([3, 4, 8]), dv=rng.choice([2, 5]),
        scale=rng.uniform(0.2, 0.7), causal=rng.random() < 0.6,
        window=rng.choice([None, None, 1, 2, 3, 5]),
    )


def random_partition(total, seed, max_len=5):
    """Cut 0..total into consecutive runs of 1..max_len rows: [(start, stop), ...]."""
    rng = random.Random(seed)
    cuts, a = [], 0
    while a < total:
        b = min(total, a + rng.randint(1, max_len))
        cuts.append((a, b))
        a = b
    return cuts
