"""Facts from every installed distribution's metadata (the sandbox's allow-list, the
toolchain's versions) are parsed once per set of installed folders and kept on disk; a
damaged entry is parsed again, never trusted."""

import os

import pytest

from sb import installed, toolchain
from sb.sandbox import view

PACKAGES = {"numpy": ["numpy"], "yaml": ["PyYAML"]}


@pytest.fixture
def site(monkeypatch, tmp_path):
    """A private cache and one folder on sys.path."""
    monkeypatch.setenv("SB_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.setattr(installed, "import_folders", lambda: [str(folder)])
    return folder


@pytest.fixture
def parses(monkeypatch, site):
    count: list = []
    monkeypatch.setattr(view.metadata, "packages_distributions", lambda: count.append(1) or PACKAGES)
    return count


def test_the_parse_is_read_back_from_disk_by_the_next_command(parses):
    first = view._packages_distributions.__wrapped__()
    again = view._packages_distributions.__wrapped__()  # a fresh command: nothing cached in memory
    assert first == again == PACKAGES and len(parses) == 1


def test_installing_into_a_folder_on_sys_path_parses_again(parses, site):
    view._packages_distributions.__wrapped__()
    (site / "new_dist-1.0.dist-info").mkdir()
    stat = site.stat()
    os.utime(site, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a coarse clock still moves
    view._packages_distributions.__wrapped__()
    assert len(parses) == 2


@pytest.mark.parametrize("damage", ["not json", "[1, 2]", '{"numpy": "numpy"}', '{"numpy": [3]}'])
def test_a_damaged_entry_is_parsed_again_and_rewritten(parses, damage):
    path = installed.cache_path("packages")
    path.parent.mkdir(parents=True)
    path.write_text(damage)
    assert view._packages_distributions.__wrapped__() == PACKAGES
    assert len(parses) == 1 and view._packages_distributions.__wrapped__() == PACKAGES and len(parses) == 1


def test_the_toolchain_versions_are_kept_the_same_way(monkeypatch, site):
    count: list = []
    monkeypatch.setattr(toolchain, "_read_versions", lambda: count.append(1) or {"numpy": "2.3.1", "pytest": "9.0"})
    assert toolchain.distributions.__wrapped__() == toolchain.distributions.__wrapped__() == \
        {"numpy": "2.3.1", "pytest": "9.0"}
    assert len(count) == 1
    installed.cache_path("versions").write_text('{"numpy": 2}')  # a version that is not a string
    assert toolchain.distributions.__wrapped__() == {"numpy": "2.3.1", "pytest": "9.0"} and len(count) == 2


def test_a_sandbox_view_is_kept_the_same_way(monkeypatch, site):
    """What a grading's sandbox may read is worked out once and read back by the next
    command; a damaged entry is worked out again."""
    computed = view.PythonView(readable=("/usr/lib/python3.11", "/venv/numpy"), masked=("/venv",),
                               search_path=("/venv",))
    count: list = []
    monkeypatch.setattr(view, "_computed_view", lambda names, extra: count.append(names) or computed)
    first = view._kept_view.__wrapped__(("numpy",), ("pytest",))
    again = view._kept_view.__wrapped__(("numpy",), ("pytest",))  # a fresh command: nothing cached in memory
    assert first == again == computed and len(count) == 1
    assert view._kept_view.__wrapped__(("torch",), ("pytest",)) == computed and len(count) == 2  # its own entry
    for path in installed.cache_path("x").parent.glob("view-*"):
        path.write_text('{"readable": [1], "masked": [], "search_path": []}')
    assert view._kept_view.__wrapped__(("numpy",), ("pytest",)) == computed and len(count) == 3
