"""The prompt's integers-only rule, read from lowp.py's source in the judge (never run).

It sees what is written in the file: imports, numpy's floating-point types and float helpers,
float literals, true division, `np.float32` used for anything but naming the dtype of a view,
of the input, or of a comparison. Code assembled at run time is beyond it.
"""

import ast

import numpy as np

from sb.source_checks import module_uses

ALLOWED_IMPORTS = ("numpy", "typing", "__future__")
FORBIDDEN_MODULES = ("torch", "ml_dtypes", "struct", "ctypes", "math", "fractions", "decimal", "array", "jax")
FLOAT_TYPES = {
    "float16", "float64", "float128", "float96", "longdouble", "double", "half", "single", "float_",
    "longfloat", "floating", "inexact", "bfloat16", "complex64", "complex128", "complex256", "complex_",
    "csingle", "cdouble", "clongdouble", "complexfloating",
}
FLOAT_HELPERS = {
    "rint", "round", "around", "round_", "floor", "ceil", "trunc", "fix", "modf", "ldexp", "frexp",
    "nextafter", "spacing", "finfo", "exp2", "log2", "copysign", "true_divide", "divide", "float_power",
    "isnan", "isinf", "isfinite", "signbit", "fabs", "nan", "inf", "NaN", "Inf", "infty", "PINF", "NINF",
    "pi", "e", "euler_gamma", "nan_to_num",
}
BUILTINS = {"float", "complex", "exec", "eval", "compile", "__import__"}
DTYPE_TAKERS = {"view", "asarray", "ascontiguousarray", "array", "asanyarray", "dtype"}  # where float32 may name a dtype
FLOAT32_SPELLINGS = {"float32", "f4", "<f4", "=f4", "single"}


def _float_dtype_string(value):
    if not isinstance(value, str):
        return False
    try:
        return np.dtype(value).kind in "fc"
    except Exception:  # not a dtype spelling at all
        return False


class _Reader(ast.NodeVisitor):
    def __init__(self, filename):
        self.filename, self.found, self.numpy_names, self.parents = filename, [], {"numpy"}, {}

    def flag(self, node, what):
        self.found.append(f"{self.filename}:{getattr(node, 'lineno', '?')}: {what}")

    def scan(self, tree):
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "numpy":
                        self.numpy_names.add(alias.asname or "numpy")
        self.visit(tree)
        return self.found

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name.split(".")[0] not in ALLOWED_IMPORTS:
                self.flag(node, f"import {alias.name}")

    def visit_ImportFrom(self, node):
        root = (node.module or "").split(".")[0]
        if node.level or root not in ALLOWED_IMPORTS:
            self.flag(node, f"from {'.' * node.level}{node.module or ''} import ...")
        elif root == "numpy":
            for alias in node.names:
                if alias.name in FLOAT_TYPES | FLOAT_HELPERS | {"float32", "*"}:
                    self.flag(node, f"from numpy import {alias.name}")

    def visit_Constant(self, node):
        if isinstance(node.value, (float, complex)):
            self.flag(node, f"floating-point literal {node.value!r}")
        elif isinstance(node.value, str) and _float_dtype_string(node.value):
            if node.value not in FLOAT32_SPELLINGS or not self._names_a_dtype(node):
                if isinstance(self.parents.get(node), (ast.Call, ast.keyword)):
                    self.flag(node, f"floating-point dtype {node.value!r}")

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.Div):
            self.flag(node, "true division /")
        if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.UnaryOp) and isinstance(node.right.op, ast.USub):
            self.flag(node, "a negative power")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if isinstance(node.op, ast.Div):
            self.flag(node, "true division /=")
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in BUILTINS:
            self.flag(node, node.id)

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in self.numpy_names:
            if node.attr in FLOAT_TYPES | FLOAT_HELPERS:
                self.flag(node, f"{node.value.id}.{node.attr}")
            elif node.attr == "float32" and not self._names_a_dtype(node):
                self.flag(node, f"{node.value.id}.float32 used other than as a dtype of a view, the input or a comparison")
        elif node.attr == "astype":
            call = self.parents.get(node)
            if isinstance(call, ast.Call):
                for arg in list(call.args) + [k.value for k in call.keywords]:
                    if isinstance(arg, ast.Attribute) and arg.attr == "float32":
                        self.flag(node, "astype to float32")
        self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) > 1:
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value in FLOAT_TYPES | FLOAT_HELPERS | {"float32"}:
                self.flag(node, f"getattr(..., {name.value!r})")
        self.generic_visit(node)

    def _names_a_dtype(self, node):
        parent = self.parents.get(node)
        if isinstance(parent, ast.Compare):
            return True
        if isinstance(parent, ast.keyword):
            parent = self.parents.get(parent) if parent.arg == "dtype" else None
        if isinstance(parent, ast.Call) and node is not parent.func:
            func = parent.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            return name in DTYPE_TAKERS
        return False


def float_uses(source, filename):
    """Every place `source` steps outside integer operations on bit patterns, one line each."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"{filename}: does not parse ({exc.msg})"]
    found = _Reader(filename).scan(tree)
    for module in FORBIDDEN_MODULES:
        try:
            found += module_uses(source, module, filename)
        except ImportError:  # not installed in the judge: the import rule above still sees it
            pass
    return list(dict.fromkeys(found))
