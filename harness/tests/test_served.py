"""A row names where it was served: a draw answered by anything but the provider's own API
(every `openai-compatible` draw among them) is refused by `sb publish` without
--allow-endpoint, and once allowed is shown as `MODEL @ HOST` by `sb report`, `sb compare`
and the HTML, never under the bare vendor name, and never with the URL's credentials. A
`cmd:` agent's draw (unsandboxed: it could read the references) is refused without
--allow-agent and shown as `MODEL @ local agent command`."""

from __future__ import annotations

import json

import pytest

from sb.report.served import host_of, model_label, served_at
from test_report import entry, make_doc, sb

SECRET_URL = "http://user:s3cret-token@127.0.0.1:8080/v1?key=k-abc"


def served_doc(folder, model="gpt-4o", endpoint=SECRET_URL, official=None, adapter="openai-compatible",
               group="g1", passes=("passed", "failed")):
    path = make_doc(folder, model, group, 1, [entry("alpha", passes[0]), entry("beta", passes[1], ["t::x"])],
                    adapter=adapter)
    doc = json.loads(path.read_text())
    doc.update(endpoint=endpoint, official_endpoint=official)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("doc, where", [
    ({"endpoint": SECRET_URL, "official_endpoint": None}, "127.0.0.1:8080"),
    ({"endpoint": "https://api.openai.com/v1", "official_endpoint": "https://api.openai.com/v1/"}, None),
    ({"endpoint": "https://proxy.example/v1", "official_endpoint": "https://api.openai.com/v1"}, "proxy.example"),
    ({"endpoint": "http://[::1]:9000", "official_endpoint": None}, "[::1]:9000"),
    ({"endpoint": None, "official_endpoint": None}, None),   # the controls call no endpoint
    ({"adapter": "cmd", "endpoint": None, "official_endpoint": None}, "local agent command"),
])
def test_served_at_is_the_host_of_any_endpoint_but_the_providers(doc, where):
    assert served_at(doc) == where
    assert model_label({**doc, "model": "m"}) == (f"m @ {where}" if where else "m")


def test_a_host_never_carries_credentials():
    assert host_of(SECRET_URL) == "127.0.0.1:8080"
    assert host_of("not a url") == "an unnamed endpoint"


def test_publish_refuses_an_openai_compatible_draw_named_after_a_vendor_model(tmp_path):
    path = served_doc(tmp_path / "results")
    board = tmp_path / "board"
    refused = sb("publish", str(path), "--leaderboard", str(board))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "127.0.0.1:8080" in refused.stderr and "--allow-endpoint" in refused.stderr
    assert "s3cret" not in refused.stderr and not list(board.glob("*.json"))
    allowed = sb("publish", str(path), "--leaderboard", str(board), "--allow-endpoint")
    assert allowed.returncode == 0, allowed.stderr


def agent_doc(folder, model="./my-agent.sh"):
    """A `cmd:` draw as `sb run --model 'cmd:./my-agent.sh'` records it: the command as its model."""
    path = make_doc(folder, "agent", "g3", 1, [entry("alpha", "passed"), entry("beta", "failed", ["t::x"])],
                    adapter="cmd")
    path.write_text(json.dumps({**json.loads(path.read_text()), "model": model}))
    return path


def test_publish_refuses_a_cmd_agent_draw_unless_allowed_and_names_it_as_one(tmp_path):
    path = agent_doc(tmp_path / "results")
    assert json.loads(path.read_text())["served_at"] == "local agent command"
    board = tmp_path / "board"
    refused = sb("publish", str(path), "--leaderboard", str(board), "--allow-endpoint")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "a cmd: agent, which ran unsandboxed" in refused.stderr and "--allow-agent" in refused.stderr
    assert "'./my-agent.sh @ local agent command'" in refused.stderr and not list(board.glob("*.json"))
    allowed = sb("publish", str(path), "--leaderboard", str(board), "--allow-agent", "--json")
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout)["path"] == str(board / "__my-agent.sh--g3-d1.json")


@pytest.fixture
def board(tmp_path):
    served_doc(tmp_path, group="g1")
    served_doc(tmp_path, endpoint="https://api.openai.com/v1", official="https://api.openai.com/v1",
               adapter="openai", group="g2", passes=("passed", "passed"))
    return tmp_path


def test_report_shows_the_host_beside_the_model_and_never_a_bare_vendor_row(board):
    done = sb("report", "--leaderboard", str(board))
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("gpt-4o")]
    assert sorted(row.split("  ")[0] for row in rows) == ["gpt-4o", "gpt-4o @ 127.0.0.1:8080"]
    assert "s3cret" not in done.stdout
    data = json.loads(sb("report", "--leaderboard", str(board), "--json").stdout)
    assert sorted((r["model"], r["served_at"]) for r in data) == [("gpt-4o", None),
                                                                  ("gpt-4o @ 127.0.0.1:8080", "127.0.0.1:8080")]


def test_compare_keeps_the_served_draw_apart_from_the_providers(board):
    done = sb("compare", "gpt-4o", "gpt-4o @ 127.0.0.1:8080", "--results", str(board), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["a"], data["b"]) == ("gpt-4o", "gpt-4o @ 127.0.0.1:8080")
    assert {t["slug"]: t["winner"] for t in data["tasks"]}["beta"] == "a"
    text = sb("compare", "gpt-4o", "gpt-4o @ 127.0.0.1:8080", "--results", str(board)).stdout
    assert "gpt-4o @ 127.0.0.1:8080" in text and "s3cret" not in text


def test_report_and_compare_name_a_cmd_agent_draw_as_one_never_by_the_bare_command(board):
    agent_doc(board)
    rows = json.loads(sb("report", "--leaderboard", str(board), "--json").stdout)
    assert ("./my-agent.sh @ local agent command", "local agent command") in [(r["model"], r["served_at"])
                                                                            for r in rows]
    text = sb("report", "--leaderboard", str(board)).stdout
    assert [line.split("  ")[0] for line in text.splitlines() if line.startswith("./")] == [
        "./my-agent.sh @ local agent command"]
    done = sb("compare", "gpt-4o", "./my-agent.sh @ local agent command", "--results", str(board), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["b"] == "./my-agent.sh @ local agent command"
    bare = sb("compare", "gpt-4o", "./my-agent.sh", "--results", str(board))
    assert bare.returncode == 2 and "./my-agent.sh @ local agent command" in bare.stderr
