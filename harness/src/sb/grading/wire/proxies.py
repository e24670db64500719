"""Remote: a proxy for an object on the other side, which forwards calls, attribute
reads and a few container operations."""



from .protocol import ProtocolError, clip


# What a probe's answer is read through when it is an observation: a live object there
# could answer these however the solution likes (a length its items disagree with makes a
# loop over it compare nothing), so a probe's live objects may not be asked them.
OBSERVATION_DUNDERS = frozenset({"__len__", "__iter__", "__next__", "__getitem__", "__contains__", "__bool__"})
REMOTE_READABLE_DUNDERS = frozenset({"__name__", "__qualname__", "__module__", "__doc__", "__file__",
                                     "__version__", "__all__"})


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
        return ask(self._sb_peer, op, handle=self._sb_handle, **fields)

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
        """The other side's __exit__ runs; what it answers never suppresses an exception the
        test's own block raised (an answer of True would turn a failed assertion into a pass)."""
        if exc_info[0] is None:
            self._sb_method("__exit__", None, None, None)
        else:
            self._sb_method("__exit__", exc_info[0], exc_info[1], None)
        return False

    def __bool__(self):
        return bool(self._sb_method("__bool__")) if self._sb_peer.truthy(self) else True

    def __instancecheck__(self, obj):
        return isinstance(obj, Remote) and obj._sb_peer is self._sb_peer and \
            ask(self._sb_peer, "isinstance", handle=obj._sb_handle, cls=self._sb_handle) is True

    def __repr__(self):
        if self._sb_opaque:
            return f"<remote {self._sb_type} (a probe's object)>"
        try:
            text = self._sb_method("__repr__")
        except Exception:  # noqa: BLE001 - a remote __repr__ that fails still gets a repr
            text = "?"
        return f"<remote {self._sb_type}: {clip(text, 300)}>"

    def __str__(self):
        return str(self._sb_method("__str__"))

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)

    def __reduce__(self):
        raise TypeError("a remote object cannot be pickled")


def ask(peer, op, **fields):
    """One request about an object on the other side. A StopIteration it raises anywhere but
    an iterator's own __next__ (a call, an attribute or method read, len, an item...) would
    end the test's loop around it silently (`all(map(check, cases))` true over no case), so
    it is raised as RuntimeError, as Python does for one leaving a generator (PEP 479)."""
    try:
        return peer.request(op, **fields)
    except (StopIteration, StopAsyncIteration) as exc:
        if op == "method" and fields.get("name") == "__next__":
            raise
        raise RuntimeError(f"{type(exc).__name__} raised on the other side ({op})") from exc
