"""`tma doctor` on a private server: each condition, its text line, its JSON key, and
whether it counts toward `--exit-code`."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]
SLEEP = shutil.which("sleep") or "/bin/sleep"

SCHEMA = json.loads((REPO / "schemas" / "doctor.schema.json").read_text())
VERDICT = "tma: doctor: {} warning(s), 0 pane(s) below the tier their manifest supports"

MINIMAL = """
min_engine_version = "0.1"
[identity]
process_names = {names}
[capture]
"""


class Report:
    def __init__(self, text: str, doc: dict, rc: int, stderr: str) -> None:
        self.text = text
        self.doc = doc
        self.rc = rc  # with --exit-code
        self.stderr = stderr

    def section(self, label: str) -> str:
        """The `label:` line and its indented items."""
        lines = self.text.splitlines()
        for i, line in enumerate(lines):
            if line.startswith(label + ":"):
                block = [line]
                for more in lines[i + 1:]:
                    if not more.startswith(" "):
                        break
                    block.append(more)
                return "\n".join(block)
        return ""


def doctor(srv) -> Report:
    """Run doctor three ways: text (exit 0), --json (schema-valid), --exit-code."""
    plain = srv.tma("doctor")
    assert plain.returncode == 0, plain.stderr
    js = srv.tma("doctor", "--json")
    assert js.returncode == 0, js.stderr
    doc = json.loads(js.stdout)
    jsonschema.validate(doc, SCHEMA)
    gate = srv.tma("doctor", "--exit-code")
    assert gate.stdout == plain.stdout or "ago" in plain.stdout  # ages may tick
    if gate.returncode:
        assert gate.stderr.strip() == VERDICT.format(doc["warnings"])
    else:
        assert doc["warnings"] == 0 and gate.stderr == ""
    return Report(plain.stdout, doc, gate.returncode, gate.stderr)


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


def test_ambient_not_polling_then_polling(srv):
    srv.shell_pane()
    r = doctor(srv)
    assert r.section("ambient") == ("ambient: NOT polling — nothing runs `tma status`; add "
                                    "#(tma status) to status-right")
    assert r.doc["ambient_driver"] == {"polling": False, "last_poll_age_ms": None}
    assert r.rc == 0
    # doctor itself is not a poll cycle: it never stamps @tma_last_poll
    assert srv.tmux("show-options", "-sqv", "@tma_last_poll").strip() == ""
    srv.tma("status", check=True)
    r = doctor(srv)
    assert r.section("ambient").startswith("ambient: polling — `tma status` last ran ")
    assert r.section("ambient").endswith("s ago")
    amb = r.doc["ambient_driver"]
    assert amb["polling"] is True and 0 <= amb["last_poll_age_ms"] < 60_000
    assert r.rc == 0


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
    assert panes[1].startswith(f"  {a} fake s:0.0 tier 1 idle (capture, evidence ")
    assert panes[2] == "      not tier 2: hooks not installed (hook tier not wired yet)"
    assert panes[3].startswith(f"  {b} fake s:1.0 tier 2 working (hook, evidence ")
    assert panes[4] == "      model: big-model"
    assert panes[5].startswith("      not tier 3: no daemon")
    rows = {x["pane"]: x for x in r.doc["agents"]}
    assert set(rows) == {a, b}
    assert (rows[a]["state"], rows[a]["source"], rows[a]["tier"], rows[a]["hook_status"]) == (
        "idle", "capture", 1, "not_installed")
    assert rows[a]["tier_reason"] == "hooks not installed (hook tier not wired yet)"
    assert rows[a]["model"] is None and rows[a]["evidence_age_ms"] >= 0
    assert (rows[b]["state"], rows[b]["source"], rows[b]["tier"], rows[b]["hook_status"]) == (
        "working", "hook", 2, "wired")
    assert rows[b]["model"] == "big-model"
    assert r.doc["below_expected_tier"] == 0  # not counted until hooks are installable
    assert r.rc == 0


def test_no_server_exits_1(srv):
    for args in ((), ("--json",), ("--exit-code",)):
        res = srv.tma("doctor", *args)
        assert res.returncode == 1
        assert res.stderr.strip() == "tma: no tmux server running"
        assert res.stdout == ""


def test_bad_config_exits_1(srv):
    srv.shell_pane()
    srv.config.write_text("no_such_key = 1\n")
    res = srv.tma("doctor")
    assert res.returncode == 1
    assert res.stderr.startswith(f"tma: config {srv.config}")


def test_clean_server_is_quiet(srv):
    srv.shell_pane()
    r = doctor(srv)
    assert r.section("tmux").startswith("tmux:    ")
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
    from tma.cli import doctor as cli
    from tma.runtime import doctor, procs
    from tma.runtime.config import Config
    from tma.tmux.adapter import Server

    srv.shell_pane()
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(key, srv.env[key])
    monkeypatch.setattr(procs, "read_proc_table", lambda: None)
    server = Server(srv.tmux_bin, socket_name=srv.name)
    doc = doctor.gather(server, Config(), str(srv.manifests), now_ms())
    jsonschema.validate(doc, SCHEMA)
    assert doc["process_walk"]["ok"] is False and doc["process_walk"]["error"]
    assert doc["warnings"] == 1
    text = cli.render(doc)
    assert "procs:   process walk FAILED (" in text
    assert "only hook-registered panes can be identified" in text


@pytest.mark.parametrize("version,setpf,counted", [
    ("3.1c", False, 1), ("3.2", True, 0), ("3.3a", True, 0), ("next-3.6", True, 0),
    ("openbsd-7.4", True, 0), ("", None, 0), ("3.4", False, 1)])
def test_old_tmux_counts(version, setpf, counted):
    from tma.cli import doctor as cli
    from tma.runtime import doctor

    doc = {"tmux": {"version": version or None, "setpf_ok": setpf},
           "manifests": {"ok": True, "loaded": 0, "issues": []}, "process_name_issues": [],
           "stamp_issues": [], "process_walk": {"ok": True, "error": None}}
    assert len(doctor.warning_items(doc)) == counted
    text = "".join(cli._tmux(doc))
    if version == "3.1c":
        assert "older than 3.2" in text


def test_schema_file_is_valid():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert os.path.basename(SCHEMA["$id"]) == "doctor.schema.json"
