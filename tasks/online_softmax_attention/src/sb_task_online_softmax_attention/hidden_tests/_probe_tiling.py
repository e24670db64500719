"""Runs in the solution's process. It only records what the solution does; it holds no
expected value and no oracle (the tests compare its observations with their own).

- record_attention: every call attention() makes to this module's `update` (the state
  handed in, the scores, the values, the state handed back) and attention's result.
- peak_memory: the peak of memory traced by tracemalloc (numpy reports its buffers to it)
  while attention() runs, counted from just before the call.
- call_and_inspect: calls one function on arrays that live here, then reports the
  arguments as they are afterwards and, for every returned array, whether it shares
  memory with any argument.
"""
import tracemalloc

import numpy as np

import online_attention


def _snapshot(value):
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if isinstance(value, (tuple, list)):
        return [_snapshot(part) for part in value]
    return value


def _arrays(value):
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (tuple, list)):
        return [a for part in value for a in _arrays(part)]
    return []


def record_attention(q, k, v, kwargs):
    calls = []
    real_update = online_attention.update

    def recording_update(state, scores, v_block):
        entry = {"state_in": _snapshot(state), "scores": _snapshot(scores), "v": _snapshot(v_block)}
        result = real_update(state, scores, v_block)
        entry["state_out"] = _snapshot(result)
        calls.append(entry)
        return result

    online_attention.update = recording_update
    try:
        result = online_attention.attention(q, k, v, **kwargs)
    finally:
        online_attention.update = real_update
    return {"calls": calls, "result": _snapshot(result)}


def peak_memory(q, k, v, kwargs):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        online_attention.attention(q, k, v, **kwargs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def call_and_inspect(name, args, kwargs):
    result = getattr(online_attention, name)(*args, **kwargs)
    inputs = _arrays(args)
    shares = [any(np.shares_memory(out, arr) for arr in inputs) for out in _arrays(result)]
    return {"args_after": _snapshot(args), "result": _snapshot(result), "shares_memory": shares}
