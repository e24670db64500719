"""Hidden tests for streaming_detokenizer.

Every expectation comes from _oracle.py, which works from the definitions alone: the final
text is Python's own decode of the whole byte string followed by a search for the earliest
stop string, and the determined prefix after a push is the common prefix of the final texts
of the bytes so far followed by each of a set of continuations, each decoded whole by Python.
The few hand-written cases below spell their expectations out, and check the oracle too.

Everything is observed here, from what the solution's calls return through its proxy: each
push's delta and the `stopped` attribute after it.
"""
import functools
import random

import pytest

import _oracle
import _streams
from detokenizer import StreamDetokenizer

R = "\ufffd"

STOP_SETS = {
    "earlier_longer_stop": ["abcd", "bc"],
    "stop_is_a_prefix_of_another": ["ab", "abc"],
    "overlapping_stops": ["aba", "bab"],
    "multibyte_and_replacement": ["€b", R + "a"],
    "replacement_at_the_end": ["é" + R, "😀"],
    "two_replacements": ["b" + R + R, "a€"],
    "nested_suffixes": ["d", "cd", "bcd"],
    "lone_replacement": [R],
    "emoji_and_replacement": ["😀a", R + "😀"],
    "no_stop_strings": [],
}
VARIANTS = [(name, include) for name in STOP_SETS for include in (False, True)]
VARIANT_IDS = [f"{name}-{'include' if include else 'exclude'}" for name, include in VARIANTS]
STREAMS_PER_SET = 10


# ---------------------------------------------------------------- expectations


def expected_calls(vocab, ids, stops, include_stop, max_tokens, conts):
    """[(text emitted so far, stopped)] after each push and after finish(), by the oracle."""
    out, data, ended = [], b"", None
    for count, token_id in enumerate(ids, 1):
        if ended is not None:
            out.append(ended)
            continue
        data += vocab[token_id]
        if max_tokens is not None and count >= max_tokens:
            ended = _oracle.final_text(data, stops, include_stop)
            out.append(ended)
            continue
        text, settled = _oracle.determined(data, stops, include_stop, conts)
        if settled:
            ended = (text, True)
        out.append((text, settled))
    out.append(ended if ended is not None else _oracle.final_text(data, stops, include_stop))
    return out


@functools.lru_cache(maxsize=None)
def _case(stops, include_stop, seed, count, max_tokens=None, empty_tokens=False, as_mapping=False):
    stops = list(stops)
    vocab, streams = _streams.make_streams(seed, stops, count, empty_tokens=empty_tokens)
    conts = _oracle.continuations(stops)
    expected = [expected_calls(vocab, ids, stops, include_stop, max_tokens, conts) for ids in streams]
    if as_mapping:  # the same tokens under scattered ids
        new_ids = random.Random(seed).sample(range(10_000, 90_000), len(vocab))
        vocab = {new_ids[i]: piece for i, piece in enumerate(vocab)}
        streams = [[new_ids[i] for i in ids] for ids in streams]
    return vocab, streams, expected


def run_case(stops, include_stop, seed, count=STREAMS_PER_SET, max_tokens=None, **options):
    """(vocab, streams, [[(text so far, stopped)] per call] observed, the same expected)."""
    vocab, streams, expected = _case(tuple(stops), include_stop, seed, count, max_tokens, **options)
    observed = _observe(tuple(stops), include_stop, seed, count, max_tokens, **options)
    return vocab, streams, observed, expected


@functools.lru_cache(maxsize=None)
def _observe(stops, include_stop, seed, count, max_tokens=None, **options):
    """The solution's calls on a case's streams (run once, shared by the tests that read them)."""
    vocab, streams, _ = _case(stops, include_stop, seed, count, max_tokens, **options)
    return [calls(ids, stops, include_stop, max_tokens, vocab=vocab) for ids in streams]


def _where(vocab, ids, call):
    tokens = [vocab[t] for t in ids[:call + 1]]
    return f"after call {call + 1} (pushed tokens: {tokens}{' then finish()' if call == len(ids) else ''})"


# ---------------------------------------------------------------- random streams


@pytest.mark.parametrize("name, include_stop", VARIANTS, ids=VARIANT_IDS)
def test_deltas_concatenate_to_the_final_text(name, include_stop):
    vocab, streams, observed, expected = run_case(STOP_SETS[name], include_stop, seed=1)
    for ids, got, want in zip(streams, observed, expected):
        assert len(got) == len(ids) + 1
        assert got[-1] == want[-1], f"{_where(vocab, ids, len(ids))}: (text, stopped) {got[-1]!r} != {want[-1]!r}"


@pytest.mark.parametrize("name, include_stop", VARIANTS, ids=VARIANT_IDS)
def test_each_call_emits_exactly_the_determined_prefix(name, include_stop):
    vocab, streams, observed, expected = run_case(STOP_SETS[name], include_stop, seed=1)
    for ids, got, want in zip(streams, observed, expected):
        assert len(got) == len(ids) + 1
        for call, ((text, _), (want_text, _)) in enumerate(zip(got, want)):
            assert text == want_text, f"{_where(vocab, ids, call)}: emitted {text!r}, determined {want_text!r}"


@pytest.mark.parametrize("name, include_stop", VARIANTS, ids=VARIANT_IDS)
def test_stopped_turns_true_exactly_when_the_final_text_is_settled(name, include_stop):
    vocab, streams, observed, expected = run_case(STOP_SETS[name], include_stop, seed=1)
    for ids, got, want in zip(streams, observed, expected):
        assert len(got) == len(ids) + 1
        for call, ((text, stopped), (want_text, want_stopped)) in enumerate(zip(got, want)):
            assert stopped == want_stopped, f"{_where(vocab, ids, call)}: stopped is {stopped} (text {want_text!r})"


def _random_stops(seed):
    rng = random.Random(seed)
    alphabet = ["a", "b", "é", "€", "😀", R]
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(2, 3))]


@pytest.mark.parametrize("include_stop", [False, True], ids=["exclude", "include"])
@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_random_stop_sets_match_the_oracle_call_by_call(seed, include_stop):
    stops = _random_stops(seed)
    vocab, streams, observed, expected = run_case(stops, include_stop, seed=seed, count=6)
    for ids, got, want in zip(streams, observed, expected):
        assert got == want, f"stops {stops!r}, tokens {[vocab[t] for t in ids]}: {got!r} != {want!r}"


@pytest.mark.parametrize("name", ["earlier_longer_stop", "multibyte_and_replacement", "two_replacements",
                                  "lone_replacement", "no_stop_strings"])
@pytest.mark.parametrize("include_stop", [False, True], ids=["exclude", "include"])
def test_max_tokens_ends_the_stream_on_its_last_push(name, include_stop):
    stops = STOP_SETS[name]
    vocab, streams, observed, expected = run_case(stops, include_stop, seed=3, count=8, max_tokens=4)
    assert any(len(ids) > 4 for ids in streams)
    for ids, got, want in zip(streams, observed, expected):
        assert got == want, f"stops {stops!r}, tokens {[vocab[t] for t in ids]}: {got!r} != {want!r}"


@pytest.mark.parametrize("include_stop", [False, True], ids=["exclude", "include"])
def test_vocab_as_a_mapping_with_empty_tokens(include_stop):
    stops = STOP_SETS["multibyte_and_replacement"]
    vocab, streams, observed, expected = run_case(stops, include_stop, seed=5, count=6, empty_tokens=True,
                                                  as_mapping=True)
    assert isinstance(vocab, dict)
    for ids, got, want in zip(streams, observed, expected):
        assert got == want, f"tokens {[vocab[t] for t in ids]}: {got!r} != {want!r}"


# ---------------------------------------------------------------- hand-written cases


VOCAB = _streams.byte_vocab()


def _ids(*pieces):
    """Token ids of single bytes: str pieces are encoded, bytes pieces split into bytes."""
    data = b"".join(p.encode() if isinstance(p, str) else p for p in pieces)
    return list(data)


def calls(ids, stops=(), include_stop=False, max_tokens=None, finish=True, vocab=VOCAB):
    """[(text emitted so far, stopped)] after each push (and finish()), through the proxy."""
    stream = StreamDetokenizer(vocab, list(stops), include_stop=include_stop, max_tokens=max_tokens)
    text, out = "", []
    for call in [lambda t=t: stream.push(t) for t in ids] + ([stream.finish] if finish else []):
        delta = call()
        stopped = stream.stopped
        assert type(delta) is str, f"a delta is {type(delta).__name__}, not str"
        assert type(stopped) is bool, f"stopped is {type(stopped).__name__}, not bool"
        text += delta
        out.append((text, stopped))
    return out


def oracle_calls(ids, stops=(), include_stop=False, max_tokens=None, vocab=VOCAB):
    return expected_calls(vocab, ids, list(stops), include_stop, max_tokens, _oracle.continuations(list(stops)))


def _texts(seen):
    return [text for text, _ in seen]


BROKEN = [
    b"\xe2\x82A",          # truncated 3-byte sequence, then ASCII: one U+FFFD
    b"\xf0\x9f\x98A",      # truncated 4-byte sequence: one U+FFFD
    b"\xed\xa0\x80",       # an encoded surrogate: three
    b"\xe0\x80\x80",       # overlong: three
    b"\xc0\xaf",           # overlong 2-byte: two
    b"\xf4\x90\x80\x80",   # above U+10FFFF: four
    b"\x80\xbf",           # lone continuation bytes: two
    b"\xe2\x82\xe2\x82\xac",  # truncated, then a complete euro sign
    b"\xef\xbf",           # a truncated U+FFFD at the very end: one
]


@pytest.mark.parametrize("data", BROKEN, ids=[d.hex() for d in BROKEN])
def test_invalid_bytes_decode_exactly_as_python_replaces_them(data):
    ids = _ids(b"x", data, b"y") if data != b"\xef\xbf" else _ids(b"x", data)
    seen = calls(ids)
    assert seen[-1] == (bytes(ids).decode("utf-8", "replace"), False)


def test_a_sequence_no_continuation_can_complete_is_emitted_at_once():
    # E0 80, ED A0, F4 90 and F0 8F can never begin a character: each pair is two U+FFFD
    # whatever follows, and is emitted by the push that brings its second byte.
    for pair in (b"\xe0\x80", b"\xed\xa0", b"\xed\xbf", b"\xf4\x90", b"\xf0\x8f"):
        ids = _ids(b"a", pair)
        want = ["a", "a", "a" + R + R, "a" + R + R]
        assert _texts(oracle_calls(ids)) == want
        assert _texts(calls(ids)) == want, f"bytes {pair!r}"


def test_an_incomplete_sequence_is_held_only_until_it_is_decided():
    cases = [
        (_ids("x", b"\xe2\x82\xac"), ["x", "x", "x", "x€", "x€"]),
        (_ids("x", b"\xe2\x82", "A"), ["x", "x", "x", "x" + R + "A", "x" + R + "A"]),
        (_ids("x", b"\xf0\x9f\x98"), ["x", "x", "x", "x", "x" + R]),
        (_ids("x", b"\xed\x9f\xbf"), ["x", "x", "x", "x\ud7ff", "x\ud7ff"]),
    ]
    for ids, want in cases:
        assert _texts(oracle_calls(ids)) == want
        assert _texts(calls(ids)) == want, f"tokens {bytes(ids)!r}"


def test_an_earlier_starting_stop_wins_over_a_shorter_one_completed_first():
    stops = ["abcd", "bc"]
    ids = _ids("abcd")
    want = [("", False), ("", False), ("", False), ("", True), ("", True)]
    assert oracle_calls(ids, stops) == want
    assert calls(ids, stops) == want
    ids = _ids("abcx")
    want = [("", False), ("", False), ("", False), ("a", True), ("a", True)]
    assert oracle_calls(ids, stops) == want
    assert calls(ids, stops) == want


def test_an_earlier_starting_stop_that_pending_bytes_cannot_finish_does_not_hold_the_stop():
    stops = ["ab€", "b"]
    ids = _ids("ab", b"\xe2", b"\x82")   # E2 82 may still become the euro sign: not settled
    assert calls(ids, stops, finish=False) == oracle_calls(ids, stops)[:-1] == [("", False)] * 4
    ids = _ids("ab", b"\xf0")            # F0 can never start a euro sign: cut at 'b' now
    want = [("", False), ("", False), ("a", True), ("a", True)]
    assert oracle_calls(ids, stops) == want
    assert calls(ids, stops) == want


def test_include_stop_takes_the_longest_stop_at_the_earliest_start():
    stops = ["ab", "abc"]
    ids = _ids("xabc")
    want = [("x", False), ("xa", False), ("xab", False), ("xabc", True), ("xabc", True)]
    assert oracle_calls(ids, stops, include_stop=True) == want
    assert calls(ids, stops, include_stop=True) == want
    ids = _ids("xabd")
    want = [("x", False), ("xa", False), ("xab", False), ("xab", True), ("xab", True)]
    assert oracle_calls(ids, stops, include_stop=True) == want
    assert calls(ids, stops, include_stop=True) == want


def test_without_include_stop_a_complete_stop_at_the_earliest_start_settles_at_once():
    stops = ["ab", "abc"]
    ids = _ids("xabc")
    want = [("x", False), ("x", False), ("x", True), ("x", True), ("x", True)]
    assert oracle_calls(ids, stops) == want
    assert calls(ids, stops) == want


def test_include_stop_emits_what_a_stop_could_only_cut_after():
    stops = ["abc"]
    ids = _ids("xab")
    want = [("x", False), ("xa", False), ("xab", False), ("xab", False)]
    assert oracle_calls(ids, stops, include_stop=True) == want
    assert calls(ids, stops, include_stop=True) == want
    stops = ["abcde", "c"]  # 'c' is complete, 'abcde' may still be: only the 'd' after 'c' is open
    ids = _ids("abcd")
    want = [("a", False), ("ab", False), ("abc", False), ("abc", False), ("abc", True)]
    assert oracle_calls(ids, stops, include_stop=True) == want
    assert calls(ids, stops, include_stop=True) == want


def test_a_stop_prefix_is_released_when_pending_bytes_cannot_continue_it():
    stops = ["a€"]
    ids = _ids("xa", b"\xe2")   # E2 may become the euro sign: 'a' held
    assert _texts(calls(ids, stops, finish=False)) == _texts(oracle_calls(ids, stops))[:-1] == ["x", "x", "x"]
    ids = _ids("xa", b"\xf0")   # F0 starts a 4-byte character or a U+FFFD, never the euro sign
    assert _texts(oracle_calls(ids, stops)) == ["x", "x", "xa", "xa" + R]
    assert _texts(calls(ids, stops)) == ["x", "x", "xa", "xa" + R]
    stops = ["a" + R]
    ids = _ids("xa", b"\xf0")   # ... but F0 may still turn into a U+FFFD
    assert _texts(oracle_calls(ids, stops)) == ["x", "x", "x", "x"]
    assert _texts(calls(ids, stops)) == ["x", "x", "x", "x"]


def test_a_stop_string_can_be_completed_by_the_replacement_at_the_end():
    stops = ["a" + R]
    ids = _ids("xa", b"\xe2\x82")
    want = [("x", False)] * 4 + [("x", True)]
    assert oracle_calls(ids, stops) == want
    assert calls(ids, stops) == want
    want = [("x", False)] * 3 + [("x", True), ("x", True)]
    assert oracle_calls(ids, stops, max_tokens=4) == want
    assert calls(ids, stops, max_tokens=4) == want


def test_max_tokens_flushes_held_text_on_the_last_push():
    stops = ["ab"]
    ids = _ids("xa", b"\xe2", "b")
    want = [("x", False), ("x", False), ("xa" + R, False), ("xa" + R, False), ("xa" + R, False)]
    assert oracle_calls(ids, stops, max_tokens=3) == want
    assert calls(ids, stops, max_tokens=3) == want


def test_nothing_is_emitted_after_the_stream_ends():
    stops = ["b"]
    ids = _ids("ab", "cdef")
    want = [("a", False)] + [("a", True)] * 6
    assert calls(ids, stops) == want
    stream = StreamDetokenizer(VOCAB, [], include_stop=False, max_tokens=None)
    assert stream.push(ord("q")) == "q"
    assert stream.finish() == ""
    assert (stream.push(ord("r")), stream.finish(), stream.stopped) == ("", "", False)


def test_no_stop_strings_means_only_decoding_holds_text_back():
    ids = _ids("h", b"\xc3", b"\xa9", "!")
    assert _texts(calls(ids)) == ["h", "h", "hé", "hé!", "hé!"]
    assert calls(ids)[-1][1] is False


def test_an_empty_stop_string_raises_value_error():
    with pytest.raises(ValueError):
        StreamDetokenizer(VOCAB, ["ok", ""])


def _tails():
    """Every byte string a stream can end with, at the boundaries of UTF-8's byte ranges: each
    non-ASCII byte; each possible first byte of a sequence followed by a byte on either side of
    every range edge; each 3- and 4-byte lead followed by two such bytes, each 4-byte lead by
    three."""
    seconds = (0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0)
    thirds = (0x7F, 0x80, 0xBF, 0xC0)
    one = [bytes([a]) for a in range(0x80, 0x100)]
    two = [bytes([a, b]) for a in range(0xC0, 0x100) for b in seconds]
    three = [bytes([a, b, c]) for a in range(0xE0, 0xF8) for b in seconds for c in thirds]
    four = [bytes([a, b, 0x80, d]) for a in range(0xF0, 0xF8) for b in seconds for d in thirds]
    return one + two + three + four


def test_every_ending_is_held_exactly_while_a_continuation_can_change_it():
    # Each token is "Z" + an ending: the ASCII byte settles whatever the previous token left
    # open, so after each push exactly that ending is open or not.
    vocab = [b"Z" + tail for tail in _tails()]
    stream = StreamDetokenizer(vocab, [])
    text, data = "", b""
    conts = _oracle.continuations([])
    for token_id, token in enumerate(vocab):
        text += stream.push(token_id)
        data += token
        want, _ = _oracle.determined(data, [], False, conts)
        assert text == want, \
            f"after a token ending in {token[1:].hex()}: emitted ...{text[-12:]!r}, determined ...{want[-12:]!r}"
    text += stream.finish()
    assert text == data.decode("utf-8", "replace")


def test_defaults_are_no_stop_strings_stop_excluded_and_no_token_limit():
    stream = StreamDetokenizer(VOCAB)
    assert "".join(stream.push(t) for t in _ids("ab" * 40)) == "ab" * 40
    assert stream.stopped is False
    stream = StreamDetokenizer(VOCAB, ["b"])
    assert [stream.push(t) for t in _ids("abc")] == ["a", "", ""]
    assert stream.stopped is True


def test_max_tokens_of_one_ends_the_stream_with_the_first_push():
    ids = _ids(b"\xc3\xa9", "x")
    want = [(R, False), (R, False), (R, False), (R, False)]
    assert oracle_calls(ids, max_tokens=1) == want
    assert calls(ids, max_tokens=1) == want
