import numpy as np
import pytest

from lowp import to_bf16, to_e4m3fn, to_e5m2


def test_placeholder():
    raise NotImplementedError("write the tests for lowp.py here")
