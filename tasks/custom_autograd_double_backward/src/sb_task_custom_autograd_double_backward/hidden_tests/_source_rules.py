"""Reading gated_silu.py's source in the judge (never run) for a way into autograd's own
differentiation: torch.autograd.grad / torch.autograd.backward, torch.autograd.functional,
torch.autograd.forward_ad, torch.func / functorch, the engine itself, and any `.backward`
other than one of the file's own classes' (`GatedSiLU.backward(ctx, g)` computes by the
solution's own formulas). `torch.autograd.Function`, `ctx.save_for_backward` and the
definition `def backward` are what the prompt asks for and are never flagged.

It resolves names statically: `import torch as th`, `from torch import autograd`,
`import torch.autograd as ag`, `ag = torch.autograd`, `from torch.autograd import grad as g`,
`sys.modules["torch.autograd"]`, literal `importlib.import_module` / `__import__`, literal
`getattr(obj, "name")`, and literal strings given to exec / eval / compile. A name built at
run time (`getattr(torch.autograd, "gr" + "ad")`) is beyond it: the worker-side engine count
in _probe_gsilu.py is the watch for that."""
import ast

# Dotted names (after resolving aliases) whose use is autograd differentiating for you.
_FORBIDDEN_EXACT = {"torch.autograd.grad", "torch.autograd.backward", "torch.Tensor.backward",
                    "torch.autograd.graph._engine_run_backward", "torch._C._ImperativeEngine",
                    "torch._C._EngineBase"}
_FORBIDDEN_PREFIXES = ("torch.func", "functorch", "torch._functorch", "torch.autograd.functional",
                       "torch.autograd.forward_ad")
# Attributes that only the engine's own plumbing has, on whatever object.
_ENGINE_ATTRIBUTES = {"_execution_engine", "run_backward", "_engine_run_backward"}
_IMPORTERS = {"import_module", "__import__"}
_EXECUTORS = {"exec", "eval", "compile"}


def _forbidden(dotted):
    if dotted is None:
        return False
    return dotted in _FORBIDDEN_EXACT or any(dotted == p or dotted.startswith(p + ".") for p in _FORBIDDEN_PREFIXES)


def _literal(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _callee_name(func):
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


class _Reader:
    def __init__(self, tree):
        self.aliases = {}   # local name -> dotted name it stands for
        self.own_classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        # Aliases first (order-free: an alias bound anywhere counts everywhere), to a fixed point.
        for _ in range(4):
            for node in ast.walk(tree):
                self._bind(node)

    def _bind(self, node):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.aliases[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    self.aliases.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                if a.name != "*":
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = self.resolve(node.value) if node.value is not None else None
            if value is not None:
                for t in targets:
                    if isinstance(t, ast.Name) and t.id not in self.own_classes:
                        self.aliases[t.id] = value

    def resolve(self, node):
        """The dotted name an expression statically stands for, else None."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return None if base is None else f"{base}.{node.attr}"
        if isinstance(node, ast.Subscript):            # sys.modules["torch.autograd"]
            target = node.value
            if isinstance(target, ast.Attribute) and target.attr == "modules" or (
                    isinstance(target, ast.Name) and target.id == "modules"):
                return _literal(node.slice)
        if isinstance(node, ast.Call):
            name = _callee_name(node.func)
            first = _literal(node.args[0]) if node.args else None
            if name in _IMPORTERS and first:
                return first
            if name == "getattr" and len(node.args) >= 2 and _literal(node.args[1]):
                base = self.resolve(node.args[0])
                return None if base is None else f"{base}.{_literal(node.args[1])}"
            if name == "get" and isinstance(node.func, ast.Attribute) and isinstance(
                    node.func.value, (ast.Attribute, ast.Name)) and _callee_name(node.func.value) == "modules":
                return first
        return None

    def findings(self, tree, where, depth):
        found = []
        for node in ast.walk(tree):
            line = f"{where}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for a in node.names:
                    dotted = node.module if a.name == "*" else f"{node.module}.{a.name}"
                    if _forbidden(dotted) or _forbidden(node.module):
                        found.append(f"{line}: from {node.module} import {a.name}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if _forbidden(a.name):
                        found.append(f"{line}: import {a.name}")
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and _forbidden(self.resolve(node)):
                found.append(f"{line}: {node.id} (= {self.resolve(node)})")
            elif isinstance(node, ast.Attribute):
                dotted = self.resolve(node)
                if _forbidden(dotted):
                    found.append(f"{line}: {dotted}")
                elif node.attr in _ENGINE_ATTRIBUTES:
                    found.append(f"{line}: .{node.attr} (autograd's engine)")
                elif node.attr == "backward" and not (isinstance(node.value, ast.Name)
                                                      and node.value.id in self.own_classes):
                    found.append(f"{line}: .backward on something other than the file's own class")
            elif isinstance(node, ast.Call):
                name = _callee_name(node.func)
                if name in ("getattr", "setattr", "hasattr") and len(node.args) >= 2:
                    attr = _literal(node.args[1])
                    dotted = self.resolve(node)
                    if attr in _ENGINE_ATTRIBUTES or attr == "backward" or _forbidden(dotted):
                        found.append(f"{line}: {name}(..., {attr!r})")
                elif name in _IMPORTERS and _forbidden(_literal(node.args[0]) if node.args else None):
                    found.append(f"{line}: {name}({_literal(node.args[0])!r})")
                elif name in _EXECUTORS and node.args and _literal(node.args[0]) and depth < 3:
                    found.extend(scan(_literal(node.args[0]), f"{line} ({name} of a literal string)", depth + 1))
        return found


def scan(source, where, depth=0):
    """Every statically visible way into autograd's own differentiation, one line each."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"{where}: does not parse ({exc.msg})"]
    return list(dict.fromkeys(_Reader(tree).findings(tree, where, depth)))
