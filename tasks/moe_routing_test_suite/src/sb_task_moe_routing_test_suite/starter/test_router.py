import numpy as np
import pytest

from router import route


def test_placeholder():
    raise NotImplementedError("write the tests for router.py here")
