import numpy as np
import pytest

from quantize import dequantize, quantize


def test_placeholder():
    raise NotImplementedError("write the tests for quantize.py here")
