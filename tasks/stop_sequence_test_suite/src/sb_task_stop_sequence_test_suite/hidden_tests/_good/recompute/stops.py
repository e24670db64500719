"""Stop-sequence filtering recomputed from the whole text at every step."""


def _first_occurrence(text, stops):
    best = None
    for index, stop in enumerate(stops):
        for start in range(len(text) - len(stop) + 1):
            if text.startswith(stop, start):
                key = (start + len(stop), start, index)
                best = key if best is None else min(best, key)
    return best


def _held_length(text, stops):
    for size in range(len(text), 0, -1):
        suffix = text[-size:]
        if any(len(stop) > size and stop[:size] == suffix for stop in stops):
            return size
    return 0


def filter_stream(chunks, stops):
    text, released, pieces = "", 0, []
    for chunk in chunks:
        text += chunk
        occurrence = _first_occurrence(text, stops)
        if occurrence is not None:
            pieces += [text[released:occurrence[1]], ""]
            return pieces, occurrence[2]
        upto = len(text) - _held_length(text, stops)
        pieces.append(text[released:upto])
        released = upto
    pieces.append(text[released:])
    return pieces, None
