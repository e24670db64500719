"""Hermes-style tool calls extracted from a model's streamed text, each event emitted as soon
as every possible continuation of the stream agrees on it."""


class ToolCallParser:
    def __init__(self):
        pass

    def push(self, chunk):
        """Reads the next chunk (any str, possibly empty) and returns the list of events it
        determined, in order: ("text", str) and ("call", name, arguments)."""
        raise NotImplementedError

    def finish(self):
        """The stream has ended: returns the list of the remaining events."""
        raise NotImplementedError
