"""Decimal text to and from bfloat16 / float8 bit patterns (see the task statement)."""


def decimal_to_bits(text, fmt):
    """The bit pattern (a Python int) of `text` correctly rounded to the format `fmt`."""
    raise NotImplementedError


def bits_to_decimal(bits, fmt):
    """The shortest decimal text that decimal_to_bits maps back to `bits` in `fmt`."""
    raise NotImplementedError
