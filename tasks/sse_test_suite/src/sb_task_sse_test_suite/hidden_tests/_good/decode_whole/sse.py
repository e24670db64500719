"""Server-Sent Events: decode the whole body, then split it into lines by hand."""

BOM = "\ufeff"


def parse_event_stream(chunks):
    text = b"".join(chunks).decode("utf-8", errors="replace")
    if text.startswith(BOM):
        text = text[len(BOM):]
    events = []
    event_type, data_lines, last_id = "", [], ""
    for line in complete_lines(text):
        if not line:
            if data_lines:
                events.append((event_type if event_type else "message", "\n".join(data_lines), last_id))
            event_type, data_lines = "", []
            continue
        if line.startswith(":"):
            continue
        colon = line.find(":")
        if colon == -1:
            name, value = line, ""
        else:
            name, value = line[:colon], line[colon + 1:]
            if value.startswith(" "):
                value = value[1:]
        if name == "data":
            data_lines.append(value)
        elif name == "event":
            event_type = value
        elif name == "id" and "\x00" not in value:
            last_id = value
    return events


def complete_lines(text):
    """Every line that a line ending closes (CR LF, LF or CR); the unterminated rest is dropped."""
    lines, start, i = [], 0, 0
    while i < len(text):
        char = text[i]
        if char == "\n" or char == "\r":
            lines.append(text[start:i])
            if char == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
                i += 1
            start = i + 1
        i += 1
    return lines
