"""meta.yaml validation: every error names the package, the file and the field."""

from __future__ import annotations

import pytest

from sb.errors import TaskError
from sb.meta import parse_meta

GOOD = """
slug: demo
version: 1
suite: ml
category: numerics
kind: files
tier: laptop
accelerator: null
difficulty: easy
time_limit_s: 60
deps: [numpy]
probes: "a probe"
frozen_set: v1
calibration: []
"""


def meta_with(**changes) -> str:
    import yaml
    data = yaml.safe_load(GOOD)
    for key, value in changes.items():
        if value is ...:
            data.pop(key)
        else:
            data[key] = value
    return yaml.safe_dump(data)


def test_a_good_meta_parses():
    meta = parse_meta(GOOD, "pkg/meta.yaml")
    assert meta.slug == "demo" and meta.deps == ("numpy",)


@pytest.mark.parametrize("changes, field", [
    ({"suite": "poetry"}, "suite"),
    ({"kind": "essay"}, "kind"),
    ({"tier": "cloud"}, "tier"),
    ({"version": 0}, "version"),
    ({"time_limit_s": "soon"}, "time_limit_s"),
    ({"slug": "Bad Slug"}, "slug"),
    ({"probes": ...}, "probes"),
    ({"deps": "numpy"}, "deps"),
    ({"frozen_set": "golden"}, "frozen_set"),
    ({"tier": "accelerated"}, "accelerator"),
    ({"accelerator": "cuda"}, "accelerator"),
])
def test_each_bad_field_is_named(changes, field):
    with pytest.raises(TaskError) as info:
        parse_meta(meta_with(**changes), "sb_task_demo/meta.yaml")
    assert str(info.value).startswith("sb_task_demo/meta.yaml: field ")
    assert repr(field) in str(info.value)


def test_invalid_yaml_is_one_line():
    with pytest.raises(TaskError) as info:
        parse_meta("slug: [unclosed", "pkg/meta.yaml")
    assert "\n" not in str(info.value)
    assert "pkg/meta.yaml: not valid YAML" in str(info.value)


def entry(model, draws, passed):
    return {"model": model, "draws": draws, "passed": passed, "date": "2026-11-01"}


def test_numbered_set_needs_two_calibrations_of_five_draws():
    with pytest.raises(TaskError, match="needs two calibration entries"):
        parse_meta(meta_with(frozen_set="v2", calibration=[entry("a", 5, 3), entry("b", 4, 1)]), "p/meta.yaml")


def test_numbered_set_refused_when_top_two_are_perfect():
    cal = [entry("a", 5, 5), entry("b", 6, 6), entry("c", 5, 1)]
    with pytest.raises(TaskError, match="both 100%"):
        parse_meta(meta_with(frozen_set="v2", calibration=cal), "p/meta.yaml")


def test_numbered_set_admitted_when_it_separates_models():
    meta = parse_meta(meta_with(frozen_set="v2", calibration=[entry("a", 5, 5), entry("b", 5, 2)]), "p/meta.yaml")
    assert meta.frozen_set == "v2"


def test_control_runs_do_not_count_towards_admission():
    cal = [entry("reference", 5, 5), entry("starter", 5, 0), entry("a", 5, 3)]
    with pytest.raises(TaskError, match="needs two calibration entries"):
        parse_meta(meta_with(frozen_set="v2", calibration=cal), "p/meta.yaml")


def test_a_contract_clause_may_say_why_a_pass_does_not_prove_it():
    # contract.yaml's optional `trusted`: a rule observed only in the solution's process is
    # declared as such, with the reason. Every clause still names a test, trusted or not.
    from sb.task import _clause
    observed = _clause({"clause": "c", "tests": ["t.py::t"], "trusted": "a probe's hook"}, "w")
    assert observed.trusted == "a probe's hook"
    assert _clause({"clause": "c", "tests": ["t.py::t"]}, "w").trusted == ""
    for bad, message in (({"clause": "c", "tests": []}, "field 'tests'"),
                         ({"clause": "c", "tests": [], "trusted": "no test observes memory"}, "field 'tests'"),
                         ({"clause": "c", "tests": ["t"], "trusted": " "}, "field 'trusted'"),
                         ({"clause": "c", "tests": ["t"], "proven": "yes"}, "no others")):
        with pytest.raises(TaskError, match=message):
            _clause(bad, "pkg/contract.yaml: entry 1")


def test_sb_validate_says_how_many_rules_rest_on_observations_made_in_the_worker(capsys):
    from sb.checks import Validation
    from sb.report.terminal import print_validations
    from sb.task import Clause
    trusted = (Clause("never builds the full matrix", ("t.py::t",), "tracemalloc, in the worker"),)
    observed = (("never builds the full matrix", ("t.py::t",)), ("input not modified", ("t.py::u",)))
    print_validations([Validation("demo", "ok", trusted=trusted, worker_observed=observed),
                       Validation("plain", "ok", trusted=trusted)])
    out = capsys.readouterr().out
    assert "ok (2 contract rules rest on what the solution's own process reported; --json lists them)" in out
    assert out.count("solution's own process") == 1
    data = Validation("demo", "ok", trusted=trusted, worker_observed=observed).to_dict()
    assert data["trusted"] == [{"clause": "never builds the full matrix", "why": "tracemalloc, in the worker"}]
    assert data["worker_observed"] == [{"clause": "never builds the full matrix", "tests": ["t.py::t"]},
                                       {"clause": "input not modified", "tests": ["t.py::u"]}]


def screen(solves=4, passed=1, failures=None, **extra):
    failed = [["test_x.py::test_a"]] * (solves - passed) if failures is None else failures
    return {"date": "2026-12-03", "protocol": "one-shot, prompt and starter only, no execution",
            "solves": solves, "passed": passed, "failures": failed, **extra}


def test_a_screen_is_kept_beside_calibration_and_is_not_calibration():
    meta = parse_meta(meta_with(frozen_set="unvalidated", screen=[screen()]), "p/meta.yaml")
    (kept,) = meta.screen
    assert (kept.solves, kept.passed, kept.failures) == (4, 1, (("test_x.py::test_a",),) * 3)
    assert meta.calibration == ()
    with pytest.raises(TaskError, match="needs two calibration entries"):  # a screen admits to no set
        parse_meta(meta_with(frozen_set="v2", screen=[screen(passed=0), screen(passed=0)]), "p/meta.yaml")


@pytest.mark.parametrize("entry, problem", [
    (screen(passed=5), "0 <= passed <= solves"),
    (screen(failures=[["test_x.py::test_a"]]), "for each of the 3 failed solves"),
    (screen(failures=[[], [], []]), "failing test ids"),
    (screen(extra="x"), "exactly the keys"),
    ("4 solves", "exactly the keys"),
])
def test_a_malformed_screen_names_the_field(entry, problem):
    with pytest.raises(TaskError, match=r"field 'screen\[0\]'.*" + problem.replace("(", r"\(")):
        parse_meta(meta_with(screen=[entry]), "p/meta.yaml")


def test_a_starter_file_the_reference_leaves_out_is_graded_as_the_starter_has_it(tmp_path):
    """The module a test-writing task shows lives once, in starter/: the reference is the
    starter with reference/ written over it, exactly what a solver who keeps the file hands in."""
    import shutil

    from conftest import FIXTURE_TASK_DIR
    from sb.task import load_task_dir
    folder = tmp_path / "sb_task_fixture_add"
    shutil.copytree(FIXTURE_TASK_DIR, folder)
    (folder / "starter" / "notes.txt").write_text("kept as given\n")
    task = load_task_dir(folder, package="sb_task_fixture_add")
    assert task.reference_files["notes.txt"] == b"kept as given\n"
    assert task.reference_files["adder.py"] == (folder / "reference" / "adder.py").read_bytes()
    assert task.reference_files["adder.py"] != task.starter_files["adder.py"]


@pytest.mark.parametrize("module", ["json.py", "numpy.py", "pytest.py", "_wire/__init__.py"])
def test_a_starter_module_named_like_one_the_grading_imports_is_refused(tmp_path, module):
    """A solution module called json (or numpy, pytest, the worker's _wire) would be served
    by the judge in place of the real one, or not, depending on what it imported first."""
    import shutil

    from conftest import FIXTURE_TASK_DIR
    from sb.task import load_task_dir
    folder = tmp_path / "sb_task_fixture_add"
    shutil.copytree(FIXTURE_TASK_DIR, folder)
    (folder / "starter" / module).parent.mkdir(exist_ok=True)
    (folder / "starter" / module).write_text("")
    with pytest.raises(TaskError, match=f"starter: '{module.split('/')[0].removesuffix('.py')}' is also the name"):
        load_task_dir(folder, package="sb_task_fixture_add")


def _fixture_copy(tmp_path, equivalents: str):
    import shutil

    from conftest import FIXTURE_TASK_DIR
    from sb.task import load_task_dir
    folder = tmp_path / "sb_task_fixture_add"
    shutil.copytree(FIXTURE_TASK_DIR, folder)
    (folder / "equivalent_mutants.yaml").write_text(equivalents)
    return load_task_dir(folder, package="sb_task_fixture_add")


def test_an_equivalent_is_one_mutant_or_every_mutant_of_a_file(tmp_path):
    """A file entry covers every generated mutant of that file (a shown module never run)."""
    task = _fixture_copy(tmp_path, '- id: "adder.py:core/NumberReplacer:0"\n  reason: "allowed"\n'
                                   '- file: shown.py\n  reason: "never run"\n')
    assert task.equivalent_reason("adder.py:core/NumberReplacer:0", "adder.py") == "allowed"
    assert task.equivalent_reason("adder.py:core/NumberReplacer:1", "adder.py") is None
    assert task.equivalent_reason("shown.py:core/AddNot:3", "shown.py") == "never run"


@pytest.mark.parametrize("entry", ['- id: "a.py:x:0"\n  file: a.py\n  reason: "r"\n', '- file: a.py\n',
                                   '- file: a.py\n  reason: " "\n'])
def test_a_malformed_equivalent_names_its_entry(tmp_path, entry):
    task = _fixture_copy(tmp_path, entry)
    with pytest.raises(TaskError, match="equivalent_mutants.yaml: entry 1"):
        task.equivalent_reason("a.py:x:0", "a.py")


def test_an_equivalent_file_no_mutant_changes_any_more_is_stale(tmp_path):
    from sb.generated import stale_equivalents
    task = _fixture_copy(tmp_path, '- file: adder.py\n  reason: "r"\n- file: gone.py\n  reason: "r"\n')
    assert stale_equivalents(task, {"adder.py:core/AddNot:0"}) == ["gone.py"]
