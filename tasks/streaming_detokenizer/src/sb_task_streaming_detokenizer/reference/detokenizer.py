"""Streaming detokenizer: text deltas from byte tokens, emitted as early as they are certain."""

REPLACEMENT = "\ufffd"


CONTINUATION_BYTES = bytes(range(0x80, 0xC0))
SECOND_BYTE_AT_LEAST = {0xE0: 0xA0, 0xF0: 0x90}  # lower would be an overlong encoding
SECOND_BYTE_AT_MOST = {0xED: 0x9F, 0xF4: 0x8F}   # higher: a surrogate, or beyond U+10FFFF


def _completable(tail):
    """Whether `tail` (a byte that is not a continuation byte, then continuation bytes only) is
    a proper prefix of the encoding of some character: only then can a continuation still
    complete it (or change how it decodes)."""
    lead = tail[0]
    if not 0xC2 <= lead <= 0xF4:
        return False
    length = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    if len(tail) >= length:
        return False
    if len(tail) == 1:
        return True
    second = tail[1]
    return SECOND_BYTE_AT_LEAST.get(lead, second) <= second <= SECOND_BYTE_AT_MOST.get(lead, second)


def _decided_length(data):
    """How many leading bytes of `data` decode the same whatever follows: all of them but a
    trailing incomplete sequence that some continuation could still complete.

    Only the last byte that is not a continuation byte can start that sequence. Python's own
    incremental decoder is not used here: it also holds back ED A0..ED BF (a surrogate's first
    two bytes), which no continuation can complete."""
    head = data.rstrip(CONTINUATION_BYTES)
    if not head:
        return len(data)
    if _completable(data[len(head) - 1:]):
        return len(head) - 1
    return len(data)


def _can_come_next(pending, char):
    """Whether some continuation of the undecided bytes `pending` decodes to `char` first."""
    if not pending or char == REPLACEMENT:  # any incomplete sequence can be broken: one U+FFFD
        return True
    return char.encode("utf-8").startswith(pending)


def _earliest_match(text, stops):
    """(start, end) of the stop-string occurrence that counts: smallest start, then longest."""
    found = [(start, -len(stop)) for stop in stops for start in [text.find(stop)] if start >= 0]
    if not found:
        return None
    start, minus_length = min(found)
    return start, start - minus_length


class StreamDetokenizer:
    def __init__(self, vocab, stop=(), include_stop=False, max_tokens=None):
        stops = list(stop)
        if "" in stops:
            raise ValueError("a stop string is empty")
        self._vocab = vocab
        self._stops = stops
        self._include_stop = include_stop
        self._max_tokens = max_tokens
        self._pushed = 0
        self._text = ""        # decoded text that no continuation can change
        self._pending = b""    # trailing bytes whose decoding is still open
        self._emitted = 0      # characters of the final text handed out so far
        self._ended = False
        self.stopped = False

    def push(self, token_id):
        if self._ended:
            return ""
        self._pushed += 1
        self._absorb(bytes(self._vocab[token_id]))
        if self._max_tokens is not None and self._pushed >= self._max_tokens:
            return self._end()
        determined, settled = self._determined_length()
        if settled:  # no continuation can change the final text: it is the text as it ends now
            return self._end()
        return self._emit(determined)

    def finish(self):
        if self._ended:
            return ""
        return self._end()

    def _absorb(self, data):
        data = self._pending + data
        decided = _decided_length(data)
        self._text += data[:decided].decode("utf-8", "replace")
        self._pending = data[decided:]

    def _end(self):
        self._ended = True
        if self._pending:
            self._text += REPLACEMENT
            self._pending = b""
        match = _earliest_match(self._text, self._stops)
        if match is None:
            return self._emit(len(self._text))
        self.stopped = True
        return self._emit(match[1] if self._include_stop else match[0])

    def _earliest_open_start(self):
        """Smallest start of a stop string whose beginning ends the text and whose rest some
        continuation can still produce; None if there is none."""
        text = self._text
        starts = [len(text) - k for stop in self._stops for k, char in enumerate(stop[1:], 1)
                  if text.endswith(stop[:k]) and _can_come_next(self._pending, char)]
        return min(starts, default=None)

    def _determined_length(self):
        """(length of the determined prefix of the final text, whether the final text is
        settled); once it is settled, push ends the stream and the length is not needed."""
        match = _earliest_match(self._text, self._stops)
        open_start = self._earliest_open_start()
        if self._include_stop:
            # An occurrence still open would be emitted whole, so it holds nothing back; only
            # what follows a complete one is uncertain, and the end is settled once no open
            # occurrence starts at or before it.
            if match is None:
                return len(self._text), False
            return match[1], open_start is None or open_start > match[0]
        if match is not None and (open_start is None or match[0] <= open_start):
            return None, True  # cut at match[0], whatever follows
        return (len(self._text) if open_start is None else open_start), False

    def _emit(self, length):
        delta = self._text[self._emitted:length]
        self._emitted = max(self._emitted, length)
        return delta
