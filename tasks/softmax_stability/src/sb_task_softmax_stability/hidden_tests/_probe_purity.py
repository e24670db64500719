"""Runs in the solution's process: calls one function on an array that lives here and
returns that array as it is afterwards (was it modified?) with the result. It holds no
expected value and no oracle; the test compares what it returns with its own copy."""
import numpy as np

import softmax


def call_and_return_input(name, x, kwargs):
    result = getattr(softmax, name)(x, **kwargs)
    return {"x_after": np.array(x, copy=True), "result": result}
