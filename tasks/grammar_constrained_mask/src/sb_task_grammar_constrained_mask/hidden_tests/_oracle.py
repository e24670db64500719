"""Oracles that work from the definition, independent of the reference's position graph.

`accepts` decides one finished generation: Python's strict UTF-8 decode of the whole byte
string, then a walk of the automaton that scans the transition list.

`BruteForce` enumerates every sequence of non-EOS tokens short enough to be followed by EOS
within the budget and marks the ones whose bytes `accepts`; a sequence may be extended by a
token exactly when some enumerated sequence that starts with it is marked. Exact for the
small vocabularies and budgets it is used on.

`LayeredSolver` serves vocabularies too large to enumerate: it steps a position (state,
pending bytes) by decoding pending + token with Python's strict decoder, where only an
"unexpected end of data" at the very end is held as pending, then computes the sets
F_k = {positions that can finish with at most k tokens, EOS included} by value iteration.
For each allowed token it also builds a witness, a concrete token sequence ending with EOS,
which the tests check with `accepts` alone.
"""


def run_automaton(automaton, state, text):
    """The state after `text` from `state`, or None when some character has no transition."""
    for ch in text:
        code_point = ord(ch)
        targets = [dst for src, lo, hi, dst in automaton["transitions"]
                   if src == state and lo <= code_point <= hi]
        if not targets:
            return None
        assert len(targets) == 1, "test automata are deterministic"
        state = targets[0]
    return state


def accepts(automaton, data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    end = run_automaton(automaton, automaton["start"], text)
    return end is not None and end in set(automaton["accepting"])


class BruteForce:
    """Masks by enumerating every token sequence: a completion is checked only by `accepts`."""

    def __init__(self, automaton, vocab, eos_id, max_tokens):
        self.vocab = [bytes(t) for t in vocab]
        self.eos_id = eos_id
        self.text_ids = [i for i in range(len(vocab)) if i != eos_id]
        self.max_tokens = max_tokens
        self._accepts = {}
        self.finishes = set()     # sequences of text tokens after which EOS finishes
        self.extendable = set()   # sequences some finishing sequence starts with
        self._enumerate(automaton, (), b"")

    def _accepted(self, automaton, data):
        if data not in self._accepts:
            self._accepts[data] = accepts(automaton, data)
        return self._accepts[data]

    def _enumerate(self, automaton, seq, data):
        found = False
        if self._accepted(automaton, data):
            self.finishes.add(seq)
            found = True
        if len(seq) + 2 <= self.max_tokens:  # room for one more text token and then EOS
            for t in self.text_ids:
                if self._enumerate(automaton, seq + (t,), data + self.vocab[t]):
                    found = True
        if found:
            self.extendable.add(seq)
        return found

    def mask(self, committed):
        """The mask after the text tokens `committed` (EOS not yet given)."""
        committed = tuple(committed)
        return [committed in self.finishes if t == self.eos_id
                else committed + (t,) in self.extendable
                for t in range(len(self.vocab))]


class LayeredSolver:
    def __init__(self, automaton, vocab, eos_id, max_tokens):
        self.automaton = automaton
        self.accepting = set(automaton["accepting"])
        self.vocab = [bytes(t) for t in vocab]
        self.eos_id = eos_id
        self.max_tokens = max_tokens
        self.text_ids = [i for i in range(len(vocab)) if i != eos_id]
        start = (automaton["start"], b"")
        self.successors = {}
        layer = {start}
        for _ in range(max_tokens):
            fresh = set()
            for position in layer:
                if position in self.successors:
                    continue
                row = {t: self.step(position, self.vocab[t]) for t in self.text_ids}
                self.successors[position] = row
                fresh.update(p for p in row.values() if p is not None)
            layer = fresh
        for position in layer:
            self.successors.setdefault(position, {})
        # within[k]: positions that can finish with at most k tokens (EOS included)
        self.within = [set()]
        finished = {p for p in self.successors if self.finished(p)}
        self.within.append(finished)
        for _ in range(2, max_tokens + 1):
            previous = self.within[-1]
            grown = set(finished)
            for position, row in self.successors.items():
                if any(p in previous for p in row.values()):
                    grown.add(position)
            self.within.append(grown)

    def step(self, position, token):
        state, pending = position
        data = pending + token
        try:
            text, rest = data.decode("utf-8"), b""
        except UnicodeDecodeError as err:
            if err.reason != "unexpected end of data" or err.end != len(data):
                return None
            text, rest = data[:err.start].decode("utf-8"), data[err.start:]
        state = run_automaton(self.automaton, state, text)
        return None if state is None else (state, rest)

    def finished(self, position):
        return position[1] == b"" and position[0] in self.accepting

    def position_after(self, committed):
        position = (self.automaton["start"], b"")
        for t in committed:
            position = self.step(position, self.vocab[t])
        return position

    def mask(self, committed):
        position = self.position_after(committed)
        budget = self.max_tokens - len(committed) - 1  # tokens left after the next one
        out = []
        for t in range(len(self.vocab)):
            if t == self.eos_id:
                out.append(self.finished(position))
            else:
                after = self.step(position, self.vocab[t])
                out.append(after is not None and budget >= 1 and after in self.within[budget])
        return out

    def witness(self, committed, token):
        """Token ids after `committed` + [token] that finish, ending with EOS (fewest tokens)."""
        position = self.step(self.position_after(committed), self.vocab[token])
        k = next(k for k in range(1, len(self.within)) if position in self.within[k])
        out = []
        while not self.finished(position):
            k -= 1
            t = next(t for t in self.text_ids
                     if self.successors[position][t] in self.within[k])
            out.append(t)
            position = self.successors[position][t]
        return out + [self.eos_id]
