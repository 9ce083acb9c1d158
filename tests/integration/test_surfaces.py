"""Surfaces over a private server: ls contract, selectors, rollups, removal, ignore,
carve-outs, foreign stamps, the quiet-pane skip and constant spawns."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tma.ui.rows import ROW_KEYS

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def _timing(res) -> dict[str, int]:
    line = [x for x in res.stderr.splitlines() if x.startswith("tma: cycle")][-1]
    out = {"ms": int(re.search(r"cycle (\d+)ms", line).group(1))}
    for n, key in re.findall(r"(\d+) ([a-z-]+)", line.split("—", 1)[1]):
        out[key] = int(n)
    out["stampede"] = "stampede-skipped" in line
    return out


@pytest.mark.tmux_contract
def test_ls_json_contract(srv):
    jsonschema = pytest.importorskip("jsonschema")
    a = srv.agent_pane()
    srv.draw(a, "FAKE-BLOCKED\n")
    doc = json.loads(srv.tma("ls", "--json", check=True).stdout)
    jsonschema.validate(doc, json.loads((SCHEMAS / "ls.schema.json").read_text()))
    row = doc["agents"][0]
    assert tuple(row) == ROW_KEYS
    for key in ("context", "context_at_ms", "tokens", "model", "quota", "cost_usd"):
        assert row[key] is None
    assert row["detail"] == "permission" and row["attention"] is True and row["done"] is False
    assert row["since"] == row["since_ms"] == row["episode_ms"]
    assert row["server"].endswith(srv.name)
    assert row["cost_caveat"] is None  # no cost, no caveat


def test_a_cost_travels_with_the_vendors_caveat(srv):
    """Anthropic's note on the session cost travels with the number, in every
    JSON row that carries one (ls --json here; wait and subscribe share the row)."""
    jsonschema = pytest.importorskip("jsonschema")
    a, b = srv.agent_pane(), srv.agent_pane()
    srv.draw(a, "FAKE-BLOCKED\n")
    srv.draw(b, "FAKE-IDLE\n")
    srv.tmux("set-option", "-p", "-t", a, "@agent_cost_usd", "1.37")
    doc = json.loads(srv.tma("ls", "--json", check=True).stdout)
    jsonschema.validate(doc, json.loads((SCHEMAS / "ls.schema.json").read_text()))
    rows = {r["pane"]: r for r in doc["agents"]}
    assert rows[a]["cost_usd"] == 1.37
    caveat = rows[a]["cost_caveat"]
    assert "estimate" in caveat and "not the bill" in caveat and "Max or Pro" in caveat
    assert (rows[b]["cost_usd"], rows[b]["cost_caveat"]) == (None, None)


def test_ls_text_columns_and_pane_filter(srv):
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    srv.draw(b, "FAKE-WORKING\n")
    out = srv.tma("ls", check=True).stdout
    lines = out.splitlines()
    assert len(lines) == 2 and out.endswith("\n")
    cols = lines[0].split("\t")
    assert len(cols) == 12
    assert cols[:3] == [b, "fake", "working"]  # working sorts before idle
    srv.next_second()
    one = srv.tma("ls", "--pane", a, check=True).stdout.splitlines()
    assert len(one) == 1 and one[0].startswith(a + "\t")


def test_selectors_are_display_only_and_done_semantics(srv):
    a = srv.agent_pane(session="one")
    b = srv.agent_pane(session="two")
    srv.draw(a, "FAKE-IDLE\n")
    srv.draw(b, "FAKE-IDLE\n")
    srv.ls()
    srv.tmux("set-option", "-p", "-t", b, "@agent_attention", "1")  # b is done
    srv.next_second()
    assert [r["pane"] for r in srv.ls("--state", "done")] == [b]
    assert {r["pane"] for r in srv.ls("--state", "idle")} == {a, b}
    assert [r["pane"] for r in srv.ls("--session", "one")] == [a]
    assert srv.ls("--session", "nope") == []
    res = srv.tma("ls", "--agent", "nope")  # an agent no manifest names: say which exist
    assert res.returncode == 2 and "unknown agent 'nope' (expected one of: fake)" in res.stderr
    res = srv.tma("ls", "--state", "sleeping")
    assert res.returncode == 2 and "expected one of: idle, working, blocked, unknown, done" in res.stderr
    counts = json.loads(srv.tma("status", "--format", "json", check=True).stdout)["counts"]
    assert counts["done"] == 1 and counts["idle"] == 1  # disjoint
    assert srv.tma("status", "--format", "plain", "--state", "done", check=True).stdout == "✓1\n"


@pytest.mark.tmux_contract
def test_rollups_per_window_and_session(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-BLOCKED\n")
    srv.ls()
    win = srv.display(a, "#{window_id}")
    assert srv.tmux("show-options", "-w", "-qv", "-t", win, "@agent_summary").strip() == "blocked:1"
    assert srv.tmux("show-options", "-qv", "-t", "s", "@agent_session_summary").strip() == \
        "blocked:1"
    # the agent exits: the per-pane set goes, the rollups are unset
    srv.tmux("respawn-pane", "-k", "-t", a, "exec sh")
    srv.wait_for(lambda: srv.display(a, "#{pane_current_command}") == "sh")
    srv.next_second()
    assert srv.ls() == []
    assert srv.option(a, "@agent_state") == ""
    assert srv.tmux("show-options", "-w", "-qv", "-t", win, "@agent_summary").strip() == ""
    assert srv.tmux("show-options", "-qv", "-t", "s", "@agent_session_summary").strip() == ""


@pytest.mark.tmux_contract
def test_removal_on_exit_spares_the_survivors_and_ignore(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    srv.ls()
    srv.tmux("set-option", "-p", "-t", a, "@agent_mute_until", "99999999999999")
    srv.tmux("set-option", "-p", "-t", a, "@agent_action", "1:abc:1:x")
    srv.tmux("set-option", "-p", "-t", a, "@tma_watch_pid", "123")
    srv.tmux("respawn-pane", "-k", "-t", a, "exec sh")
    srv.wait_for(lambda: srv.display(a, "#{pane_current_command}") == "sh")
    srv.next_second()
    srv.ls()
    opts = srv.options(a)
    assert not any(k.startswith("@agent_") and k not in ("@agent_mute_until", "@agent_action")
                   for k in opts)
    assert opts["@agent_mute_until"] == "99999999999999" and opts["@tma_watch_pid"] == "123"


@pytest.mark.tmux_contract
def test_ignore_removes_the_pane_from_every_surface(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-BLOCKED\n")
    assert srv.ls()
    srv.tmux("set-option", "-p", "-t", a, "@agent_ignore", "1")
    srv.next_second()
    assert srv.ls() == []
    assert srv.tma("status", "--format", "plain", check=True).stdout == "\n"
    opts = srv.options(a)
    assert opts == {"@agent_ignore": "1"}  # stamp cleared, the user's option untouched


@pytest.mark.parametrize("command,kind", [("ssh", "remote"), ("tmux", "nested"),
                                          ("docker", "remote"), ("zellij", "nested")])
def test_carve_outs_get_no_row_and_lose_a_leftover_stamp(srv, command, kind):
    pane = srv.agent_pane(command)
    now = str(int(time.time() * 1000))
    for k, v in (("@agent_state", "working"), ("@agent_stamped_at", now),
                 ("@agent_name", "fake"), ("@agent_source", "capture")):
        srv.tmux("set-option", "-p", "-t", pane, k, v)
    for _ in range(4):
        srv.next_second()  # past the freshness window
    assert srv.ls() == []
    assert srv.option(pane, "@agent_state") == ""


def test_registration_outranks_a_carve_out(srv):
    pane = srv.agent_pane("docker")
    now = str(int(time.time() * 1000))
    for k, v in (("@agent_state", "blocked"), ("@agent_stamped_at", now), ("@agent_since", now),
                 ("@agent_evidence_at", now), ("@agent_name", "fake"),
                 ("@agent_source", "hook"), ("@agent_session", "sess-1"), ("@agent_pid", "0")):
        srv.tmux("set-option", "-p", "-t", pane, k, v)
    for _ in range(4):
        srv.next_second()
    rows = srv.ls()
    assert [(r["pane"], r["state"]) for r in rows] == [(pane, "blocked")]


def test_foreign_stamps_are_read_never_captured_never_removed(srv):
    pane = srv.shell_pane()
    srv.agent_pane()  # so the cycle has an agent of its own too
    now = str(int(time.time() * 1000))
    for k, v in (("@agent_state", "working"), ("@agent_stamped_at", now), ("@agent_since", now),
                 ("@agent_name", "agent-status"), ("@agent_window_state", "busy")):
        srv.tmux("set-option", "-p", "-t", pane, k, v)
    for _ in range(4):
        srv.next_second()
    rows = {r["pane"]: r for r in srv.ls()}
    assert rows[pane]["agent"] == "agent-status" and rows[pane]["state"] == "working"
    opts = srv.options(pane)
    assert opts["@agent_state"] == "working" and opts["@agent_stamped_at"] == now
    assert opts["@agent_window_state"] == "busy"
    assert "@agent_hash" not in opts


@pytest.mark.tmux_contract
def test_fresh_stamps_are_consumed_and_quiet_panes_skip_the_capture(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    srv.next_second()  # the stamp must land in a later second than the output
    first = _timing(srv.tma("--debug-timing", "ls", check=True))
    assert first["captures"] == 1 and first["produced"] == 1
    srv.next_second()
    second = _timing(srv.tma("--debug-timing", "ls", check=True))
    assert second["captures"] == 0 and second["consumed"] == 1
    # past freshness, nothing drawn since the stamp: reused without a capture
    for _ in range(3):
        srv.next_second()
    third = _timing(srv.tma("--debug-timing", "ls", check=True))
    assert third["captures"] == 0 and third["capture-skipped"] == 1
    # output in the window makes it re-read
    srv.draw(a, "FAKE-BLOCKED\n")
    for _ in range(4):
        srv.next_second()
    fourth = _timing(srv.tma("--debug-timing", "ls", check=True))
    assert fourth["captures"] == 1
    assert srv.row(a)["state"] == "blocked"


def test_a_hook_claim_on_a_quiet_window_is_read_against_the_screen_once(srv):
    """A hook's stamp has no screen behind it. A blocked claim that lands after the
    window's last output (a hook run late, after an Esc-denied dialog had already gone:
    Copilot's live deny) is read against the screen once past the dwell, before the quiet
    skip may reuse it; the screen's decisive idle then ends it. It used to stand until
    the claim decayed (minutes, for blocked), the screen never read again. (Other hook
    claims on a quiet window are reused: test_held_cycle.py.)"""
    from tests.helpers.manifests import TEST_MANIFEST

    (srv.manifests / "fake.toml").write_text(TEST_MANIFEST.replace(
        'visible = ["working", "blocked"]',
        'visible = ["working", "blocked", "idle"]\ndecisive = ["idle"]'))
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    srv.next_second()
    assert srv.row(a)["state"] == "idle"
    srv.next_second()
    srv.next_second()  # nothing drawn for two whole seconds: the window is quiet
    res = srv.tma("event", "--agent", "fake", "--kind", "Ask", "--pane", a, input="{}")
    assert res.returncode == 0, res.stderr
    assert srv.option(a, "@agent_state") == "blocked"
    for _ in range(4):
        srv.next_second()  # past the freshness window: the next cycle produces the pane
    first = _timing(srv.tma("--debug-timing", "ls", check=True))
    assert first["captures"] == 1 and first["capture-skipped"] == 0
    assert (srv.option(a, "@agent_state"), srv.option(a, "@agent_source")) == \
        ("idle", "capture")
    # read and published: a quiet window is skipped again from here
    for _ in range(4):
        srv.next_second()
    again = _timing(srv.tma("--debug-timing", "ls", check=True))
    assert again["captures"] == 0 and again["capture-skipped"] == 1


def test_a_blocked_claim_held_inside_the_dwell_is_read_again_past_it(srv):
    """Decisive chrome ends a blocked claim only when read more than the dwell after the
    claim's evidence. A read inside the dwell (the screen went idle right after the hook)
    holds the claim and moves `@agent_stamped_at`; the window then quiet, the next read
    must still come, past the dwell, or the claim stands until it decays (Copilot's live
    deny: blocked 20 s after its idle screen)."""
    from tests.helpers.manifests import TEST_MANIFEST

    (srv.manifests / "fake.toml").write_text(TEST_MANIFEST.replace(
        'visible = ["working", "blocked"]',
        'visible = ["working", "blocked", "idle"]\ndecisive = ["idle"]'))
    srv.config.write_text("[fold]\nfreshness_secs = 1\n")
    a = srv.agent_pane()
    srv.draw(a, "FAKE-WORKING\n")
    res = srv.tma("event", "--agent", "fake", "--kind", "Ask", "--pane", a, input="{}")
    assert res.returncode == 0, res.stderr
    srv.draw(a, "FAKE-IDLE\n")  # the dialog dismissed with no hook
    srv.next_second()
    srv.next_second()  # past freshness, inside the dwell (3 s)
    inside = _timing(srv.tma("--debug-timing", "ls", check=True))
    assert inside["captures"] == 1
    assert srv.option(a, "@agent_state") == "blocked"  # held: not yet the dwell
    for _ in range(3):
        srv.next_second()  # the window quiet since, the dwell past
    past = _timing(srv.tma("--debug-timing", "ls", check=True))
    assert past["captures"] == 1
    assert (srv.option(a, "@agent_state"), srv.option(a, "@agent_source")) == \
        ("idle", "capture")


def test_a_blocked_claim_with_no_decisive_chrome_is_not_read_again_on_a_quiet_window(srv):
    """Only decisive chrome can end a blocked hook claim before it decays, so only an agent
    that has some (Copilot) is read past the dwell. For the rest (Claude, Codex, ...) the read
    could not change the verdict, and a dialog that agrees would corroborate the claim and
    arm the read again: a capture and a write every few seconds per blocked pane while
    nothing on its window moves."""
    a = srv.agent_pane()  # the test manifest: visible working and blocked, nothing decisive
    srv.draw(a, "FAKE-BLOCKED\n")
    srv.next_second()
    assert srv.row(a)["state"] == "blocked"  # read once: the stamp has its screen's hash
    srv.next_second()
    srv.next_second()  # nothing drawn since: the window is quiet
    res = srv.tma("event", "--agent", "fake", "--kind", "Ask", "--pane", a, input="{}")
    assert res.returncode == 0, res.stderr
    for _ in range(5):
        srv.next_second()  # past freshness and past the dwell (3 s)
    for _ in range(2):
        t = _timing(srv.tma("--debug-timing", "ls", check=True))
        assert t["captures"] == 0 and t["capture-skipped"] == 1, t
        assert (srv.option(a, "@agent_state"), srv.option(a, "@agent_source")) == \
            ("blocked", "hook")
        for _ in range(4):
            srv.next_second()


def test_working_panes_are_always_reread(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-WORKING\n")
    srv.ls()
    for _ in range(4):
        srv.next_second()
    t = _timing(srv.tma("--debug-timing", "ls", check=True))
    assert t["captures"] == 1 and t["capture-skipped"] == 0


def test_stampede_guard_consumes_only(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    srv.ls()
    for _ in range(4):
        srv.next_second()
    srv.tmux("set-option", "-s", "@tma_last_poll", str(int(time.time() * 1000)))
    t = _timing(srv.tma("--debug-timing", "status", check=True))
    assert t["stampede"] and t["captures"] == 0 and t["produced"] == 0
    # a surface a person reads is not stampede-skipped (issue 18: no stale verdict)
    srv.tmux("set-option", "-s", "@tma_last_poll", str(int(time.time() * 1000)))
    t = _timing(srv.tma("--debug-timing", "ls", check=True))
    assert not t["stampede"]


@pytest.mark.tmux_contract
def test_spawns_do_not_grow_with_agents(srv):
    # the first session's stamp stays fresh while the second is made (a loaded machine
    # took longer than the 3 s default to start six panes: its pane was captured again)
    srv.config.write_text("[fold]\nfreshness_secs = 600\n")

    def cold(n: int) -> int:
        panes = [srv.agent_pane(session=f"n{n}") for _ in range(n)]
        for p in panes:
            srv.draw(p, "FAKE-WORKING\n")
        srv.next_second()
        return _timing(srv.tma("--debug-timing", "ls", "--session", f"n{n}", check=True))

    one = cold(1)
    srv.next_second()
    six = cold(6)
    assert six["captures"] == 6
    assert six["spawns"] <= one["spawns"] + 1  # the rollup write is the only variable one


def test_unknown_config_key_is_an_error_naming_it(srv):
    srv.config.write_text("[fold]\ndwell_secs = 3\nbogus = 1\n")
    srv.agent_pane()
    res = srv.tma("ls")
    assert res.returncode == 1
    assert "fold.bogus" in res.stderr and "unknown key" in res.stderr


def test_config_reaches_behaviour(srv):
    srv.config.write_text('[status.blocked]\nglyph = "B"\ncolor = "colour1"\n')
    a = srv.agent_pane()
    srv.draw(a, "FAKE-BLOCKED\n")
    out = srv.tma("status", check=True).stdout
    assert out.startswith("#[range=user|tma:blocked]#[fg=colour231,bg=colour1]B1#[fg=default,bg=default]#[norange]")
