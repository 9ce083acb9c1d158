"""debug explain (offline and live), debug capture, and manifest loading rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.schemas import REPO, _schema
from tma.core import fixture

REFERENCE = REPO.parent / "shared" / "reference" / "captures"
SEED_EXAMPLE = """min_engine_version = "0.1"

[identity]
process_names = ["claude"]

[hooks]
covers = ["working", "blocked", "idle", "lifecycle"]

[[hooks.map]]
event = "Notification"
matcher = "permission_prompt|elicitation_dialog"
claim = { state = "blocked", detail = "permission" }

[[hooks.map]]
event = "Stop"
claim = { state = "idle" }
turn_end = true

[[hooks.map]]
event = "SessionStart"
claim = { lifecycle = "start" }

[[hooks.map]]
event = "SessionEnd"
claim = { lifecycle = "end" }

[capture]
visible = ["working", "idle", "blocked"]

[telemetry.context]
channel = "event"
format = "claude-statusline-json"

[[rules]]
state = "blocked"
detail = "permission"
priority = 100
region = "tail_lines(5)"
match = { any = [ { contains = "Do you want to proceed?" }, { regex = "❯\\\\s" } ] }

[[rules]]
state = "idle"
priority = 10
region = "tail_lines(50)"
skip_state_update = true
match = { all = [ { contains = "transcript" }, { not = { contains = "❯" } } ] }

[details]
rate_limit = { aliases = ["ratelimited", "rate-limited"] }
"""


def test_offline_explain_json_against_a_reference_capture(srv):
    jsonschema = pytest.importorskip("jsonschema")
    cap = REFERENCE / "codex_blocked_w100.txt"
    if not cap.exists():
        pytest.skip("../shared/reference/captures is absent (a user's clone)")
    res = srv.tma("debug", "explain", "--capture", str(cap), "--json", manifests=False)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, _schema("explain.schema.json"))
    assert (doc["state"], doc["detail"], doc["source"]) == ("blocked", "permission", "capture")
    assert doc["winning"] and any(r["matched"] for r in doc["rules"])
    text = srv.tma("debug", "explain", "--capture", str(cap), manifests=False).stdout
    assert "verdict: blocked/permission" in text and "MATCH" in text


def test_offline_explain_applies_the_foreground_cap_from_the_command_header(srv):
    """pi quit and left its idle frame under the shell prompt (`command: bash`)."""
    cap = REPO / "tests" / "fixtures" / "captures" / "pi-0.73.1_unknown_shell_after_exit.txt"
    doc = json.loads(srv.tma("debug", "explain", "--capture", str(cap), "--json",
                             manifests=False, check=True).stdout)
    assert doc["claims"].get("idle"), "the frame alone reads idle"
    assert (doc["state"], doc["source"]) == ("unknown", "process")


def test_offline_explain_with_a_prior(srv, tmp_path):
    body = "just some output with no chrome\n"
    cap = tmp_path / "x.txt"
    cap.write_text(fixture.render({"agent": "fake", "title": "t", "captured_at": "1000"}, body))
    doc = json.loads(srv.tma("debug", "explain", "--capture", str(cap), "--json",
                             check=True).stdout)
    assert doc["state"] == "unknown" and doc["detail"] == ""
    doc = json.loads(srv.tma("debug", "explain", "--capture", str(cap), "--json", "--prior",
                             "idle", check=True).stdout)
    assert doc["state"] == "idle" and doc["action"] == "hold"


def test_seed_example_manifest_loads_as_a_user_manifest_and_behaves(srv, tmp_path):
    agents = Path(srv.env["XDG_CONFIG_HOME"]) / "tma" / "agents"
    agents.mkdir(parents=True)
    (agents / "example.toml").write_text(SEED_EXAMPLE)
    cap = tmp_path / "c.txt"
    cap.write_text(fixture.render({"agent": "example", "title": "x", "captured_at": "1000"},
                                  "output\nDo you want to proceed?\n  1. Yes\n"))
    doc = json.loads(srv.tma("debug", "explain", "--capture", str(cap), "--json",
                             manifests=False, check=True).stdout)
    assert (doc["state"], doc["detail"]) == ("blocked", "permission")
    cap.write_text(fixture.render({"agent": "example", "title": "x", "captured_at": "1000"},
                                  "detailed transcript view\n"))
    doc = json.loads(srv.tma("debug", "explain", "--capture", str(cap), "--json", "--prior",
                             "idle", manifests=False, check=True).stdout)
    assert doc["history_view"] and doc["state"] == "idle" and doc["action"] == "hold"


def test_a_broken_user_manifest_is_skipped_with_one_line(srv):
    (srv.manifests / "broken.toml").write_text("min_engine_version = \"0.1\"\n[identity\n")
    (srv.manifests / "newer.toml").write_text('min_engine_version = "9.0"\n[bogus]\n')
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE\n")
    res = srv.tma("ls")
    assert res.returncode == 0 and res.stdout.startswith(pane)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"tma: skipping manifest {srv.manifests / 'broken.toml'}: ")
    assert "requires engine 9.0 but this engine is" in lines[1]


def test_a_broken_user_copy_does_not_hide_the_bundled_manifest(srv):
    agents = Path(srv.env["XDG_CONFIG_HOME"]) / "tma" / "agents"
    agents.mkdir(parents=True)
    (agents / "claude.toml").write_text("this is not toml [")
    pane = srv.agent_pane("claude")
    srv.draw(pane, "some output\n❯ 1. Yes\n  2. No\n")
    res = srv.tma("ls", "--json", manifests=False)
    assert res.returncode == 0
    assert "tma: skipping manifest" in res.stderr
    rows = json.loads(res.stdout)["agents"]
    assert rows and rows[0]["agent"] == "claude" and rows[0]["state"] == "blocked"


def test_a_blocked_title_rule_is_a_load_error(srv):
    (srv.manifests / "titled.toml").write_text(
        'min_engine_version = "0.1"\n[identity]\nprocess_names = ["x"]\n[capture]\n'
        '[[rules]]\nstate = "blocked"\nregion = "title"\nmatch = { contains = "Action Required" }\n')
    srv.agent_pane()
    res = srv.tma("ls")
    assert "blocked rule may not read the title" in res.stderr


def test_a_broken_bundled_manifest_is_fatal(srv, monkeypatch, tmp_path):
    from tma.core.manifests import _docs
    from tma.runtime import manifests

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    broken = dict(_docs.DOCS, claude={"min_engine_version": "0.1", "identity": {}})
    monkeypatch.setattr(_docs, "DOCS", broken)
    with pytest.raises(manifests.BundledManifestError, match="manifest load failed"):
        manifests.load(None)


@pytest.mark.tmux_contract
def test_live_explain_and_capture(srv):
    jsonschema = pytest.importorskip("jsonschema")
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-BLOCKED here\n")
    doc = json.loads(srv.tma("debug", "explain", pane, "--json", check=True).stdout)
    jsonschema.validate(doc, _schema("explain.schema.json"))
    assert doc["agent"] == "fake" and doc["state"] == "blocked"
    assert doc["foreground_is_agent"] is True and doc["identity_source"] == "observed"
    assert doc["out_of_scope"] is False
    cap = fixture.parse(srv.tma("debug", "capture", pane, check=True).stdout)
    assert cap.agent == "fake" and "FAKE-BLOCKED" in cap.body and cap.height == 30
    # the capture replays offline to the same verdict
    out = srv.root / "cap.txt"
    out.write_text(fixture.render(cap.headers, cap.body))
    again = json.loads(srv.tma("debug", "explain", "--capture", str(out), "--json",
                               check=True).stdout)
    assert again["state"] == "blocked"


def test_explain_names_a_carve_out(srv):
    pane = srv.agent_pane("ssh")
    doc = json.loads(srv.tma("debug", "explain", pane, "--json", check=True).stdout)
    assert doc["out_of_scope"] is True and doc["out_of_scope_kind"] == "remote"


def test_codex_node_launcher_shape_reads_the_screen(srv):
    """codex 0.171: a `node` launcher (group leader) with a native `codex` child."""
    node, codex = srv.fake("node"), srv.fake("codex")
    pane = srv.new_pane(f"sh -c '{codex} 100000 & exec {node} 100000'")
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "node")
    # codex draws its composer at the bottom of the alternate screen
    srv.draw(pane, "\n" * 25 + "› Ask Codex to do anything\n\n  ← for agents · ? for shortcuts")
    rows = srv.ls(manifests=False)
    assert [(r["agent"], r["state"]) for r in rows] == [("codex", "idle")]
    bare = srv.new_pane(f"exec {node} 100000")  # a bare node dev server is never an agent
    srv.wait_for(lambda: srv.display(bare, "#{pane_current_command}") == "node")
    srv.next_second()
    assert [r["pane"] for r in srv.ls(manifests=False)] == [pane]
