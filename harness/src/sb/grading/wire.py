"""The wire between the judge and the solution's worker: data only, bounded, never pickle.

Standalone (the standard library only, numpy and torch when they are already importable):
the grader copies this file into both sandboxes, so neither side needs `sb` installed.

A frame is a header (JSON length, buffer count, each buffer's length), a JSON document and
raw buffers. Values cross by value when they are data (None, bool, int, float, complex,
str, bytes, list, tuple, dict, set, slices, numpy arrays and scalars, torch tensors,
dtypes, exceptions as type name and message); anything else crosses as a *handle*, a
number in the sending side's table, and the receiver gets a `Remote` proxy that forwards
calls, attribute reads and a few container operations. Nothing received is ever executed:
decoding builds plain values, arrays from raw bytes with an allow-listed dtype, and
exceptions as classes made here from names.

Each side serves the other's requests while it waits for an answer, per conversation (a
thread of the caller), so a solution may call back into a fake the judge handed it, and
concurrent calls from several judge threads run concurrently in the worker.
"""

import builtins
import json
import os
import queue
import re
import struct
import sys
import threading
import traceback

MAX_JSON_BYTES = 16 << 20
MAX_BUFFER_BYTES = 512 << 20
MAX_BUFFERS = 100_000
MAX_DEPTH = 64
MAX_TEXT = 4000
MAX_CONVERSATIONS = 1024  # threads one side may open on the other (a task drives 50 at once)
# What loading a probe needs, bound when this module is imported: in the worker that is
# before the solution is, so a solution that rebinds builtins.exec or builtins.compile (or
# types.ModuleType) at import cannot take over how a probe is loaded. What a probe observes
# is still the solution's word (it runs in its process); sb validate counts those rules.
_exec, _compile, _ModuleType = builtins.exec, builtins.compile, type(sys)
_OWN_FILE = __file__  # frames of this module are left out of a solution's traceback

_HEAD = struct.Struct(">II")
_LEN = struct.Struct(">Q")
_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON would join an escaped pair of them into one character
_DTYPE_KINDS = "biufcSUM m?"  # no object, void or structured dtypes ever cross

SAFE_EXCEPTIONS = {name: obj for name, obj in vars(builtins).items()
                   if isinstance(obj, type) and issubclass(obj, Exception)}
ALLOWED_DUNDERS = frozenset({"__len__", "__iter__", "__next__", "__getitem__", "__setitem__", "__delitem__",
                             "__enter__", "__exit__", "__repr__", "__str__", "__bool__", "__call__"})
# What a probe's answer is read through when it is an observation: a live object there
# could answer these however the solution likes (a length its items disagree with makes a
# loop over it compare nothing), so a probe's live objects may not be asked them.
OBSERVATION_DUNDERS = frozenset({"__len__", "__iter__", "__next__", "__getitem__", "__contains__", "__bool__"})
REMOTE_READABLE_DUNDERS = frozenset({"__name__", "__qualname__", "__module__", "__doc__", "__file__",
                                     "__version__", "__all__"})


class ProtocolError(Exception):
    """The peer sent something that is not a well-formed, bounded message."""


class WorkerGone(Exception):
    """The other side closed the wire (it exited or was killed)."""


class RemoteError(Exception):
    """An exception raised on the other side whose type is not a built-in one."""

    remote_type = "RemoteError"
    remote_mro: tuple = ()


# ---------------------------------------------------------------- framing


def _read_exact(fd, n):
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise WorkerGone("the wire was closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd):
    json_len, count = _HEAD.unpack(_read_exact(fd, _HEAD.size))
    if json_len > MAX_JSON_BYTES or count > MAX_BUFFERS:
        raise ProtocolError(f"frame too large: {json_len} bytes of JSON, {count} buffers")
    lengths = [_LEN.unpack(_read_exact(fd, _LEN.size))[0] for _ in range(count)]
    if sum(lengths) > MAX_BUFFER_BYTES:
        raise ProtocolError(f"frame too large: {sum(lengths)} bytes of buffers")
    try:
        doc = json.loads(_read_exact(fd, json_len))
    except ValueError as exc:
        raise ProtocolError(f"a frame that is not JSON: {exc}") from None
    except RecursionError:
        raise ProtocolError("a frame nested too deeply to read") from None
    if not isinstance(doc, dict):
        raise ProtocolError("a frame that is not a JSON object")
    return doc, [_read_exact(fd, n) for n in lengths]


def frame_bytes(doc, buffers):
    body = json.dumps(doc, separators=(",", ":")).encode()
    if len(body) > MAX_JSON_BYTES or sum(len(b) for b in buffers) > MAX_BUFFER_BYTES:
        raise ProtocolError("message too large to send")
    head = _HEAD.pack(len(body), len(buffers)) + b"".join(_LEN.pack(len(b)) for b in buffers)
    return [head, body, *buffers]


# ---------------------------------------------------------------- values


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
            raise ProtocolError(f"malformed {tag} value: {type(exc).__name__}: {_clip(exc)}") from None

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
        return self.peer.proxy(int(tree["handle"]), _clip(tree.get("type", "object"), 200),
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


def _clip(text, limit=MAX_TEXT):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "..."


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
            args.append(arg if not isinstance(arg, str) else _clip(arg))
    tb = "" if judged else _last_frames(exc)
    return {**_class_names(type(exc)), "message": _clip(message), "args": args, "traceback": _clip(tb, 3000)}


def _last_frames(exc) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != _OWN_FILE][-6:]
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
    name = _clip(names.get("name", "RemoteError"), 100)
    module = _clip(names.get("module", ""), 200)
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
    message = _clip(desc.get("message", ""))
    args = desc.get("args") if isinstance(desc.get("args"), list) else [message]
    exc = _instantiate(cls, args, message)
    if issubclass(cls, RemoteError) and not args:
        exc.args = (message,)
    tb = desc.get("traceback")
    if isinstance(tb, str) and tb:
        exc.add_note("raised in the solution's process:\n" + _clip(tb, 3000))
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


# ---------------------------------------------------------------- proxies


class Remote:
    """An object living on the other side. Comparison and hashing are by identity: the
    other side never answers `==` (an always-equal object), and a value compared against
    it never travels there."""

    __slots__ = ("_sb_peer", "_sb_handle", "_sb_type", "_sb_callable", "_sb_opaque", "__weakref__")

    def __init__(self, peer, handle, type_label, is_callable):
        object.__setattr__(self, "_sb_opaque", False)
        object.__setattr__(self, "_sb_peer", peer)
        object.__setattr__(self, "_sb_handle", handle)
        object.__setattr__(self, "_sb_type", type_label)
        object.__setattr__(self, "_sb_callable", is_callable)

    def __getattr__(self, name):
        if name.startswith("_sb_") or (name.startswith("__") and name not in REMOTE_READABLE_DUNDERS) \
                or name.startswith("_pytest") or name in ("pytestmark", "__test__"):
            raise AttributeError(name)
        return self._sb_ask("getattr", name=name)

    def __setattr__(self, name, value):
        self._sb_ask("setattr", name=name, value=value)

    def __delattr__(self, name):
        self._sb_ask("delattr", name=name)

    def __call__(self, *args, **kwargs):
        return self._sb_ask("call", args=list(args), kwargs=kwargs)

    def _sb_method(self, name, *args):
        if self._sb_opaque and name in OBSERVATION_DUNDERS:
            text = (f"the test read {name} of a live object a probe returned ({self._sb_type}): "
                    "a probe's observations are data")
            self._sb_peer._violation(text)
            raise ProtocolError(text)
        return self._sb_ask("method", name=name, args=list(args))

    def _sb_ask(self, op, **fields):
        return self._sb_peer.request(op, handle=self._sb_handle, **fields)

    def __len__(self):
        return self._sb_method("__len__")

    def __iter__(self):
        iterator = self._sb_method("__iter__")
        return iterator if isinstance(iterator, Remote) else iter(iterator)

    def __next__(self):
        return self._sb_method("__next__")

    def __getitem__(self, key):
        return self._sb_method("__getitem__", key)

    def __setitem__(self, key, value):
        self._sb_method("__setitem__", key, value)

    def __delitem__(self, key):
        self._sb_method("__delitem__", key)

    def __contains__(self, item):
        """Decided here by iterating, so the item asked about never travels to the other side."""
        return any(item is value or (not isinstance(value, Remote) and item == value) for value in self)

    def __enter__(self):
        return self._sb_method("__enter__")

    def __exit__(self, *exc_info):
        return self._sb_method("__exit__", None, None, None) if exc_info[0] is None else \
            self._sb_method("__exit__", exc_info[0], exc_info[1], None)

    def __bool__(self):
        return bool(self._sb_method("__bool__")) if self._sb_peer.truthy(self) else True

    def __instancecheck__(self, obj):
        return isinstance(obj, Remote) and obj._sb_peer is self._sb_peer and \
            self._sb_peer.request("isinstance", handle=obj._sb_handle, cls=self._sb_handle) is True

    def __repr__(self):
        if self._sb_opaque:
            return f"<remote {self._sb_type} (a probe's object)>"
        try:
            text = self._sb_method("__repr__")
        except Exception:  # noqa: BLE001 - a remote __repr__ that fails still gets a repr
            text = "?"
        return f"<remote {self._sb_type}: {_clip(text, 300)}>"

    def __str__(self):
        return str(self._sb_method("__str__"))

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)

    def __reduce__(self):
        raise TypeError("a remote object cannot be pickled")


# ---------------------------------------------------------------- the peer


class Peer:
    """One side of the wire. `trusting=False` is the judge's policy towards requests from
    the worker: only calls, public attribute reads and container operations on objects the
    judge chose to hand over; never an import, a probe, or a private or dunder attribute."""

    def __init__(self, read_fd, write_fd, serves_imports, on_violation=None):
        self.read_fd, self.write_fd = read_fd, write_fd
        self.serves_imports = serves_imports
        self.codec = Codec(self)
        self.on_violation = on_violation
        self.handles, self.proxies = {}, {}
        self.next_handle, self.next_request = 1, 1
        self.lock = threading.RLock()
        self.write_lock = threading.Lock()
        self.queues = {}
        self.background = queue.Queue()
        self.closed = None
        self.conversation_threads = {}
        self.local = threading.local()
        self.import_hook = None
        self.probe_sources = {}
        self.peer_prefix = "j" if serves_imports else "w"  # how the other side names its threads

    # -- handles

    def export(self, value):
        with self.lock:
            handle = self.next_handle
            self.next_handle += 1
            self.handles[handle] = value
            return handle

    def exported(self, handle):
        try:
            return self.handles[int(handle)]
        except (KeyError, ValueError, TypeError):
            raise ProtocolError(f"unknown handle {handle!r}") from None

    def proxy(self, handle, type_label, is_callable):
        with self.lock:
            found = self.proxies.get(handle)
            if found is None:
                found = Remote(self, handle, type_label, is_callable)
                self.proxies[handle] = found
            return found

    def truthy(self, remote):
        return self.serves_imports is False  # the judge asks the worker; the worker never asks the judge

    # -- sending

    def send(self, doc, value_fields):
        buffers = []
        for key, value in value_fields.items():
            doc[key] = self.codec.encode(value, buffers)
        parts = frame_bytes(doc, buffers)
        with self.write_lock:
            for part in parts:
                view = memoryview(part)
                while view:
                    written = os.write(self.write_fd, view)
                    view = view[written:]

    def conversation(self):
        current = getattr(self.local, "conversation", None)
        return current or f"{'w' if self.serves_imports else 'j'}{threading.get_ident()}"

    def request(self, op, **fields):
        if self.closed is not None:
            raise WorkerGone(self.closed)
        conv = self.conversation()
        mine = self._queue(conv)
        with self.lock:
            rid = self.next_request
            self.next_request += 1
        values = {k: fields.pop(k) for k in ("value", "args", "kwargs", "source") if k in fields}
        self.send({"kind": "request", "id": rid, "op": op, "conv": conv, **fields}, values)
        return self._wait(conv, mine, rid)

    def _queue(self, conv):
        with self.lock:
            return self.queues.setdefault(conv, queue.Queue())

    def _wait(self, conv, mine, rid):
        while True:
            try:
                doc, buffers = mine.get(timeout=0.05)
            except queue.Empty:
                if self.closed is not None:
                    raise WorkerGone(self.closed) from None
                self._serve_background()
                continue
            if doc is None:
                raise WorkerGone(self.closed or "the wire was closed")
            if doc.get("kind") == "request":
                self.serve(doc, buffers)
                continue
            if doc.get("id") != rid:
                self._violation(f"an answer to request {doc.get('id')!r} while waiting for {rid}")
                continue
            return self._result(doc, buffers)

    def _serve_background(self):
        while True:
            try:
                doc, buffers = self.background.get_nowait()
            except queue.Empty:
                return
            self.serve(doc, buffers)

    def _result(self, doc, buffers):
        if "error" in doc:
            error = self._decode_or_violation(doc["error"], buffers)
            if not isinstance(error, BaseException):
                self._violation("an error answer that is not an exception")
                raise ProtocolError("malformed error answer")
            raise error
        return self._decode_or_violation(doc.get("value"), buffers)

    def _decode_or_violation(self, tree, buffers):
        try:
            return self.codec.decode(tree, buffers)
        except ProtocolError as exc:
            self._violation(str(exc))
            raise

    def _violation(self, text):
        if self.on_violation:
            self.on_violation(text)

    # -- receiving

    def start_reader(self):
        thread = threading.Thread(target=self._read_loop, name="sb-wire-reader", daemon=True)
        thread.start()
        return thread

    def _read_loop(self):
        try:
            while True:
                doc, buffers = read_frame(self.read_fd)
                self._route(doc, buffers)
        except WorkerGone as exc:
            self._close(str(exc))
        except ProtocolError as exc:
            self._violation(str(exc))
            self._close(f"protocol violation: {exc}")
        except OSError as exc:
            self._close(f"the wire failed: {exc}")
        except Exception as exc:  # noqa: BLE001 - whatever a frame made the reader raise: the peer's doing
            self._violation(f"a frame the reader could not handle: {type(exc).__name__}")
            self._close(f"protocol violation: {type(exc).__name__}")

    def _close(self, reason):
        self.closed = reason
        with self.lock:
            queues = list(self.queues.values())
        for q in queues:
            q.put((None, None))
        if self.serves_imports:
            os._exit(0)  # the judge is gone: nothing left to answer

    def _route(self, doc, buffers):
        conv = doc.get("conv")
        if not isinstance(conv, str) or len(conv) > 64:
            raise ProtocolError("a message without a conversation")
        if doc.get("kind") == "request" and conv.startswith(self.peer_prefix):
            self._conversation_thread(conv).put((doc, buffers))
            return
        with self.lock:
            target = self.queues.get(conv)
        if target is None:
            if doc.get("kind") != "request":
                raise ProtocolError(f"an answer for an unknown conversation {conv!r}")
            target = self.background
        target.put((doc, buffers))

    def _conversation_thread(self, conv):
        """Each thread on the other side gets a thread here, so concurrent calls run
        concurrently and a call is served the moment it arrives, whatever this side's own
        threads are doing (a solution's thread reading the judge's clock while the test
        waits on an event, say). Bounded: a peer cannot make threads without end."""
        with self.lock:
            existing = self.queues.get(conv)
            if existing is not None:
                return existing
            if len(self.conversation_threads) >= MAX_CONVERSATIONS:
                raise ProtocolError(f"more than {MAX_CONVERSATIONS} conversations")
            inbox = self.queues[conv] = queue.Queue()
            self.conversation_threads[conv] = True
        thread = threading.Thread(target=self._conversation_loop, args=(conv, inbox), daemon=True)
        thread.start()
        return inbox

    def _conversation_loop(self, conv, inbox):
        self.local.conversation = conv
        while True:
            doc, buffers = inbox.get()
            if doc is None:
                return
            if doc.get("kind") == "request":
                self.serve(doc, buffers)

    # -- serving

    def serve(self, doc, buffers):
        rid, conv = doc.get("id"), doc.get("conv")
        previous = getattr(self.local, "conversation", None)
        self.local.conversation = conv
        try:
            value = self._perform(doc, buffers)
            reply, fields = {"kind": "answer", "id": rid, "conv": conv}, {"value": value}
        except ProtocolError as exc:
            self._violation(str(exc))
            reply, fields = {"kind": "answer", "id": rid, "conv": conv}, {"error": ProtocolError(str(exc))}
        except BaseException as exc:  # noqa: BLE001 - the callee's failure is the caller's exception, whatever it is
            reply, fields = {"kind": "answer", "id": rid, "conv": conv}, {"error": _as_exception(exc)}
        finally:
            self.local.conversation = previous
        try:
            self.send(reply, fields)
        except ProtocolError as exc:
            self.send({"kind": "answer", "id": rid, "conv": conv}, {"error": ProtocolError(str(exc))})

    def _perform(self, doc, buffers):
        op = doc.get("op")
        decode = lambda key, default=None: self.codec.decode(doc.get(key, default), buffers)  # noqa: E731
        if op in ("import", "probe", "reload", "isinstance") and not self.serves_imports:
            raise ProtocolError(f"the worker may not ask the judge to {op}")
        if op == "import":
            return self.import_hook(str(doc["name"]))
        if op == "probe":
            return self._load_probe(str(doc["name"]), decode("source"))
        if op == "reload":
            return self.import_hook(None)
        target = self.exported(doc.get("handle"))
        name = doc.get("name")
        if op in ("getattr", "setattr", "delattr", "method") and not isinstance(name, str):
            raise ProtocolError("an attribute name that is not a string")
        if not self.serves_imports:
            _check_judge_policy(op, name)
        if op == "getattr":
            return getattr(target, name)
        if op == "setattr":
            setattr(target, name, decode("value"))
            return None
        if op == "delattr":
            delattr(target, name)
            return None
        if op == "call":
            args, kwargs = decode("args", []), decode("kwargs", {"dict": []})
            return target(*args, **kwargs)
        if op == "method":
            if name not in ALLOWED_DUNDERS:
                raise ProtocolError(f"method {name!r} is not allowed")
            method = getattr(type(target), name, None)
            if method is None:  # what Python itself raises: len() of a generator is a TypeError
                raise TypeError(f"{type(target).__name__!r} object does not support {name}")
            return method(target, *decode("args", []))
        if op == "isinstance":
            return isinstance(target, self.exported(doc.get("cls")))
        raise ProtocolError(f"unknown operation {op!r}")

    def _load_probe(self, name, source):
        """Trusted code the judge ships in: it exercises the solution here and returns data."""
        module = _ModuleType(f"sb_probe_{name}")
        module.__file__ = f"<probe {name}>"
        sys.modules[module.__name__] = module
        _exec(_compile(source, module.__file__, "exec"), module.__dict__)
        return module


FRAME_ATTRIBUTES = frozenset({"gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await",
                              "ag_frame", "ag_code", "ag_await", "f_globals", "f_locals", "f_back", "f_code",
                              "f_builtins", "tb_frame", "tb_next", "func_globals", "func_code"})
MUTATING_DUNDERS = frozenset({"__setitem__", "__delitem__"})


def _check_judge_policy(op, name):
    """What the worker may do to an object the judge handed over: call it and read its
    public data. Never a private name, never a way to a frame (a generator's frame holds
    the test's locals and globals), never a change."""
    if op in ("getattr", "setattr", "delattr") and (name.startswith("_") or name in FRAME_ATTRIBUTES):
        raise AttributeError(f"{name!r} is not readable from the solution's side")
    if op in ("setattr", "delattr") or (op == "method" and name in MUTATING_DUNDERS):
        raise AttributeError("the solution's side may not change the judge's objects")


def _as_exception(exc):
    if isinstance(exc, Exception):
        return exc
    return RuntimeError(f"{type(exc).__name__}: {_clip(exc)}")
