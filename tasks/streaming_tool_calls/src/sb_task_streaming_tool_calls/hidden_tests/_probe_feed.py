"""Shipped into the solution's process: feeds each list of chunks to a fresh parser, then
calls finish(), and reports what every call returned (or raised) as plain data. It holds no
expected value; the judge compares the reports with its own oracle."""
from tool_calls import ToolCallParser


def feed(runs):
    reports = []
    for chunks in runs:
        parser = ToolCallParser()
        report = []
        for chunk in list(chunks) + [None]:
            try:
                got = parser.finish() if chunk is None else parser.push(chunk)
            except Exception as error:  # reported as such: the judge fails the test on it
                report.append(["raised", type(error).__name__, str(error)[:300]])
                break
            report.append(["events", got])
        reports.append(report)
    return reports
