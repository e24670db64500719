import numpy as np
import pytest

from loss import token_loss


def test_placeholder():
    raise NotImplementedError("write the tests for loss.py here")
