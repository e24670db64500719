"""Probe: every rank's sampler in its own fresh Python process, as a launcher starts them.

The processes share nothing (no memory, no module state, each its own hash seed) and are
started together. Each reports its batches as JSON on stdout; the judge compares them with
its own layout. No expected value lives here.
"""
import json
import os
import subprocess
import sys

import sampler as _solution

_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from sampler import ShardedSampler
cfg = json.loads(sys.argv[2])
s = ShardedSampler(cfg["num_samples"], world_size=cfg["world_size"], rank=cfg["rank"],
                   batch_size=cfg["batch_size"], seed=cfg["seed"], shuffle=cfg["shuffle"],
                   drop_last=cfg["drop_last"])
out = {"len": [], "epochs": []}
for epoch in cfg["epochs"]:
    s.set_epoch(epoch)
    out["len"].append(len(s))
    out["epochs"].append([[int(i) for i in batch] for batch in s])
print(json.dumps(out))
"""


def run_ranks(num_samples, world_size, batch_size, seed, shuffle, drop_last, epochs):
    """Start one process per rank at once; returns [(returncode, stdout, stderr tail)]."""
    folder = os.path.dirname(os.path.abspath(_solution.__file__))
    procs = []
    for rank in range(world_size):
        cfg = dict(num_samples=num_samples, world_size=world_size, rank=rank, batch_size=batch_size,
                   seed=seed, shuffle=shuffle, drop_last=drop_last, epochs=list(epochs))
        env = dict(os.environ, PYTHONHASHSEED=str(rank + 1))
        procs.append(subprocess.Popen([sys.executable, "-s", "-B", "-P", "-c", _CHILD, folder, json.dumps(cfg)],
                                      cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        results.append((proc.returncode, out, err[-2000:]))
    return results
