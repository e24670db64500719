import pytest

from toolcalls import parse_tool_calls


def test_placeholder():
    raise NotImplementedError("write the tests for toolcalls.py here")
