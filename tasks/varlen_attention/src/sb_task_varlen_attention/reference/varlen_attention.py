"""Attention over packed variable-length sequences: forward, and a hand-written backward
that can be run on any run of consecutive rows of the packed keys."""
import torch


def _offsets(cu_seqlens):
    return [int(n) for n in cu_seqlens.tolist()]


def _visible(len_q, len_k, key_lo, key_hi, causal, window):
    """(len_q, key_hi - key_lo) bool: which keys at positions key_lo..key_hi-1 each query
    sees. Queries are end-aligned: query i sits at position len_k - len_q + i."""
    q_pos = torch.arange(len_q)[:, None] + (len_k - len_q)
    k_pos = torch.arange(key_lo, key_hi)[None, :]
    mask = torch.ones(len_q, key_hi - key_lo, dtype=torch.bool)
    if causal:
        mask &= k_pos <= q_pos
    if window is not None:
        mask &= k_pos >= q_pos - window + 1
    return mask


def _per_query_head(x, group):
    """(rows, H_kv, d) -> (H, rows, d): query head h reads kv head h // group."""
    return x.transpose(0, 1).repeat_interleave(group, dim=0)


def varlen_attention_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, scale, causal=False, window=None):
    total_q, n_heads, _ = q.shape
    group = n_heads // k.shape[1]
    out = q.new_zeros(total_q, n_heads, v.shape[2])
    lse = q.new_full((n_heads, total_q), float("-inf"))
    cq, ck = _offsets(cu_seqlens_q), _offsets(cu_seqlens_k)
    for s in range(len(cq) - 1):
        q0, q1, k0, k1 = cq[s], cq[s + 1], ck[s], ck[s + 1]
        if q1 == q0 or k1 == k0:
            continue
        mask = _visible(q1 - q0, k1 - k0, 0, k1 - k0, causal, window)
        qs = q[q0:q1].transpose(0, 1)
        ks, vs = _per_query_head(k[k0:k1], group), _per_query_head(v[k0:k1], group)
        scores = (scale * (qs @ ks.transpose(1, 2))).masked_fill(~mask, float("-inf"))
        row_lse = torch.logsumexp(scores, dim=-1)
        probs = torch.where(mask, torch.exp(scores - row_lse[..., None]), 0.0)
        out[q0:q1] = (probs @ vs).transpose(0, 1)
        lse[:, q0:q1] = row_lse
    return out, lse


def varlen_attention_backward(q, k, v, out, lse, dout, cu_seqlens_q, cu_seqlens_k, scale,
                              causal=False, window=None, k_start=0):
    n_heads, n_kv = q.shape[1], k.shape[1]
    group = n_heads // n_kv
    n_rows = k.shape[0]
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    # D[h, t] = sum_j P[h, t, j] dP[h, t, j] = dout[t, h] . out[t, h], over ALL of the row's keys.
    delta = (dout * out).sum(-1).transpose(0, 1)
    cq, ck = _offsets(cu_seqlens_q), _offsets(cu_seqlens_k)
    for s in range(len(cq) - 1):
        q0, q1, k0, k1 = cq[s], cq[s + 1], ck[s], ck[s + 1]
        lo, hi = max(k0, k_start), min(k1, k_start + n_rows)
        if q1 == q0 or lo >= hi:
            continue
        mask = _visible(q1 - q0, k1 - k0, lo - k0, hi - k0, causal, window)
        rows = slice(lo - k_start, hi - k_start)
        qs, dos = q[q0:q1].transpose(0, 1), dout[q0:q1].transpose(0, 1)
        ks, vs = _per_query_head(k[rows], group), _per_query_head(v[rows], group)
        scores = scale * (qs @ ks.transpose(1, 2))
        probs = torch.where(mask, torch.exp(scores - lse[:, q0:q1, None]), 0.0)
        dprobs = dos @ vs.transpose(1, 2)
        dscores = probs * (dprobs - delta[:, q0:q1, None])
        dq[q0:q1] += (scale * (dscores @ ks)).transpose(0, 1)
        dk_heads = scale * (dscores.transpose(1, 2) @ qs)
        dv_heads = probs.transpose(1, 2) @ dos
        dk[rows] = dk_heads.reshape(n_kv, group, hi - lo, -1).sum(1).transpose(0, 1)
        dv[rows] = dv_heads.reshape(n_kv, group, hi - lo, -1).sum(1).transpose(0, 1)
    return dq, dk, dv
