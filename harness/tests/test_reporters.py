"""register_reporters: every finished draw reaches each reporter; a failing one only warns."""

from __future__ import annotations

import types

from sb import hookimpl
from sb.reporters import Reporter, notify_reporters


def reporter_plugin(reporter):
    module = types.ModuleType("reporter_plugin")

    @hookimpl
    def register_reporters(register):
        register(reporter)
    module.register_reporters = register_reporters
    return module


class Collecting(Reporter):
    name = "collecting"

    def __init__(self):
        self.seen = []

    def report(self, doc, path):
        self.seen.append((doc["run_id"], path))


class Broken(Reporter):
    name = "broken"

    def report(self, doc, path):
        raise ConnectionError("dashboard down")


def test_each_draw_reaches_each_reporter_and_failures_only_warn(pm):
    collecting = Collecting()
    pm.register(reporter_plugin(collecting), name="collecting")
    pm.register(reporter_plugin(Broken()), name="broken")
    runs = [({"run_id": "a-d1"}, "a.json"), ({"run_id": "a-d2"}, "b.json")]
    warnings = notify_reporters(runs, pm)
    assert collecting.seen == [("a-d1", "a.json"), ("a-d2", "b.json")]
    assert len(warnings) == 2 and all("dashboard down" in w for w in warnings)


class Writing(Reporter):
    name = "writing"

    def report(self, doc, path):
        return f"/logs/{doc['run_id']}.eval"


def test_a_file_a_reporter_wrote_is_told_and_sb_run_prints_where(pm, capsys):
    pm.register(reporter_plugin(Writing()), name="writing")
    pm.register(reporter_plugin(Collecting()), name="collecting")   # wrote nothing: tells nothing
    told = []
    notify_reporters([({"run_id": "a-d1"}, "a.json")], pm, on_written=lambda name, path: told.append((name, path)))
    assert told == [("writing", "/logs/a-d1.eval")]
    from sb.report.terminal import print_reported
    print_reported(*told[0])
    assert capsys.readouterr().out == "writing: /logs/a-d1.eval\n"
