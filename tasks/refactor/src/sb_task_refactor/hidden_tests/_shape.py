"""AST checks of the required shape of sales.py (the solver's text, parsed, never executed)."""
import ast
import pathlib

from sb.judge import solution_source

# compile: re.compile patterns; field: dataclass fields (their default_factory runs per
# instance); namedtuple/NamedTuple/TypeVar build types, not shared containers.
IMMUTABLE_CALLS = {"frozenset", "tuple", "compile", "field", "namedtuple", "NamedTuple", "TypeVar"}
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def module_tree() -> ast.Module:
    return ast.parse(solution_source("sales.py"))


def original_tree() -> ast.Module:
    """The original sales.py (a hidden copy), for the docstring and signature it must keep."""
    return ast.parse((pathlib.Path(__file__).parent / "_original_sales.py").read_text(encoding="utf-8"))


def _dotted(node: ast.AST) -> bool:
    """A plain dotted name (re.IGNORECASE, typing.Final): not `[].append`, `{}.setdefault`."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _immutable(node: ast.AST) -> bool:
    if isinstance(node, (ast.Constant, ast.Name)):
        return True  # a name aliases a constant or a type
    if isinstance(node, ast.Attribute):
        return _dotted(node)  # a dotted name aliases a constant or a type; a bound method of a
        #                        container made on the spot ([].append) is the container itself
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, (ast.Name, ast.Attribute))  # a type alias: tuple[str, int]
    if isinstance(node, ast.Tuple):
        return all(_immutable(element) for element in node.elts)
    if isinstance(node, (ast.UnaryOp, ast.BinOp)):
        return all(_immutable(child) for child in ast.iter_child_nodes(node)
                   if not isinstance(child, (ast.operator, ast.unaryop)))
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        return name in IMMUTABLE_CALLS
    return False


def _statements(body):
    """Every statement that runs at this level: into if/try/with/for/while blocks (they run
    at import or class creation too), never into a function or class body."""
    for statement in body:
        yield statement
        if isinstance(statement, FUNCTIONS + (ast.ClassDef,)) or _is_main_guard(statement):
            continue  # a script block under `if __name__ == "__main__":` never runs on import
        for name in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(statement, name, None) or [])
        for handler in getattr(statement, "handlers", None) or []:
            yield from _statements(handler.body)
        for case in getattr(statement, "cases", None) or []:
            yield from _statements(case.body)


def _is_main_guard(statement) -> bool:
    test = getattr(statement, "test", None) if isinstance(statement, ast.If) else None
    return isinstance(test, ast.Compare) and ast.unparse(test).replace("'", '"') == '__name__ == "__main__"'


def _assignments(body):
    for statement in _statements(body):
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
            yield statement


def mutable_module_or_class_state(tree: ast.Module) -> list[str]:
    """Line numbers (as text) of module- or class-level assignments of a mutable value, and
    of state put into a module or class namespace by other means (state_made_otherwise)."""
    found = [f"line {s.lineno}" for s in _assignments(tree.body) if not _immutable(s.value)]
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        found += [f"line {s.lineno} (class {cls.name})" for s in _assignments(cls.body)
                  if not _immutable(s.value)]
    return found + state_made_otherwise(tree)


# ---- state bound without an assignment statement ------------------------------------------
# An assignment statement is not the only way to bind a name in a module's or a class's
# namespace: setattr on the module (sys.modules[__name__]) or a class, item writes into
# globals()/vars()/locals()/__dict__, a walrus, a for/with/match target or an import. Each
# form below is flagged wherever it binds into a shared namespace; none of them is needed to
# write the required shape (instance attributes on `self` stay allowed).

NAMESPACE_CALLS = {"globals", "vars", "locals"}           # their result is a namespace dict
NAMESPACE_WRITERS = {"update", "setdefault", "__setitem__", "__delitem__", "pop", "popitem", "clear",
                     "__ior__"}
SETATTR_NAMES = {"setattr", "delattr", "__setattr__", "__delattr__"}
FRAME_NAMESPACES = {"f_globals", "f_locals", "f_builtins", "__globals__", "__builtins__", "__dict__"}
# stdlib objects that are mutable containers themselves: importing one binds it here
MUTABLE_IMPORTS = {("sys", "modules"), ("sys", "path"), ("sys", "meta_path"), ("sys", "path_hooks"),
                   ("sys", "path_importer_cache"), ("sys", "argv"), ("sys", "warnoptions"),
                   ("os", "environ"), ("os", "environb"), ("builtins", "__dict__")}


def _is_sys_modules(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "modules" and \
        isinstance(node.value, ast.Name) and node.value.id == "sys"


def _is_namespace(node: ast.AST, selfs=frozenset()) -> bool:
    """globals(), vars(...), locals(), X.__dict__, a frame's f_globals: a namespace as a dict
    (vars(self) and self.__dict__ in a plain method are the instance's own: allowed)."""
    if isinstance(node, ast.Call):
        func = node.func
        own = len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id in selfs
        return isinstance(func, ast.Name) and func.id in NAMESPACE_CALLS and not own
    return isinstance(node, ast.Attribute) and node.attr in FRAME_NAMESPACES and \
        not (node.attr == "__dict__" and isinstance(node.value, ast.Name) and node.value.id in selfs)


def _module_level_names(tree: ast.Module) -> set:
    """Names the module binds to a def, a class or an import (shared objects)."""
    names = set()
    for statement in _statements(tree.body):
        if isinstance(statement, FUNCTIONS + (ast.ClassDef,)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
    return names


def _shared_target(node: ast.AST, shared: set, local: set, methods_self: set) -> bool:
    """True when an attribute written on `node` lands in a module's or class's namespace:
    a module, class or function bound at module level, sys.modules[...], type(x),
    x.__class__, the class a classmethod gets, or anything reached through a namespace dict."""
    if isinstance(node, ast.Name):
        if node.id in methods_self:
            return False  # self in a plain method: instance state
        return node.id in shared and node.id not in local or node.id in {"__class__"}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("type", "__import__"):
        return True
    if isinstance(node, ast.Attribute) and node.attr == "__class__":
        return True
    return any(_is_sys_modules(child) or _is_namespace(child) for child in ast.walk(node))


def _first_parameter(function) -> str:
    args = function.args.posonlyargs + function.args.args
    return args[0].arg if args else ""


def _decorator_names(function) -> set:
    names = set()
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.add(target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", ""))
    return names


def _scopes(tree: ast.Module):
    """(scope node, self names, names local to it) for the module and every function."""
    yield tree, set(), set()
    methods = {id(node) for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)
               for node in cls.body if isinstance(node, FUNCTIONS)}
    for function in (n for n in ast.walk(tree) if isinstance(n, FUNCTIONS + (ast.Lambda,))):
        selfs = set()
        if id(function) in methods and not _decorator_names(function) & {"classmethod", "staticmethod"} \
                and function.name not in ("__init_subclass__", "__new__", "__class_getitem__"):
            selfs.add(_first_parameter(function))
        args = function.args
        local = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        local |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        body = function.body if isinstance(function.body, list) else [function.body]
        for node in (n for statement in body for n in ast.walk(statement)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
        imported = {(alias.asname or alias.name).split(".")[0] for node in ast.walk(function)
                    if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
        if id(function) in methods and _decorator_names(function) & {"classmethod"} or \
                getattr(function, "name", "") in ("__init_subclass__", "__new__", "__class_getitem__"):
            imported.add(_first_parameter(function))  # the class itself
        yield function, selfs, local - selfs - imported


def _own_nodes(scope):
    """The nodes of a scope's own code, not those of a function nested in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, FUNCTIONS + (ast.Lambda,)):
            stack.extend(ast.iter_child_nodes(node))


def _level_targets(body):
    """Targets bound by for, with, match or an import at this level (module or class body,
    if/try/with/for/while blocks included), with the value they bind where one is known."""
    for statement in _statements(body):
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            yield statement, statement.iter, "for target"
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                if item.optional_vars is not None:
                    yield statement, None, "with ... as target"
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                if any(isinstance(p, (ast.MatchAs, ast.MatchStar)) and p.name or
                       isinstance(p, ast.MatchMapping) and p.rest for p in ast.walk(case.pattern)):
                    yield statement, None, "match capture"
        elif isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                if (statement.module, alias.name) in MUTABLE_IMPORTS:
                    yield statement, None, f"from {statement.module} import {alias.name}"
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname and tuple(alias.name.rsplit(".", 1)) in MUTABLE_IMPORTS:
                    yield statement, None, f"import {alias.name} as {alias.asname}"


def _walruses(tree: ast.Module):
    """Every walrus that binds at module or class level: anywhere outside a function body
    (decorators and default values run at definition time, in the enclosing scope), a
    comprehension included, the `if __name__ == "__main__":` block left out."""
    stack = [node for node in tree.body if not _is_main_guard(node)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.NamedExpr):
            yield node
        if isinstance(node, FUNCTIONS + (ast.Lambda,)):
            args = node.args
            stack.extend(args.defaults + [d for d in args.kw_defaults if d is not None])
            stack.extend(getattr(node, "decorator_list", []))
            continue
        stack.extend(ast.iter_child_nodes(node))


def _in_main_guard(tree: ast.Module, target) -> bool:
    return any(target is node for guard in tree.body if _is_main_guard(guard) for node in ast.walk(guard))


def _immutable_iterable(node) -> bool:
    """What a module-level for loop may run over: literal immutables, a string, range(...)."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_immutable(element) for element in node.elts)
    if isinstance(node, ast.Constant):
        return True
    return isinstance(node, ast.Call) and getattr(node.func, "id", "") == "range"


def state_made_otherwise(tree: ast.Module) -> list[str]:
    """State put into a module's or class's namespace without an assignment statement of a
    mutable value: setattr/delattr on a shared object, item writes or writer calls on a
    namespace dict (globals(), vars(), locals(), __dict__, f_globals), writes into or through
    sys.modules, exec/eval of text, and walrus/for/with/match/import targets at module or class
    level that bind a mutable object (or one the source does not show)."""
    found = []
    shared = _module_level_names(tree)

    def flag(node, what):
        found.append(f"line {node.lineno} ({what})")

    for scope, selfs, local in _scopes(tree):
        scope_shared = set(shared)
        if scope is not tree:
            scope_shared = shared | {(alias.asname or alias.name).split(".")[0] for node in ast.walk(scope)
                                     if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
            args = scope.args.posonlyargs + scope.args.args
            if args and args[0].arg not in selfs and args[0].arg not in local:
                scope_shared.add(args[0].arg)  # a classmethod's cls (see _scopes)
        for node in _own_nodes(scope):
            if _is_sys_modules(node) and not _in_main_guard(tree, node):
                flag(node, "sys.modules reached: writes through it cannot be followed")
            if isinstance(node, ast.Name) and node.id in NAMESPACE_CALLS and not _in_main_guard(tree, node) \
                    and not any(isinstance(call, ast.Call) and call.func is node and len(call.args) == 1
                                and isinstance(call.args[0], ast.Name) and call.args[0].id in selfs
                                for call in _own_nodes(scope)):
                flag(node, f"{node.id} used: a namespace dict, whose writes through an alias cannot be followed")
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in ("exec", "eval"):
                    flag(node, f"{name}() of text the check cannot read")
                elif name in SETATTR_NAMES:
                    target = node.args[0] if isinstance(func, ast.Name) or \
                        (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                         and func.value.id in ("object", "type", "builtins")) else func.value
                    if node.args or isinstance(func, ast.Attribute):
                        if scope is tree or _shared_target(target, scope_shared, local, selfs):
                            flag(node, f"{name}() on a module, class or shared object")
                elif isinstance(func, ast.Attribute) and name in NAMESPACE_WRITERS and \
                        (_is_namespace(func.value, selfs) or _is_sys_modules(func.value)):
                    flag(node, f"{name}() on a namespace dict")
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
                if _is_namespace(node.value, selfs) or _is_sys_modules(node.value):
                    flag(node, "item written into a namespace dict or sys.modules")
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
                # at module level an attribute assignment is an Assign, its value checked above
                if scope is not tree and _shared_target(node.value, scope_shared, local, selfs):
                    flag(node, "attribute written on a module, class or shared object")
            elif isinstance(node, ast.ImportFrom) and scope is not tree and \
                    any((node.module, alias.name) in MUTABLE_IMPORTS for alias in node.names):
                flag(node, f"from {node.module} import a mutable object")
    for where, body in [("", tree.body)] + [(f", class {cls.name}", cls.body)
                                           for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)]:
        for node, value, what in _level_targets(body):
            if what == "for target" and _immutable_iterable(value):
                continue
            found.append(f"line {node.lineno} ({what}{where})")
    found += [f"line {node.lineno} (walrus)" for node in _walruses(tree) if not _immutable(node.value)]
    return found


def global_statements(tree: ast.Module) -> list[int]:
    return [node.lineno for node in ast.walk(tree) if isinstance(node, (ast.Global, ast.Nonlocal))]


def mutable_defaults(tree: ast.Module) -> list[str]:
    found = []
    for function in (n for n in ast.walk(tree) if isinstance(n, FUNCTIONS + (ast.Lambda,))):
        defaults = function.args.defaults + [d for d in function.args.kw_defaults if d is not None]
        found += [f"line {d.lineno}" for d in defaults if not _immutable(d)]
    return found


def top_level_function(tree: ast.Module, name: str):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def calls_name(function: ast.FunctionDef, name: str) -> bool:
    """True when the function refers to `name` (a direct call, or handing it to map())."""
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(function))


def parameters(function: ast.FunctionDef) -> dict:
    """The parameter list as plain data, to compare with the original's."""
    args = function.args
    return {"positional": [a.arg for a in args.posonlyargs + args.args],
            "vararg": args.vararg is not None, "kwonly": [a.arg for a in args.kwonlyargs],
            "kwarg": args.kwarg is not None, "defaults": len(args.defaults)}


def shape_problems() -> list[str]:
    """Every way sales.py misses the required shape; empty when it has it."""
    tree = module_tree()
    problems = [f"module/class-level mutable state at {where}" for where in mutable_module_or_class_state(tree)]
    problems += [f"global/nonlocal statement at line {n}" for n in global_statements(tree)]
    problems += [f"mutable default argument at {where}" for where in mutable_defaults(tree)]
    summarize = top_level_function(tree, "summarize")
    if top_level_function(tree, "parse_line") is None:
        problems.append("no top-level function parse_line")
    if summarize is None:
        problems.append("no top-level function summarize")
    elif not calls_name(summarize, "parse_line"):
        problems.append("summarize does not call parse_line")
    return problems
