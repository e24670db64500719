"""Worker-side probe for bpe_merge_order: what the solution does to the merge list it is given.

Arguments reach the solution as copies, so whether it modifies `merges` can only be seen
here, in its process. This holds no expected value: it reports the list as it is after
each call and whether its entries are still the very objects that were passed.
"""
import bpe


def merges_after_each_call(merges, text, ids):
    """Call encode, decode_bytes and decode, each on a fresh list of the same merges."""
    calls = {
        "encode": lambda m: bpe.encode(text, m),
        "decode_bytes": lambda m: bpe.decode_bytes(ids, m),
        "decode": lambda m: bpe.decode(ids, m),
    }
    seen = {}
    for name, call in calls.items():
        given = [tuple(pair) for pair in merges]
        entries = list(given)
        call(given)
        seen[name] = {"after": given,
                      "same_objects": len(given) == len(entries) and all(a is b for a, b in zip(given, entries))}
    return seen
