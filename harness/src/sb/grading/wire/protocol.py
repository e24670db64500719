"""What every part of the wire shares: the bound on text, and the protocol's errors."""


MAX_TEXT = 4000  # the longest message or name text that crosses


class ProtocolError(Exception):
    """The peer sent something that is not a well-formed, bounded message."""


class WorkerGone(Exception):
    """The other side closed the wire (it exited or was killed)."""


class RemoteError(Exception):
    """An exception raised on the other side whose type is not a built-in one."""

    remote_type = "RemoteError"
    remote_mro: tuple = ()


def clip(text, limit=MAX_TEXT):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "..."
