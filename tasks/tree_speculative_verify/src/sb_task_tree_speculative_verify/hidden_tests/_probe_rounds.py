"""Probe: the verification loop, run in the solution's process (one call per round).

The judge draws every tree and sends the token arrays, each node's row index and the two
tables; this file builds each round's rows (draft_table[ctx], target_table[ctx]), calls
verify_tree once per round with one Generator shared by all rounds, and reports what came
back. It holds no distribution and no expected value.
"""
import random

import numpy as np

from tree_verify import verify_tree


def _type_name(value):
    return type(value).__name__


def run_rounds(parents, tokens, ctx, draft_table, target_table, verify_seed, global_seed=None,
               keep_inputs=False):
    if global_seed is not None:
        np.random.seed(global_seed)
        random.seed(global_seed)
    rng = np.random.default_rng(verify_seed)
    draft_rows = draft_table[ctx]  # (rounds, nodes, V): each round gets views into these
    target_rows = target_table[ctx]
    nodes, lengths, finals = [], [], []
    result_types, path_types, node_types, final_types = set(), set(), set(), set()
    for r in range(tokens.shape[0]):
        out = verify_tree(parents, tokens[r], draft_rows[r], target_rows[r], rng)
        result_types.add(f"{_type_name(out)}/{len(out) if isinstance(out, (tuple, list)) else '-'}")
        path, final = out
        path_types.add(_type_name(path))
        n = 0
        for v in path:
            node_types.add(_type_name(v))
            nodes.append(int(v))
            n += 1
        lengths.append(n)
        final_types.add(_type_name(final))
        finals.append(int(final))
    obs = {
        "path_nodes": np.asarray(nodes, dtype=np.int64),
        "path_lengths": np.asarray(lengths, dtype=np.int64),
        "final_tokens": np.asarray(finals, dtype=np.int64),
        "result_types": sorted(result_types),
        "path_types": sorted(path_types),
        "node_types": sorted(node_types),
        "final_types": sorted(final_types),
    }
    if keep_inputs:
        obs["inputs_after"] = [parents, tokens, draft_rows, target_rows]
    return obs
