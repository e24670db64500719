"""Pick where the kernel runs, before anything imports triton.

On a machine with CUDA the kernel is launched for real. Without one, Triton's interpreter
(TRITON_INTERPRET=1) runs it on CPU tensors. Triton reads that variable when a kernel is
decorated, so this module must be imported before the solution module.
"""
import os

import torch

ON_CUDA = torch.cuda.is_available()
if not ON_CUDA:
    os.environ["TRITON_INTERPRET"] = "1"
DEVICE = torch.device("cuda" if ON_CUDA else "cpu")
