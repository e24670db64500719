"""Every hook and every CLI command is documented; the README's task table is generated."""

from __future__ import annotations

import importlib.util
import inspect
import re

import sb
from sb import hookspecs
from sb.cli import cli
from conftest import REPO

DOCS = REPO / "docs"


def hook_names() -> list:
    return [name for name, fn in vars(hookspecs).items()
            if inspect.isfunction(fn) and hasattr(fn, "sb_spec")]


def test_every_hook_has_a_docstring_and_a_doc_section():
    names = hook_names()
    assert {"register_tasks", "register_models", "register_sandboxes"} <= set(names)
    text = (DOCS / "plugins.md").read_text()
    for name in names:
        assert getattr(hookspecs, name).__doc__, name
        assert f"## `{name}`" in text, f"docs/plugins.md has no section for {name}"


def test_every_cli_command_has_a_doc_section():
    text = (DOCS / "cli.md").read_text()
    for name in cli.commands:
        assert re.search(rf"^## `sb {name}`", text, re.M), f"docs/cli.md has no section for sb {name}"


def test_every_cli_option_is_documented():
    """Each long option of each command is named in its docs/cli.md section, or in the page
    that section sends the reader to (`See [speed.md](speed.md)`)."""
    import click
    text = (DOCS / "cli.md").read_text()
    sections = {m.group(1): m.group(2) for m in
                re.finditer(r"^## `sb ([a-z-]+)`\n(.*?)(?=^## |\Z)", text, re.M | re.S)}
    missing = []
    for name, command in cli.commands.items():
        section = sections.get(name, "")
        linked = re.findall(r"See \[[^]]+\]\(([a-z-]+\.md)\)", section)
        pages = [section] + [(DOCS / page).read_text() for page in linked]
        for param in command.params:
            for opt in param.opts if isinstance(param, click.Option) else ():
                if opt.startswith("--") and opt != "--help" and not any(opt in page for page in pages):
                    missing.append(f"sb {name} {opt}")
    assert not missing, f"not in docs/cli.md (or the page its section links to): {missing}"


def test_public_surface_is_exactly_all():
    public = {name for name in dir(sb) if not name.startswith("_")}  # the lazy names included
    modules = {name for name in public if inspect.ismodule(getattr(sb, name))}
    assert public - modules == set(sb.__all__)


def load_tool(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_task_table_is_in_sync_with_the_packages():
    tool = load_tool("task_table")
    readme = (REPO / "README.md").read_text()
    assert tool.replace_block(readme, tool.table()) == readme, "run: python tools/task_table.py --write"


def test_every_built_in_plugin_has_a_doc_section(pm):
    """docs/plugins.md has a section for every built-in adapter, sandbox and reporter."""
    from sb.plugins import collect
    text = (DOCS / "plugins.md").read_text()
    adapters = collect(pm, "register_models", "adapter", lambda a: a.name)
    sandboxes = collect(pm, "register_sandboxes", "sandbox", lambda s: s.name)
    for name, source in adapters.sources.items():
        if source == "scratchbench":
            assert f"### Built-in adapter `{name}`" in text, name
    for name, source in sandboxes.sources.items():
        if source == "scratchbench":
            assert f"### Built-in sandbox `{name}`" in text, name
    reporters = collect(pm, "register_reporters", "reporter", lambda r: r.name)
    assert "inspect" in reporters.items
    for name, source in reporters.sources.items():
        if source == "scratchbench":
            assert f"### Built-in reporter `{name}`" in text, name


def test_the_validity_page_renders_every_figure_and_what_was_not_run():
    tool = load_tool("validity")
    data = {"wall_s": 12.5, "not_run": ["b_task"], "rows": {"a_task": {
        "version": 3, "clauses": 9, "worker_observed": 3, "trusted": 2, "test_functions": 14,
        "hand": {"caught": 5, "total": 5, "unchecked": 0},
        "generated": {"total": 12, "killed": 9, "equivalent": 2, "survived": 1, "unchecked": 0}}}}
    page = tool.render(data)
    assert "| a_task | 3 | 5/5 | 9/10 (90%) | 2 | 12 | 9 | 3 | 2 | 14 |" in page
    assert "9/10 non-equivalent generated mutants killed (90.0%)" in page and "took 12.5 s" in page
    assert "Not in these runs: b_task" in page


def test_a_validity_update_replaces_only_the_tasks_it_measured():
    tool = load_tool("validity")
    previous = {"wall_s": 100.0, "not_run": ["c_task"], "rows": {"a_task": {"version": 1}, "b_task": {"version": 2}}}
    fresh = {"wall_s": 7.5, "rows": {"a_task": {"version": 4}, "c_task": {"version": 1}}}
    data = tool.updated(previous, fresh)
    assert data["rows"] == {"a_task": {"version": 4}, "b_task": {"version": 2}, "c_task": {"version": 1}}
    assert data["wall_s"] == 107.5 and data["not_run"] == []


def test_the_architecture_map_names_every_module_of_the_harness():
    """docs/architecture.md's module map matches the tree: a top-level module by its file
    name, a module in a folder by its name inside that folder's entry."""
    import re
    text = (REPO / "docs" / "architecture.md").read_text()
    block = text[text.index("```\nharness/src/sb/"):]
    block = block[:block.index("```", 3)]
    entries: dict = {}
    current = None
    for line in block.splitlines():
        head = re.match(r"^  (\S+)", line)
        if head:
            current = head.group(1)
        if current:
            entries[current] = entries.get(current, "") + line + "\n"
    root = REPO / "harness" / "src" / "sb"
    missing = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "__init__.py" and path.parent == root or "__pycache__" in path.parts:
            continue
        parts = path.relative_to(root).parts
        if len(parts) == 1:
            found = parts[0] in block
        else:
            name = parts[-2] if path.name == "__init__.py" else path.stem
            found = re.search(rf"\b{re.escape(name)}\b", entries.get(parts[0] + "/", "")) is not None
        if not found:
            missing.append("/".join(parts))
    assert not missing, f"not in docs/architecture.md's map: {missing}"
    stale = [name for name in re.findall(r"^ {2,4}(\S+\.py)\b", block, flags=re.M)
             if not list(root.rglob(name))]
    assert not stale, f"in docs/architecture.md's map but not in the tree: {stale}"
