"""The brute-force oracle: the final text and the determined prefix, straight from their definitions.

Nothing here tracks a decoder state or a stop-string automaton. The final text of a byte string
is Python's own `bytes.decode("utf-8", "replace")` followed by a search for the earliest stop
string. The determined prefix after a push is the longest common prefix of the final texts of
`data + c` over a finite set of continuations `c`, each decoded whole by Python, which is rich
enough to realise every way the next characters can come out that matters to a stop string:

- starting chunks: nothing; every suffix of the encoding of every character that occurs in a
  stop string (so undecided bytes can be completed into it, or broken); runs of one
  continuation byte (so undecided bytes can be completed into a character no stop string
  uses); an ASCII character no stop string uses;
- followed by nothing or by any piece (contiguous substring) of a stop string, encoded.

A stop string occurrence that starts within the text decoded so far is completed by the rest of
that stop string; whether the next character comes from completing or from breaking undecided
bytes is left to Python's decoder, which decodes every candidate whole. While the task was
written, this set gave the same answers, on every prefix of the streams these tests use, as a
far larger one (every single byte and many two- and three-byte runs of continuation bytes as
starting chunks, every string over the stop strings' characters as tails).
"""
import os

NEUTRAL_CANDIDATES = "zqxjkvwy"
FILLER_BYTES = (0x80, 0x90, 0xA0, 0xBF)


def cut(text, stops, include_stop):
    """(final text, whether a stop string cut it): the earliest start, the longest there."""
    starts = [text.find(s) for s in stops]
    found = [i for i in starts if i >= 0]
    if not found:
        return text, False
    start = min(found)
    longest = max(len(s) for s in stops if text.startswith(s, start))
    return text[:start + (longest if include_stop else 0)], True


def final_text(data, stops, include_stop):
    return cut(data.decode("utf-8", "replace"), stops, include_stop)


def _encodable(char):
    return not 0xD800 <= ord(char) <= 0xDFFF


def continuations(stops):
    alphabet = sorted({c for s in stops for c in s if _encodable(c)})
    neutral = next(c for c in NEUTRAL_CANDIDATES if c not in alphabet)
    heads = {b"", neutral.encode()}
    heads |= {c.encode()[j:] for c in alphabet for j in range(len(c.encode()))}
    heads |= {bytes([b]) * n for b in FILLER_BYTES for n in (1, 2, 3)}
    tails = {b""} | {s[i:j].encode("utf-8", "surrogatepass")
                     for s in stops for i in range(len(s)) for j in range(i + 1, len(s) + 1)}
    return sorted({h + t for h in heads for t in tails})


def _last_boundary(data):
    """The last index of `data` holding a byte that is not a continuation byte (0x80..0xBF).

    Such a byte always begins a new sequence or maximal invalid subpart, so Python decodes
    data[:k] + rest as data[:k].decode() + rest.decode() (checked in determined())."""
    k = len(data)
    while k > 0 and 0x80 <= data[k - 1] <= 0xBF:
        k -= 1
    return max(k - 1, 0)


def determined(data, stops, include_stop, conts):
    """(the determined prefix of the final text, whether the final text is settled) after
    `data` was received, when any continuation (or none) may still follow."""
    k = _last_boundary(data)
    head, rest = data[:k].decode("utf-8", "replace"), data[k:]
    assert head + rest.decode("utf-8", "replace") == data.decode("utf-8", "replace")
    finals = {cut(head + (rest + c).decode("utf-8", "replace"), stops, include_stop)[0] for c in conts}
    return os.path.commonprefix(sorted(finals)), len(finals) == 1
