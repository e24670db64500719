import numpy as np
import pytest

from layernorm import layer_norm, rms_norm


def test_placeholder():
    raise NotImplementedError("write the tests for layernorm.py here")
