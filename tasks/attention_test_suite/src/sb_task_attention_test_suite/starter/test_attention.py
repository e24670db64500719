import numpy as np
import pytest
import torch

from attention import attention


def test_placeholder():
    raise NotImplementedError("write the tests for attention.py here")
