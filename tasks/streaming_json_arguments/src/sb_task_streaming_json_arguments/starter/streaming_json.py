"""Incremental parser for a tool call's JSON arguments, streamed in chunks."""


class StreamingJSONParser:
    def __init__(self):
        pass

    def push(self, chunk):
        raise NotImplementedError

    def finish(self):
        raise NotImplementedError
