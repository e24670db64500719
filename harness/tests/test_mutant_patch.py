"""Hand mutants as patches: made, parsed and applied strictly (sb/mutant_patch.py), and
`sb diff`, which writes one from an edited copy of the reference."""

from __future__ import annotations

import pytest

from sb import mutant_patch
from sb.mutant_patch import PatchError, apply, make_patch, parse
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

