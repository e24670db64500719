"""The committed transcripts are what the harness's loop produces today, and the hidden
tests' copy of the tools equals the tools the model is offered."""

import importlib.util
from pathlib import Path

HERE = Path(__file__).parent.parent
PACKAGE = HERE / "src" / "sb_task_tools"


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hidden_copy_matches_the_toolbox():
    from sb_task_tools import toolbox
    world = load(PACKAGE / "hidden_tests" / "_world.py", "_world_copy")
    assert world.MAX_TURNS == toolbox.MAX_TURNS
    assert world.WAREHOUSES == toolbox.WAREHOUSES and world.STOCK == toolbox.STOCK
    assert world.KG_PER == toolbox.KG_PER
    assert world.SCHEMAS == {t["name"]: t["input_schema"] for t in toolbox.TOOLS}


def test_committed_transcripts_equal_a_fresh_drive():
    maker = load(HERE / "make_transcripts.py", "make_transcripts")
    assert (PACKAGE / "reference" / "transcript.json").read_bytes() == maker.transcript_of(maker.ScriptedAgent)
    from sb.task import load_task_dir
    task = load_task_dir(PACKAGE)
    for name, (agent_class, _) in maker.MUTANTS.items():
        kept = task.mutant_solution(task.mutant(name))["transcript.json"]
        assert kept == maker.transcript_of(agent_class), name
