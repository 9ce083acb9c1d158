"""`tma doctor` on a private server: each condition, its text line, its JSON key, and
whether it counts toward `--exit-code`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from tests.helpers import tmux_matrix
from tests.helpers.doctor import (
    SCHEMA,
    VERDICT,
    doctor,
    install,
    isolate_installers,
    pane_block,
    row,
    wired_pane,
)

SLEEP = shutil.which("sleep") or "/bin/sleep"


MINIMAL = """
min_engine_version = "0.1"
[identity]
process_names = {names}
[capture]
"""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def set_opts(srv, pane: str, **opts: str) -> None:
    for key, value in opts.items():
        srv.tmux("set-option", "-p", "-t", pane, f"@{key}", value)


def fake_elsewhere(srv, name: str) -> Path:
    """A sleep symlink named `name`, kept off the PATH (a fake `tmux` on PATH would
    shadow the real one for the tma under test)."""
    d = srv.root / "offpath"
    d.mkdir(exist_ok=True)
    link = d / name
    if not link.exists():
        link.symlink_to(SLEEP)
    return link


@pytest.mark.tmux_contract
def test_ambient_not_polling_then_polling(srv):
    srv.shell_pane()
    r = doctor(srv)
    from tma.install import binary

    # the fix names tma by its absolute path, as the key file does (tmux's PATH may lack it)
    where = binary.running_tma(argv0="", executable=sys.executable) or "tma"
    assert r.section("ambient") == ("ambient: NOT polling — status-right does not run `tma "
                                    f"status`; add #({where} status) to status-right")
    amb = r.doc["ambient_driver"]
    assert (amb["polling"], amb["last_poll_age_ms"], amb["status_command"]) == (False, None,
                                                                                None)
    assert r.rc == 0
    # doctor itself is not a poll cycle: it never stamps @tma_last_poll
    assert srv.tmux("show-options", "-sqv", "@tma_last_poll").strip() == ""
    # a tma run by hand stamps @tma_last_poll, but that is not the status line polling
    srv.tma("status", check=True)
    r = doctor(srv)
    assert r.doc["ambient_driver"]["polling"] is False
    assert r.section("ambient").startswith("ambient: NOT polling")
    assert "but nothing runs it from the status line" in r.section("ambient")
    # status-right running tma (as tmux resolves it) is polling
    tma = str(Path(sys.executable).with_name("tma"))
    srv.tmux("set-option", "-g", "status-right", f"#({tma} status) %H:%M")
    r = doctor(srv)
    assert r.section("ambient").startswith("ambient: polling — status-right runs `tma status`")
    amb = r.doc["ambient_driver"]
    assert amb["polling"] is True and 0 <= amb["last_poll_age_ms"] < 60_000
    assert amb["status_command"]["resolved"] == tma and amb["status_command"]["runs"] is True
    assert r.rc == 0


def test_status_line_command_that_does_not_run_counts(srv):
    srv.shell_pane()
    # the bare name, with tmux's PATH lacking any tma (tma lives in a virtualenv)
    srv.tmux("set-environment", "-g", "PATH", "/usr/bin:/bin")
    srv.tmux("set-option", "-g", "status-right", "#(tma status) %H:%M")
    r = doctor(srv)
    amb = r.section("ambient")
    assert amb.startswith("ambient: ✗ status-right runs `tma status`, but tma is not found on "
                          "the PATH tmux runs status-right with")
    assert "  - tmux runs it with PATH=/usr/bin:/bin" in amb
    tma = str(Path(sys.executable).with_name("tma"))
    assert f"set -g status-right '#({tma} status) %H:%M'" in amb
    assert r.doc["ambient_driver"]["status_command"]["runs"] is False
    assert r.doc["warnings"] == 1 and r.rc == 1
    # a program that resolves but does not run is caught too
    broken = srv.root / "broken-bin"
    broken.mkdir()
    (broken / "tma").write_text("#!/bin/sh\nexit 3\n")
    (broken / "tma").chmod(0o755)
    srv.tmux("set-environment", "-g", "PATH", f"{broken}:/usr/bin:/bin")
    r = doctor(srv)
    assert r.doc["ambient_driver"]["status_command"]["problem"].endswith("exit status 3")
    assert r.rc == 1


def test_broken_user_manifest_is_listed_and_counts(srv):
    srv.shell_pane()
    (srv.manifests / "broken.toml").write_text("this is = = not toml\n")
    r = doctor(srv)
    agents = r.section("agents")
    assert agents.startswith("agents:  1 loaded, 1 issue\n")
    assert f"skipped {srv.manifests / 'broken.toml'}: TOML:" in agents
    man = r.doc["manifests"]
    assert man["ok"] is False and man["loaded"] == 1
    assert [i["file"] for i in man["issues"]] == [str(srv.manifests / "broken.toml")]
    assert r.doc["warnings"] == 1 and r.rc == 1


def test_long_process_name_without_truncated_twin(srv):
    srv.shell_pane()
    long = "my-very-long-agent-binary"
    (srv.manifests / "longy.toml").write_text(MINIMAL.format(names=json.dumps([long])))
    r = doctor(srv)
    agents = r.section("agents")
    assert agents.startswith("agents:  2 loaded, 1 issue\n")
    assert f'longy: process_names entry "{long}"' in agents
    assert 'add "my-very-long-ag"' in agents
    assert r.doc["process_name_issues"] == [{"agent": "longy", "name": long, "comm_max": 15}]
    assert r.doc["warnings"] == 1 and r.rc == 1
    # the codex shape: the 15-char spelling beside it is correct, not flagged
    (srv.manifests / "longy.toml").write_text(
        MINIMAL.format(names=json.dumps([long, long[:15]])))
    r = doctor(srv)
    assert r.section("agents") == "agents:  2 loaded, no issues"
    assert r.doc["process_name_issues"] == []
    assert r.rc == 0


def test_out_of_set_state_is_a_stamp_issue(srv):
    pane = srv.shell_pane()
    set_opts(srv, pane, agent_state="busy", agent_stamped_at=str(now_ms()))
    r = doctor(srv)
    stamps = r.section("stamps")
    assert stamps.startswith("stamps:  1 pane with undecodable @agent_* options")
    assert f"{pane} s:0.0: @agent_state='busy' cannot be decoded" in stamps
    assert "another tool may be writing" in stamps
    [issue] = r.doc["stamp_issues"]
    assert issue["pane"] == pane and issue["locator"] == "s:0.0"
    assert "@agent_state='busy'" in issue["problem"]
    assert r.doc["warnings"] == 1 and r.rc == 1


def test_bad_integer_is_a_stamp_issue(srv):
    pane = srv.shell_pane()
    set_opts(srv, pane, agent_state="idle", agent_stamped_at="yesterday")
    r = doctor(srv)
    assert "@agent_stamped_at='yesterday' cannot be decoded" in r.section("stamps")
    assert [i["pane"] for i in r.doc["stamp_issues"]] == [pane]
    assert r.rc == 1


def test_state_without_stamped_at_is_a_stamp_issue(srv):
    pane = srv.shell_pane()
    set_opts(srv, pane, agent_state="idle")
    r = doctor(srv)
    stamps = r.section("stamps")
    assert f"{pane} s:0.0: @agent_state='idle' is set with no @agent_stamped_at" in stamps
    assert "another tool may be writing" in stamps
    [issue] = r.doc["stamp_issues"]
    assert issue["pane"] == pane and "no @agent_stamped_at" in issue["problem"]
    assert r.doc["warnings"] == 1 and r.rc == 1


def test_foreign_stamp_is_listed_not_counted(srv):
    pane = srv.shell_pane()
    set_opts(srv, pane, agent_state="working", agent_stamped_at=str(now_ms()),
             agent_name="other-tool")
    r = doctor(srv)
    foreign = r.section("foreign")
    assert foreign.startswith("foreign: 1 pane(s) stamped by another producer")
    assert f"{pane} s:0.0: @agent_name 'other-tool' is no loaded manifest" in foreign
    assert r.doc["foreign_panes"] == [{"pane": pane, "locator": "s:0.0", "agent": "other-tool"}]
    assert r.doc["stamp_issues"] == [] and r.doc["agents"] == []
    assert r.rc == 0


def test_ignored_pane_with_undo_command(srv):
    pane = srv.agent_pane()
    set_opts(srv, pane, agent_ignore="1")
    r = doctor(srv)
    ignored = r.section("ignored")
    assert ignored.startswith("ignored: 1 pane(s) opted out with @agent_ignore")
    assert (f"{pane} s:0.0: @agent_ignore='1'; undo: tmux set-option -p -u -t {pane} "
            "@agent_ignore") in ignored
    assert r.doc["ignored_panes"] == [{"pane": pane, "locator": "s:0.0", "value": "1"}]
    assert r.doc["agents"] == []  # an ignored agent is not reported as one
    assert r.rc == 0


def test_nested_multiplexer_client(srv):
    pane = srv.new_pane(f"exec {fake_elsewhere(srv, 'tmux')} 100000")
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "tmux")
    r = doctor(srv)
    nested = r.section("nested")
    assert nested.startswith("nested:  1 pane(s) running a multiplexer client")
    assert f"{pane} s:0.0: tmux — agents inside it live in the inner server" in nested
    assert r.doc["nested_multiplexers"] == [{"pane": pane, "locator": "s:0.0",
                                             "command": "tmux"}]
    assert r.rc == 0


def test_remote_pane_and_held_stamp(srv):
    ssh = fake_elsewhere(srv, "ssh")
    a = srv.new_pane(f"exec {ssh} 100000")
    b = srv.new_pane(f"exec {ssh} 100000")
    for p in (a, b):
        srv.wait_for(lambda p=p: srv.display(p, "#{pane_current_command}") == "ssh")
    set_opts(srv, b, agent_state="idle", agent_stamped_at=str(now_ms()),
             agent_name="remote-tool")
    r = doctor(srv)
    remote = r.section("remote")
    assert remote.startswith("remote:  2 pane(s) behind a remote shell or container")
    assert f"{a} s:0.0: ssh — tma cannot see the processes on the other side\n" in remote
    assert f"{b} s:1.0: ssh — tma cannot see the processes on the other side; its stamp " \
           "is held, not refreshed" in remote
    assert r.doc["remote_panes"] == [
        {"pane": a, "locator": "s:0.0", "command": "ssh", "stamped": False},
        {"pane": b, "locator": "s:1.0", "command": "ssh", "stamped": True}]
    assert r.rc == 0


def test_agent_panes_are_listed_with_their_tier(srv):
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.shell_pane()
    r = doctor(srv)
    assert r.section("panes (2)").splitlines()[1] == f"  {a} fake s:0.0 tier 1 unstamped"
    assert srv.options(a).get("@agent_state") is None  # doctor never stamps
    srv.draw(a, "FAKE-IDLE composer\n")
    srv.ls()
    now = now_ms()
    set_opts(srv, b, agent_state="working", agent_source="hook", agent_name="fake",
             agent_evidence_at=str(now), agent_since=str(now), agent_stamped_at=str(now),
             agent_model="big-model")
    r = doctor(srv)
    panes = r.section("panes (2)").splitlines()
    # "fake" has hooks in its manifest but no installer: tier 1 whatever reaches it
    assert panes[1].startswith(f"  {a} fake s:0.0 tier 1 idle (capture, evidence ")
    assert panes[2] == "      hooks: no installer"
    assert panes[3] == "      not tier 2: no hook installer for fake: screen reads only"
    assert panes[4] == "      transcript: none: tma has no transcript reader for fake"
    assert panes[5].startswith(f"  {b} fake s:1.0 tier 1 working (hook, evidence ")
    assert panes[6] == "      hooks: no installer"
    assert panes[7] == "      model: big-model (no [telemetry.windows] entry names it)"
    assert panes[8] == ("      not tier 2: no hook installer for fake (its hook claims arrive: "
                        "wired by hand)")
    rows = {x["pane"]: x for x in r.doc["agents"]}
    assert set(rows) == {a, b}
    assert (rows[a]["state"], rows[a]["source"], rows[a]["tier"], rows[a]["hook_status"]) == (
        "idle", "capture", 1, "no_adapter")
    assert rows[a]["tier_reason"] == "no hook installer for fake: screen reads only"
    assert rows[a]["model"] is None and rows[a]["evidence_age_ms"] >= 0
    assert rows[a]["window_covered"] is None and rows[a]["endpoint_ok"] is None
    assert (rows[b]["state"], rows[b]["source"], rows[b]["tier"], rows[b]["hook_status"]) == (
        "working", "hook", 1, "no_adapter")
    assert rows[b]["model"] == "big-model" and rows[b]["window_covered"] is False
    assert r.doc["below_expected_tier"] == 0  # no installer: tier 1 is all it supports
    assert r.rc == 0


def test_no_server_exits_1(srv):
    for args in ((), ("--json",), ("--exit-code",)):
        res = srv.tma("doctor", *args)
        assert res.returncode == 1
        assert res.stderr.strip() == "tma: no tmux server running"
        assert res.stdout == ""


def test_bad_config_is_a_warning_not_the_whole_report(srv):
    srv.shell_pane()
    srv.config.write_text("no_such_key = 1\n")
    res = srv.tma("doctor")
    assert res.returncode == 0 and res.stdout.startswith(f"config:  ✗ {srv.config}: ")
    assert "tmux:" in res.stdout
    assert srv.tma("doctor", "--exit-code").returncode == 1


@pytest.mark.tmux_contract
def test_clean_server_is_quiet(srv):
    srv.shell_pane()
    r = doctor(srv)
    version = tmux_matrix.version_of(srv.tmux_bin)
    # every build of the matrix is one tma is tested on, named as such
    assert r.section("tmux").startswith(f"tmux:    {version} (tested: 3.2a to 3.7c and ")
    assert r.doc["tmux"]["version"] == version and r.doc["tmux"]["standing"] == "tested"
    assert r.doc["tmux"]["setpf_ok"] is True  # probed (nothing had cached it) ...
    assert srv.tmux("show-options", "-sqv", "@tma_setpf_ok").strip() == "1"  # ... and cached
    assert r.section("clients").startswith("clients: none attached")
    assert r.doc["clients"] == {"attached": 0}
    assert r.section("agents") == "agents:  1 loaded, no issues"
    assert r.section("stamps") == "stamps:  no issues"
    assert r.section("procs") == "procs:   process walk ok"
    assert r.doc["process_walk"] == {"ok": True, "error": None}
    assert r.section("panes (0)") == "panes (0):"
    assert r.doc["warnings"] == 0 and r.rc == 0


def test_failed_process_walk_counts(srv, monkeypatch):
    """In-process: the process walk returns None."""
    from tma.runtime import doctor, procs
    from tma.runtime.config import Config
    from tma.tmux.adapter import Server
    from tma.ui import doctor as ui

    srv.shell_pane()
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(key, srv.env[key])
    monkeypatch.setattr(procs, "read_proc_table", lambda: None)
    server = Server(srv.tmux_bin, socket_name=srv.name)
    doc = doctor.gather(server, Config(), str(srv.manifests), now_ms())
    jsonschema.validate(doc, SCHEMA)
    assert doc["process_walk"]["ok"] is False and doc["process_walk"]["error"]
    assert doc["warnings"] == 1
    text = ui.render(doc)
    assert "procs:   process walk FAILED (" in text
    assert "only hook-registered panes can be identified" in text


def test_schema_file_is_valid():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert os.path.basename(SCHEMA["$id"]) == "doctor.schema.json"


# ---------------------------------------------------------------- the hook tier


def test_nothing_wired_is_a_note_not_a_warning(srv):
    isolate_installers(srv)
    srv.shell_pane()
    r = doctor(srv, bundled=True)
    assert r.section("hooks").startswith("hooks:   not installed — no agent is wired")
    assert r.doc["tmux_hooks"] == [
        {"hook": "after-select-pane", "present": False, "hook_state": "missing",
         "problem": "tmux hook after-select-pane: missing"},
        {"hook": "session-window-changed", "present": False, "hook_state": "missing",
         "problem": "tmux hook session-window-changed: missing"}]
    wrapper = r.doc["wrapper"]
    assert wrapper["present"] is False and wrapper["exists"] is False
    assert wrapper["reference"] == srv.env["TMA_WRAPPER_PATH"]
    assert r.section("wrapper") == (f"wrapper: {srv.env['TMA_WRAPPER_PATH']} not written yet\n"
                                    "  - note: no agent is wired, so no hook runs it yet")
    assert r.section("wiring") == ("wiring:  claude, codex, gemini, cursor, opencode, pi, "
                                   "copilot, qwen, aider not installed")
    assert {w["agent"]: w["status"] for w in r.doc["hook_wiring"]} == dict.fromkeys(
        ("claude", "codex", "copilot", "cursor", "gemini", "opencode", "pi", "qwen", "aider"),
        "not_installed")
    assert r.doc["warnings"] == 0 and r.rc == 0


def test_wired_agent_pane_is_tier_2(srv):
    isolate_installers(srv)
    pane = wired_pane(srv, "claude")
    r = doctor(srv, bundled=True)
    assert r.section("hooks") == ("hooks:   ✓ after-select-pane, ✓ session-window-changed\n"
                                  "  - on the running server only: gone when tmux restarts "
                                  "(tma install-keys keeps them)")
    assert r.doc["tmux_hooks_persistence"] == "server_only"
    assert [(h["hook"], h["present"], h["hook_state"]) for h in r.doc["tmux_hooks"]] == [
        ("after-select-pane", True, "present"), ("session-window-changed", True, "present")]
    wrapper = srv.env["TMA_WRAPPER_PATH"]
    assert r.section("wrapper") == f"wrapper: {wrapper} ✓"
    assert r.doc["wrapper"]["present"] is True and r.doc["wrapper"]["path"] == wrapper
    assert r.section("wiring").startswith("wiring:  claude wired; codex, ")
    block = pane_block(r, pane)
    assert block[0] == f"  {pane} claude s:1.0 tier 2 unstamped"
    assert block[1] == "hooks: wired"
    assert block[2].startswith("not tier 3: no daemon")
    a = row(r, pane)
    assert (a["tier"], a["hook_status"], a["hooks_wired"]) == (2, "wired", True)
    assert r.doc["below_expected_tier"] == 0 and r.doc["warnings"] == 0 and r.rc == 0


def test_agent_started_before_its_hooks_says_next_start(srv):
    isolate_installers(srv)
    before = srv.agent_pane("claude")
    time.sleep(2.0)  # clearly before: /proc's boot time has whole seconds
    install(srv, "claude")
    after = srv.agent_pane("claude")
    r = doctor(srv, bundled=True)
    assert "restart: this claude started before its hooks were installed; they take " \
           "effect at its next start" in pane_block(r, before)
    a = row(r, before)
    assert a["hooks_pending_restart"] is True and a["tier"] == 1
    assert "take effect at its next start" in a["tier_reason"]
    b = row(r, after)
    assert b["hooks_pending_restart"] is False and b["tier"] == 2
    assert not any(line.startswith("restart:") for line in pane_block(r, after))


def test_installable_agent_not_wired_is_below_tier(srv):
    isolate_installers(srv)
    pane = srv.agent_pane("claude")
    r = doctor(srv, bundled=True)
    block = pane_block(r, pane)
    assert block[1] == "hooks: not installed"
    assert block[2] == "not tier 2: hooks not installed: run tma install-hooks claude"
    a = row(r, pane)
    assert (a["tier"], a["hook_status"], a["hooks_wired"]) == (1, "not_installed", False)
    assert a["tier_reason"] == "hooks not installed: run tma install-hooks claude"
    assert r.doc["warnings"] == 0 and r.doc["below_expected_tier"] == 1
    assert r.rc == 1
    assert r.stderr.strip() == VERDICT.format(0, 1)


def test_incomplete_wiring_names_the_reason(srv):
    paths = isolate_installers(srv)
    pane = srv.agent_pane("claude")
    install(srv, "claude")
    settings = paths["TMA_CLAUDE_SETTINGS"]
    data = json.loads(settings.read_text())
    del data["hooks"]["Stop"]
    settings.write_text(json.dumps(data, indent=2) + "\n")
    r = doctor(srv, bundled=True)
    wiring = r.section("wiring")
    assert wiring.startswith("wiring:  claude incomplete; ")
    assert "  - claude: Stop not wired (" in wiring
    [claude] = [w for w in r.doc["hook_wiring"] if w["agent"] == "claude"]
    assert claude["status"] == "incomplete" and claude["reasons"]
    a = row(r, pane)
    assert (a["tier"], a["hook_status"], a["hooks_wired"]) == (1, "incomplete", False)
    assert a["tier_reason"].startswith("hook wiring incomplete: claude: Stop not wired (")
    assert a["tier_reason"].endswith("; run tma install-hooks claude")
    assert pane_block(r, pane)[1] == "hooks: incomplete"
    # the tmux hooks and the wrapper are fine: only the pane counts (second gate)
    assert r.doc["warnings"] == 0 and r.doc["below_expected_tier"] == 1 and r.rc == 1


@pytest.mark.tmux_contract
def test_drifted_and_wiped_tmux_hooks_count(srv):
    isolate_installers(srv)
    srv.shell_pane()
    install(srv, "claude")
    srv.tmux("set-hook", "-gu", "session-window-changed")  # the record names it: wiped
    index = srv.tmux("show-hooks", "-g", "after-select-pane").split("]", 1)[0].split("[")[1]
    srv.tmux("set-hook", "-g", f"after-select-pane[{index}]",
             "run-shell 'old-tma clear-attention #{pane_id}'")  # ours, outdated: drifted
    r = doctor(srv, bundled=True)
    hooks = r.section("hooks")
    assert hooks.startswith("hooks:   ✗ after-select-pane (drifted), ✗ session-window-changed "
                            "(wiped)\n")
    assert "  - tmux hook after-select-pane: drifted (the entry at index" in hooks
    assert "  - tmux hook session-window-changed: wiped (recorded at index" in hooks
    assert "  - run `tma install-hooks --all` to reinstall them" in hooks
    assert [(h["hook"], h["present"], h["hook_state"]) for h in r.doc["tmux_hooks"]] == [
        ("after-select-pane", False, "drifted"), ("session-window-changed", False, "wiped")]
    assert r.doc["warnings"] == 2 and r.rc == 1
    install(srv, "claude")  # repairs both
    r = doctor(srv, bundled=True)
    assert r.section("hooks") == ("hooks:   ✓ after-select-pane, ✓ session-window-changed\n"
                                  "  - on the running server only: gone when tmux restarts "
                                  "(tma install-keys keeps them)")
    assert r.doc["tmux_hooks_persistence"] == "server_only"
    assert r.doc["warnings"] == 0 and r.rc == 0


def test_missing_or_unexecutable_wrapper_counts_once_wired(srv):
    isolate_installers(srv)
    srv.shell_pane()
    install(srv, "claude")
    wrapper = Path(srv.env["TMA_WRAPPER_PATH"])
    wrapper.chmod(0o644)
    r = doctor(srv, bundled=True)
    assert r.section("wrapper").startswith(f"wrapper: {wrapper} ✗ not executable\n")
    assert r.doc["wrapper"] == {"path": str(wrapper), "reference": str(wrapper),
                                "present": False, "exists": True, "bare": False,
                                "problem": f"{wrapper} is not executable"}
    assert r.doc["warnings"] == 1 and r.rc == 1
    wrapper.unlink()
    r = doctor(srv, bundled=True)
    assert r.section("wrapper").startswith(f"wrapper: {wrapper} ✗ missing\n")
    assert "every wired hook fails silently" in r.section("wrapper")
    assert r.doc["wrapper"]["present"] is False and r.doc["wrapper"]["exists"] is False
    assert r.doc["warnings"] == 1 and r.rc == 1


def test_bare_wrapper_reference(srv):
    isolate_installers(srv)
    srv.config.write_text('[install]\nwrapper_ref = "bare"\n')
    srv.shell_pane()
    wdir = Path(srv.env["TMA_WRAPPER_PATH"]).parent
    srv.env["PATH"] = f"{wdir}{os.pathsep}{srv.env['PATH']}"
    install(srv, "claude")
    r = doctor(srv, bundled=True)
    assert r.section("wrapper") == (f"wrapper: tma-hook ({srv.env['TMA_WRAPPER_PATH']}) "
                                    "✓ on $PATH")
    assert r.doc["wrapper"]["reference"] == "tma-hook" and r.doc["wrapper"]["bare"] is True
    assert r.rc == 0
    srv.env["PATH"] = os.pathsep.join(("/usr/bin", "/bin"))  # no tma-hook anywhere
    r = doctor(srv, bundled=True)
    assert r.section("wrapper").startswith("wrapper: tma-hook ✗ not on $PATH")
    assert r.doc["wrapper"]["path"] is None and r.doc["wrapper"]["present"] is False
    assert r.doc["warnings"] == 1 and r.rc == 1


def test_notify_failure_counts(srv, monkeypatch):
    from tma.runtime.notify import log as notify_log

    srv.shell_pane()
    r = doctor(srv)
    assert r.section("notify") == "notify:  no failed notify command on record"
    assert (r.doc["notify"]["last_failure"], r.doc["notify"]["last_failure_age_ms"]) == (None, None)
    assert r.doc["notify"]["dispatcher"] is None  # no daemon, from_event off: nobody rings
    assert r.doc["notify"]["sink"]["done"] == {"kind": "off", "what": "not enabled in [notify]",
                                                "rings": []}
    assert r.section("sink").startswith("sink:    nobody rings")
    monkeypatch.setenv("XDG_RUNTIME_DIR", srv.env["XDG_RUNTIME_DIR"])
    # rung for this server (as its daemon or a hook in its panes would)
    monkeypatch.setattr(notify_log, "_scope", srv.tmux("display-message", "-p",
                                                       "#{socket_path}").strip())
    notify_log.record_failure("notify-send tma", "exit status 3", now_ms() - 90_000)
    r = doctor(srv)
    notify_text = r.section("notify")
    assert notify_text.startswith("notify:  ✗ the notify command last failed 9")
    assert notify_text.endswith("s ago: exit status 3\n  - command: notify-send tma")
    failure = r.doc["notify"]["last_failure"]
    assert (failure["reason"], failure["command"]) == ("exit status 3", "notify-send tma")
    assert r.doc["notify"]["last_failure_age_ms"] >= 90_000
    assert r.doc["warnings"] == 1 and r.rc == 1


def test_doctor_reports_this_servers_notify_failures_not_another_servers(srv, srv2):
    """The runtime dir is shared by every tmux server of the user: a notification that
    failed for another server (its daemon, its hooks, notify-test run there) is not this
    server's doctor's to report, and this server's own still is."""
    srv.shell_pane()
    srv2.shell_pane()
    r = doctor(srv)  # sets srv's runtime dir; the other server's tma shares it
    env = dict(srv2.env, XDG_RUNTIME_DIR=srv.env["XDG_RUNTIME_DIR"])
    srv2.config.write_text('[notify]\ncommand = "exit 3"\n')
    other = subprocess.run([sys.executable, "-m", "tma", "--socket-name", srv2.name, "debug",
                            "notify-test"], env=env, capture_output=True, text=True,
                           timeout=30)
    assert other.returncode == 1 and "exit 3" in other.stdout, other.stdout + other.stderr
    r = doctor(srv)
    assert r.section("notify") == "notify:  no failed notify command on record"
    assert r.doc["notify"]["last_failure"] is None and r.rc == 0
    srv.config.write_text('[notify]\ncommand = "exit 4"\n')
    assert srv.tma("debug", "notify-test").returncode == 1
    r = doctor(srv)
    assert r.doc["notify"]["last_failure"]["reason"] == "exit status 4"
    assert r.section("notify").endswith("exit status 4\n  - command: exit 4")


def test_model_without_a_telemetry_window_is_listed_not_counted(srv):
    a = srv.agent_pane()
    b = srv.agent_pane()
    now = str(now_ms())
    for pane, model in ((a, "big-model"), (b, "known-model")):
        set_opts(srv, pane, agent_state="idle", agent_source="capture", agent_name="fake",
                 agent_evidence_at=now, agent_since=now, agent_stamped_at=now,
                 agent_model=model)
    srv.config.write_text('[telemetry.windows]\n"known-model" = 200000\n')
    r = doctor(srv)
    assert "model: big-model (no [telemetry.windows] entry names it)" in pane_block(r, a)
    assert "model: known-model" in pane_block(r, b)
    assert (row(r, a)["model"], row(r, a)["window_covered"]) == ("big-model", False)
    assert (row(r, b)["model"], row(r, b)["window_covered"]) == ("known-model", True)
    assert r.doc["warnings"] == 0 and r.rc == 0


def test_demoted_pane_is_informational(srv):
    pane = srv.agent_pane()
    now = str(now_ms())
    set_opts(srv, pane, agent_state="idle", agent_source="capture", agent_name="fake",
             agent_evidence_at=now, agent_since=now, agent_stamped_at=now,
             agent_session="sess-1")
    r = doctor(srv)
    assert "demoted: registered by hook, but its state is screen-read" in pane_block(r, pane)
    assert row(r, pane)["hook_demoted"] is True
    assert r.doc["warnings"] == 0 and r.rc == 0


def _health_server(delay_s: float = 0.0, version: str = "1.18.33"):
    """A real HTTP server on 127.0.0.1 answering GET /global/health like OpenCode 1.18.33,
    each answer `delay_s` late (a busy OpenCode), naming `version`."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Health(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            time.sleep(delay_s)
            body = json.dumps({"healthy": True, "version": version}).encode() \
                if self.path == "/global/health" else b'{"_tag":"NotFound"}'
            self.send_response(200 if self.path == "/global/health" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    return httpd


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api_line(r, pane) -> str:
    [api] = [line for line in pane_block(r, pane) if line.startswith("api:")]
    return api


def test_opencode_api_line_says_whether_the_endpoint_answers(srv):
    isolate_installers(srv)
    pane = wired_pane(srv, "opencode")  # wired: the pane itself is at tier 2
    # no endpoint anywhere: said, not counted while nothing is pending
    r = doctor(srv, bundled=True)
    assert row(r, pane)["endpoint_ok"] is False
    assert api_line(r, pane).startswith("api: no endpoint: the pane has no usable "
                                        "@agent_api_endpoint and config.toml no "
                                        "[api.opencode] api_base")
    assert r.doc["warnings"] == 0 and r.rc == 0
    srv.tmux("set-option", "-p", "-t", pane, "@agent_permission_request", "per_42")
    r = doctor(srv, bundled=True)
    assert api_line(r, pane).endswith("permission request per_42 is pending and tma act "
                                      "cannot answer it")
    a = row(r, pane)
    assert (a["endpoint_ok"], a["permission_request"], a["tier"]) == (False, "per_42", 2)
    assert r.doc["warnings"] == 1 and r.doc["below_expected_tier"] == 0 and r.rc == 1
    # an endpoint nothing listens on (what the plugin stamps when the TUI runs no
    # server) is not an endpoint act can use: still a warning, with how to fix it
    dead = f"http://127.0.0.1:{_closed_port()}"
    srv.tmux("set-option", "-p", "-t", pane, "@agent_api_endpoint", dead)
    r = doctor(srv, bundled=True)
    line = api_line(r, pane)
    assert line.startswith(f"api: {dead} does not answer: nothing answers at {dead} "
                           "(connection refused)")
    assert "opencode --port 4096" in line and line.endswith("tma act cannot answer it")
    a = row(r, pane)
    assert (a["endpoint_ok"], a["api"]["source"], a["api"]["answers"]) == (False, "pane", False)
    assert r.doc["warnings"] == 1 and r.rc == 1
    # a server that answers: the pane's endpoint ...
    httpd = _health_server()
    try:
        live = f"http://127.0.0.1:{httpd.server_address[1]}"
        srv.tmux("set-option", "-p", "-t", pane, "@agent_api_endpoint", live)
        r = doctor(srv, bundled=True)
        act = ("tma act approve/deny reply over HTTP" if row(r, pane)["act_uses_api"]
               else "tma act does not use this lane yet (it refuses OpenCode's prompts)")
        assert api_line(r, pane) == (f"api: {live} (from the pane) answers (OpenCode 1.18.33): "
                                     f"{act}; permission request per_42 is pending")
        assert row(r, pane)["endpoint_ok"] is True and r.doc["warnings"] == 0 and r.rc == 0
        # ... or the config fallback when the pane's value is not a loopback URL
        srv.tmux("set-option", "-p", "-t", pane, "@agent_api_endpoint",
                 "http://attacker.example:4096")
        srv.config.write_text(f'[api.opencode]\napi_base = "{live}"\n')
        r = doctor(srv, bundled=True)
        assert api_line(r, pane).startswith(f"api: {live} (from config) answers")
        assert row(r, pane)["api"]["stamped"] == "http://attacker.example:4096"
        assert r.rc == 0
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert row(r, pane)["window_covered"] is None  # opencode sends no model


def test_a_busy_opencode_that_answers_late_still_answers(srv):
    """OpenCode busy starting (or a loaded machine) has answered its health route after more
    than 2 s (CI, the live lane test); `tma act` waits its action's timeout (30 s), so
    doctor must not call such a server one that act cannot reply over."""
    isolate_installers(srv)
    pane = wired_pane(srv, "opencode")
    httpd = _health_server(delay_s=2.5)
    try:
        live = f"http://127.0.0.1:{httpd.server_address[1]}"
        srv.tmux("set-option", "-p", "-t", pane, "@agent_api_endpoint", live)
        r = doctor(srv, bundled=True)
        assert api_line(r, pane).startswith(f"api: {live} (from the pane) answers (OpenCode "
                                            "1.18.33)"), api_line(r, pane)
        assert row(r, pane)["endpoint_ok"] is True
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_hostile_health_answer_is_shown_as_plain_bounded_data(srv):
    """Whatever listens on the pane's loopback port names the version doctor prints:
    escape sequences, a bell, newlines and a flood reach no terminal, and the JSON
    document carries the same plain text."""
    isolate_installers(srv)
    pane = wired_pane(srv, "opencode")
    evil = "1.0\x1b]52;c;aGk=\x07\x1b[2J\r\n#(touch x)%1 -oProxyCommand=y" + "A" * 5000
    httpd = _health_server(version=evil)
    try:
        live = f"http://127.0.0.1:{httpd.server_address[1]}"
        srv.tmux("set-option", "-p", "-t", pane, "@agent_api_endpoint", live)
        r = doctor(srv, bundled=True)
        line = api_line(r, pane)
        assert line.startswith(f"api: {live} (from the pane) answers (OpenCode 1.0]52;c;"), line
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0
                       for c in r.text.replace("\n", "")), line
        assert len(line) < 300, line
        version = row(r, pane)["api"]["version"]
        assert version.endswith("…") and len(version) <= 64 and "\x1b" not in version
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_broken_config_is_one_cross_line_and_the_rest_is_diagnosed(srv):
    srv.agent_pane()
    srv.config.write_text("[fold\ndwell_secs = 3\n")
    r = doctor(srv)
    config = r.section("config")
    assert config.startswith(f"config:  ✗ {srv.config}: ") and "line 1" in config, r.text
    assert len([ln for ln in r.text.splitlines() if ln.startswith("config:")]) == 1
    assert r.section("tmux").startswith("tmux:") and r.section("clients")  # the rest
    assert r.doc["config"]["error"].startswith(str(srv.config))
    assert r.rc == 1 and "config" in r.doc and r.doc["warnings"] >= 1
    srv.config.write_text("[fold]\ndwell_secs = 3\n")
    r = doctor(srv)
    assert r.section("config") == "" and r.doc["config"]["error"] is None


def test_each_agent_says_which_transcript_tma_reads_and_what_it_did_not_know(srv):
    # the fake agent's transcript through the tests' synthetic store: the file its hook
    # named, and the records of the newest page the reader did not know
    srv.env.update(TMA_TRANSCRIPT_STORES="fake=tests.helpers.synthetic_store",
                   PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    a, b = srv.agent_pane(), srv.agent_pane()
    path = srv.root / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (
        {"type": "user", "text": "hi"}, {"type": "hologram"}, {"type": "assistant", "text": "yo"},
        {"type": "hologram"})), encoding="utf-8")
    now = now_ms()
    for pane, extra in ((a, {"agent_transcript": str(path)}), (b, {})):
        set_opts(srv, pane, agent_state="working", agent_source="hook", agent_name="fake",
                 agent_evidence_at=str(now), agent_since=str(now), agent_stamped_at=str(now),
                 agent_session="s-1", **extra)
    r = doctor(srv)
    rows = {x["pane"]: x for x in r.doc["agents"]}
    assert rows[a]["transcript"] == {
        "path": str(path), "how": "hook", "store": "tests.helpers.synthetic_store",
        "unknown": 2, "events": 4, "why": None}
    none = rows[b]["transcript"]
    assert none["path"] is None and none["unknown"] is None
    assert none["why"].startswith("no fake transcript for session s-1")
    assert (f"      transcript: {path} (named by its hook); ✗ 2 of the newest 4 events are "
            "records the reader does not know") in r.text
    assert "      transcript: none: no fake transcript for session s-1" in r.text
    assert r.rc == 0  # a note, never a warning
