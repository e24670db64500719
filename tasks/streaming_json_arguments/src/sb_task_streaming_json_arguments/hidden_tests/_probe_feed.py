"""Shipped into the solution's process: feeds each list of chunks to a fresh parser (then
calls finish) and reports every call's outcome as plain data. It holds no expected value;
the judge compares the reports with its own oracles."""
from streaming_json import StreamingJSONParser


def _call(parser, chunk):
    try:
        got = parser.finish() if chunk is None else parser.push(chunk)
    except ValueError:
        return ["ValueError"]
    except Exception as error:  # reported as such: the judge fails the test on it
        return ["raised", type(error).__name__, str(error)[:300]]
    return ["events", got]


def feed(runs):
    reports = []
    for chunks in runs:
        parser = StreamingJSONParser()
        report = []
        for chunk in list(chunks) + [None]:
            report.append(_call(parser, chunk))
            if report[-1][0] != "events":
                break
        reports.append(report)
    return reports


def feed_outline(chunks):
    """As feed, for one run, with each event given as (kind, path length, last path
    item, rest): a text nested thousands deep would otherwise send millions of keys."""
    report = feed([chunks])[0]
    outline = []
    for entry in report:
        if entry[0] == "events" and isinstance(entry[1], list):
            entry = ["events", [_outline(event) for event in entry[1]]]
        outline.append(entry)
    return outline


def _outline(event):
    try:
        kind, path, *rest = event
        return (kind, len(path), path[-1] if path else None, *rest)
    except Exception:
        return ("malformed", repr(event)[:100])
