import math

import numpy as np
import pytest

from grad_clip import clip_grad_norm


def test_placeholder():
    raise NotImplementedError("write the tests for grad_clip.py here")
