"""Shared simulation and statistics for the speculative-decoding hidden tests.

The toy "models" are Markov: the distribution at position j depends only on j and
on the token at position j-1.  Context index: 0 for position 0, and
1 + (j - 1) * V + previous_token for position j >= 1.  That keeps every context
well populated while still making the target depend on the prefix (which is what
exposes an implementation that keeps going after a rejection).

Statistics: every check compares a count with its exact expectation through the
Chernoff (relative-entropy) bound P(N * KL(phat || p) >= t, one side) <= exp(-t).
With M Bernoulli cells tested two-sided, a test fails a correct implementation
with probability at most 2 * M * exp(-t); we set t = log(2 * M / ALPHA) with
ALPHA = 1e-7 per test.  The bound is rigorous (no normal approximation), and it
stays valid although the number of rounds reaching a context is itself random:
given which rounds reach a context, the emitted tokens there are i.i.d. draws.
"""
import math

import numpy as np

from sb.judge import probe

V = 4
K = 3
ALPHA = 1e-7  # false-failure probability per statistical test (6 such tests: 6e-7 in all)

# Target distributions, one row per context (positions 0..K).
TARGET = np.array([
    [0.45, 0.05, 0.35, 0.15],  # position 0
    [0.05, 0.60, 0.15, 0.20],  # position 1 after token 0
    [0.50, 0.10, 0.10, 0.30],
    [0.20, 0.05, 0.05, 0.70],
    [0.10, 0.20, 0.60, 0.10],
    [0.70, 0.10, 0.10, 0.10],  # position 2 after token 0
    [0.00, 0.40, 0.30, 0.30],
    [0.25, 0.25, 0.40, 0.10],
    [0.15, 0.15, 0.15, 0.55],
    [0.10, 0.10, 0.70, 0.10],  # position 3 (bonus) after token 0
    [0.60, 0.20, 0.10, 0.10],
    [0.05, 0.80, 0.05, 0.10],
    [0.30, 0.30, 0.10, 0.30],
])

# Draft distributions, one row per context (positions 0..K-1).
DRAFT = np.array([
    [0.15, 0.40, 0.10, 0.35],  # position 0
    [0.30, 0.30, 0.30, 0.10],  # position 1 after token 0
    [0.10, 0.50, 0.20, 0.20],
    [0.25, 0.25, 0.25, 0.25],
    [0.40, 0.00, 0.40, 0.20],
    [0.20, 0.30, 0.20, 0.30],  # position 2 after token 0
    [0.30, 0.30, 0.30, 0.10],
    [0.50, 0.10, 0.30, 0.10],
    [0.10, 0.40, 0.10, 0.40],
])


def context(position, previous_token):
    return 0 if position == 0 else 1 + (position - 1) * V + int(previous_token)


def contexts_at(position):
    if position == 0:
        return [0]
    return [context(position, a) for a in range(V)]


def sample_rows(probs, uniforms):
    """Vectorised inverse-CDF sampling: one token per row of `probs`."""
    cdf = np.cumsum(probs, axis=1)
    idx = (uniforms[:, None] * cdf[:, -1:] >= cdf).sum(axis=1)
    return np.minimum(idx, probs.shape[1] - 1)


def draw_drafts(rounds, k, seed):
    """Draft tokens sampled from DRAFT, plus each round's per-position contexts."""
    rng = np.random.default_rng(seed)
    tokens = np.zeros((rounds, k), dtype=np.int64)
    ctx = np.zeros((rounds, k + 1), dtype=np.int64)
    for j in range(k):
        tokens[:, j] = sample_rows(DRAFT[ctx[:, j]], rng.random(rounds))
        ctx[:, j + 1] = 1 + j * V + tokens[:, j]
    return tokens, ctx


def simulate(rounds, k=K, draft_seed=0, verify_seed=1, global_seed=None):
    """`rounds` independent verifications sharing one Generator, run in the solution's
    process by the probe (one proxy round trip in all). The drafts and probability rows
    are made here; the probe only calls verify_draft. Returns (draft tokens, the list of
    outputs, the probe's observations)."""
    tokens, ctx = draw_drafts(rounds, k, draft_seed)
    draft_probs = DRAFT[ctx[:, :k]]
    target_probs = TARGET[ctx]
    return run(tokens, draft_probs, target_probs, verify_seed, global_seed)


def run(tokens, draft_probs, target_probs, verify_seed, global_seed=None):
    """Send arrays to the probe; split its flat token list back into one list per round."""
    obs = probe("_probe_rounds.py").run_rounds(tokens, draft_probs, target_probs, verify_seed, global_seed)
    lengths = [int(n) for n in obs["lengths"]]
    assert len(lengths) == tokens.shape[0] and sum(lengths) == obs["tokens"].shape[0]
    flat = obs["tokens"].tolist()
    edges = np.cumsum([0] + lengths)
    outputs = [flat[a:b] for a, b in zip(edges[:-1], edges[1:])]
    return tokens, outputs, obs


_CACHE = {}


def main_run():
    """The shared 20000-round simulation (computed once per test session)."""
    if "main" not in _CACHE:
        _CACHE["main"] = simulate(rounds=20000)
    return _CACHE["main"]


def emitted_counts(outputs, k=K):
    """counts[c, x]: how often token x was emitted in context c (emitted prefix)."""
    counts = np.zeros((len(TARGET), V), dtype=np.int64)
    for out in outputs:
        for j, tok in enumerate(out[: k + 1]):
            if 0 <= tok < V:
                counts[context(j, out[j - 1] if j else 0), tok] += 1
    return counts


def acceptance_counts(outputs, k=K):
    """reached[c], accepted[c] for draft positions 0..k-1."""
    reached = np.zeros(len(DRAFT), dtype=np.int64)
    accepted = np.zeros(len(DRAFT), dtype=np.int64)
    for out in outputs:
        for j in range(min(len(out), k)):
            c = context(j, out[j - 1] if j else 0)
            reached[c] += 1
            accepted[c] += len(out) > j + 1
    return reached, accepted


def bernoulli_kl(phat, p):
    """KL(Bernoulli(phat) || Bernoulli(p)), +inf where phat is impossible under p."""
    phat = np.asarray(phat, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(phat > 0, phat * np.log(phat / p), 0.0)
        b = np.where(phat < 1, (1 - phat) * np.log((1 - phat) / (1 - p)), 0.0)
    return a + b


def chernoff_check(successes, trials, expected, what):
    """Assert every Bernoulli cell is consistent with its expected rate.

    successes, trials, expected: equal-shape arrays, one entry per cell.
    Cells with no trials carry no evidence and are skipped.
    """
    successes = np.asarray(successes, dtype=np.float64).ravel()
    trials = np.asarray(trials, dtype=np.float64).ravel()
    expected = np.asarray(expected, dtype=np.float64).ravel()
    live = trials > 0
    cells = int(live.sum())
    assert cells > 0, f"{what}: no observations"
    threshold = math.log(2 * cells / ALPHA)
    stat = trials[live] * bernoulli_kl(successes[live] / trials[live], expected[live])
    worst = int(np.argmax(stat))
    assert stat[worst] < threshold, (
        f"{what}: cell {np.flatnonzero(live)[worst]} observed "
        f"{int(successes[live][worst])}/{int(trials[live][worst])} "
        f"(rate {successes[live][worst] / trials[live][worst]:.4f}) but the guarantee "
        f"gives {expected[live][worst]:.4f}; N*KL = {stat[worst]:.1f} >= {threshold:.1f} "
        f"(a correct implementation exceeds this with probability < {ALPHA:g})"
    )
    return float(stat.max()), threshold


def check_contexts(counts, ctxs, what):
    """Chernoff check of emitted-token frequencies in the given contexts."""
    ctxs = list(ctxs)
    sub = counts[ctxs]
    trials = np.repeat(sub.sum(axis=1, keepdims=True), V, axis=1)
    return chernoff_check(sub, trials, TARGET[ctxs], what)
