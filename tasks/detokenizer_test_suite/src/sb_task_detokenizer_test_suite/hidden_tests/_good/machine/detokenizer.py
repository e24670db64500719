"""A correct detokenizer as two state machines: a byte-level UTF-8 decoder written out by hand
(Python's replacement rule: each maximal invalid subpart becomes one U+FFFD), and a set of
live partial matches of the stop strings, advanced one decoded character at a time."""

REPLACEMENT = "\ufffd"

# lead byte -> (continuation bytes still needed, range of the first of them)
LEADS = {}
for _lead in range(0xC2, 0xE0):
    LEADS[_lead] = (1, 0x80, 0xBF)
for _lead in range(0xE0, 0xF0):
    LEADS[_lead] = (2, {0xE0: 0xA0}.get(_lead, 0x80), {0xED: 0x9F}.get(_lead, 0xBF))
for _lead in range(0xF0, 0xF5):
    LEADS[_lead] = (3, {0xF0: 0x90}.get(_lead, 0x80), {0xF4: 0x8F}.get(_lead, 0xBF))


class Utf8:
    def __init__(self):
        self.need = 0      # continuation bytes still needed by the open sequence
        self.value = 0     # the bits gathered so far
        self.low, self.high = 0x80, 0xBF  # the range of the next byte

    def feed(self, byte, out):
        if self.need:
            if self.low <= byte <= self.high:
                self.value = self.value << 6 | byte & 0x3F
                self.need -= 1
                self.low, self.high = 0x80, 0xBF
                if not self.need:
                    out.append(chr(self.value))
                return
            out.append(REPLACEMENT)  # the open sequence ends here; the byte starts afresh
            self.need = 0
        if byte < 0x80:
            out.append(chr(byte))
        elif byte in LEADS:
            self.need, self.low, self.high = LEADS[byte]
            self.value = byte & (0x3F >> self.need)
        else:
            out.append(REPLACEMENT)

    def close(self, out):
        if self.need:
            out.append(REPLACEMENT)
            self.need = 0

    def may_come_next(self, char):
        """Whether some continuation decodes to `char` next."""
        if char == REPLACEMENT or not self.need:
            return True
        shift = 6 * (self.need - 1)
        smallest = (self.value << 6 | self.low & 0x3F) << shift
        largest = (self.value << 6 | self.high & 0x3F) << shift | ((1 << shift) - 1)
        return smallest <= ord(char) <= largest


class Matcher:
    """The stop strings' occurrences in a text seen one character at a time."""

    def __init__(self, stops):
        self.stops = [stop for stop in stops]
        self.partial = []   # (start, stop index, characters matched), a proper prefix so far
        self.found = None   # (start, end) of the occurrence that counts among complete ones
        self.size = 0

    def add(self, char):
        position = self.size
        self.size += 1
        live = [(start, i, matched + 1) for start, i, matched in self.partial
                + [(position, i, 0) for i in range(len(self.stops))]
                if self.stops[i][matched] == char]
        self.partial = []
        for start, i, matched in live:
            if matched < len(self.stops[i]):
                self.partial.append((start, i, matched))
            elif self.found is None or (start, -(start + matched)) < (self.found[0], -self.found[1]):
                self.found = (start, start + matched)

    def first_open(self, decoder):
        starts = [start for start, i, matched in self.partial if decoder.may_come_next(self.stops[i][matched])]
        return min(starts, default=None)


def detokenize(vocab, token_ids, stops=(), include_stop=False, max_tokens=None):
    decoder, matcher, text = Utf8(), Matcher(stops), []
    deltas, sent, ended = [], 0, False
    for token_id in token_ids:
        for byte in vocab[token_id]:
            before = len(text)
            decoder.feed(byte, text)
            for char in text[before:]:
                matcher.add(char)
        if len(deltas) + 1 == max_tokens:
            ended = True
            break
        first_open, found = matcher.first_open(decoder), matcher.found
        if found is None:
            upto = len(text) if include_stop or first_open is None else first_open
        elif include_stop:
            upto = found[1]
        else:
            upto = found[0] if first_open is None else min(found[0], first_open)
        deltas.append("".join(text[sent:upto]))
        sent = upto
        if found is not None and (first_open is None or first_open > found[0]
                                  or (first_open == found[0] and not include_stop)):
            return deltas + [""], True
    before = len(text)
    decoder.close(text)
    for char in text[before:]:
        matcher.add(char)
    found = matcher.found
    end = len(text) if found is None else found[1] if include_stop else found[0]
    last = "".join(text[sent:end])
    return (deltas + [last, ""] if ended else deltas + [last]), found is not None
