"""Probe: the verification loop with every other source of random numbers fenced off.

While verify_draft runs, every way this file knows to get random numbers other than the
`rng` argument is replaced by a stand-in that records its name and raises: numpy's
generator and bit-generator constructors, SeedSequence, RandomState, numpy's legacy global
functions, the `random` module's functions and classes (wherever the solution's module or
numpy's own modules hold them), and Generator.spawn on the caller's generator. Two uses that
only hand the caller's own generator back are let through: default_rng(rng) (which returns rng
itself) and Generator(rng.bit_generator). Everything is restored afterwards.

It reports what came back and which fenced names were called; the judge compares the tokens
with an unfenced run of the same rounds. It holds no distribution and no expected value.
"""
import random
import sys

import numpy as np
import numpy.random as npr

import speculative


class _CallersGenerator(np.random.Generator):
    """The caller's generator: the same stream as np.random.Generator(PCG64(seed)); spawning
    children from it would make generators of the solution's own."""

    blocked = None

    def spawn(self, n_children):
        _CallersGenerator.blocked.append("Generator.spawn")
        raise RuntimeError("verify_draft may only draw from rng, not spawn generators from it")


class _FenceMeta(type):
    """A stand-in class: calling it is refused (unless allowed); isinstance/issubclass
    checks against it still answer as they would for the class it stands in for."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._original)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls._original)

    def __call__(cls, *args, **kwargs):
        return cls._call(*args, **kwargs)


def _make_stand_in(label, original, blocked, allow):
    def call(*args, **kwargs):
        if allow is not None and allow(args, kwargs):
            return original(*args, **kwargs)
        blocked.append(label)
        raise RuntimeError(f"{label} is fenced off: verify_draft must draw every random number from rng")

    if isinstance(original, type):
        return _FenceMeta(getattr(original, "__name__", label), (), {
            "_original": original, "_call": staticmethod(call), "__doc__": original.__doc__})
    return call


def _fences(rng, blocked):
    """{id(original): (original, stand-in)} for every fenced object."""
    def hands_back_rng(args, kwargs):
        seed = args[0] if args else kwargs.get("seed")
        return len(args) + len(kwargs) == 1 and (seed is rng or seed is rng.bit_generator)

    def wraps_rngs_bit_generator(args, kwargs):
        bg = args[0] if args else kwargs.get("bit_generator")
        return len(args) + len(kwargs) == 1 and bg is rng.bit_generator

    allow = {"default_rng": hands_back_rng, "Generator": wraps_rngs_bit_generator}
    fences = {}
    for module, prefix in ((npr, "numpy.random."), (random, "random.")):
        for name in module.__all__:
            original = getattr(module, name, None)
            if original is None or not callable(original):
                continue
            allow_fn = allow.get(name) if module is npr else None
            fences[id(original)] = (original, _make_stand_in(prefix + name, original, blocked, allow_fn))
    return fences


def _patch(fences):
    """Replace every fenced object wherever the solution or numpy/random hold it by name.
    Returns the undo list."""
    undo = []
    holders = [m for n, m in list(sys.modules.items())
               if m is not None and (n == "random" or n == "numpy.random" or n.startswith("numpy.random.")
                                     or n == speculative.__name__)]
    for module in holders:
        for name, value in list(vars(module).items()):
            hit = fences.get(id(value))
            if hit is not None and hit[0] is value:
                undo.append((module, name, value))
                setattr(module, name, hit[1])
    return undo


def run_rounds_fenced(draft_tokens, draft_probs, target_probs, verify_seed):
    blocked = []
    _CallersGenerator.blocked = blocked
    rng = _CallersGenerator(np.random.PCG64(verify_seed))
    verify_draft = speculative.verify_draft
    flat, lengths, errors = [], [], []
    undo = _patch(_fences(rng, blocked))
    try:
        for r in range(draft_tokens.shape[0]):
            try:
                out = verify_draft(draft_tokens[r], draft_probs[r], target_probs[r], rng)
            except Exception as exc:  # reported, not raised: the judge decides
                errors.append(f"round {r}: {type(exc).__name__}: {exc}")
                break
            n = 0
            for token in out:
                flat.append(int(token))
                n += 1
            lengths.append(n)
    finally:
        for module, name, value in reversed(undo):
            setattr(module, name, value)
        _CallersGenerator.blocked = None
    return {
        "tokens": np.asarray(flat, dtype=np.int64),
        "lengths": np.asarray(lengths, dtype=np.int64),
        "blocked": sorted(set(blocked)),
        "errors": errors,
    }
