"""Hidden tests for grammar_constrained_mask.

Every mask is compared with an oracle that works from the definition alone
(_oracle.BruteForce: all token sequences up to the budget, each finished generation checked by
Python's strict UTF-8 decode and a walk of the automaton), or, for the few-hundred-token
grammar, with a value iteration over positions that uses Python's decoder for every step
(_oracle.LayeredSolver), whose every "allowed" is backed by a concrete completion checked
with the strict decode alone. Hand-written cases also spell their masks out literally.

Everything is observed here, from what the decoder's `allowed()` returns and whether its
`advance()` raises; the solution's process is given the case and nothing else.
"""
import random

import pytest

import _cases
import _oracle
from constrained import ConstrainedDecoder

ANY = (0x0, 0x10FFFF)  # every code point, surrogates included (no UTF-8 string holds one)


def mask_of(decoder, size):
    got = decoder.allowed()
    got = [bool(x) for x in list(got)]
    assert len(got) == size, f"mask of length {len(got)} for a vocabulary of {size}"
    return got


def decoder_after(automaton, vocab, eos_id, max_tokens, prefix):
    decoder = ConstrainedDecoder(automaton, vocab, eos_id, max_tokens)
    for token_id in prefix:
        decoder.advance(token_id)
    return decoder


def assert_every_prefix_matches(automaton, vocab, eos_id, max_tokens):
    """Exhaustive: the mask after every token sequence the rule allows equals the brute force."""
    brute = _oracle.BruteForce(automaton, vocab, eos_id, max_tokens)
    for prefix in sorted(brute.extendable | {()}, key=lambda p: (len(p), p)):
        decoder = decoder_after(automaton, vocab, eos_id, max_tokens, prefix)
        want = brute.mask(prefix)
        assert mask_of(decoder, len(vocab)) == want, (
            f"max_tokens={max_tokens}, after tokens {list(prefix)} "
            f"({b''.join(vocab[t] for t in prefix)!r})")


def chain(text, accept_from=None):
    """An automaton accepting exactly `text`, or every string of `text` from character
    `accept_from` on when `accept_from` is given (the last character then loops)."""
    transitions = [(i, ord(c), ord(c), i + 1) for i, c in enumerate(text)]
    accepting = [len(text)]
    if accept_from is not None:
        accepting = list(range(accept_from, len(text) + 1))
        transitions.append((len(text), ord(text[-1]), ord(text[-1]), len(text)))
    return {"start": 0, "accepting": accepting, "transitions": transitions}


# ------------------------------------------------------------ random generations, brute force


@pytest.mark.parametrize("group", range(6))
def test_masks_equal_the_brute_force_along_random_generations(group):
    for seed in range(group * 20, group * 20 + 20):
        automaton, vocab, eos_id, max_tokens, brute = _cases.small_case(seed)
        rng = random.Random(seed)
        decoder = ConstrainedDecoder(automaton, vocab, eos_id, max_tokens)
        committed = []
        while True:
            want = brute.mask(committed)
            where = f"seed {seed}, after tokens {committed}"
            assert mask_of(decoder, len(vocab)) == want, where
            refused = [t for t in range(len(vocab)) if not want[t]]
            if refused and rng.random() < 0.3:
                with pytest.raises(ValueError):
                    decoder.advance(rng.choice(refused))
                assert mask_of(decoder, len(vocab)) == want, where + ", after a refused advance"
            ok = [t for t in range(len(vocab)) if want[t]]
            if not ok:
                break
            text = [t for t in ok if t != eos_id]
            token_id = rng.choice(text) if text and rng.random() < 0.85 else rng.choice(ok)
            decoder.advance(token_id)
            if token_id == eos_id:
                assert mask_of(decoder, len(vocab)) == [False] * len(vocab), where + ", EOS"
                break
            committed.append(token_id)


# ------------------------------------------------------------------------- the token budget


def test_budget_counts_tokens_not_characters():
    # "€€", "€€€", ...: one two-character token, or a character in three pieces
    automaton = chain("€€", accept_from=2)
    vocab = [b"\xe2", b"\x82", b"\xac", "€".encode(), "€€".encode(), b"", b"\x82\xac"]
    eos_id = 5
    # literal: with 2 tokens only "€€" then EOS fits; with 3, "€" also fits ("€", "€", EOS)
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 2), 7) == [
        False, False, False, False, True, False, False]
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 3), 7) == [
        False, False, False, True, True, False, False]
    # the lead byte alone needs 1 + 1 ("\x82\xac") + 1 ("€") + EOS = 4 tokens
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 4), 7) == [
        True, False, False, True, True, False, False]
    for max_tokens in range(1, 7):
        assert_every_prefix_matches(automaton, vocab, eos_id, max_tokens)


def test_budget_includes_the_eos_token():
    automaton = chain("ab")
    vocab = [b"a", b"b", b"ab", b""]
    eos_id = 3
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 1), 4) == [False] * 4
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 2), 4) == [
        False, False, True, False]
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 3), 4) == [
        True, False, True, False]
    decoder = decoder_after(automaton, vocab, eos_id, 2, [2])
    assert mask_of(decoder, 4) == [False, False, False, True]
    for max_tokens in range(1, 5):
        assert_every_prefix_matches(automaton, vocab, eos_id, max_tokens)


def test_budget_shrinks_with_every_committed_token():
    # any number of "a" then "b": "a" stays allowed only while "b" and EOS still fit
    automaton = {"start": 0, "accepting": [1],
                 "transitions": [(0, 0x61, 0x61, 0), (0, 0x62, 0x62, 1)]}
    vocab = [b"a", b"b", b"", b"aa"]
    eos_id = 2
    decoder = ConstrainedDecoder(automaton, vocab, eos_id, 4)
    want = [[True, True, False, True], [True, True, False, True],
            [False, True, False, False]]
    for step in range(3):
        assert mask_of(decoder, 4) == want[step], f"after {step} tokens"
        if step < 2:
            decoder.advance(0)
    decoder.advance(1)
    assert mask_of(decoder, 4) == [False, False, True, False]
    assert_every_prefix_matches(automaton, vocab, eos_id, 5)


def test_a_split_character_costs_one_token_per_piece():
    smile = "😀".encode()
    automaton = chain("😀b")
    vocab = [smile[:1], smile[1:2], smile[2:3], smile[3:], smile, smile[:2], b"b",
             smile[2:] + b"b", b"</s>"]
    eos_id = 8
    for max_tokens in range(1, 7):
        assert_every_prefix_matches(automaton, vocab, eos_id, max_tokens)
    # with 3 tokens: the whole character then "b", or half of it then the other half with "b"
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 3), 9) == [
        False, False, False, False, True, True, False, False, False]


# ------------------------------------------------------------------- the automaton's states


def test_tokens_into_dead_states_are_refused():
    # 0 -a-> 1 (accepting); 0 -b-> 2, which loops on anything and accepts nothing;
    # 0 -c-> 3, which has no transition at all; 4 accepts and loops but is unreachable
    automaton = {"start": 0, "accepting": [1, 4], "transitions": [
        (0, 0x61, 0x61, 1), (0, 0x62, 0x62, 2), (0, 0x63, 0x63, 3),
        (2, *ANY, 2), (1, 0x61, 0x61, 1), (4, *ANY, 4), (3, 0x64, 0x64, 3)]}
    vocab = [b"a", b"b", b"c", b"ab", b"aa", b"", b"cd", b"d"]
    eos_id = 5
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 4), 8) == [
        True, False, False, False, True, False, False, False]
    for max_tokens in range(1, 5):
        assert_every_prefix_matches(automaton, vocab, eos_id, max_tokens)


def test_nothing_is_allowed_when_no_completion_exists():
    dead_start = {"start": 0, "accepting": [1], "transitions": [(0, *ANY, 0), (1, *ANY, 1)]}
    vocab = [b"a", b"", b"b"]
    decoder = ConstrainedDecoder(dead_start, vocab, 1, 5)
    assert mask_of(decoder, 3) == [False, False, False]
    for token_id in range(3):
        with pytest.raises(ValueError):
            decoder.advance(token_id)
    # reachable, but only beyond the budget: "aaaa" needs 4 tokens and EOS
    four = chain("aaaa")
    assert mask_of(ConstrainedDecoder(four, vocab, 1, 4), 3) == [False, False, False]
    assert mask_of(ConstrainedDecoder(four, vocab, 1, 5), 3) == [True, False, False]


# ------------------------------------------------------------------------ UTF-8 boundaries


def test_a_token_ending_inside_a_character_needs_a_completion_the_vocabulary_offers():
    euro, kip = "€".encode(), "₭".encode()          # e2 82 ac, e2 82 ad
    head = euro[:2]
    # "€" leads to a state with no way on; "₭" accepts
    automaton = {"start": 0, "accepting": [2],
                 "transitions": [(0, 0x20AC, 0x20AC, 1), (0, 0x20AD, 0x20AD, 2)]}
    no_live_tail = [head, euro[2:], b"x", b""]
    assert mask_of(ConstrainedDecoder(automaton, no_live_tail, 3, 5), 4) == [
        False, False, False, False]
    with_live_tail = [head, euro[2:], kip[2:], b""]
    assert mask_of(ConstrainedDecoder(automaton, with_live_tail, 3, 5), 4) == [
        True, False, False, False]
    assert mask_of(ConstrainedDecoder(automaton, with_live_tail, 3, 2), 4) == [
        False, False, False, False]
    # a live character exists, but no token continues the sequence
    both = {"start": 0, "accepting": [1], "transitions": [(0, 0x20AC, 0x20AD, 1)]}
    no_tail = [head, kip, b"", b"\xe2"]
    assert mask_of(ConstrainedDecoder(both, no_tail, 2, 5), 4) == [
        False, True, False, False]
    for vocab, eos_id in ((no_live_tail, 3), (with_live_tail, 3), (no_tail, 2)):
        for max_tokens in range(1, 5):
            assert_every_prefix_matches(automaton, vocab, eos_id, max_tokens)
            assert_every_prefix_matches(both, vocab, eos_id, max_tokens)


def test_tokens_starting_with_continuation_bytes():
    euro = "€".encode()
    automaton = chain("€b€", accept_from=2)
    vocab = [euro[:2], euro[2:], euro[2:] + b"b", euro[2:] + b"b" + euro[:1], euro[1:],
             euro[2:] * 2, b"b", euro, b""]
    eos_id = 8
    # a continuation byte cannot start the text; after e2 82 it completes the character
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 4), 9) == [
        True, False, False, False, False, False, False, True, False]
    decoder = decoder_after(automaton, vocab, eos_id, 4, [0])
    assert mask_of(decoder, 9) == [
        False, True, True, True, False, False, False, False, False]
    for max_tokens in range(1, 6):
        assert_every_prefix_matches(automaton, vocab, eos_id, max_tokens)


STRICT_VOCAB = [
    b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xed\xa0\x80",
    b"\xed\xbf\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80",
    b"\xf5\x80\x80\x80", b"\xff", b"\xfe", b"\x80",                 # never valid
    b"\xc2\x80", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xee\x80\x80",
    b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"a",                   # valid boundaries
    b"\xc0", b"\xc2", b"\xe0", b"\xed", b"\xf0", b"\xf4", b"\xf5",     # lead bytes alone
    b"\x80", b"\x9f\xbf", b"\xa0\x80", b"\x80\x80", b"\x8f\xbf\xbf", b"\x90\x80\x80",
    b"",
]


def test_only_strict_utf8_is_text():
    automaton = {"start": 0, "accepting": [0], "transitions": [(0, *ANY, 0)]}
    eos_id = len(STRICT_VOCAB) - 1
    brute = _oracle.BruteForce(automaton, STRICT_VOCAB, eos_id, 3)
    start = mask_of(ConstrainedDecoder(automaton, STRICT_VOCAB, eos_id, 3), len(STRICT_VOCAB))
    assert start == brute.mask(())
    assert [STRICT_VOCAB[t] for t in range(20) if start[t]] == [
        b"\xc2\x80", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xf0\x90\x80\x80",
        b"\xf4\x8f\xbf\xbf", b"a"]
    for lead in range(20, 27):
        decoder = ConstrainedDecoder(automaton, STRICT_VOCAB, eos_id, 3)
        if not start[lead]:
            with pytest.raises(ValueError):
                decoder.advance(lead)
            continue
        decoder.advance(lead)
        assert mask_of(decoder, len(STRICT_VOCAB)) == brute.mask((lead,)), STRICT_VOCAB[lead]


SECOND_BYTES = [0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0]  # every boundary a lead sets
LATER_BYTES = [0x7F, 0x80, 0xBF, 0xC0]


def whole_sequences():
    """Every byte below 0xC0 alone, and 2- to 4-byte sequences from every byte >= 0xC0 with each
    boundary second byte, and third and fourth byte boundaries: valid or not, Python's decode
    decides. (No token here can continue another's incomplete character, which keeps the
    positions a decoder can reach few.)"""
    out = [bytes([b]) for b in range(0xC0)]
    for lead in range(0xC0, 0x100):
        for second in SECOND_BYTES:
            for length in (2, 3, 4):
                out.append(bytes([lead, second]) + b"\x80" * (length - 2))
    for lead, second in ((0xE1, 0x80), (0xEF, 0xBF), (0xF1, 0x80), (0xF4, 0x8F), (0xF0, 0x90)):
        for later in LATER_BYTES:
            out.append(bytes([lead, second, later]) + b"\x80" * (lead >= 0xF0))
            if lead >= 0xF0:
                out.append(bytes([lead, second, 0xBF, later]))
    return list(dict.fromkeys(out))


def chunks(tokens, size):
    return [tokens[i:i + size] for i in range(0, len(tokens), size)]


def test_every_utf8_boundary_in_whole_tokens():
    # one token then EOS: a token is allowed exactly when it is valid UTF-8 by itself
    automaton = {"start": 0, "accepting": [0], "transitions": [(0, *ANY, 0)]}
    for part in chunks(whole_sequences(), 255):
        vocab = part + [b""]
        eos_id = len(part)
        want = _oracle.BruteForce(automaton, vocab, eos_id, 2).mask(())
        got = mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 2), len(vocab))
        wrong = [vocab[t] for t in range(len(vocab)) if got[t] != want[t]]
        assert not wrong, f"wrong verdict on {wrong[:8]}"


def test_every_utf8_boundary_in_split_tokens():
    # a lead byte, or a lead and a second byte, then one token of continuation bytes, then EOS
    automaton = {"start": 0, "accepting": [0], "transitions": [(0, *ANY, 0)]}
    heads = [bytes([b]) for b in range(0x80, 0x100)]
    heads += [bytes([lead, second]) for lead in range(0xC0, 0x100) for second in SECOND_BYTES]
    tails = [b"\x80", b"\x80\x80", b"\x80\x80\x80", b"\xbf", b"\xbf\xbf", b"\xbf\xbf\xbf",
             b"\x8f\x80", b"\x9f\x80", b"\x90\x80\x80", b"\xa0\x80"]
    for part in chunks(heads, 40):
        vocab = part + tails + [b""]
        eos_id = len(vocab) - 1
        want = _oracle.BruteForce(automaton, vocab, eos_id, 3).mask(())
        got = mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 3), len(vocab))
        wrong = [vocab[t] for t in range(len(vocab)) if got[t] != want[t]]
        assert not wrong, f"wrong verdict on {wrong[:8]}"


# --------------------------------------------------------------------------- EOS and advance


def test_eos_bytes_are_not_text():
    automaton = chain("aab")
    vocab = [b"a", b"ab", b"b", b"aab"]        # EOS is id 1, whose bytes are ignored
    assert mask_of(ConstrainedDecoder(automaton, vocab, 1, 3), 4) == [
        False, False, False, True]
    assert mask_of(ConstrainedDecoder(automaton, vocab, 1, 4), 4) == [
        True, False, False, True]
    for max_tokens in range(1, 6):
        assert_every_prefix_matches(automaton, vocab, 1, max_tokens)


def test_eos_only_where_the_bytes_decode_completely_to_an_accepted_string():
    # accepts "é" and the empty string; "\xc3" alone is a pending character, not text
    automaton = {"start": 0, "accepting": [0, 1], "transitions": [(0, 0xE9, 0xE9, 1)]}
    vocab = [b"\xc3", b"\xa9", b"", "é".encode()]
    eos_id = 2
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 3), 4) == [
        True, False, True, True]
    decoder = decoder_after(automaton, vocab, eos_id, 3, [0])
    assert mask_of(decoder, 4) == [False, True, False, False]
    decoder.advance(1)
    assert mask_of(decoder, 4) == [False, False, True, False]
    assert_every_prefix_matches(automaton, vocab, eos_id, 4)


def test_an_empty_token_uses_the_budget():
    automaton = chain("ab")
    vocab = [b"", b"a", b"b", b"</s>"]
    eos_id = 3
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 3), 4) == [
        False, True, False, False]
    assert mask_of(ConstrainedDecoder(automaton, vocab, eos_id, 4), 4) == [
        True, True, False, False]
    for max_tokens in range(1, 6):
        assert_every_prefix_matches(automaton, vocab, eos_id, max_tokens)


def test_nothing_is_allowed_after_eos():
    automaton = chain("a", accept_from=0)
    vocab = [b"a", b""]
    decoder = decoder_after(automaton, vocab, 1, 5, [0])
    assert mask_of(decoder, 2) == [True, True]
    decoder.advance(1)
    assert mask_of(decoder, 2) == [False, False]
    for token_id in (0, 1):
        with pytest.raises(ValueError):
            decoder.advance(token_id)
    assert mask_of(decoder, 2) == [False, False]


def test_a_refused_advance_raises_and_changes_nothing():
    automaton = chain("€b")
    euro = "€".encode()
    vocab = [euro[:1], euro[1:], b"b", b"", b"x", euro]
    eos_id = 3
    decoder = ConstrainedDecoder(automaton, vocab, eos_id, 4)
    first = mask_of(decoder, 6)
    assert first == [True, False, False, False, False, True]
    for token_id in (1, 2, 3, 4, -1, 6):   # -1 is not an id, though Python would index by it
        with pytest.raises(ValueError):
            decoder.advance(token_id)
        assert mask_of(decoder, 6) == first, f"after refusing {token_id}"
    decoder.advance(0)
    # three tokens left: the tail, "b", EOS; a refused "b" must not use one of them
    with pytest.raises(ValueError):
        decoder.advance(2)
    assert mask_of(decoder, 6) == [False, True, False, False, False, False]
    decoder.advance(1)
    decoder.advance(2)
    assert mask_of(decoder, 6) == [False, False, False, True, False, False]


def test_constructor_rejects_a_bad_eos_id_or_budget():
    automaton = chain("a")
    with pytest.raises(ValueError):
        ConstrainedDecoder(automaton, [b"a", b""], 2, 3)
    with pytest.raises(ValueError):
        ConstrainedDecoder(automaton, [b"a", b""], -1, 3)
    with pytest.raises(ValueError):
        ConstrainedDecoder(automaton, [b"a", b""], 1, 0)


def test_mask_is_a_list_of_bools():
    decoder = ConstrainedDecoder(chain("a"), [b"a", b"", b"b"], 1, 2)
    got = decoder.allowed()
    assert isinstance(got, list) and [type(x) for x in got] == [bool] * 3
    assert got == [True, False, False]


# ----------------------------------------------------------------- a few hundred tokens


@pytest.mark.parametrize("seed", [1, 2])
def test_list_grammar_with_a_few_hundred_tokens(seed):
    automaton = _cases.list_grammar()
    vocab, eos_id = _cases.list_vocab(seed)
    max_tokens = 12
    layered = _oracle.LayeredSolver(automaton, vocab, eos_id, max_tokens)
    rng = random.Random(seed)
    decoder = ConstrainedDecoder(automaton, vocab, eos_id, max_tokens)
    committed = []
    while True:
        want = layered.mask(committed)
        where = f"after {b''.join(vocab[t] for t in committed)!r}"
        assert mask_of(decoder, len(vocab)) == want, where
        ok = [t for t in range(len(vocab)) if want[t]]
        for token_id in ok:
            if token_id == eos_id:
                continue
            finish = layered.witness(committed, token_id)
            assert len(committed) + 1 + len(finish) <= max_tokens
            data = b"".join(vocab[t] for t in committed + [token_id] + finish[:-1])
            assert _oracle.accepts(automaton, data), (where, token_id, data)
        if not ok:
            break
        # prefer tokens that end inside a character, then any text token
        position = layered.position_after(committed)
        split = [t for t in ok if t != eos_id and layered.step(position, vocab[t])[1]]
        text = [t for t in ok if t != eos_id]
        pool = split if split and rng.random() < 0.5 else text or ok
        token_id = rng.choice(pool)
        decoder.advance(token_id)
        if token_id == eos_id:
            break
        committed.append(token_id)
    assert len(committed) >= 4, "the walk is long enough to spend the budget"
