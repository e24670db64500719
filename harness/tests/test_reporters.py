"""register_reporters: every finished draw reaches each reporter; a failing one only warns."""

from __future__ import annotations

import os
import time
import types
from pathlib import Path

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


class WantingFiles(Reporter):
    name = "wanting"
    wants_files = True

    def report(self, doc, path):
        return None


def test_the_scratch_folder_for_a_reporters_files_is_marked_as_this_commands(pm, tmp_path, monkeypatch):
    """Without --keep, the model's files for a reporter go to a scratch folder that stays empty
    until the first answer: it carries its owner marker, so no reap (this command's or
    another's) takes it for an abandoned one, and it is removed once reported."""
    import tempfile

    from sb import interrupt
    from sb.reporters import RunReporters
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    pm.register(reporter_plugin(WantingFiles()), name="wanting")
    reporting = RunReporters(None, pm, None)
    scratch = Path(reporting.keep_dir)
    assert scratch.parent == tmp_path and (scratch / interrupt.OWNER_MARKER).is_file()
    old = time.time() - interrupt.UNMARKED_GRACE_S - 1
    os.utime(scratch, (old, old))
    assert interrupt.reap_orphaned_folders(str(tmp_path)) == [] and scratch.is_dir()
    reporting.notify([])
    assert not scratch.exists()
