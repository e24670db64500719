"""Stop-sequence filtering with one Knuth-Morris-Pratt matcher per stop, fed a character
at a time: a matcher's state is the longest suffix of the text that is a proper prefix of
its stop, so the text to hold is the largest state."""


def _failure(stop):
    fail = [0] * len(stop)
    k = 0
    for i in range(1, len(stop)):
        while k and stop[i] != stop[k]:
            k = fail[k - 1]
        if stop[i] == stop[k]:
            k += 1
        fail[i] = k
    return fail


def filter_stream(chunks, stops):
    tables = [_failure(stop) for stop in stops]
    states = [0] * len(stops)
    pending = []  # characters not yet released
    pieces = []
    for chunk in chunks:
        for char in chunk:
            pending.append(char)
            done = []
            for index, stop in enumerate(stops):
                k = states[index]
                while k and stop[k] != char:
                    k = tables[index][k - 1]
                if stop[k] == char:
                    k += 1
                if k == len(stop):
                    done.append((-len(stop), index))
                    k = tables[index][k - 1]
                states[index] = k
            if done:
                size, index = min(done)
                pieces.append("".join(pending[:len(pending) + size]))
                pieces.append("")
                return pieces, index
        keep = max(states, default=0)
        cut = len(pending) - keep
        pieces.append("".join(pending[:cut]))
        pending = pending[cut:]
    pieces.append("".join(pending))
    return pieces, None
