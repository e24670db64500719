"""The README's "Grade a real model" section, followed as written: its served-model command
run against a scripted OpenAI-compatible server on loopback gives a results file; and the
lock `make install-sdk` syncs to (tools/sdk_lock.py) is the laptop lock plus the SDKs'
hashed entries from the dev lock."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from scripted_llm_server import Scripted, ScriptedServer

from conftest import sb_env

REPO = Path(__file__).resolve().parents[2]
SB = [sys.executable, "-c", "from sb.cli import main; main()"]


def readme_commands() -> list:
    """The shell lines of the section's code block (comments and blank lines dropped)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Grade a real model", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_the_served_model_command_of_the_readme_grades_against_a_local_server(tmp_path):
    [command] = [c for c in readme_commands() if "openai-compatible:" in c]
    argv = shlex.split(command)
    assert argv[0] == ".venv/bin/sb" and argv[1] == "run"
    exported = tmp_path / "csv"
    subprocess.run([*SB, "export", "csv", str(exported), "--reference"], check=True, env=sb_env(), capture_output=True)
    answer = {"files": {p.name: p.read_text() for p in exported.iterdir() if p.is_file()}}
    with ScriptedServer([Scripted(payload=answer)]) as server:
        served = re.sub(r"http://127\.0\.0\.1:\d+/v1", server.url + "/v1", command)
        argv = shlex.split(served)
        done = subprocess.run([*SB, *argv[1:], "--results", str(tmp_path / "results")], capture_output=True,
                              text=True, env=sb_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [path] = (tmp_path / "results").glob("*.json")
    doc = json.loads(path.read_text())
    assert doc["complete"] and doc["adapter"] == "openai-compatible"
    assert [(e["slug"], e["status"]) for e in doc["tasks"]] == [("csv", "passed")]
    assert doc["served_at"] == server.url.split("//", 1)[1]
    assert doc["tokens"]["input"] > 0


def test_every_model_the_section_names_is_routed_by_an_installed_adapter():
    from sb.models.base import resolve_model
    from sb.session import default_session
    for command in readme_commands():
        argv = shlex.split(command)
        if argv[:2] != [".venv/bin/sb", "run"]:
            assert argv in (["make", "install-sdk"],) or argv[0] == "export", argv
            continue
        model = argv[argv.index("--model") + 1]
        adapter, _ = resolve_model(model, default_session().pm)   # raises where no installed adapter takes the name
        assert adapter.installed(), model


def test_the_sdk_lock_is_the_laptop_lock_plus_the_sdks_with_their_hashes():
    done = subprocess.run([sys.executable, "tools/sdk_lock.py", "locks/laptop.txt", "locks/dev.txt"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    laptop = (REPO / "locks" / "laptop.txt").read_text()
    assert done.stdout.startswith(laptop.rstrip("\n") + "\n")
    added = done.stdout[len(laptop.rstrip("\n")) + 1:]
    pins = re.findall(r"^([a-z0-9-]+)==", added, re.M)
    assert {"anthropic", "openai"} <= set(pins) and not set(pins) & set(re.findall(r"^([a-z0-9-]+)==", laptop, re.M))
    for block in re.split(r"\n(?=[a-z0-9-]+==)", added.split("\n", 1)[1]):
        assert "--hash=sha256:" in block, block


def test_the_sdk_lock_refuses_a_package_the_two_locks_pin_apart(tmp_path):
    dev = (REPO / "locks" / "dev.txt").read_text()
    laptop = (REPO / "locks" / "laptop.txt").read_text()
    version = re.search(r"^idna==(\S+)", laptop, re.M).group(1)
    (tmp_path / "dev.txt").write_text(re.sub(r"^idna==\S+", "idna==0.0.1", dev, flags=re.M))
    done = subprocess.run([sys.executable, str(REPO / "tools" / "sdk_lock.py"), str(REPO / "locks" / "laptop.txt"),
                           str(tmp_path / "dev.txt")], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and f"idna is {version} in" in done.stderr and "0.0.1" in done.stderr
