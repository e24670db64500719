"""Server-Sent Events (text/event-stream) as the client of a streaming completion server
reads them: the response body arrives in byte chunks cut anywhere, and the events come out
exactly as if the whole body had arrived at once."""
import codecs


def parse_event_stream(chunks):
    """Parse the response body `chunks` (a list of bytes, in order of arrival).

    Returns the dispatched events, in order, each a tuple (event type, data, last event id).
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    fields = {"event": "", "data": "", "id": ""}
    events = []
    pending = ""  # decoded text after the last line ending seen
    started = False  # a character has been decoded: a U+FEFF is no longer a byte order mark
    skip_lf = False  # the last line ended at a CR that was the last character decoded so far
    for chunk in chunks:
        text = decoder.decode(chunk)
        if not text:
            continue
        if not started:
            started = True
            if text[0] == "\ufeff":
                text = text[1:]
        if skip_lf and text[:1] == "\n":
            text = text[1:]
        skip_lf = False
        pending += text
        while True:
            cr, lf = pending.find("\r"), pending.find("\n")
            end = min(i for i in (cr, lf, len(pending)) if i >= 0)
            if end == len(pending):
                break
            line, ending, pending = pending[:end], pending[end], pending[end + 1:]
            if ending == "\r":
                if pending[:1] == "\n":
                    pending = pending[1:]
                elif not pending:
                    skip_lf = True
            _take_line(line, fields, events)
    return events  # an event whose empty line never came is discarded


def _take_line(line, fields, events):
    if line == "":
        if fields["data"]:
            events.append((fields["event"] or "message", fields["data"][:-1], fields["id"]))
        fields["data"] = ""
        fields["event"] = ""
        return
    if line[0] == ":":
        return  # a comment
    name, colon, value = line.partition(":")
    if value[:1] == " ":
        value = value[1:]
    if name == "event":
        fields["event"] = value
    elif name == "data":
        fields["data"] += value + "\n"
    elif name == "id":
        if "\0" not in value:
            fields["id"] = value
