"""Streaming detokenizer: text deltas from byte tokens, emitted as early as they are certain."""


class StreamDetokenizer:
    def __init__(self, vocab, stop=(), include_stop=False, max_tokens=None):
        self.stopped = False
        raise NotImplementedError

    def push(self, token_id):
        raise NotImplementedError

    def finish(self):
        raise NotImplementedError
