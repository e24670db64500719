"""Models, trees, rounds and statistics for the tree-verification hidden tests.

The toy models are autoregressive tables: the distribution of the next token is a row
chosen by the whole path of tokens before it (up to 3 tokens), for the target and the
draft alike. Each row is a vector of integers over GRID, so the exact values are known as
fractions; the solution receives them as float64 (k / GRID).

A *scenario* is a vocabulary, a pair of tables and a tree shape (a parent array). One
round: the judge draws the tokens of every node (children of a node i.i.d. from the
draft row of its path, in node order), the probe calls verify_tree once with those rows,
and the judge reads back the kept path and the final token.

Statistics (each test fails a correct implementation, whatever order it draws its random
numbers in, with probability below about ALPHA = 1e-7):

* Joint test (the guarantee). The emitted tokens are completed to LENGTH tokens by
  sampling the target (judge's own generator); if the guarantee holds, every completed
  sequence is an exact draw from the target's joint distribution over V**LENGTH
  sequences. The histogram is compared with that exact joint by a likelihood-ratio (G)
  test against its chi-square reference, at the 1 - ALPHA quantile. Cells of expected
  count below 5 are pooled into one (itself kept at 5 or more), the usual condition for
  the chi-square approximation; it is an approximation, so the level is about ALPHA, not
  a bound (120 such tests of correct implementations with other seeds gave p-values
  spread evenly over (0, 1), the smallest 0.009). The margin is wide: every wrong version
  in mutants/ that this test catches drives p below 1e-12.
* Keep rates and reach (the efficiency requirement and the walk). For every internal node
  of the shape, every token path to it and every child index: the number of rounds that
  reached that child and the number that kept it, against the exact optimal keep
  probability; and for every node and token path, the number of rounds whose walk reached
  it, against the exact probability (the rounds are the trials). Each count is checked by
  the Chernoff (relative-entropy) bound P(n * KL(phat || p) >= t, one side) <= exp(-t),
  union-bounded over all cells and both sides: t = log(2 * cells / ALPHA). This bound is
  rigorous, and holds although the number of rounds reaching a child is random: given
  which rounds reach it, the keep events there are independent draws.
"""
import math
from fractions import Fraction

import numpy as np

from sb.judge import probe

ALPHA = 1e-7  # false-failure probability per statistical test
GRID = 40  # table rows are integer vectors summing to GRID
LENGTH = 4  # emitted tokens are completed to this length (tree depth 3 + final token)
MAX_PATH = LENGTH - 1  # longest path a row is keyed by


# --------------------------------------------------------------------------- tables

class Tables:
    """Target and draft rows for every token path of length 0..MAX_PATH over V tokens."""

    def __init__(self, vocab, target_counts, draft_counts):
        self.V = vocab
        self.offset = [sum(vocab ** i for i in range(length)) for length in range(MAX_PATH + 2)]
        self.target_counts = np.asarray(target_counts, dtype=np.int64)
        self.draft_counts = np.asarray(draft_counts, dtype=np.int64)
        assert self.target_counts.shape == (self.offset[-1], vocab)
        assert (self.target_counts.sum(axis=1) == GRID).all()
        assert (self.draft_counts.sum(axis=1) == GRID).all()
        self.target = self.target_counts / GRID
        self.draft = self.draft_counts / GRID

    @classmethod
    def single_row(cls, target, draft):
        """Tables whose every row is `target` / `draft` (counts over GRID)."""
        rows = sum(len(target) ** i for i in range(MAX_PATH + 1))
        return cls(len(target), np.tile(target, (rows, 1)), np.tile(draft, (rows, 1)))

    def ctx(self, path):
        """Row index of a token path."""
        code = 0
        for tok in path:
            code = code * self.V + int(tok)
        return self.offset[len(path)] + code

    def child_ctx(self, ctx, depth, tok):
        """Row index of a path of `depth` tokens (row `ctx`) extended by `tok` (vectorised)."""
        return self.offset[depth + 1] + (ctx - self.offset[depth]) * self.V + tok

    def joint(self):
        """The target's exact probability of each of the V**LENGTH sequences (float64,
        indexed by the base-V code of the sequence)."""
        probs = np.ones(1)
        ctxs = np.zeros(1, dtype=np.int64)
        for depth in range(LENGTH):
            rows = self.target[ctxs]  # (prefixes, V)
            probs = (probs[:, None] * rows).ravel()
            if depth + 1 < LENGTH:
                ctxs = self.child_ctx(np.repeat(ctxs, self.V), depth, np.tile(np.arange(self.V), ctxs.size))
        return probs


def to_counts(rng, probs):
    """Round rows of probabilities to integers summing to GRID, keeping every zero a zero
    and every non-zero entry at least 1 (the remainder goes to random tokens of the support)."""
    out = np.zeros(probs.shape, dtype=np.int64)
    for r, row in enumerate(probs):
        live = np.flatnonzero(row > 0)
        counts = np.zeros(row.size, dtype=np.int64)
        counts[live] = np.maximum(1, np.floor(row[live] * GRID)).astype(np.int64)
        while counts.sum() > GRID:
            counts[live[np.argmax(counts[live])]] -= 1
        while counts.sum() < GRID:
            counts[live[rng.integers(live.size)]] += 1
        out[r] = counts
    return out


def random_rows(rng, rows, vocab, shape, zero_share):
    """Random distributions with some exact zeros (never all zero)."""
    support = rng.random((rows, vocab)) >= zero_share
    support[np.arange(rows), rng.integers(vocab, size=rows)] = True
    weights = rng.gamma(shape, size=(rows, vocab)) * support
    return weights / weights.sum(axis=1, keepdims=True)


def make_tables(vocab, seed, rows=None, equal_paths=()):
    """A target table with zeros, and a draft with zeros of its own: on most rows a mixture
    of the target row and an unrelated row (so keep rates are spread over (0, 1)), on the
    others the unrelated row alone. `rows` sets {path: (target counts, draft counts)} by
    hand; on `equal_paths` the draft row is the target row exactly."""
    rng = np.random.default_rng(seed)
    n_rows = sum(vocab ** i for i in range(MAX_PATH + 1))
    target = random_rows(rng, n_rows, vocab, shape=2.0, zero_share=0.2)
    other = random_rows(rng, n_rows, vocab, shape=1.0, zero_share=0.3)
    mix = np.where(rng.random((n_rows, 1)) < 0.75, rng.uniform(0.3, 0.8, size=(n_rows, 1)), 0.0)
    target_counts = to_counts(rng, target)
    draft_counts = to_counts(rng, mix * target_counts / GRID + (1 - mix) * other)
    tables = Tables(vocab, target_counts, draft_counts)
    for path, (target_row, draft_row) in (rows or {}).items():
        target_counts[tables.ctx(path)] = target_row
        draft_counts[tables.ctx(path)] = draft_row
    for path in equal_paths:
        draft_counts[tables.ctx(path)] = target_counts[tables.ctx(path)]
    return Tables(vocab, target_counts, draft_counts)


# --------------------------------------------------------------------------- scenarios

class Scenario:
    def __init__(self, name, tables, parents):
        self.name = name
        self.tables = tables
        self.V = tables.V
        self.parents = np.asarray(parents, dtype=np.int64)
        self.N = self.parents.size
        self.children = [[] for _ in range(self.N)]
        for v in range(1, self.N):
            assert 0 <= self.parents[v] < v
            self.children[self.parents[v]].append(v)
        self.depth = np.zeros(self.N, dtype=np.int64)
        for v in range(1, self.N):
            self.depth[v] = self.depth[self.parents[v]] + 1
        assert self.depth.max() <= MAX_PATH

    def draw(self, rounds, seed):
        """Every round's node tokens (root: -1) and every node's row index (its token path)."""
        rng = np.random.default_rng(seed)
        tokens = np.full((rounds, self.N), -1, dtype=np.int64)
        ctx = np.zeros((rounds, self.N), dtype=np.int64)
        for v in range(1, self.N):
            parent = self.parents[v]
            tokens[:, v] = sample_rows(self.tables.draft[ctx[:, parent]], rng.random(rounds))
            ctx[:, v] = self.tables.child_ctx(ctx[:, parent], self.depth[parent], tokens[:, v])
        return tokens, ctx


def sample_rows(probs, uniforms):
    """Inverse-CDF sampling, one token per row; never a token of probability zero."""
    cdf = np.cumsum(probs, axis=1)
    idx = (uniforms[:, None] * cdf[:, -1:] >= cdf).sum(axis=1)
    last_live = probs.shape[1] - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)
    return np.minimum(idx, last_live)


# Shapes. Children of a node are taken in increasing node index.
#   MIXED_BFS (numbered breadth first): root -> 1, 2, 3; 1 -> 4, 5, 6; 2 -> 7, 8;
#   4 -> 9; 5 -> 10, 11; 7 -> 12, 13, 14; childless: 3 (depth 1), 6 and 8 (depth 2),
#   9..14 (depth 3).
MIXED_BFS = [-1, 0, 0, 0, 1, 1, 1, 2, 2, 4, 5, 5, 7, 7, 7]
#   MIXED_DFS (numbered depth first, so siblings are not contiguous): root -> 1, 6, 9;
#   1 -> 2, 4, 5; 2 -> 3; 6 -> 7, 8; 9 -> 10, 12; 10 -> 11; childless: 3 and 11 (depth 3),
#   4, 5, 7, 8 and 12 (depth 2).
MIXED_DFS = [-1, 0, 1, 2, 1, 1, 0, 6, 6, 0, 9, 10, 9]
CHAIN = [-1, 0, 1, 2]


def scenarios():
    return {
        # V = 4. At the root the residual left after each rejected child is a different
        # distribution (keep rates 0.6, 0.3, 0.17); after the path (1,) the draft equals the
        # target, so that node's first child must always be kept.
        "mixed_bfs": Scenario("mixed_bfs", make_tables(
            4, seed=11, rows={(): ([16, 12, 8, 4], [4, 8, 12, 16])}, equal_paths=[(1,)]), MIXED_BFS),
        # V = 3 with a draft that prefers a token the target rarely emits at the root, so
        # siblings often share a token that is not kept; after the path (0, 2) draft = target.
        "mixed_dfs": Scenario("mixed_dfs", make_tables(
            3, seed=23, rows={(): ([20, 14, 6], [6, 12, 22])}, equal_paths=[(0, 2)]), MIXED_DFS),
        "chain": Scenario("chain", make_tables(4, seed=37), CHAIN),
    }


# --------------------------------------------------------------------------- rounds

class Rounds:
    """One batch of rounds: the judge's draws and what verify_tree returned for each."""

    def __init__(self, scenario, tokens, ctx, obs):
        self.scenario = scenario
        self.tokens, self.ctx, self.obs = tokens, ctx, obs
        lengths = [int(n) for n in obs["path_lengths"]]
        flat = [int(v) for v in obs["path_nodes"]]
        assert len(lengths) == tokens.shape[0] and sum(lengths) == len(flat)
        edges = np.cumsum([0] + lengths)
        self.paths = [flat[a:b] for a, b in zip(edges[:-1], edges[1:])]
        self.finals = [int(t) for t in obs["final_tokens"]]

    def emitted(self, r):
        """The tokens round r emitted: its kept nodes' tokens, then the final token."""
        return [int(self.tokens[r, v]) for v in self.paths[r]] + [self.finals[r]]


def run(scenario, rounds, draw_seed, verify_seed, global_seed=None, keep_inputs=False):
    tokens, ctx = scenario.draw(rounds, draw_seed)
    obs = probe("_probe_rounds.py").run_rounds(
        scenario.parents, tokens, ctx, scenario.tables.draft, scenario.tables.target,
        verify_seed, global_seed, keep_inputs)
    return Rounds(scenario, tokens, ctx, obs)


ROUNDS = 20000
_CACHE = {}


def main_rounds(name):
    """The shared ROUNDS-round batch of a scenario (computed once per test session)."""
    if name not in _CACHE:
        seed = {"mixed_bfs": 1, "mixed_dfs": 2, "chain": 3}[name]
        _CACHE[name] = run(scenarios()[name], ROUNDS, draw_seed=100 + seed, verify_seed=200 + seed)
    return _CACHE[name]


# --------------------------------------------------------------------------- structure

def path_problem(scenario, path, final):
    """Why (path, final) is not a walk from the root through kept children, or None."""
    node = 0
    for v in path:
        if not (0 <= v < scenario.N) or scenario.parents[v] != node:
            return f"node {v} in the path is not a child of node {node}"
        node = v
    if not 0 <= final < scenario.V:
        return f"final token {final} is not in 0..{scenario.V - 1}"
    return None


# --------------------------------------------------------------------------- the guarantee

def completed_codes(batch, seed):
    """Each round's emitted tokens completed to LENGTH by sampling the target; returns the
    base-V code of every completed sequence."""
    tables = batch.scenario.tables
    rng = np.random.default_rng(seed)
    codes = np.zeros(len(batch.paths), dtype=np.int64)
    for r in range(len(batch.paths)):
        seq = batch.emitted(r)[:LENGTH]
        while len(seq) < LENGTH:
            row = tables.target[tables.ctx(seq)]
            seq.append(int(sample_rows(row[None], rng.random(1))[0]))
        code = 0
        for tok in seq:
            code = code * tables.V + tok
        codes[r] = code
    return codes


def chi2_sf(stat, dof):
    """P(chi-square with `dof` degrees of freedom >= stat): the regularised upper
    incomplete gamma Q(dof / 2, stat / 2), by its power series below a + 1 and by a
    continued fraction (modified Lentz) above."""
    a, x = dof / 2.0, stat / 2.0
    if x <= 0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        n = 0
        while abs(term) > 1e-17 * abs(total):
            n += 1
            term *= x / (a + n)
            total += term
        return max(0.0, 1.0 - math.exp(log_front) * total)
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return math.exp(log_front) * h


def g_test(counts, probs):
    """(G, degrees of freedom, p-value) of observed `counts` against exact `probs`, with
    every cell of expected count below 5 pooled into one (which must itself reach 5:
    the smallest of the kept cells joins it until it does)."""
    counts = np.asarray(counts, dtype=np.float64)
    expected = np.asarray(probs, dtype=np.float64) * counts.sum()
    order = np.argsort(expected)
    small = expected[order] < 5
    cut = int(small.sum())
    while cut < order.size and 0 < expected[order[:cut]].sum() < 5:
        cut += 1
    pooled = order[:cut]
    obs = np.concatenate([counts[order[cut:]], [counts[pooled].sum()] if cut else []])
    exp = np.concatenate([expected[order[cut:]], [expected[pooled].sum()] if cut else []])
    impossible = counts[expected == 0].sum()
    if impossible:
        return math.inf, obs.size - 1, 0.0
    live = obs > 0
    g = 2.0 * float((obs[live] * np.log(obs[live] / exp[live])).sum())
    return g, obs.size - 1, chi2_sf(g, obs.size - 1)


def check_joint(batch, seed, what):
    tables = batch.scenario.tables
    codes = completed_codes(batch, seed)
    counts = np.bincount(codes, minlength=tables.V ** LENGTH)
    probs = tables.joint()
    g, dof, pvalue = g_test(counts, probs)
    if pvalue < ALPHA:
        dev = (counts - probs * counts.sum()) / np.sqrt(np.maximum(probs * counts.sum(), 1.0))
        worst = int(np.argmax(np.abs(dev)))
        seq = np.base_repr(worst, tables.V).rjust(LENGTH, "0") if tables.V > 1 else "0" * LENGTH
        raise AssertionError(
            f"{what}: the emitted tokens (completed to {LENGTH} by the target) are not distributed "
            f"as the target's sequences: G = {g:.1f} on {dof} degrees of freedom, p = {pvalue:.2e} "
            f"< {ALPHA:g}. Most off: sequence {list(seq)} seen {int(counts[worst])} times, "
            f"expected {probs[worst] * counts.sum():.1f}")
    return g, dof, pvalue


# --------------------------------------------------------------------------- keep rates

def keep_counts(batch):
    """{(node, row, child index): [reached, kept]} over every child the walks reached."""
    scenario = batch.scenario
    cells = {}
    for r, path in enumerate(batch.paths):
        problem = path_problem(scenario, path, batch.finals[r])
        assert problem is None, f"round {r}: path {path}, token {batch.finals[r]}: {problem}"
        node = 0
        for step in range(len(path) + 1):
            kids = scenario.children[node]
            kept_at = kids.index(path[step]) if step < len(path) else len(kids)
            for i in range(min(kept_at + 1, len(kids))):
                cell = cells.setdefault((node, int(batch.ctx[r, node]), i), [0, 0])
                cell[0] += 1
                cell[1] += i == kept_at
            if step < len(path):
                node = path[step]
    return cells


def optimal_chain(target_counts, draft_counts, siblings=3):
    """Exact (fractions), for each of `siblings` children in order: the largest probability
    of keeping it given the walk reaches it, and pi, the distribution the token emitted at
    this position must follow given the walk reaches it. Derived from the requirements
    alone: pi starts as the target row; a child is a fresh draw from q, and a kept child is
    the emitted token, so P(keep, child = x) <= min(q(x), pi(x)); the largest keep
    probability is sum_x min(q(x), pi(x)), reached only by spending exactly min(q, pi) of
    pi, so given the child is not kept the emitted token must follow what is left,
    renormalised."""
    pi = [Fraction(int(c), GRID) for c in target_counts]
    q = [Fraction(int(c), GRID) for c in draft_counts]
    chain = []
    for _ in range(siblings):
        spent = [min(a, b) for a, b in zip(pi, q)]
        keep = sum(spent)
        chain.append((keep, pi, spent))
        if keep < 1:  # (keep == 1: no later child is ever reached; pi is then immaterial)
            pi = [(a - s) / (1 - keep) for a, s in zip(pi, spent)]
    return chain


def reach_probabilities(scenario):
    """{(node, row): exact probability that a round's walk reaches node `node` with the
    token path of row `row`}, for every node of the shape, from optimal_chain."""
    tables = scenario.tables
    reach = {(0, 0): Fraction(1)}
    for v in range(1, scenario.N):
        u = scenario.parents[v]
        i = scenario.children[u].index(v)
        for (node, row), prob in list(reach.items()):
            if node != u or prob == 0:
                continue
            chain = optimal_chain(tables.target_counts[row], tables.draft_counts[row])
            not_before = prob
            for keep, _, _ in chain[:i]:
                not_before *= 1 - keep
            for x, spent in enumerate(chain[i][2]):
                if spent:
                    reach[(v, int(tables.child_ctx(row, scenario.depth[u], x)))] = not_before * spent
    return reach


def chernoff_check(successes, trials, expected, labels, what):
    successes = np.asarray(successes, dtype=np.float64)
    trials = np.asarray(trials, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert trials.size and (trials > 0).all(), f"{what}: no observations"
    threshold = math.log(2 * trials.size / ALPHA)
    phat = successes / trials
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(phat > 0, phat * np.log(phat / expected), 0.0)
        b = np.where(phat < 1, (1 - phat) * np.log((1 - phat) / (1 - expected)), 0.0)
    stat = trials * (a + b)
    worst = int(np.argmax(stat))
    assert stat[worst] < threshold, (
        f"{what}: {labels[worst]} {int(successes[worst])} of {int(trials[worst])} times "
        f"(rate {phat[worst]:.4f}) where keeping every child as often as the guarantee allows "
        f"gives {expected[worst]:.4f}; n*KL = {stat[worst]:.1f} >= {threshold:.1f} (a correct "
        f"implementation exceeds this with probability < {ALPHA:g})")
    return float(stat.max()), threshold


def row_path(tables, row, depth):
    code, path = row - tables.offset[depth], []
    for _ in range(depth):
        path.insert(0, int(code % tables.V))
        code //= tables.V
    return path


def check_keep_rates(batch, what):
    """Two families of cells, one union bound: for every child reached, how often it was
    kept against the largest rate allowed; and for every (node, token path) of the shape,
    how many of the rounds reached it against the probability that a walk keeping every
    child as often as allowed (and continuing below every kept one) reaches it."""
    scenario = batch.scenario
    tables = scenario.tables
    rounds = len(batch.paths)
    cells = keep_counts(batch)
    labels, successes, trials, expected = [], [], [], []
    for (node, row, i), (n, k) in sorted(cells.items()):
        keep = optimal_chain(tables.target_counts[row], tables.draft_counts[row])[i][0]
        labels.append(f"child #{i} (node {scenario.children[node][i]}) of node {node} reached "
                      f"after tokens {row_path(tables, row, scenario.depth[node])}: kept")
        successes.append(k)
        trials.append(n)
        expected.append(float(keep))
    arrived = {}
    for r, path in enumerate(batch.paths):
        for v in [0] + path:
            key = (v, int(batch.ctx[r, v]))
            arrived[key] = arrived.get(key, 0) + 1
    reach = reach_probabilities(scenario)
    for key in sorted(set(reach) | set(arrived)):
        v, row = key
        labels.append(f"node {v} after tokens {row_path(tables, row, scenario.depth[v])}: reached")
        successes.append(arrived.get(key, 0))
        trials.append(rounds)
        expected.append(float(reach.get(key, 0)))
    return chernoff_check(successes, trials, expected, labels, what)
