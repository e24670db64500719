import numpy as np
import pytest

from sampling import filtered_probs, sample


def test_placeholder():
    raise NotImplementedError("write the tests for sampling.py here")
