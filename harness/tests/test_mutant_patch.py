"""Hand mutants as patches: made, parsed and applied strictly (sb/mutant_patch.py); `sb diff`,
which writes one from an edited copy of the reference; and `sb mutants --rebase`, which moves
patches a changed reference left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from sb import mutant_patch
from sb.mutant_patch import PatchError, apply, make_patch, parse, rebase
from test_cli import sb

REFERENCE = {
    "m.py": b"def f(x):\n    y = x + 1\n    return y\n",
    "q.sql": b"-- totals per customer\nSELECT 1;\n",
}


def round_trip(files, reference=REFERENCE, expected="caught", reason=""):
    text = make_patch(expected, "a wrong version", reference, files, reason)
    spec = parse(text)
    return spec, {**reference, **apply(reference, spec.diff)}


@pytest.mark.parametrize("files", [
    {"m.py": b"def f(x):\n    y = x + 2\n    return y\n"},                       # one line changed
    {"m.py": b"def f(x):\n    return x\n"},                                       # lines removed
    {"m.py": b"import os\ndef f(x):\n    y = x + 1\n    y += 0\n    return y\n"},   # inserted at 0 and inside
    {"m.py": b"def f(x):\n    y = x + 1\n    return y"},                          # final newline dropped
    {"q.sql": b"-- totals for every customer\n-- twice\nSELECT 2;\n"},              # removed lines start with '-- '
    {"m.py": b"def f(x):\n    return -x\n", "q.sql": b"SELECT 3;\n"},             # two files
    {"new.py": b"X = 1\n"},                                                       # a file the reference lacks
    {"m.py": b"def f(x):\r\n\x0c    y = x + 1\n    return y\n"},                  # CR and a form feed kept
])
def test_a_patch_gives_back_exactly_the_mutant_files(files):
    spec, applied = round_trip(files)
    assert applied == {**REFERENCE, **files}
    assert (spec.expected, spec.description, spec.reason) == ("caught", "a wrong version", "")


def test_a_one_line_change_is_six_lines_long():
    text = make_patch("caught", "adds two", REFERENCE, {"m.py": REFERENCE["m.py"].replace(b"+ 1", b"+ 2")})
    assert text.splitlines() == ["caught: adds two", "--- a/m.py", "+++ b/m.py", "@@ -2 +2 @@",
                                 "-    y = x + 1", "+    y = x + 2"]


def test_a_surviving_mutant_carries_its_reason():
    spec, _ = round_trip({"m.py": b"def f(x):\n    return x + 1\n"}, expected="survives", reason="same values")
    assert (spec.expected, spec.reason) == ("survives", "same values")
    with pytest.raises(PatchError, match="reason"):
        parse("survives: slower\n--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-    y = x + 1\n+    y = 1 + x\n")


def test_line_breaks_in_a_description_stay_on_its_line():
    text = make_patch("caught", "a bare \r ends\na record", REFERENCE, {"m.py": b"x = 1\n"})
    assert text.splitlines()[0] == "caught: a bare \\r ends\\na record"


@pytest.mark.parametrize("text, message", [
    ("caught: x\n", "no '--- a/FILE'"),
    ("maybe: x\n--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-    y = x + 1\n+    y = 2\n", "header line 1"),
    ("caught: x\ncaught: y\n--- a/m.py\n+++ b/m.py\n", "header line 2"),
    ("caught: x\n--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-    y = x + 9\n+    y = 2\n", "line 2 of the reference"),
    ("caught: x\n--- a/m.py\n+++ b/m.py\n@@ -7 +7 @@\n-    y\n+    z\n", "past the end"),
    ("caught: x\n--- a/gone.py\n+++ b/gone.py\n@@ -1 +1 @@\n-a\n+b\n", "not a file of the reference"),
    ("caught: x\n--- a/m.py\n+++ b/n.py\n@@ -1 +1 @@\n-def f(x):\n+def g(x):\n", "renames"),
    ("caught: x\n--- a/m.py\n+++ b/m.py\n@@ -2,2 +2 @@\n-    y = x + 1\n", "ends inside a hunk"),
    ("caught: x\n--- a/m.py\n+++ b/m.py\n", "no hunk"),
])
def test_a_patch_that_does_not_fit_the_reference_is_refused_naming_where(text, message):
    with pytest.raises(PatchError, match=message):
        apply(REFERENCE, parse(text).diff)


def test_identical_files_make_no_patch():
    with pytest.raises(PatchError, match="do not differ"):
        mutant_patch.file_diffs(REFERENCE, dict(REFERENCE))


def test_sb_diff_writes_a_patch_that_loads_as_the_same_mutant(fixture_env, tmp_path):
    dest = tmp_path / "edited"
    assert sb("export", "fixture_add", str(dest), "--reference", env=fixture_env).returncode == 0
    (dest / "adder.py").write_text((dest / "adder.py").read_text().replace("a + b", "a - b"))
    done = sb("diff", "fixture_add", str(dest), "-m", "subtracts", env=fixture_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["caught: subtracts", "--- a/adder.py"]
    assert "-    return a + b" in done.stdout and "+    return a - b" in done.stdout
    unchanged = tmp_path / "unchanged"
    assert sb("export", "fixture_add", str(unchanged), "--reference", env=fixture_env).returncode == 0
    done = sb("diff", "fixture_add", str(unchanged), "-m", "nothing", env=fixture_env)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "do not differ" in done.stderr



def test_sb_diff_output_writes_the_patch_only_once_it_is_made(fixture_env, tmp_path):
    copy = tmp_path / "copy"
    assert sb("export", "fixture_add", str(copy), "--reference", env=fixture_env).returncode == 0
    target = tmp_path / "mutants" / "same.patch"
    done = sb("diff", "fixture_add", str(copy), "-m", "nothing", "-o", str(target), env=fixture_env)
    assert done.returncode == 2 and "do not differ" in done.stderr and not target.exists()
    (copy / "adder.py").write_text((copy / "adder.py").read_text().replace("a + b", "a * b"))
    done = sb("diff", "fixture_add", str(copy), "-m", "multiplies", "-o", str(target), env=fixture_env)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert target.read_text().startswith("caught: multiplies\n--- a/adder.py\n")
    assert target.stat().st_mode & 0o777 == 0o644  # a source file, not a private one
    done = sb("diff", "fixture_add", str(copy), "-m", "x", "-o", str(tmp_path / "wrong.txt"), env=fixture_env)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and ".patch" in done.stderr
    for words in (["-m", " "], ["-m", "x", "--survives", ""]):
        done = sb("diff", "fixture_add", str(copy), *words, env=fixture_env)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "need words" in done.stderr


GROWN = {"m.py": b"import math\n\n" + REFERENCE["m.py"], "q.sql": REFERENCE["q.sql"]}  # two lines above f


def test_a_rebased_patch_makes_the_same_change_where_the_lines_now_are():
    wrong = {"m.py": b"import os\ndef f(x):\n    y = x + 2\n    y += 0\n    return y\n"}
    old = parse(make_patch("caught", "adds two", REFERENCE, wrong)).diff
    with pytest.raises(PatchError, match="line 2 of the reference"):
        apply(GROWN, old)
    diff, moves = rebase(GROWN, old)
    assert apply(GROWN, diff)["m.py"] == b"import math\n\n" + wrong["m.py"]
    assert moves[0] == "m.py: the hunk at line 2 moved to line 4"
    assert moves[1].startswith("m.py: the lines added after line 0 now follow line 2") and "check them" in moves[1]
    assert rebase(REFERENCE, old) == (old, [])  # a patch that applies is made again unchanged


def test_a_hunk_whose_lines_are_gone_or_repeated_is_not_guessed():
    old = parse(make_patch("caught", "c", REFERENCE, {"m.py": b"def f(x):\n    y = x + 2\n    return y\n"})).diff
    with pytest.raises(PatchError, match="removes are nowhere in the reference; make"):
        rebase({"m.py": b"def f(x):\n    y = x + 10\n    return y\n"}, old)
    # the removed line twice, four lines added above: the nearer copy is the wrong one
    twice = b"# a\n# b\n# c\n# d\ndef g(x):\n    y = x + 1\n    return y\ndef f(x):\n    y = x + 1\n    return y\n"
    with pytest.raises(PatchError, match="at lines 6, 9: which one it meant cannot be known"):
        rebase({"m.py": twice}, old)


def test_a_repeated_line_is_never_placed_even_where_the_hunk_before_it_points():
    """Zero context: lines inserted between two hunks make the old shift point at the wrong
    copy as easily as the right one."""
    reference = {"m.py": b"def f(x):\n    y = x + 1\n    return y\ndef g(x):\n    return y\n"}
    wrong = {"m.py": b"def f(x):\n    y = x - 1\n    return y\ndef g(x):\n    return -y\n"}
    old = parse(make_patch("caught", "c", reference, wrong)).diff
    with pytest.raises(PatchError, match="which one it meant cannot be known"):
        rebase({"m.py": b"# one\n# two\n" + reference["m.py"]}, old)
    longer = {"m.py": b"def f(x):\n    y = x + 1\n    return y\n\ndef g(x):\n    return y\n# end\n"}
    first_repeated = parse(make_patch("caught", "c", longer, {"m.py": longer["m.py"].replace(
        b"    return y\n\n", b"    return -y\n\n").replace(b"# end", b"# END")})).diff
    with pytest.raises(PatchError, match="at lines 5, 8"):
        rebase({"m.py": b"# one\n# two\n" + longer["m.py"]}, first_repeated)
    with pytest.raises(PatchError, match="at lines 3, 6"):  # its stated place holds one copy: not proof enough
        rebase({"m.py": longer["m.py"].replace(b"# end", b"# the end")}, first_repeated)


def test_a_last_line_without_a_newline_ends_the_file_or_the_patch_is_stale():
    reference = {"m.py": b"def f(x):\n    return x\n"}
    wrong = {"m.py": b"def f(x):\n    return -x"}  # the mutant's file ends without a newline
    old = parse(make_patch("caught", "c", reference, wrong)).diff
    assert "No newline at end of file" in old
    grown = {"m.py": reference["m.py"] + b"def g(x):\n    return x\n"}
    with pytest.raises(mutant_patch.StalePatch):  # applied strictly it had glued 'return -xdef g(x):'
        apply(grown, old)
    with pytest.raises(PatchError, match="at lines 2, 4"):  # 'return x' twice now
        rebase(grown, old)
    with pytest.raises(PatchError, match="ends the file without a newline, and at line 2 the reference goes on"):
        rebase({"m.py": reference["m.py"] + b"# end\n"}, old)
    assert apply({"m.py": b"# top\n" + reference["m.py"]}, rebase({"m.py": b"# top\n" + reference["m.py"]}, old)[0]) \
        == {"m.py": b"# top\n" + wrong["m.py"]}


def test_a_description_with_any_line_separator_stays_one_header_line():
    for odd in ("\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"):
        text = make_patch("caught", f"a{odd}b", REFERENCE, {"m.py": b"x = 1\n"})
        spec = parse(text)
        assert spec.description == f"a{odd}b" and apply(REFERENCE, spec.diff)["m.py"] == b"x = 1\n"


def _installed_fixture(fixture_env) -> Path:
    return Path(fixture_env["PYTHONPATH"]) / "sb_task_fixture_add"


def test_sb_mutants_rebase_moves_stale_patches_and_leaves_the_rest(fixture_env, tmp_path):
    package = _installed_fixture(fixture_env)
    reference = package / "reference" / "adder.py"
    reference.write_text('"""Adds."""\n\n' + reference.read_text())
    patches = {p.name: p.read_bytes() for p in (package / "mutants").glob("*.patch")}
    (package / "mutants" / "gone.patch").write_text(
        "caught: c\n--- a/adder.py\n+++ b/adder.py\n@@ -2 +2 @@\n-    return b + a\n+    return b\n")
    stale = sb("mutants", "fixture_add", env=fixture_env)
    assert stale.returncode == 1 and stale.stderr.count("\n") == 1
    assert "3 of 3 mutant patches do not load" in stale.stderr and "--rebase" in stale.stderr
    exported = sb("export", "fixture_add", str(tmp_path / "x"), "--mutant", "off_by_one", env=fixture_env)
    assert exported.returncode == 1 and "off_by_one.patch" in exported.stderr and "--rebase" in exported.stderr

    done = sb("mutants", "fixture_add", "--rebase", env=fixture_env)
    assert done.returncode == 1, done.stderr
    assert f"moved fixture_add off_by_one: rewrote {package / 'mutants' / 'off_by_one.patch'}" in done.stdout
    assert "adder.py: the hunk at line 2 moved to line 4" in done.stdout
    assert "FAILED fixture_add gone: adder.py: the lines the hunk at line 2 removes are nowhere" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("mutant patches: 2 moved, 1 failed, 0 applied as they were")
    (package / "mutants" / "gone.patch").unlink()
    exported = sb("export", "fixture_add", str(tmp_path / "x"), "--mutant", "off_by_one", env=fixture_env)
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "x" / "adder.py").read_text() == '"""Adds."""\n\ndef add(a, b):\n    return a + b + 1\n'
    for name, before in patches.items():
        after = (package / "mutants" / name).read_bytes()
        assert after != before and after.splitlines()[0] == before.splitlines()[0]  # header kept
    again = sb("mutants", "fixture_add", "--rebase", "--json", env=fixture_env)
    assert again.returncode == 0
    import json
    assert {p["state"] for r in json.loads(again.stdout) for p in r["patches"]} == {"applies"}
    (package / "mutants" / "adds.patch").write_text(
        "caught: c\n--- a/adder.py\n+++ b/adder.py\n@@ -3,0 +4 @@\n+    return 0\n")
    checked = sb("mutants", "fixture_add", "--rebase", env=fixture_env)
    assert checked.returncode == 0
    assert "check fixture_add adds\n  adder.py after line 3: lines only added, placed by that number alone" \
        in checked.stdout


def test_validate_names_every_patch_that_does_not_load(task_copy):
    from sb.checks import mutants_problem
    from sb.task import load_task_dir
    folder = task_copy()
    assert mutants_problem(load_task_dir(folder, package="sb_task_fixture_add")) == ""
    (folder / "mutants" / "empty.patch").write_text("")  # what `sb diff ... > FILE` leaves when it fails
    problem = mutants_problem(load_task_dir(folder, package="sb_task_fixture_add"))
    assert "1 of 3 mutant patches do not load" in problem and "--rebase" not in problem  # no rebase mends that
    (folder / "reference" / "adder.py").write_text("# moved\n" + (folder / "reference" / "adder.py").read_text())
    problem = mutants_problem(load_task_dir(folder, package="sb_task_fixture_add"))
    assert problem.startswith("mutants: 3 of 3 mutant patches do not load: ")
    assert "empty.patch" in problem and "ignores_negatives.patch" in problem and "--rebase" in problem
