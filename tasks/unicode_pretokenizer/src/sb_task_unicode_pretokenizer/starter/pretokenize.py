"""Pre-tokenization for a byte-level BPE tokenizer: split text into the pieces merges run on."""


def pretokenize(text: str) -> list[str]:
    raise NotImplementedError
