"""Values by value when they are data, by handle otherwise; exceptions as names."""

import builtins
import os
import re
import sys
import threading
import traceback

from .protocol import ProtocolError, RemoteError, clip
from .proxies import Remote


MAX_DEPTH = 64
_OWN_DIR = os.path.dirname(__file__)  # the wire's frames are left out of a solution's traceback
_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON would join an escaped pair of them into one character
_DTYPE_KINDS = "biufcSUM m?"  # no object, void or structured dtypes ever cross

SAFE_EXCEPTIONS = {name: obj for name, obj in vars(builtins).items()
                   if isinstance(obj, type) and issubclass(obj, Exception)}


def _numpy():
    return sys.modules.get("numpy")


def _torch():
    return sys.modules.get("torch")


def _import_if_available(name):
    if name not in sys.modules:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - a module that fails to import is taken as absent
            return None
    return sys.modules.get(name)


def _needed(name, what):
    """The module a value that arrived needs, or a protocol error: a side without numpy or
    torch cannot rebuild an array or a tensor, and must say so rather than fail later."""
    module = _import_if_available(name)
    if module is None:
        raise ProtocolError(f"{what} arrived but {name} is not installed on this side")
    return module


class Codec:
    """Turns values into JSON trees plus buffers and back, with handles for the rest."""

    def __init__(self, peer):
        self.peer = peer

    def encode(self, value, buffers, depth=0):
        if depth > MAX_DEPTH:
            raise ProtocolError("value nested too deeply")
        kind = type(value)
        if kind is str and not value.isascii() and _SURROGATE.search(value):
            buffers.append(value.encode("utf-8", "surrogatepass"))  # every code point as it is
            return {"str": len(buffers) - 1}
        if value is None or kind in (bool, str):
            return value
        if kind is int:
            return value if -(1 << 53) < value < (1 << 53) else {"int": str(value)}
        if kind is float:
            return {"float": repr(value)} if value != value or value in (float("inf"), float("-inf")) else value
        if kind in (list, tuple, set, frozenset):
            items = [self.encode(v, buffers, depth + 1) for v in value]
            return items if kind is list else {kind.__name__: items}
        if kind is dict:
            return {"dict": [[self.encode(k, buffers, depth + 1), self.encode(v, buffers, depth + 1)]
                             for k, v in value.items()]}
        if kind in (bytes, bytearray):
            buffers.append(bytes(value))
            return {kind.__name__: len(buffers) - 1}
        if kind is complex:
            return {"complex": [repr(value.real), repr(value.imag)]}
        if kind is slice:
            return {"slice": [self.encode(v, buffers, depth + 1) for v in (value.start, value.stop, value.step)]}
        if value is Ellipsis:
            return {"ellipsis": 0}
        if kind is range:
            return {"range": [value.start, value.stop, value.step]}
        special = self._encode_special(value, kind, buffers, depth)
        if special is not None:
            return special
        if isinstance(value, Remote) and value._sb_peer is self.peer:
            return {"ref": value._sb_handle}
        if isinstance(value, BaseException):
            return {"exc": describe_exception(value, judged=not self.peer.serves_imports)}
        if isinstance(value, type) and issubclass(value, BaseException):
            return {"exc_class": _class_names(value)}
        return {"handle": self.peer.export(value), "type": _type_label(value), "callable": callable(value)}

    def _encode_special(self, value, kind, buffers, depth):
        np = _numpy()
        if np is not None:
            if kind is np.ndarray and value.dtype.kind in _DTYPE_KINDS and not value.dtype.fields:
                order = "F" if value.flags.f_contiguous and not value.flags.c_contiguous else "C"
                buffers.append(np.asarray(value, order=order).tobytes(order=order))
                return {"ndarray": len(buffers) - 1, "dtype": value.dtype.str, "shape": list(value.shape),
                        "order": order}
            if isinstance(value, np.generic) and value.dtype.kind in _DTYPE_KINDS:
                buffers.append(value.tobytes())
                return {"npscalar": len(buffers) - 1, "dtype": value.dtype.str}
            if isinstance(value, np.dtype) and value.kind in _DTYPE_KINDS and not value.fields:
                return {"npdtype": value.str}
        torch = _torch()
        if torch is not None:
            if kind in (torch.Tensor, torch.nn.Parameter) and value.layout == torch.strided \
                    and value.device.type == "cpu":
                return self._encode_tensor(value, kind, buffers, depth)
            if kind is torch.dtype:
                return {"tdtype": str(value).replace("torch.", "")}
            if kind is torch.Size:
                return {"tsize": list(value)}
            if kind is torch.device:
                return {"tdevice": str(value)}
        return None

    def _encode_tensor(self, value, kind, buffers, depth):
        torch = _torch()
        data = value.detach().contiguous()
        buffers.append(data.reshape(-1).view(torch.uint8).numpy().tobytes() if data.numel() else b"")
        grad = value.grad if value.is_leaf else None
        return {"tensor": len(buffers) - 1, "dtype": str(value.dtype).replace("torch.", ""),
                "shape": list(value.shape), "requires_grad": bool(value.requires_grad),
                "parameter": kind is torch.nn.Parameter,
                "grad": None if grad is None else self.encode(grad, buffers, depth + 1)}

    def decode(self, tree, buffers, depth=0):
        if depth > MAX_DEPTH:
            raise ProtocolError("value nested too deeply")
        if tree is None or isinstance(tree, (bool, int, float, str)):
            return tree
        if isinstance(tree, list):
            return [self.decode(v, buffers, depth + 1) for v in tree]
        if not isinstance(tree, dict) or len(tree) < 1:
            raise ProtocolError("malformed value")
        tag = next(iter(tree))
        decoder = getattr(self, f"_d_{tag}", None)
        if decoder is None:
            raise ProtocolError(f"unknown value tag {tag!r}")
        try:
            return decoder(tree, buffers, depth)
        except ProtocolError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError) as exc:
            raise ProtocolError(f"malformed {tag} value: {type(exc).__name__}: {clip(exc)}") from None

    def _items(self, tree, key, buffers, depth):
        items = tree[key]
        if not isinstance(items, list):
            raise ProtocolError(f"malformed {key} value")
        return [self.decode(v, buffers, depth + 1) for v in items]

    def _d_int(self, tree, buffers, depth):
        text = tree["int"]
        if not isinstance(text, str) or len(text) > 5000:
            raise ProtocolError("malformed int")
        return int(text)

    def _d_float(self, tree, buffers, depth):
        return float(tree["float"])

    def _d_tuple(self, tree, buffers, depth):
        return tuple(self._items(tree, "tuple", buffers, depth))

    def _d_set(self, tree, buffers, depth):
        return set(self._items(tree, "set", buffers, depth))

    def _d_frozenset(self, tree, buffers, depth):
        return frozenset(self._items(tree, "frozenset", buffers, depth))

    def _d_dict(self, tree, buffers, depth):
        pairs = tree["dict"]
        if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise ProtocolError("malformed dict")
        return {self.decode(k, buffers, depth + 1): self.decode(v, buffers, depth + 1) for k, v in pairs}

    def _d_str(self, tree, buffers, depth):
        return bytes(buffers[tree["str"]]).decode("utf-8", "surrogatepass")

    def _d_bytes(self, tree, buffers, depth):
        return bytes(buffers[tree["bytes"]])

    def _d_bytearray(self, tree, buffers, depth):
        return bytearray(buffers[tree["bytearray"]])

    def _d_complex(self, tree, buffers, depth):
        real, imag = tree["complex"]
        return complex(float(real), float(imag))

    def _d_slice(self, tree, buffers, depth):
        return slice(*self._items(tree, "slice", buffers, depth)[:3])

    def _d_ellipsis(self, tree, buffers, depth):
        return Ellipsis

    def _d_range(self, tree, buffers, depth):
        return range(*[int(v) for v in tree["range"][:3]])

    def _d_ndarray(self, tree, buffers, depth):
        np = _needed("numpy", "an array")
        dtype = _safe_dtype(np, tree["dtype"])
        shape = [int(n) for n in tree["shape"]]
        order = "F" if tree.get("order") == "F" else "C"
        flat = np.frombuffer(bytearray(buffers[tree["ndarray"]]), dtype=dtype)
        return flat.reshape(shape, order=order)

    def _d_npscalar(self, tree, buffers, depth):
        np = _needed("numpy", "a numpy scalar")
        dtype = _safe_dtype(np, tree["dtype"])
        return np.frombuffer(buffers[tree["npscalar"]], dtype=dtype)[0]

    def _d_npdtype(self, tree, buffers, depth):
        np = _needed("numpy", "a numpy dtype")
        return _safe_dtype(np, tree["npdtype"])

    def _d_tensor(self, tree, buffers, depth):
        torch = _needed("torch", "a tensor")
        dtype = _torch_dtype(torch, tree["dtype"])
        shape = [int(n) for n in tree["shape"]]
        raw = bytearray(buffers[tree["tensor"]])
        tensor = torch.frombuffer(raw, dtype=dtype).reshape(shape) if raw else torch.zeros(shape, dtype=dtype)
        tensor = tensor.clone()
        if tree.get("parameter"):
            tensor = torch.nn.Parameter(tensor, requires_grad=bool(tree.get("requires_grad")))
        elif tree.get("requires_grad"):
            tensor.requires_grad_(True)
        if tree.get("grad") is not None:
            tensor.grad = self.decode(tree["grad"], buffers, depth + 1)
        return tensor

    def _d_tdtype(self, tree, buffers, depth):
        return _torch_dtype(_needed("torch", "a torch dtype"), tree["tdtype"])

    def _d_tsize(self, tree, buffers, depth):
        torch = _needed("torch", "a torch size")
        return torch.Size([int(n) for n in tree["tsize"]])

    def _d_tdevice(self, tree, buffers, depth):
        text = tree["tdevice"]
        if not isinstance(text, str) or len(text) > 40:
            raise ProtocolError("malformed device")
        return _needed("torch", "a torch device").device(text)

    def _d_exc(self, tree, buffers, depth):
        return build_exception(tree["exc"])

    def _d_exc_class(self, tree, buffers, depth):
        return exception_class(tree["exc_class"])

    def _d_ref(self, tree, buffers, depth):
        return self.peer.exported(tree["ref"])

    def _d_handle(self, tree, buffers, depth):
        return self.peer.proxy(int(tree["handle"]), clip(tree.get("type", "object"), 200),
                               bool(tree.get("callable")))


def _safe_dtype(np, text):
    if not isinstance(text, str) or len(text) > 16:
        raise ProtocolError("malformed dtype")
    dtype = np.dtype(text)
    if dtype.kind not in _DTYPE_KINDS or dtype.fields or dtype.hasobject:
        raise ProtocolError(f"refused dtype {text!r}")
    return dtype


def _torch_dtype(torch, name):
    if torch is None or not isinstance(name, str) or not name.isidentifier():
        raise ProtocolError("malformed torch dtype")
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ProtocolError(f"unknown torch dtype {name!r}")
    return dtype


def _type_label(value):
    kind = type(value)
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', kind.__name__)}"


def _class_names(cls):
    return {"name": cls.__name__, "module": getattr(cls, "__module__", ""),
            "mro": [k.__name__ for k in cls.__mro__ if k not in (object,)][:20]}


JUDGE_ASSERTION = "an assertion in the judge failed (its message stays there: it may hold an expected value)"


def describe_exception(exc, judged=False):
    """Type names, message and the last frames of the traceback, as text. From the judge
    (`judged`: an exception a judge-side object raised into the solution's call) never a
    traceback, whose lines are hidden tests' source, and never an assertion's message,
    which pytest fills with the values compared."""
    if judged and isinstance(exc, AssertionError):
        return {**_class_names(AssertionError), "message": JUDGE_ASSERTION, "args": [JUDGE_ASSERTION], "traceback": ""}
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises
        message = "<unprintable message>"
    args = []
    for arg in getattr(exc, "args", ())[:4]:
        if isinstance(arg, (str, int, float, bool)) or arg is None:
            args.append(arg if not isinstance(arg, str) else clip(arg))
    tb = "" if judged else _last_frames(exc)
    return {**_class_names(type(exc)), "message": clip(message), "args": args, "traceback": clip(tb, 3000)}


def _last_frames(exc) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.dirname(f.filename) != _OWN_DIR][-6:]
    return "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))


_made_classes: dict[tuple, type] = {}
_made_lock = threading.Lock()


def exception_class(names):
    """A class for a remote exception type: the built-in one when it is a built-in, else a
    class made here from its name, subclassing the nearest built-in base (so `pytest.raises
    (ValueError)` still matches a remote subclass of ValueError). Never SystemExit and the
    like: an exception from the other side can only ever be an Exception here."""
    if not isinstance(names, dict):
        raise ProtocolError("malformed exception class")
    name = clip(names.get("name", "RemoteError"), 100)
    module = clip(names.get("module", ""), 200)
    mro = [str(n)[:100] for n in names.get("mro", [])][:20]
    if module == "builtins" and name in SAFE_EXCEPTIONS:
        return SAFE_EXCEPTIONS[name]
    key = (module, name, tuple(mro))
    with _made_lock:
        if key not in _made_classes:
            base = next((SAFE_EXCEPTIONS[n] for n in mro[1:] if n in SAFE_EXCEPTIONS), Exception)
            bases = (RemoteError,) if base is Exception else (RemoteError, base)
            made = type(name if name.isidentifier() else "RemoteError", bases,
                        {"remote_type": name, "remote_mro": tuple(mro), "__module__": module or "remote"})
            _made_classes[key] = made
        return _made_classes[key]


def build_exception(desc):
    if not isinstance(desc, dict):
        raise ProtocolError("malformed exception")
    cls = exception_class(desc)
    message = clip(desc.get("message", ""))
    args = desc.get("args") if isinstance(desc.get("args"), list) else [message]
    exc = _instantiate(cls, args, message)
    if issubclass(cls, RemoteError) and not args:
        exc.args = (message,)
    tb = desc.get("traceback")
    if isinstance(tb, str) and tb:
        exc.add_note("raised in the solution's process:\n" + clip(tb, 3000))
    return exc


def _instantiate(cls, args, message):
    """An instance of `cls` from plain arguments; built-ins whose constructor wants more
    (UnicodeDecodeError takes five) are made without their __init__, keeping type and message."""
    for attempt in ((lambda: cls(*args)), (lambda: cls(message))):
        try:
            return attempt()
        except Exception:  # noqa: BLE001 - a constructor that wants other arguments: built bare below
            continue
    exc = cls.__new__(cls)
    exc.args = (message,)
    return exc
