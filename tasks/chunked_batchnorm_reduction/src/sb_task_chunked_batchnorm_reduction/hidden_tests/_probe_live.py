"""Probe: bn_moments called on live objects in the solution's process.

`one_shot` hands batch_moments a real one-shot iterator and a generator (built here, so
the solution iterates them natively); `train_step` calls batchnorm_train_step on arrays it
owns and reports them as they are afterwards, plus whether a returned array shares memory
with an argument; `peak_memory` hands batch_moments a generator that makes each chunk
fresh (block * scale[i] + shift[i]) only when asked for it, and reports the peak of memory
traced by tracemalloc (numpy reports its buffers to it) during the call, with the state it
returned. Nothing here knows what any result should be.
"""
import tracemalloc

import numpy as np

import bn_moments as bn


def one_shot(chunks):
    results = {}
    for kind, source in (("iterator", iter(list(chunks))), ("generator", (c for c in chunks))):
        m = bn.batch_moments(source)
        results[kind] = (isinstance(m, bn.Moments), m.count, m.mean, m.m2)
    return results


def train_step(chunks, gamma, beta, running_mean, running_var, momentum, eps):
    passed = [np.array(c, copy=True) for c in chunks]
    params = {name: np.array(v, copy=True) for name, v in
              (("gamma", gamma), ("beta", beta), ("running_mean", running_mean), ("running_var", running_var))}
    error = None
    returned = []
    try:
        outputs, new_mean, new_var = bn.batchnorm_train_step(
            passed, params["gamma"], params["beta"], params["running_mean"], params["running_var"],
            momentum=momentum, eps=eps)
        returned = [*outputs, new_mean, new_var]
    except Exception as exc:  # reported, and checked by the judge
        error = type(exc).__name__
    arguments = [*passed, *params.values()]
    shares = [isinstance(r, np.ndarray) and any(np.shares_memory(r, a) for a in arguments) for r in returned]
    return {"error": error, "chunks_after": passed, "params_after": params, "shares": shares}


def _fresh_chunks(block, scales, shifts):
    for scale, shift in zip(scales, shifts):
        chunk = block * scale  # a new buffer, made only when the solution asks for it
        chunk += shift
        yield chunk


def peak_memory(block, scales, shifts):
    chunks = _fresh_chunks(np.asarray(block), np.asarray(scales), np.asarray(shifts))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        m = bn.batch_moments(chunks)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {"peak": int(peak), "count": m.count, "mean": m.mean, "m2": m.m2}
