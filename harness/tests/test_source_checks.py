"""sb.source_checks.module_uses: every statically written use of a forbidden module, read, never run."""

from __future__ import annotations

import pytest

from sb.source_checks import module_uses

USES = {
    "import time\n": "import time",
    "import os, time as t\n": "import time as t",
    "import time.x\n": "import time.x",
    "from time import monotonic, sleep as _s\n": "from time import monotonic, sleep as _s",
    "from time import *\n": "from time import *",
    "t = __import__('time')\n": "__import__('time')",
    "import importlib\nt = importlib.import_module(name='time')\n": "import_module('time')",
    "import sys\nt = sys.modules['time']\n": "modules['time']",
    "import sys\nt = sys.modules.get('time')\n": "modules.get('time')",
    "import builtins\nt = getattr(builtins, '__import__')('time')\n": "<computed callee>('time')",
    "exec('import time')\n": "(exec of a literal string)",
    "def f(time):\n    return time.monotonic()\n": "time.monotonic",
}


@pytest.mark.parametrize("source", sorted(USES))
def test_each_way_in_is_named_with_its_line(source):
    found = module_uses(source, "time", "s.py")
    assert any(USES[source] in line and line.startswith("s.py:") for line in found), found


def test_a_name_imported_from_the_module_is_reported_where_it_is_used():
    found = module_uses("from time import monotonic as m\n\n\ndef now():\n    return m()\n", "time", "s.py")
    assert "s.py:5: uses m, imported from the time module" in found


def test_other_modules_and_lookalike_names_are_not_uses():
    source = ("import datetime\nimport timeit\nfrom mytime import sleep\n"
              "def f(clock, timeout):\n    time_left = timeout - clock()\n"
              "    return datetime.timedelta(seconds=time_left)\n")
    assert module_uses(source, "time", "s.py") == []


def test_a_file_that_does_not_parse_is_one_line():
    assert module_uses("def (:\n", "time", "s.py") == ["s.py: does not parse (invalid syntax)"]


DOTTED_USES = {
    "import os\nos.path.join('a', 'b')\n": "os.path.join",
    "import os.path\nos.path.exists('a')\n": "import os.path",
    "from os import path\npath.join('a')\n": "from os import path",
    "from os import path as p\n\n\np.join('a')\n": "s.py:4: uses p, imported from the os.path module",
    "from os.path import join\n": "from os.path import join",
    "import os.path as op\nop.join('a')\n": "import os.path as op",
}


@pytest.mark.parametrize("source", sorted(DOTTED_USES))
def test_a_dotted_module_is_found_however_its_parent_spells_it(source):
    found = module_uses(source, "os.path", "s.py")
    assert any(DOTTED_USES[source] in line for line in found), found


def test_the_parent_of_a_dotted_module_is_not_a_use_of_it():
    # `import os.path` binds `os`; os.getcwd is the parent's, not os.path's
    source = "import os\nimport os.path\nos.getcwd()\nos.environ.get('x')\nfrom os import sep\n"
    found = module_uses(source, "os.path", "s.py")
    assert found == ["s.py:2: import os.path"], found
