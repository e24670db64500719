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


def _immutable(node: ast.AST) -> bool:
    if isinstance(node, (ast.Constant, ast.Name, ast.Attribute)):
        return True  # a name or attribute aliases a constant or a type
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
    """Line numbers (as text) of module- or class-level assignments of a mutable value."""
    found = [f"line {s.lineno}" for s in _assignments(tree.body) if not _immutable(s.value)]
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        found += [f"line {s.lineno} (class {cls.name})" for s in _assignments(cls.body)
                  if not _immutable(s.value)]
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
