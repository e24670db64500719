"""The plugin system: built-ins through the same hooks, duplicates named, loading on demand."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from sb import hookimpl
from sb.catalog import load_tasks
from sb.errors import PluginError
from sb.plugins import DEFAULT_PLUGINS, collect, load_plugins


def test_builtins_register_through_the_hooks(pm):
    models = collect(pm, "register_models", "model adapter", lambda a: a.name)
    sandboxes = collect(pm, "register_sandboxes", "sandbox", lambda cls: cls.name)
    assert {"reference", "starter"} <= set(models.items)
    assert {"none", "bwrap"} <= set(sandboxes.items)
    assert models.sources["reference"] == "scratchbench"


def test_each_call_builds_a_fresh_manager():
    assert load_plugins() is not load_plugins()


def test_a_duplicate_task_name_names_both_distributions(pm, fixture_task):
    def plugin(name):
        module = types.ModuleType(name)

        @hookimpl
        def register_tasks(register):
            register(fixture_task)
        module.register_tasks = register_tasks
        return module

    pm.register(plugin("first"), name="first")
    pm.register(plugin("second"), name="second")
    pm.sources.update({"first": "sb-task-first", "second": "sb-task-second"})
    with pytest.raises(PluginError) as info:
        load_tasks(pm)
    message = str(info.value)
    assert "duplicate task 'fixture_add'" in message
    assert "sb-task-first" in message and "sb-task-second" in message


def test_a_duplicate_adapter_name_is_an_error(pm):
    from sb.models.builtin import ReferenceAdapter
    module = types.ModuleType("copycat")

    @hookimpl
    def register_models(register):
        register(ReferenceAdapter())
    module.register_models = register_models
    pm.register(module, name="copycat")
    with pytest.raises(PluginError, match="duplicate model adapter 'reference'"):
        collect(pm, "register_models", "model adapter", lambda a: a.name)


def test_sb_load_plugins_restricts_entry_points(monkeypatch):
    monkeypatch.setenv("SB_LOAD_PLUGINS", "")
    assert load_tasks(load_plugins()) == {}
    monkeypatch.setenv("SB_LOAD_PLUGINS", "softmax_stability")
    assert list(load_tasks(load_plugins())) == ["softmax_stability"]


def test_installed_task_packages_are_discovered():
    tasks = load_tasks(load_plugins())
    for slug in ("softmax_stability", "bpe_merge_order", "grad_accumulation", "kv_cache_equivalence",
                 "online_softmax_attention"):
        assert slug in tasks


def test_default_plugins_are_modules_with_hooks():
    import importlib
    for name in DEFAULT_PLUGINS:
        module = importlib.import_module(name)
        assert any(callable(getattr(module, attr, None)) for attr in dir(module) if attr.startswith("register_"))


HARNESS_SOURCE = Path(__file__).resolve().parents[1] / "src" / "sb"


def _modules_saying(text: str, allowed: set) -> list:
    return sorted(str(p.relative_to(HARNESS_SOURCE)) for p in HARNESS_SOURCE.rglob("*.py")
                  if "__pycache__" not in p.parts and text in p.read_text() and p.name not in allowed)


def test_only_a_session_loads_plugins():
    """One object owns a command's plugins (sb.session.Session): every other module is
    handed its manager, so nothing else calls load_plugins()."""
    assert _modules_saying("load_plugins()", {"plugins.py", "session.py"}) == []


def test_one_module_turns_a_graded_reference_into_ids_or_a_status():
    """sb.grading.expected alone builds ReferenceIds and writes the ids' cache (settle,
    from_cache): sb grade, sb.api, validate and every sweep go through it."""
    assert _modules_saying("ReferenceIds(", {"expected.py"}) == []
    assert _modules_saying("import record", {"expected.py"}) == []
    assert _modules_saying("reference_failure(", {"expected.py"}) == []


def test_a_session_reads_the_task_packages_once(monkeypatch):
    from sb import catalog
    from sb.session import Session
    calls = []
    real = catalog.load_tasks
    monkeypatch.setattr(catalog, "load_tasks", lambda pm, broken=None: calls.append(1) or real(pm, broken))
    session = Session()
    assert session.tasks() is session.tasks() and "softmax_stability" in session.tasks()
    assert calls == [1]


def test_a_command_naming_one_task_reads_only_its_package(monkeypatch):
    from sb import catalog
    from sb.session import Session
    read = []
    monkeypatch.setattr(catalog, "_slug_matches_entry_point", lambda name, task, names: read.append(name))
    session = Session()
    tasks, broken = session.named(["softmax_stability"])
    assert list(tasks) == ["softmax_stability"] and broken == {} and read == ["softmax_stability"]
    assert session.named(["softmax_stability"])[0]["softmax_stability"] is tasks["softmax_stability"]
    assert read == ["softmax_stability"]  # read once
    assert "csv" in session.named(["no_such_task"])[0]  # not an entry point: every package is read


def test_the_cli_starts_one_session_per_command_that_sb_api_shares(monkeypatch):
    from sb import cli, session
    seen = []
    monkeypatch.setattr(cli, "cli", types.SimpleNamespace(main=lambda **kw: seen.append(session.default_session())))
    for _ in range(2):
        try:
            cli.main(["list"])
        except SystemExit:
            pass
    assert len(seen) == 2 and seen[0] is not seen[1]  # a fresh one per command
    assert session.default_session() is seen[1]        # which sb.api then uses


def test_threads_asking_at_once_share_one_default_session():
    import threading
    from sb import session
    session.start_new_session()
    found = []
    threads = [threading.Thread(target=lambda: found.append(session.default_session())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(s) for s in found}) == 1
