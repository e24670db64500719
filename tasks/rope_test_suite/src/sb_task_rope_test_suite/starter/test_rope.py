import numpy as np
import pytest

from rope import apply_rope


def test_placeholder():
    raise NotImplementedError("write the tests for rope.py here")
