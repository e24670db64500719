"""Stop sequences for a streaming text server: release text as it arrives, hold back only
what could still turn out to be the start of a stop, and end the stream at the first stop."""


def filter_stream(chunks, stops):
    """Filter the text chunks of one generation against the stop strings `stops`.

    Returns (pieces, matched): the text released after each chunk consumed, then the text
    released at the end of the stream; and the index in `stops` of the stop that ended
    the stream, or None.
    """
    longest = max((len(stop) for stop in stops), default=0)
    pieces = []
    held = ""  # the end of the text so far that could still begin a stop
    for chunk in chunks:
        window = held + chunk
        found = None  # (end, start, index) of the occurrence that ends first
        for index, stop in enumerate(stops):
            start = window.find(stop)
            if start >= 0:
                candidate = (start + len(stop), start, index)
                if found is None or candidate < found:
                    found = candidate
        if found is not None:
            pieces.append(window[:found[1]])
            pieces.append("")
            return pieces, found[2]
        keep = 0
        for size in range(min(len(window), longest - 1), 0, -1):
            tail = window[len(window) - size:]
            if any(stop.startswith(tail) for stop in stops):
                keep = size
                break
        pieces.append(window[:len(window) - keep])
        held = window[len(window) - keep:]
    pieces.append(held)
    return pieces, None
