"""pytest plugin for the dry check: the hidden tests in ONE process, no harness, no Metal.

sb.judge.probe loads the probe file in-process (judge and worker are the same process
here, which grading never does); the probe's DEVICE becomes the CPU; torch.mps's
compile_shader becomes metal_emu's CPU emulation; each test module's DEVICE_TYPE becomes
"cpu". Results go to the JSON file named by DRY_RESULTS.
"""
import functools
import importlib.util
import json
import os
import sys
import types

import torch

import metal_emu

SIGNATURES = json.loads(os.environ["DRY_SIGNATURES"])
TESTS_DIR = os.environ["DRY_TESTS_DIR"]

torch.mps.compile_shader = functools.partial(metal_emu.compile_shader, signatures=SIGNATURES)
torch.mps.synchronize = lambda: None

_probes = {}


def probe(filename):
    if filename not in _probes:
        name = os.path.splitext(filename)[0]
        spec = importlib.util.spec_from_file_location(name, os.path.join(TESTS_DIR, filename))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.DEVICE = torch.device("cpu")
        _probes[filename] = module
    return _probes[filename]


judge = types.ModuleType("sb.judge")
judge.probe = probe
sys.modules["sb.judge"] = judge

_results = {}


def pytest_collection_modifyitems(items):
    for item in items:
        if hasattr(item.module, "DEVICE_TYPE"):
            item.module.DEVICE_TYPE = "cpu"


def pytest_runtest_logreport(report):
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = crash.message if crash is not None else report.longreprtext.strip().splitlines()[-1]
        _results[report.nodeid] = f"failed ({report.when}): " + " ".join(message.split())[:300]
    elif report.when == "call" and report.passed:
        _results.setdefault(report.nodeid, "passed")


def pytest_sessionfinish(session):
    with open(os.environ["DRY_RESULTS"], "w") as handle:
        json.dump(_results, handle, indent=1)
