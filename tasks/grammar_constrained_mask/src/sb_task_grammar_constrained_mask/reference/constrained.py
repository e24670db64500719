"""The token mask of constrained decoding.

A position of the generation is the pair (automaton state, pending bytes): the state reached
on the characters completed so far, and the bytes of a character begun but not yet complete.
Every vocabulary token is an edge between positions. A token is allowed when the fewest tokens
that finish the generation from the position it leads to (EOS included) still fit the budget,
so the decoder keeps, for every position reachable from the start, that fewest number: a
breadth-first search backwards from the finished positions over the graph of token edges.
"""
from bisect import bisect_right
from collections import deque


def _sequence_length(lead):
    """Bytes in the UTF-8 sequence that `lead` starts; 0 when no valid sequence starts with it."""
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def _second_byte_range(lead):
    """The bytes that may follow `lead`: the narrow ones exclude overlong forms, surrogates
    and code points above U+10FFFF."""
    if lead == 0xE0:
        return 0xA0, 0xBF
    if lead == 0xED:
        return 0x80, 0x9F
    if lead == 0xF0:
        return 0x90, 0xBF
    if lead == 0xF4:
        return 0x80, 0x8F
    return 0x80, 0xBF


class _Automaton:
    def __init__(self, spec):
        self.start = spec["start"]
        self.accepting = frozenset(spec["accepting"])
        by_state = {}
        for src, lo, hi, dst in spec["transitions"]:
            by_state.setdefault(src, []).append((lo, hi, dst))
        self._los = {}
        self._ranges = {}
        for src, ranges in by_state.items():
            ranges.sort()
            self._ranges[src] = ranges
            self._los[src] = [lo for lo, _, _ in ranges]

    def step(self, state, code_point):
        """The next state on `code_point`, or None when the automaton has no transition."""
        ranges = self._ranges.get(state)
        if not ranges:
            return None
        i = bisect_right(self._los[state], code_point) - 1
        if i < 0:
            return None
        lo, hi, dst = ranges[i]
        return dst if code_point <= hi else None


class ConstrainedDecoder:
    def __init__(self, automaton, vocab, eos_id, max_tokens):
        if not (isinstance(max_tokens, int) and max_tokens >= 1):
            raise ValueError("max_tokens must be an int >= 1")
        if not (isinstance(eos_id, int) and 0 <= eos_id < len(vocab)):
            raise ValueError("eos_id must index the vocabulary")
        self._automaton = _Automaton(automaton)
        self._vocab = [bytes(token) for token in vocab]
        self._eos_id = eos_id
        self._max_tokens = max_tokens
        self._used = 0
        self._finished = False
        self._position = (self._automaton.start, b"")
        self._text_tokens = sorted({t for i, t in enumerate(self._vocab) if i != eos_id})
        self._tokens_to_finish = self._distances(self._position)

    def _step(self, position, data):
        """The position after `data`, or None when `data` breaks UTF-8 or the automaton."""
        state, pending = position
        for byte in data:
            if not pending:
                length = _sequence_length(byte)
                if length == 0:
                    return None
                if length > 1:
                    pending = bytes([byte])
                    continue
                code_point = byte
            else:
                lo, hi = _second_byte_range(pending[0]) if len(pending) == 1 else (0x80, 0xBF)
                if not lo <= byte <= hi:
                    return None
                pending += bytes([byte])
                if len(pending) < _sequence_length(pending[0]):
                    continue
                code_point = ord(pending.decode("utf-8"))
                pending = b""
            state = self._automaton.step(state, code_point)
            if state is None:
                return None
        return state, pending

    def _is_finished(self, position):
        state, pending = position
        return not pending and state in self._automaton.accepting

    def _distances(self, origin):
        """Fewest tokens, EOS included, that finish the generation from each position reachable
        from `origin` (positions that cannot finish are absent)."""
        predecessors = {origin: []}
        frontier = deque([origin])
        while frontier:
            position = frontier.popleft()
            for token in self._text_tokens:
                after = self._step(position, token)
                if after is None:
                    continue
                if after not in predecessors:
                    predecessors[after] = []
                    frontier.append(after)
                predecessors[after].append(position)
        distance = {p: 1 for p in predecessors if self._is_finished(p)}
        queue = deque(distance)
        while queue:
            position = queue.popleft()
            for before in predecessors[position]:
                if before not in distance:
                    distance[before] = distance[position] + 1
                    queue.append(before)
        return distance

    def allowed(self):
        if self._finished:
            return [False] * len(self._vocab)
        remaining = self._max_tokens - self._used
        mask = []
        for token_id, token in enumerate(self._vocab):
            if token_id == self._eos_id:
                mask.append(self._is_finished(self._position))
                continue
            after = self._step(self._position, token)
            need = self._tokens_to_finish.get(after) if after is not None else None
            mask.append(need is not None and need <= remaining - 1)
        return mask

    def advance(self, token_id):
        if not isinstance(token_id, int) or not 0 <= token_id < len(self._vocab):
            raise ValueError(f"token id {token_id!r} is not in the vocabulary")
        if not self.allowed()[token_id]:
            raise ValueError(f"token {token_id} is not allowed here")
        self._used += 1
        if token_id == self._eos_id:
            self._finished = True
        else:
            self._position = self._step(self._position, self._vocab[token_id])
