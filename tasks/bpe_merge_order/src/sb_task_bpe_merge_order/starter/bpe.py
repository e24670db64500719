"""Byte-level BPE encoding and decoding with a ranked merge list."""


def encode(text, merges):
    """Encode `text` (str) into a list of token ids; see the task description."""
    raise NotImplementedError


def decode_bytes(ids, merges):
    """The bytes that the token ids stand for, concatenated."""
    raise NotImplementedError


def decode(ids, merges):
    """decode_bytes(...) decoded as UTF-8, invalid sequences replaced by U+FFFD."""
    raise NotImplementedError
