"""Reading a solution's source for a module it must not use, in the judge (a task author's tool).

A prompt that says "never use the `time` module" is watched in the worker by patching the
module while the solution runs, which misses a function bound at import (`from time import
monotonic`) and which the solution can disarm. This reads the file as the solver left it
(`sb.judge.solution_source`), never runs it, and finds every statically written way in:

- `import M`, `import M as x`, `import os, M`, `import M.sub`; `from M import ...` (`*` too);
- `__import__("M")`, `importlib.import_module("M")` and the like with a literal name,
  `sys.modules["M"]`, `sys.modules.get("M")`, and any computed callee called with the
  literal name (`getattr(builtins, "__import__")("M")`);
- `M.<attribute of M>` and every use of a name bound by one of the above;
- the same inside a literal string handed to exec, eval or compile.

What it cannot see is code whose text or module name is built at run time (exec of a
computed string, `__import__("ti" + "me")`): keep the worker-side watch for those, and
say so in the task's contract.yaml (`trusted`). Standalone (the standard library only):
the grader lays it beside sb.judge in the judge.
"""

from __future__ import annotations

import ast
import importlib

_IMPORTERS = {"__import__", "import_module"}
_MAP_METHODS = {"get", "pop", "setdefault", "__getitem__"}
_EXECUTORS = {"exec", "eval", "compile"}
_MAX_NESTED_SOURCES = 3


def module_uses(source: str, module: str, filename: str) -> list:
    """Every statically visible use of `module` in `source`, one readable line each
    (`file:line: what`); a file that does not parse is one such line."""
    found: list = []
    _Reader(module).scan(source, filename, found, 0)
    return list(dict.fromkeys(found))


class _Reader:
    def __init__(self, module: str):
        self.module = module
        self.attributes = {name for name in dir(importlib.import_module(module)) if not name.startswith("__")}

    def names_it(self, name) -> bool:
        return isinstance(name, str) and (name == self.module or name.startswith(self.module + "."))

    def scan(self, source: str, where: str, found: list, depth: int) -> None:
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            found.append(f"{where}: does not parse ({exc.msg})")
            return
        bound: set = set()  # names bound to the module or to something imported from it
        for node in ast.walk(tree):
            self._visit(node, f"{where}:{getattr(node, 'lineno', '?')}", found, bound, depth)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in bound and node.id != self.module:
                found.append(f"{where}:{node.lineno}: uses {node.id}, imported from the {self.module} module")

    def _visit(self, node, line: str, found: list, bound: set, depth: int) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if self.names_it(alias.name):
                    found.append(f"{line}: import {alias.name}" + (f" as {alias.asname}" if alias.asname else ""))
                    bound.update(self._bound_by_import(alias))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            self._visit_from(node, line, found, bound)
        elif isinstance(node, ast.Call):
            self._visit_call(node, line, found, depth)
        elif isinstance(node, ast.Subscript):
            if _is_module_map(node.value) and self.names_it(_literal(node.slice)):
                found.append(f"{line}: modules[{_literal(node.slice)!r}]")
        elif isinstance(node, ast.Attribute) and _dotted(node.value) == self.module and node.attr in self.attributes:
            found.append(f"{line}: {self.module}.{node.attr}")

    def _bound_by_import(self, alias) -> set:
        """The name `import alias` binds to the module: `import os.path` binds `os`, which is not os.path
        (its `os.path.<name>` uses are attribute chains, found as such)."""
        if alias.asname:
            return {alias.asname}
        top = alias.name.split(".")[0]
        return {top} if top == self.module else set()

    def _visit_from(self, node: ast.ImportFrom, line: str, found: list, bound: set) -> None:
        """`from M import x`, and for a dotted module `from os import path` (the module itself, by its parent)."""
        if self.names_it(node.module):
            names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names)
            found.append(f"{line}: from {node.module} import {names}")
            bound.update(a.asname or a.name for a in node.names if a.name != "*")
            return
        for alias in node.names:
            if self.names_it(f"{node.module}.{alias.name}"):
                found.append(f"{line}: from {node.module} import {alias.name}"
                             + (f" as {alias.asname}" if alias.asname else ""))
                bound.add(alias.asname or alias.name)

    def _visit_call(self, node: ast.Call, line: str, found: list, depth: int) -> None:
        name, first = _callee(node.func), _first_literal(node)
        if name in _IMPORTERS and self.names_it(first):
            found.append(f"{line}: {name}({first!r})")
        elif isinstance(node.func, (ast.Call, ast.Subscript)) and self.names_it(first):
            found.append(f"{line}: <computed callee>({first!r})")   # getattr(builtins, "__import__")("time")
        elif (name in _MAP_METHODS and isinstance(node.func, ast.Attribute)
              and _is_module_map(node.func.value) and self.names_it(first)):
            found.append(f"{line}: modules.{name}({first!r})")
        elif name in _EXECUTORS and first is not None and depth < _MAX_NESTED_SOURCES:
            self.scan(first, f"{line} ({name} of a literal string)", found, depth + 1)


def _dotted(node):
    """`a.b.c` for a chain of attributes on a name, else None: how a dotted module is spelled in use."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _literal(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _first_literal(node: ast.Call):
    """The call's first argument as a literal string, else its name=/key=/source= keyword's."""
    first = _literal(node.args[0]) if node.args else None
    keywords = (_literal(kw.value) for kw in node.keywords if kw.arg in ("name", "key", "source"))
    return first if first is not None else next((k for k in keywords if k is not None), None)


def _callee(func):
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _is_module_map(node) -> bool:
    return (isinstance(node, ast.Name) and node.id == "modules") or (
        isinstance(node, ast.Attribute) and node.attr == "modules")
