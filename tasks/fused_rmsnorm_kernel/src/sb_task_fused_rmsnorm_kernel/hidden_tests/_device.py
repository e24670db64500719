"""Pick where the kernel runs in the solution's process, before anything imports triton there.

Grading runs in two processes: this one (the judge) never imports the solution; the
solution's worker runs it. All kernel work goes through the probe _probe_rmsnorm.py, in the
worker. `prepare()` there must come first: with CUDA the kernel is launched for real on
CUDA tensors; without it the probe sets TRITON_INTERPRET=1 before the solution (and so
triton) is imported, and Triton's interpreter runs the kernel on CPU tensors. (The worker
pre-imports only numpy and torch, never triton.) Tensors cross between the processes as
CPU copies; the probe moves them to the device and back.

Every hidden test module imports this module first.
"""
from sb.judge import probe

RMS = probe("_probe_rmsnorm.py")
DEVICE = RMS.prepare()["device"]  # "cuda" or "cpu": where the worker runs the kernel
