"""What this machine can run: decided by the harness before any hidden test starts.

Hidden tests never skip; a task whose device is absent is `needs_accelerator` here.
SB_ASSUME_NO_ACCELERATOR=1 forces the absent answer (used by tests and for dry runs).
"""

from __future__ import annotations

import os
import platform
from importlib.util import find_spec


def has_cuda() -> bool:
    if os.environ.get("SB_ASSUME_NO_ACCELERATOR") == "1" or find_spec("torch") is None:
        return False
    import torch
    return bool(torch.cuda.is_available())


def has_metal() -> bool:
    if os.environ.get("SB_ASSUME_NO_ACCELERATOR") == "1" or platform.system() != "Darwin":
        return False
    if find_spec("torch") is None:
        return False
    import torch
    return bool(torch.backends.mps.is_available())


def accelerator_missing(meta) -> str | None:
    """None when the task can be graded here; else why not."""
    if meta.accelerator is None or meta.cpu_checkable:
        return None
    present = {"cuda": has_cuda, "metal": has_metal}[meta.accelerator]()
    return None if present else f"no {meta.accelerator} device on this machine"


def device_holders(meta) -> list:
    """Processes the driver reports on the task's device, asked after a grading ended
    blocked (its own processes are gone by then). Empty when none, or when the driver
    cannot be asked: only a device seen held by someone else makes a blocked run a
    device stall; a solution that merely sleeps is a timeout like any other."""
    import shutil
    import subprocess
    exe = shutil.which("nvidia-smi")
    if meta.accelerator != "cuda" or exe is None or not glob_nvidia():
        return []
    try:
        done = subprocess.run([exe, "--query-compute-apps=pid,process_name", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return ["the driver did not answer within 15 s"]
    return [line.strip() for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0 else []


def accelerator_devices(meta) -> tuple:
    """Device nodes a CUDA task's processes must see inside the sandbox (none elsewhere)."""
    if meta.accelerator != "cuda":
        return ()
    import glob
    return tuple(sorted(glob.glob("/dev/nvidia*") + glob.glob("/dev/dri/*")))


def accelerator_summary() -> dict:
    """Which devices this machine offers a grading (no torch import unless one is likely)."""
    return {"cuda": bool(glob_nvidia()) and has_cuda(), "metal": has_metal()}


def glob_nvidia() -> list:
    import glob
    return glob.glob("/dev/nvidia[0-9]*")
