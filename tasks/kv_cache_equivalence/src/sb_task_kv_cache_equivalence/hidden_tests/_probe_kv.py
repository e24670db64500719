"""Probe shipped into the solution's process: it builds the layer there and exercises it
with live objects (the very cache dicts and tensors the layer returned), then reports
what it saw as plain data. It holds no expected value: the tests compare every
observation with their own float64 model in the judge."""
import torch

from kv_attention import CachedSelfAttention, apply_rotary


def build(d_model, n_heads, weights, dtype=None, rope_base=None):
    """The layer with the four projection weights overwritten (float32 values), then
    converted to `dtype` as a caller would. Returned as a handle."""
    kwargs = {} if rope_base is None else {"rope_base": rope_base}
    layer = CachedSelfAttention(d_model, n_heads, **kwargs)
    with torch.no_grad():
        for name in "qkvo":
            getattr(layer, f"{name}_proj").weight.copy_(weights[name])
    if dtype is not None:
        layer = layer.to(dtype)
    return layer.eval()


def describe(layer):
    """The module's children and parameters, as names, types and shapes."""
    children = {}
    for name, module in layer.named_children():
        children[name] = {
            "is_linear": isinstance(module, torch.nn.Linear),
            "in_features": getattr(module, "in_features", None),
            "out_features": getattr(module, "out_features", None),
            "has_bias": getattr(module, "bias", None) is not None,
        }
    params = {name: tuple(p.shape) for name, p in layer.named_parameters()}
    return {"children": children, "params": params, "is_module": isinstance(layer, torch.nn.Module)}


def _snapshot(cache):
    return {"keys": sorted(cache), "k": cache["k"].detach().clone(), "v": cache["v"].detach().clone(),
            "k_obj": cache["k"], "v_obj": cache["v"]}


def _report(cache, snap):
    """The cache dict as it is now, and whether its tensors are the objects it held before."""
    return {"keys": sorted(cache), "k": cache["k"].detach().clone(), "v": cache["v"].detach().clone(),
            "same_k_object": cache["k"] is snap["k_obj"], "same_v_object": cache["v"] is snap["v_obj"]}


def run_chunks(layer, x, sizes):
    """Feed x (B, L, d) through the layer in chunks, passing each returned cache object on."""
    outs, cache, start = [], None, 0
    with torch.no_grad():
        for size in sizes:
            out, cache = layer(x[:, start:start + size], cache)
            outs.append(out.detach().clone())
            start += size
    return {"outs": outs, "k": cache["k"].detach().clone(), "v": cache["v"].detach().clone(),
            "keys": sorted(cache), "dtypes": [str(cache["k"].dtype), str(cache["v"].dtype)]}


def branch(layer, prefix, first, second, third):
    """One prefix cache, two continuations from it, then a further step on the first branch.

    Every cache involved is reported after all the calls are done, so a later call that
    wrote into storage an earlier cache shares shows up in the earlier one.
    """
    with torch.no_grad():
        _, c0 = layer(prefix, None)
        snap0 = _snapshot(c0)
        out_a, c_a = layer(first, c0)
        snap_a = _snapshot(c_a)
        out_b, c_b = layer(second, c0)
        out_a2, c_a2 = layer(third, c_a)
    return {
        "prefix_cache": _report(c0, snap0),
        "a_cache": _report(c_a, snap_a),
        "b_cache": {"keys": sorted(c_b), "k": c_b["k"].detach().clone(), "v": c_b["v"].detach().clone()},
        "a2_cache": {"k": c_a2["k"].detach().clone(), "v": c_a2["v"].detach().clone()},
        "out_a": out_a.detach().clone(), "out_b": out_b.detach().clone(), "out_a2": out_a2.detach().clone(),
        "new_is_given": [c_a is c0, c_b is c0, c_a2 is c_a],
    }


def continue_given(layer, cache_k, cache_v, x):
    """Continue from a cache dict the caller built (not one the layer returned)."""
    cache = {"k": cache_k, "v": cache_v}
    snap = _snapshot(cache)
    with torch.no_grad():
        out, new = layer(x, cache)
    return {"out": out.detach().clone(), "k": new["k"].detach().clone(), "v": new["v"].detach().clone(),
            "given": _report(cache, snap)}


def rotary_in_place_check(x, positions, base):
    """apply_rotary on a live tensor: is the input untouched, and is the output its own storage?"""
    out = apply_rotary(x, positions, base)
    shares = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    return {"input_after": x.clone(), "out": out.detach().clone(), "shares_storage": bool(shares),
            "same_object": out is x, "out_dtype": str(out.dtype)}
