"""Hidden tests for bpe_merge_order.

Hand-worked cases each isolate one rule of the encoding; the randomised cases compare
against _bpe_oracle, a separate plain implementation of the rule written for the tests.
"""
import ast
import sys

import pytest

from _bpe_oracle import CORPUS, TRAINED, oracle_encode, random_text, shuffled
from bpe import decode, decode_bytes, encode
from sb.judge import probe, solution_source


def ids_to_tokens(ids, merges):
    return [decode_bytes([i], merges) for i in ids]


# ---------------------------------------------------------------- starting point: UTF-8 bytes


def test_no_merges_gives_the_utf8_bytes():
    text = "aé€🙂"
    assert encode(text, []) == list(text.encode("utf-8"))


def test_results_are_a_list_of_python_ints_bytes_and_str():
    ids = encode("ab ab", [(b"a", b"b")])
    assert type(ids) is list and ids == [256, 32, 256]
    assert all(type(i) is int for i in ids), [type(i).__name__ for i in ids]
    assert type(decode_bytes(ids, [(b"a", b"b")])) is bytes
    assert type(decode(ids, [(b"a", b"b")])) is str


def test_single_byte_text():
    assert encode("a", TRAINED) == [97]
    assert encode("\x00", [(b"\x00", b"\x00")]) == [0]
    assert decode([0], []) == "\x00"


def test_uses_the_standard_library_only():
    assert encode("ab", [(b"a", b"b")]) == [256]
    # Read, never run: every module the solution imports is part of the standard library.
    tree = ast.parse(solution_source("bpe.py"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    outside = sorted(name for name in imported if name not in sys.stdlib_module_names)
    assert not outside, f"bpe.py imports modules outside the standard library: {outside}"


def test_empty_text_encodes_to_an_empty_list():
    assert encode("", TRAINED) == []


def test_encoding_starts_from_bytes_not_characters():
    # The merge joins the second byte of "é" (c3 a9) with "!": only possible on bytes.
    merges = [(b"\xa9", b"!"), (b"\xc3", b"\xa9")]
    assert encode("é!", merges) == [0xC3, 256]
    assert decode(encode("é!", merges), merges) == "é!"


def test_merge_across_a_character_boundary():
    merges = [(b"\xa9", b"\xc3")]
    ids = encode("éé", merges)
    assert ids == [0xC3, 256, 0xA9]
    assert decode(ids, merges) == "éé"


def test_no_pre_splitting_on_any_kind_of_whitespace():
    # Separators beyond ASCII space and \n: tab, CR LF, no-break space (c2 a0), line
    # separator U+2028 (e2 80 a8), ideographic space U+3000 (e3 80 80). Each merge joins a
    # separator's bytes with a neighbour's, which only works on the unsplit byte sequence.
    text = "a\tb\r\nc\u00a0d\u2028e\u3000f"
    merges = [(b"a", b"\t"), (b"\r", b"\n"), (b"b", b"\r\n"), (b"\xa0", b"d"), (b"c", b"\xc2"),
              (b"\xa8", b"e"), (b"\x80", b"f")]
    tokens = ids_to_tokens(encode(text, merges), merges)
    assert tokens == [b"a\t", b"b\r\n", b"c\xc2", b"\xa0d", b"\xe2", b"\x80", b"\xa8e", b"\xe3", b"\x80",
                      b"\x80f"]
    assert decode(encode(text, merges), merges) == text


def test_no_pre_splitting_on_whitespace_or_punctuation():
    merges = [(b"a", b" "), (b"a ", b"b"), (b",", b"\n"), (b"b", b",\n")]
    # "a " (rank 0), then "a b" (rank 1), then ",\n" (rank 2); "b"+",\n" never forms.
    assert encode("a b,\n", merges) == [257, 258]
    assert ids_to_tokens(encode("a b,\n", merges), merges) == [b"a b", b",\n"]


# ---------------------------------------------------------------- which pair, in which order


def test_lowest_rank_wins_over_leftmost_position():
    # "ab" is leftmost but ranked 1; "bc" is ranked 0 and must be taken first.
    merges = [(b"b", b"c"), (b"a", b"b")]
    assert encode("abc", merges) == [ord("a"), 256]


def test_lowest_rank_wins_over_longest_token():
    # A longest-match tokenizer would take "abc" then "d"; BPE takes "cd" (rank 0) first,
    # after which "abc" can no longer form.
    merges = [(b"c", b"d"), (b"a", b"b"), (b"ab", b"c")]
    assert ids_to_tokens(encode("abcd", merges), merges) == [b"ab", b"cd"]


def test_lowest_rank_is_the_first_in_the_list():
    # Rank is the position in the list: index 0 is the most preferred merge.
    merges = [(b"a", b"b"), (b"b", b"c")]
    assert ids_to_tokens(encode("abc", merges), merges) == [b"ab", b"c"]
    merges = [(b"b", b"c"), (b"a", b"b")]
    assert ids_to_tokens(encode("abc", merges), merges) == [b"a", b"bc"]


def test_only_listed_pairs_merge_not_pairs_that_spell_a_token():
    # After "bc" (rank 0) the sequence is [a, bc]. Its bytes spell "abc", which merge 2
    # defines, but as the pair ("ab", "c"): the adjacent pair ("a", "bc") is not a merge.
    merges = [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]
    assert ids_to_tokens(encode("abc", merges), merges) == [b"a", b"bc"]
    assert encode("abc", merges) == [97, 256]


def test_rescan_finds_pairs_created_by_a_merge():
    merges = [(b"a", b"b"), (b"ab", b"c"), (b"abc", b"abc")]
    assert encode("abc", merges) == [257]
    assert encode("abcabc", merges) == [258]


def test_rank_decides_not_position_in_creation_order():
    # "ab"+"c" is ranked above the merge that creates "ab": once "ab" exists, the
    # better-ranked merge applies, even though the list reached it earlier.
    merges = [(b"ab", b"c"), (b"a", b"b")]
    assert ids_to_tokens(encode("abcab", merges), merges) == [b"abc", b"ab"]


def test_one_step_replaces_every_occurrence_of_the_chosen_pair():
    merges = [(b"a", b"b")]
    assert encode("ab ab xab", merges) == [256, 32, 256, 32, ord("x"), 256]


def test_one_step_replaces_all_occurrences_before_rescanning():
    # Step 1 merges BOTH "ab" into [ab, ab]. ("ab","ab") is not a merge, so it stops.
    # Merging only the first "ab" and rescanning would instead find ("ab","a") at rank 0.
    merges = [(b"ab", b"a"), (b"a", b"b")]
    assert ids_to_tokens(encode("abab", merges), merges) == [b"ab", b"ab"]


# ---------------------------------------------------------------- left-to-right consumption


@pytest.mark.parametrize(
    "text, expected",
    [
        ("aa", [b"aa"]),
        ("aaa", [b"aa", b"a"]),
        ("aaaa", [b"aa", b"aa"]),
        ("aaaaa", [b"aa", b"aa", b"a"]),
    ],
)
def test_a_merge_consumes_left_to_right(text, expected):
    merges = [(b"a", b"a")]
    assert ids_to_tokens(encode(text, merges), merges) == expected


def test_left_to_right_consumption_then_further_merges():
    merges = [(b"a", b"a"), (b"aa", b"a")]
    # "aaa" -> [aa, a] -> ("aa","a") rank 1 -> [aaa]
    assert encode("aaa", merges) == [257]
    # "aaaaa" -> [aa, aa, a] -> ("aa","a") -> [aa, aaa]
    assert ids_to_tokens(encode("aaaaa", merges), merges) == [b"aa", b"aaa"]


# ---------------------------------------------------------------- against the plain oracle


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_matches_oracle_with_a_trained_merge_list(seed):
    text = random_text(seed, 60)
    assert encode(text, TRAINED) == oracle_encode(text, TRAINED)


@pytest.mark.parametrize("seed", [10, 11, 12, 13])
def test_matches_oracle_when_ranks_do_not_follow_creation_order(seed):
    merges = shuffled(TRAINED, seed)
    text = random_text(seed, 60)
    assert encode(text, merges) == oracle_encode(text, merges)


def test_trained_merges_compress_their_own_corpus():
    ids = encode(CORPUS, TRAINED)
    assert ids == oracle_encode(CORPUS, TRAINED)
    assert len(ids) < len(CORPUS.encode("utf-8"))


# ---------------------------------------------------------------- decode


@pytest.mark.parametrize("seed", [20, 21, 22])
def test_decode_round_trips_encode(seed):
    text = random_text(seed, 80)
    for merges in (TRAINED, shuffled(TRAINED, seed), []):
        ids = encode(text, merges)
        assert decode(ids, merges) == text
        assert decode_bytes(ids, merges) == text.encode("utf-8")


def test_decode_bytes_expands_merged_ids():
    merges = [(b"h", b"e"), (b"he", b"\xc3"), (b"\xa9", b"!")]
    assert decode_bytes([256, 108, 257, 258], merges) == b"hel" + b"he\xc3" + b"\xa9!"
    assert decode([258, 257, 0xA9], merges) == "\ufffd!heé"


def test_decode_replaces_invalid_utf8():
    assert decode([0xC3], []) == "\ufffd"
    assert decode([ord("a"), 0xFF, ord("b")], []) == "a\ufffdb"
    assert decode_bytes([ord("a"), 0xFF, ord("b")], []) == b"a\xffb"


def test_decode_bounds_without_merges():
    assert decode_bytes([255, 0], []) == b"\xff\x00"
    with pytest.raises(ValueError):
        decode_bytes([256], [])
    with pytest.raises(ValueError):
        decode([0, 256], [])


@pytest.mark.parametrize("bad_id", [-1, 258, 1000])
def test_decode_rejects_unknown_ids(bad_id):
    merges = [(b"a", b"b"), (b"ab", b"c")]
    with pytest.raises(ValueError):
        decode_bytes([97, bad_id], merges)
    with pytest.raises(ValueError):
        decode([bad_id], merges)


def test_no_function_modifies_the_merge_list():
    # Arguments reach the solution as copies, so this is observed in its process.
    merges = shuffled(TRAINED, 5)
    text = random_text(5, 20)
    ids = oracle_encode(text, merges)
    seen = probe("_probe_bpe.py").merges_after_each_call(merges, text, ids)
    for name in ("encode", "decode_bytes", "decode"):
        assert seen[name]["after"] == merges, f"{name} modified the merge list"
        assert seen[name]["same_objects"], f"{name} replaced entries of the merge list"
