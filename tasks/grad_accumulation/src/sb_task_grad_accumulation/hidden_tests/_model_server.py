"""The model's computation, run here in the judge.

The model accumulation_step receives lives in the solution's process with its parameters
(the optimiser there updates them), but its forward is a custom autograd Function that
sends the input and the current parameter values here and gets the output back, and its
backward sends grad_output here and gets the parameters' gradients back. The function
includes a secret mix of the input features (_expected.secret_mix) that never leaves this
process, so the solution cannot evaluate the model itself, on the whole batch or on
anything else: every output and gradient it uses is computed here, and the record of what
the model was run on (each call's input, parameters and backward) is the judge's own.

The solution's side gets a handle to the server and may call `forward` and `backward`
directly, as often as it likes: every call is recorded like any other, so a forward it
runs that way is a forward the tests count. The record and the mix are private
attributes, which the wire never lets the solution's side read.

Computed in float64 and answered in the parameters' dtype (float32 here): the record and
the expected values do not depend on float32 rounding in the judge, and the solution sees
what a float32 model would give it (float32 outputs and gradients), each rounded once.
"""
import torch

from _expected import model_output64

# Far above the at most 13 forwards (and as many backwards) a test's calls need: past it a
# solution has failed the count already, and refusing more only keeps a runaway loop from
# running into the time limit.
CALL_CAP = 200


class ModelServer:
    """forward(inputs, params) -> (call, output); backward(call, grad_output) -> grads."""

    def __init__(self, mix, shapes):
        self._mix, self._shapes = mix, [tuple(s) for s in shapes]
        self._forwards = []  # per forward: input, params, output64 and its backwards' grad_outputs
        self._refused = []   # calls that were not well-formed (they count as calls made)

    def forward(self, inputs, params):
        self._within_cap()
        try:
            params = self._checked_params(params)
            if type(inputs) is not torch.Tensor or not inputs.is_floating_point() or inputs.dim() < 1 \
                    or inputs.shape[0] < 1 or inputs[0].numel() != self._mix.shape[0]:
                raise TypeError("the model takes a floating-point tensor of samples (batch first)")
        except TypeError as exc:
            self._refused.append(("forward", str(exc)))
            raise
        params64 = [p.to(torch.float64) for p in params]
        out = model_output64(params64, inputs, self._mix)
        self._forwards.append({"input": inputs.clone(), "params": [p.clone() for p in params],
                               "output64": out, "backwards": []})
        return len(self._forwards) - 1, out.to(params[0].dtype)

    def backward(self, call, grad_output):
        self._within_cap()
        record = self._forwards[call] if type(call) is int and 0 <= call < len(self._forwards) else None
        if record is None or type(grad_output) is not torch.Tensor \
                or tuple(grad_output.shape) != tuple(record["output64"].shape):
            self._refused.append(("backward", call))
            raise TypeError("backward takes a call number forward gave and a grad_output of its output's shape")
        record["backwards"].append(grad_output.clone())
        leaves = [p.to(torch.float64).requires_grad_(True) for p in record["params"]]
        out = model_output64(leaves, record["input"], self._mix)
        grads = torch.autograd.grad(out, leaves, grad_output.to(torch.float64))
        return [g.to(p.dtype) for g, p in zip(grads, record["params"])]

    def _checked_params(self, params):
        if type(params) not in (list, tuple) or len(params) != len(self._shapes) or any(
                type(p) not in (torch.Tensor, torch.nn.Parameter) or not p.is_floating_point()
                or tuple(p.shape) != s for p, s in zip(params, self._shapes)):
            raise TypeError(f"the model's parameters are {len(self._shapes)} tensors of shapes {self._shapes}")
        return [p.detach() for p in params]

    def _within_cap(self):
        if len(self._forwards) + sum(len(r["backwards"]) for r in self._forwards) >= CALL_CAP:
            raise RuntimeError(f"the model refuses to run more than {CALL_CAP} passes")
