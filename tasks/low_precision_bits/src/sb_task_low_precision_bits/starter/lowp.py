"""float32 <-> bfloat16, float8 e4m3fn and float8 e5m2, on bit patterns with integer arithmetic only."""

import numpy as np


def float32_to_bf16(x, *, saturate):
    raise NotImplementedError


def float32_to_e4m3fn(x, *, saturate):
    raise NotImplementedError


def float32_to_e5m2(x, *, saturate):
    raise NotImplementedError


def bf16_to_float32(bits):
    raise NotImplementedError


def e4m3fn_to_float32(bits):
    raise NotImplementedError


def e5m2_to_float32(bits):
    raise NotImplementedError
