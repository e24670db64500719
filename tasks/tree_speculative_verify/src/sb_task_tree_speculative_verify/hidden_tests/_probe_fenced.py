"""Probe: the verification loop with every other way to get random numbers refused.

While verify_tree runs, each callable that numpy.random or the random module exports
(generator, bit-generator and seed-sequence constructors, RandomState, the legacy
module-level functions, random.Random and random's functions) is swapped, wherever the
solution's module, numpy.random's modules or random hold it by name, for a stand-in that
logs its name and raises. Two calls that only hand back the caller's own stream pass:
default_rng(rng) and Generator(rng.bit_generator). The caller's generator refuses spawn().
Everything is put back afterwards.

It reports the outputs and the refused names; the judge compares the outputs with an
unfenced run from the same generator state. No distribution, no expected value here.
"""
import random
import sys

import numpy as np
import numpy.random as npr

import tree_verify


class _Refused(type):
    """Metaclass of a stand-in class: isinstance/issubclass answer as for the real class,
    calling it is refused unless its `allowed` test passes."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.real)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.real)

    def __call__(cls, *args, **kwargs):
        return cls.gate(*args, **kwargs)


def _stand_in(label, real, log, allowed=None):
    def gate(*args, **kwargs):
        if allowed is not None and allowed(args, kwargs):
            return real(*args, **kwargs)
        log.append(label)
        raise RuntimeError(f"{label} is refused here: draw every random number from rng")

    if isinstance(real, type):
        return _Refused(real.__name__, (), {"real": real, "gate": staticmethod(gate)})
    return gate


class _CallersGenerator(np.random.Generator):
    log = None

    def spawn(self, n_children):
        _CallersGenerator.log.append("Generator.spawn")
        raise RuntimeError("spawning generators from rng makes generators of your own")


def _only_argument(args, kwargs, key):
    if len(args) + len(kwargs) != 1:
        return None
    return args[0] if args else kwargs.get(key)


def _swaps(rng, log):
    passes = {
        "default_rng": lambda a, k: any(_only_argument(a, k, "seed") is mine for mine in (rng, rng.bit_generator)),
        "Generator": lambda a, k: _only_argument(a, k, "bit_generator") is rng.bit_generator,
    }
    swaps = {}
    for module, prefix in ((npr, "numpy.random."), (random, "random.")):
        for name in getattr(module, "__all__", ()):
            real = getattr(module, name, None)
            if callable(real):
                allowed = passes.get(name) if module is npr else None
                swaps[id(real)] = (real, _stand_in(prefix + name, real, log, allowed))
    return swaps


def _install(swaps):
    holders = [module for name, module in list(sys.modules.items()) if module is not None and (
        name in ("random", "numpy.random", tree_verify.__name__) or name.startswith("numpy.random."))]
    undo = []
    for module in holders:
        for name, value in list(vars(module).items()):
            hit = swaps.get(id(value))
            if hit is not None and hit[0] is value:
                undo.append((module, name, value))
                setattr(module, name, hit[1])
    return undo


def run_rounds_fenced(parents, tokens, ctx, draft_table, target_table, verify_seed):
    log = []
    _CallersGenerator.log = log
    rng = _CallersGenerator(np.random.PCG64(verify_seed))  # the stream default_rng(verify_seed) gives
    draft_rows, target_rows = draft_table[ctx], target_table[ctx]
    verify_tree = tree_verify.verify_tree
    nodes, lengths, finals, errors = [], [], [], []
    undo = _install(_swaps(rng, log))
    try:
        for r in range(tokens.shape[0]):
            try:
                path, final = verify_tree(parents, tokens[r], draft_rows[r], target_rows[r], rng)
            except Exception as exc:  # reported, not raised: the judge decides
                errors.append(f"round {r}: {type(exc).__name__}: {exc}")
                break
            path = [int(v) for v in path]
            nodes.extend(path)
            lengths.append(len(path))
            finals.append(int(final))
    finally:
        for module, name, value in reversed(undo):
            setattr(module, name, value)
        _CallersGenerator.log = None
    return {
        "path_nodes": np.asarray(nodes, dtype=np.int64),
        "path_lengths": np.asarray(lengths, dtype=np.int64),
        "final_tokens": np.asarray(finals, dtype=np.int64),
        "refused": sorted(set(log)),
        "errors": errors,
    }
