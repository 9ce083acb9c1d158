"""The action broker end to end: which bytes reach an agent's tty, and that none do on a refusal.

Every agent here is a real process named like the agent (keyrecorder.py) drawing a real
captured screen in raw mode and recording every byte it receives.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.keyrecorder import KeyRecorder, key_bytes
from tma.core import fixture
from tma.runtime.act import registry as actions

HERE = Path(__file__).resolve().parent
CAPTURES = HERE.parent / "fixtures" / "captures"
REFERENCE = HERE.parents[2] / "shared" / "reference" / "captures"
BUNDLED = actions.load("/nonexistent")

#: agent -> (process name, {state: capture}, title or None for the capture's own).
SCREENS = {
    "claude": ("claude", {"blocked": CAPTURES / "claude-2.1.332_blocked.txt",
                          "idle": CAPTURES / "claude-2.1.332_idle.txt",
                          "working": CAPTURES / "claude-2.1.332_working.txt"}, None),
    "codex": ("codex", {"blocked": CAPTURES / "codex-0.171.0_blocked.txt",
                        "idle": CAPTURES / "codex-0.171.0_idle.txt",
                        "working": CAPTURES / "codex-0.171.0_working.txt"}, None),
    "gemini": ("node", {"blocked": CAPTURES / "gemini-0.61.0_blocked.txt",
                        "idle": CAPTURES / "gemini-0.61.0_idle.txt",
                        "working": CAPTURES / "gemini-0.61.0_working.txt"}, None),
    "cursor": ("node", {"blocked": REFERENCE / "cursor_blocked_w100.txt",
                        "idle": REFERENCE / "cursor_idle_w100.txt",
                        "working": REFERENCE / "cursor_working_w100.txt"}, "Cursor Agent"),
    "opencode": ("opencode", {"blocked": CAPTURES / "opencode-1.18.33_blocked.txt",
                              "idle": CAPTURES / "opencode-1.18.33_idle.txt",
                              "working": CAPTURES / "opencode-1.18.33_working.txt"}, None),
    "copilot": ("node", {
        "blocked": CAPTURES / "copilot-1.0.102_blocked_permission_bash_w120.txt",
        "idle": CAPTURES / "copilot-1.0.102_idle_after_text_w120.txt",
        "working": CAPTURES / "copilot-1.0.102_working_slow_w120.txt"}, None),
    "qwen": ("node", {"blocked": CAPTURES / "qwen-0.24.4_blocked_permission_shell_w120.txt",
                      "idle": CAPTURES / "qwen-0.24.4_idle_w120.txt",
                      "working": CAPTURES / "qwen-0.24.4_working_w120.txt"}, None),
    "aider": ("aider", {"blocked": CAPTURES / "aider-0.86.2_blocked_permission_shell_w120.txt",
                        "idle": CAPTURES / "aider-0.86.2_idle_w120.txt",
                        "working": CAPTURES / "aider-0.86.2_working_streaming_w120.txt"}, None),
}
#: the state each action's screen must show (compact needs a gauge: its own test)
ACTION_STATE = {"approve": "blocked", "deny": "blocked", "interrupt": "working",
                "steer": "idle", "steer_now": "working"}
TEXT = "fix the; tests -l Enter"  # a ; and key names: must arrive as typed
CELLS = sorted((name, agent) for name in ACTION_STATE
               for agent in BUNDLED.get(name).keys if agent in SCREENS)


def _capture(path: Path) -> fixture.Capture:
    if not path.exists() and REFERENCE in path.parents:
        pytest.skip("../shared/reference/captures is absent (a user's clone)")
    return fixture.parse(path.read_text(encoding="utf-8"))


def _agent(srv, agent: str, state: str) -> KeyRecorder:
    process, screens, title = SCREENS[agent]
    return KeyRecorder.start(srv, process, _capture(screens[state]), title=title)


def _redraw(srv, pane: str, capture: fixture.Capture) -> None:
    """The agent's screen changes under tma (as when the prompt is answered by hand)."""
    from tma.core.rules import strip_ansi

    lines = capture.body.rstrip("\n").split("\n")[-(capture.height or 30):]
    with open(srv.display(pane, "#{pane_tty}"), "w", encoding="utf-8") as fh:
        fh.write("\x1b[2J\x1b[H" + "\r\n".join(lines))
    marker = next(ln for ln in reversed([strip_ansi(x).strip() for x in lines]) if ln)
    srv.wait_for(lambda: marker in srv.tmux("capture-pane", "-p", "-t", pane))


def _verdict(srv, pane: str) -> tuple[str, str, str]:
    row = srv.row(pane, manifests=False)
    if row is None:
        # a cycle already ran this second (the act before): the stampede guard let this
        # `ls` consume stamps only, and a pane started since has none yet
        srv.next_second()
        row = srv.row(pane, manifests=False)
    assert row is not None, f"tma does not list {pane}"
    return row["agent"], row["state"], row["detail"] or ""


def _act(srv, *args, **kw):
    return srv.tma("act", *args, manifests=False, **kw)


def _want(keys, text=TEXT) -> bytes:
    out = b""
    for k in keys:
        if k == "{text}":
            out += text.encode()
        elif len(k) > 1 and k[0] in "/!" and k[1:].isalnum():
            out += k.encode()  # a string that names no key: tmux types its characters
        else:
            out += key_bytes([k])
    return out


def test_every_keyed_agent_has_screens_here():
    keyed = {a for name in ACTION_STATE for a in BUNDLED.get(name).keys}
    assert keyed - {"pi"} <= set(SCREENS), "add the agent's screens to SCREENS"


@pytest.mark.parametrize(("action", "agent"), CELLS)
def test_the_manifest_keys_arrive_exactly(srv, action, agent):
    state = ACTION_STATE[action]
    rec = _agent(srv, agent, state)
    assert _verdict(srv, rec.pane)[:2] == (agent, state)
    assert rec.received() == b""
    extra = ["--text", TEXT] if BUNDLED.get(action).text else []
    res = _act(srv, action, "--pane", rec.pane, *extra)
    assert res.returncode == 0 and f"sent `{action}`" in res.stderr, res.stderr
    want = _want(BUNDLED.get(action).keys[agent])
    assert rec.settle(len(want)) == want
    assert srv.option(rec.pane, "@agent_action") == ""  # the lock is released


@pytest.mark.parametrize("agent", sorted(a for a in SCREENS if a != "opencode"))
def test_nothing_reaches_a_pane_the_gate_refuses(srv, agent):
    rec = _agent(srv, agent, "idle")
    assert _verdict(srv, rec.pane)[:2] == (agent, "idle")
    for action in ("approve", "deny", "interrupt", "steer_now"):
        if agent not in BUNDLED.get(action).keys:
            continue
        extra = ["--text", "x"] if BUNDLED.get(action).text else []
        res = _act(srv, action, "--pane", rec.pane, *extra)
        assert res.returncode == 4 and "not" in res.stderr, res.stderr
    res = _act(srv, "approve", "--pane", rec.pane, "--json")
    assert json.loads(res.stdout)["reason"] == "gated"
    assert rec.settle() == b""


def test_a_prompt_answered_by_hand_gets_nothing(srv):
    """The stamp says blocked/permission (fresh); the screen moved on a moment ago."""
    rec = _agent(srv, "claude", "blocked")
    assert _verdict(srv, rec.pane) == ("claude", "blocked", "permission")
    _redraw(srv, rec.pane, _capture(SCREENS["claude"][1]["working"]))
    res = _act(srv, "approve", "--pane", rec.pane)
    assert res.returncode == 4 and "the screen read just now" in res.stderr, res.stderr
    assert rec.settle() == b""


def test_a_hook_claim_does_not_outvote_the_screen(srv):
    """A fresh hook blocked/permission claim, but the screen shows the idle composer."""
    rec = _agent(srv, "claude", "idle")
    srv.tma("event", "--agent", "claude", "--kind", "Notification", "--pane", rec.pane,
            input='{"session_id":"s1","message":"permission_prompt"}', manifests=False)
    assert _verdict(srv, rec.pane)[1:] == ("blocked", "permission")
    res = _act(srv, "approve", "--pane", rec.pane)
    assert res.returncode == 4, res.stderr
    assert rec.settle() == b""


@pytest.mark.tmux_contract
def test_a_stale_stamp_is_re_verified(srv):
    """A stamp claiming blocked/permission, written long ago: fresh detection decides."""
    rec = _agent(srv, "codex", "idle")
    old = int(time.time() * 1000) - 600_000
    for key, value in (("@agent_state", "blocked"), ("@agent_detail", "permission"),
                       ("@agent_source", "capture"), ("@agent_name", "codex"),
                       ("@agent_since", str(old)), ("@agent_evidence_at", str(old)),
                       ("@agent_stamped_at", str(old))):
        srv.tmux("set-option", "-p", "-t", rec.pane, key, value)
    res = _act(srv, "approve", "--pane", rec.pane)
    assert res.returncode == 4 and "idle" in res.stderr, res.stderr
    assert rec.settle() == b""


def test_a_pager_in_the_foreground_gets_nothing(srv):
    rec = _agent(srv, "claude", "blocked")
    assert _verdict(srv, rec.pane) == ("claude", "blocked", "permission")
    # a pager starts in front of the agent, in the pane's foreground process group
    less = srv.fake("less")
    tty = srv.display(rec.pane, "#{pane_tty}")
    pager = subprocess.Popen(["setsid", "-c", str(less), "1000"], stdin=open(tty),
                             stdout=open(tty, "w"), stderr=subprocess.DEVNULL)
    try:
        srv.wait_for(lambda: srv.display(rec.pane, "#{pane_current_command}") == "less")
        res = _act(srv, "approve", "--pane", rec.pane, "--force")
        assert res.returncode == 4 and "foreground" in res.stderr, res.stderr
    finally:
        pager.kill()
        pager.wait()
    assert rec.settle() == b""


def test_a_pane_that_became_a_shell_gets_nothing(srv):
    pane = srv.shell_pane()
    now = int(time.time() * 1000)
    for key, value in (("@agent_state", "blocked"), ("@agent_detail", "permission"),
                       ("@agent_source", "hook"), ("@agent_name", "claude"),
                       ("@agent_session", "s1"), ("@agent_pid", "0"),
                       ("@agent_since", str(now)), ("@agent_evidence_at", str(now)),
                       ("@agent_stamped_at", str(now))):
        srv.tmux("set-option", "-p", "-t", pane, key, value)
    res = _act(srv, "approve", "--pane", pane)
    assert res.returncode == 4 and "nothing typed" in res.stderr, res.stderr
    assert "1" not in srv.tmux("capture-pane", "-p", "-t", pane).split("$")[-1]


def test_wrong_agent_and_no_coverage(srv):
    rec = _agent(srv, "codex", "idle")
    res = _act(srv, "compact", "--pane", rec.pane, "--json")
    doc = json.loads(res.stdout)
    assert (res.returncode, doc["outcome"], doc["reason"]) == (4, "refused", "wrong-agent")
    assert "does not apply to codex" in res.stderr
    assert rec.settle() == b""


def test_compact_waits_for_the_gauge_then_fires(srv):
    rec = _agent(srv, "claude", "idle")
    assert _verdict(srv, rec.pane)[1] == "idle"
    res = _act(srv, "compact", "--pane", rec.pane, "--json")
    assert (res.returncode, json.loads(res.stdout)["reason"]) == (4, "gated")
    assert "no context reading" in res.stderr
    now = str(int(time.time() * 1000))
    srv.tmux("set-option", "-p", "-t", rec.pane, "@agent_context_pct", "40")
    srv.tmux("set-option", "-p", "-t", rec.pane, "@agent_context_at", now)
    res = _act(srv, "compact", "--pane", rec.pane)
    assert res.returncode == 4 and "40%" in res.stderr, res.stderr
    assert rec.received() == b""
    srv.tmux("set-option", "-p", "-t", rec.pane, "@agent_context_pct", "82")
    res = _act(srv, "compact", "--pane", rec.pane)
    assert res.returncode == 0, res.stderr
    want = _want(["/compact", "Enter"])
    assert rec.settle(len(want)) == want


def test_no_coverage_when_the_agent_publishes_no_gauge(srv, tmp_path):
    srv.fake("gemini")
    user = Path(srv.env["XDG_CONFIG_HOME"]) / "tma" / "actions"
    user.mkdir(parents=True)
    (user / "trim.toml").write_text(
        'min_engine_version = "0.1"\nlabel = "Trim"\ndescription = "d"\nkind = "keys"\n'
        'requires = ["context"]\n[keys]\ngemini = ["/compress", "Enter"]\n')
    rec = _agent(srv, "gemini", "idle")
    res = _act(srv, "trim", "--pane", rec.pane, "--json")
    assert (res.returncode, json.loads(res.stdout)["reason"]) == (4, "no-coverage")
    assert rec.settle() == b""


SLOW_KEYS = """#!/bin/sh
# tmux, but a source-file script that sends keys waits first: the lock is held meanwhile
for a in "$@"; do [ "$a" = source-file ] && src=1; done
if [ -n "$src" ]; then
  tmp=$(mktemp); cat > "$tmp"
  grep -q '^send-keys' "$tmp" && sleep 2
  "$REAL_TMUX" "$@" < "$tmp"; rc=$?; rm -f "$tmp"; exit $rc
fi
exec "$REAL_TMUX" "$@"
"""


@pytest.mark.tmux_contract
def test_two_concurrent_acts_exactly_one_sends(srv):
    rec = _agent(srv, "codex", "working")
    assert _verdict(srv, rec.pane)[1] == "working"
    slow = srv.root / "slow-tmux"
    slow.write_text(SLOW_KEYS)
    slow.chmod(0o755)
    env = dict(srv.env, TMA_TMUX_BIN=str(slow), REAL_TMUX=srv.tmux_bin)
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "act", "interrupt",
            "--pane", rec.pane, "--json"]
    first = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                             text=True)
    srv.wait_for(lambda: srv.option(rec.pane, "@agent_action"))  # first holds the lock
    second = subprocess.run(argv, capture_output=True, env=env, text=True, timeout=30)
    out, _err = first.communicate(timeout=30)
    assert json.loads(out)["outcome"] == "sent"
    doc = json.loads(second.stdout)
    assert (second.returncode, doc["outcome"], doc["reason"]) == (5, "refused", "locked")
    assert "busy with `interrupt`" in second.stderr
    assert rec.settle(1) == b"\x1b"  # exactly one Escape
    assert srv.option(rec.pane, "@agent_action") == ""


def test_a_held_lock_refuses_with_exit_5(srv):
    rec = _agent(srv, "codex", "working")
    live = subprocess.Popen(["sleep", "100"])
    try:
        far = int(time.time() * 1000) + 60_000
        srv.tmux("set-option", "-p", "-t", rec.pane, "@agent_action",
                 f"{far}:abc123:{live.pid}:interrupt")
        res = _act(srv, "interrupt", "--pane", rec.pane, "--json")
        doc = json.loads(res.stdout)
        assert (res.returncode, doc["reason"]) == (5, "locked"), res.stderr
        assert "busy" in res.stderr
        # expired but its holder is alive: still held
        srv.tmux("set-option", "-p", "-t", rec.pane, "@agent_action",
                 f"1000:abc123:{live.pid}:interrupt")
        assert _act(srv, "interrupt", "--pane", rec.pane).returncode == 5
        assert rec.settle() == b""
    finally:
        live.kill()
        live.wait()
    # expired and its holder is dead: reclaimed
    srv.tmux("set-option", "-p", "-t", rec.pane, "@agent_action",
             f"1000:abc123:{live.pid}:interrupt")
    res = _act(srv, "interrupt", "--pane", rec.pane)
    assert res.returncode == 0, res.stderr
    assert rec.settle(1) == b"\x1b"
    assert srv.option(rec.pane, "@agent_action") == ""


def test_the_lock_is_released_only_by_its_holder(srv):
    from tma.tmux import action_lock
    from tma.tmux.adapter import Server

    pane = srv.agent_pane()
    server = Server(srv.tmux_bin, socket_name=srv.name)
    mine, theirs = "99999999999999:aa:1:x", "99999999999999:bb:2:y"
    assert action_lock.acquire(server, pane, mine) == mine
    assert action_lock.acquire(server, pane, theirs) == mine  # lost: read back the winner
    assert action_lock.release(server, pane, theirs)
    assert srv.option(pane, "@agent_action") == mine
    assert action_lock.release(server, pane, mine)
    assert srv.option(pane, "@agent_action") == ""


@pytest.mark.tmux_contract
def test_steer_text_is_typed_literally_and_needs_text(srv):
    rec = _agent(srv, "claude", "idle")
    res = _act(srv, "steer", "--pane", rec.pane)
    assert res.returncode == 2 and "--text" in res.stderr
    res = _act(srv, "steer", "--pane", rec.pane, "--text", "a\nb")
    assert res.returncode == 2
    res = _act(srv, "approve", "--pane", rec.pane, "--text", "x")
    assert res.returncode == 2
    text = "-l Escape C-c ; #{pane_id} ~/x $HOME \\ 'q' \"dq\" é"
    res = _act(srv, "steer", "--pane", rec.pane, "--text", text)
    assert res.returncode == 0, res.stderr
    want = text.encode() + b"\r"
    assert rec.settle(len(want)) == want


def test_unknown_action_missing_name_and_vanished(srv):
    pane = srv.agent_pane()
    assert _act(srv, "nope", "--pane", pane).returncode == 2
    assert _act(srv, "--pane", pane).returncode == 2
    res = _act(srv, "approve", "--pane", "%999", "--json")
    assert (res.returncode, json.loads(res.stdout)["outcome"]) == (3, "vanished")
    assert "no pane %999" in res.stderr


def test_list_and_list_for_a_pane(srv):
    res = srv.tma("act", "--list", "--json", manifests=False)
    doc = json.loads(res.stdout)
    names = [a["name"] for a in doc["actions"]]
    assert names == sorted(BUNDLED.names()) and "fireable" not in doc["actions"][0]
    approve = next(a for a in doc["actions"] if a["name"] == "approve")
    assert approve["agents"] == ["aider", "claude", "codex", "copilot", "cursor", "gemini",
                                 "opencode", "qwen"]
    assert approve["when"] == {"state": ["blocked"], "detail": ["permission"],
                               "context_pct_min": None, "context_pct_max": None}
    rec = _agent(srv, "codex", "blocked")
    res = _act(srv, "--list", "--pane", rec.pane, "--json")
    by = {a["name"]: a for a in json.loads(res.stdout)["actions"]}
    assert by["approve"]["fireable"] and by["deny"]["fireable"]
    assert (by["interrupt"]["fireable"], by["interrupt"]["reason"]) == (False, "gated")
    assert by["question_reject"]["reason"] == "gated"
    text = _act(srv, "--list", "--pane", rec.pane).stdout
    assert "approve" in text and "fireable" in text and "refused: gated" not in text
    lines = text.splitlines()
    interrupt = next(ln for ln in lines if ln.startswith("interrupt "))
    assert f"refused: {rec.pane} is blocked" in interrupt, text  # why, in words
    assert "message" not in res.stdout  # --json keeps the machine reason only
    # aligned: the kind and agents columns start at the same place on every line
    kinds = {ln.index(" keys ") for ln in lines if " keys " in ln}
    assert len(kinds) == 1, text
    verdicts = {ln.index("fireable") if "fireable" in ln else ln.index("refused")
                for ln in lines}
    assert len(verdicts) == 1, text
    # the lane in words: a codex pane is answered by keys; OpenCode over its API, never by
    # keys (question_reject has no keys arm at all)
    assert next(ln for ln in lines if ln.startswith("approve ")).split()[1] == "keys", text
    listing = srv.tma("act", "--list", manifests=False).stdout.splitlines()
    approve = next(ln for ln in listing if ln.startswith("approve "))
    assert approve.split()[1] == "keys/api" and "opencode (api)" in approve, listing
    reject = next(ln for ln in listing if ln.startswith("question_reject "))
    assert reject.split()[1] == "api" and "opencode (api)" in reject, listing
    assert rec.settle() == b""


def test_dry_run_says_what_would_happen_and_sends_nothing(srv):
    rec = _agent(srv, "codex", "blocked")
    res = _act(srv, "approve", "--pane", rec.pane, "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "gate:    fireable" in res.stdout and "effect:  keys: 1" in res.stdout
    assert "state: blocked/permission (" in res.stdout and "ms old)" in res.stdout
    assert "cwd: " in res.stdout and "(live)" in res.stdout
    res = _act(srv, "interrupt", "--pane", rec.pane, "--dry-run", "--json")
    doc = json.loads(res.stdout)
    assert (doc["fireable"], doc["reason"]) == (False, "gated")
    assert rec.settle() == b""
    assert srv.option(rec.pane, "@agent_action") == ""


def test_all_fans_out_and_reports_the_worst(srv):
    a = _agent(srv, "codex", "working")
    b = _agent(srv, "claude", "working")
    c = _agent(srv, "gemini", "idle")
    for r in (a, b, c):
        _verdict(srv, r.pane)
    res = _act(srv, "interrupt", "--all", "--session", "s", "--dry-run")
    assert res.stdout.startswith("targets: 3\n") and "would fire" in res.stdout
    assert "refused: gated" in res.stdout
    res = _act(srv, "interrupt", "--all", "--session", "s", "--json")
    doc = json.loads(res.stdout)
    by = {r["pane"]: r["outcome"] for r in doc["results"]}
    assert by == {a.pane: "sent", b.pane: "sent", c.pane: "refused"}
    assert res.returncode == 4
    assert a.settle(1) == b"\x1b" and b.settle(1) == b"\x1b" and c.settle() == b""
    assert _act(srv, "interrupt", "--all").returncode == 2  # --all needs a selector
    assert _act(srv, "interrupt", "--all", "--agent", "pi").returncode == 2  # no match


def test_a_confirm_action_needs_yes_off_a_terminal(srv):
    user = Path(srv.env["XDG_CONFIG_HOME"]) / "tma" / "actions"
    user.mkdir(parents=True)
    (user / "halt.toml").write_text(
        'min_engine_version = "0.1"\nlabel = "Halt"\ndescription = "d"\nkind = "keys"\n'
        'confirm = true\n[when]\nstate = ["working"]\n[keys]\ncodex = ["C-c"]\n')
    rec = _agent(srv, "codex", "working")
    res = _act(srv, "halt", "--pane", rec.pane, "--json")
    assert (res.returncode, json.loads(res.stdout)["reason"]) == (4, "requires-unmet")
    assert "--yes" in res.stderr
    assert rec.settle() == b""
    res = _act(srv, "halt", "--pane", rec.pane, "--yes")
    assert res.returncode == 0, res.stderr
    assert rec.settle(1) == b"\x03"


def test_a_user_action_shadows_and_a_broken_one_is_skipped(srv):
    user = Path(srv.env["XDG_CONFIG_HOME"]) / "tma" / "actions"
    user.mkdir(parents=True)
    (user / "interrupt.toml").write_text(
        'min_engine_version = "0.1"\nlabel = "Int"\ndescription = "d"\nkind = "keys"\n'
        '[when]\nstate = ["working"]\n[keys]\ncodex = ["C-c"]\n')
    (user / "broken.toml").write_text('min_engine_version = "0.1"\nlabel = 3\n')
    rec = _agent(srv, "codex", "working")
    res = _act(srv, "interrupt", "--pane", rec.pane)
    assert res.returncode == 0, res.stderr
    assert f"tma: skipping action {user / 'broken.toml'}: kind: required (\"keys\" or " \
           "\"exec\")\n" in res.stderr
    assert rec.settle(1) == b"\x03"


def test_force_skips_when_only(srv):
    rec = _agent(srv, "codex", "idle")
    res = _act(srv, "interrupt", "--pane", rec.pane, "--force")
    assert res.returncode == 0, res.stderr
    assert rec.settle(1) == b"\x1b"
    res = _act(srv, "compact", "--pane", rec.pane, "--force")
    assert res.returncode == 4  # applicability is not `when`


def test_opencode_api_lane_without_an_endpoint_is_an_error(srv):
    rec = _agent(srv, "opencode", "blocked")
    assert _verdict(srv, rec.pane)[1:] == ("blocked", "permission")
    res = _act(srv, "approve", "--pane", rec.pane, "--json")
    doc = json.loads(res.stdout)
    assert (res.returncode, doc["reason"]) == (4, "requires-unmet")  # no request id stamped
    srv.tmux("set-option", "-p", "-t", rec.pane, "@agent_permission_request", "per_1")
    res = _act(srv, "approve", "--pane", rec.pane, "--json")
    assert (res.returncode, json.loads(res.stdout)["outcome"]) == (1, "error")
    assert "api_base" in res.stderr
    assert rec.settle() == b""  # never falls back to keys


class _OpenCode:
    """A local HTTP server answering like OpenCode's v1 plane: the pending request ids
    answer 200 `true` once, anything else 404. Every request is recorded."""

    def __init__(self, pending: set[str]) -> None:
        import http.server
        import threading

        self.pending, self.seen = set(pending), []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.seen.append((self.path, body))
                rid = self.path.split("/")[2] if self.path.count("/") >= 3 else ""
                code = 200 if rid in outer.pending else 404
                outer.pending.discard(rid)
                data = b"true" if code == 200 else b'{"name":"NotFoundError"}'
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _opencode_prompt(srv, endpoint: str, request: str = "per_1", question: bool = False):
    rec = _agent(srv, "opencode", "blocked")
    assert _verdict(srv, rec.pane)[1:] == ("blocked", "permission")
    srv.tmux("set-option", "-p", "-t", rec.pane, "@agent_api_endpoint", endpoint)
    srv.tmux("set-option", "-p", "-t", rec.pane,
             "@agent_question_request" if question else "@agent_permission_request", request)
    return rec


@pytest.mark.parametrize(("action", "reply"), [("approve", b'{"reply": "once"}'),
                                               ("deny", b'{"reply": "reject"}')])
def test_opencode_permission_is_replied_over_http_and_nothing_typed(srv, action, reply):
    api = _OpenCode({"per_1"})
    try:
        rec = _opencode_prompt(srv, api.url)
        res = _act(srv, action, "--pane", rec.pane, "--json")
        doc = json.loads(res.stdout)
        assert (res.returncode, doc["outcome"]) == (0, "replied"), res.stderr
        assert [(p, json.loads(b)) for p, b in api.seen] == [
            ("/permission/per_1/reply", json.loads(reply))]
        # answered already: the server no longer holds it
        res = _act(srv, action, "--pane", rec.pane, "--json")
        assert (res.returncode, json.loads(res.stdout)["outcome"]) == (3, "vanished")
    finally:
        api.close()
    assert rec.settle() == b""


def test_question_reject_over_http(srv):
    api = _OpenCode({"que_1"})
    try:
        rec = KeyRecorder.start(srv, "opencode",
                                _capture(CAPTURES / "opencode-1.18.33_blocked_question.txt"))
        assert _verdict(srv, rec.pane)[1:] == ("blocked", "question")
        for key, value in (("@agent_api_endpoint", api.url),
                           ("@agent_question_request", "que_1")):
            srv.tmux("set-option", "-p", "-t", rec.pane, key, value)
        assert _act(srv, "approve", "--pane", rec.pane).returncode == 4  # not a permission
        res = _act(srv, "question_reject", "--pane", rec.pane, "--json")
        assert (res.returncode, json.loads(res.stdout)["outcome"]) == (0, "replied"), \
            res.stderr
        assert [p for p, _ in api.seen] == ["/question/que_1/reject"]
    finally:
        api.close()
    assert rec.settle() == b""


def test_opencode_refused_connection_is_an_error_naming_the_endpoint(srv):
    rec = _opencode_prompt(srv, "http://127.0.0.1:9")
    res = _act(srv, "approve", "--pane", rec.pane, "--json")
    doc = json.loads(res.stdout)
    assert (res.returncode, doc["outcome"]) == (1, "error")
    assert "127.0.0.1:9" in doc["message"]
    assert rec.settle() == b""


def test_without_the_lane_module_the_op_says_so(monkeypatch):
    """The dispatch's fallback when tma.runtime.act.opencode_api is absent."""
    import builtins

    from tma.core.actions.schema import ApiOp
    from tma.runtime.act import fire as actions_fire

    real = builtins.__import__

    def no_lane(name, *args, **kw):
        if name == "tma.runtime.act" and args and args[2] and "opencode_api" in args[2]:
            raise ImportError("no lane")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_lane)
    assert actions_fire.call_api(ApiOp("opencode.permission_reply", "once"), "http://x",
                                 "per_1", 1.0) == ("error", actions_fire.API_NOT_INSTALLED)


def test_json_results_match_the_schema(srv):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((HERE.parents[1] / "schemas" / "act.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    a = _agent(srv, "codex", "working")
    b = _agent(srv, "gemini", "idle")
    docs = [json.loads(_act(srv, "interrupt", "--pane", a.pane, "--json").stdout),
            json.loads(_act(srv, "interrupt", "--pane", b.pane, "--json").stdout),
            json.loads(_act(srv, "approve", "--pane", "%999", "--json").stdout),
            json.loads(_act(srv, "interrupt", "--all", "--session", "s", "--json").stdout)]
    assert [d.get("outcome") for d in docs[:3]] == ["sent", "refused", "vanished"]
    assert len(docs[3]["results"]) == 2
    for doc in docs:
        jsonschema.validate(doc, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(dict(docs[0], reason="gated"), schema)  # sent carries no reason


def _menu(srv, pane: str, client):
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "act", "--menu",
            "--pane", pane, "--client", client.name]
    return subprocess.Popen(argv, env=srv.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


@pytest.mark.tmux_contract
def test_menu_lists_what_is_fireable_and_an_entry_fires(srv, attach):
    rec = _agent(srv, "codex", "blocked")
    _verdict(srv, rec.pane)
    c = attach("s")
    c.clear_output()
    proc = _menu(srv, rec.pane, c)
    try:
        srv.wait_for(lambda: "Approve" in c.output() and "Deny" in c.output())
        assert "Interrupt" not in c.output()  # gated: not offered
        c.type(b"1")
        proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rec.settle(1) == b"1"  # approve's key for codex


def test_a_menu_entry_refused_when_chosen_says_why_in_words(srv, attach):
    # the menu opened on a prompt; it was answered by hand before the entry was chosen.
    # The entry's act is refused by its gate, and says why on the message line: tmux
    # would show only `'…tma act approve …' returned 4`, truncated
    rec = _agent(srv, "codex", "blocked")
    _verdict(srv, rec.pane)
    c = attach("s")
    c.clear_output()
    proc = _menu(srv, rec.pane, c)
    try:
        srv.wait_for(lambda: "Approve" in c.output())
        _redraw(srv, rec.pane, _capture(SCREENS["codex"][1]["idle"]))
        assert _verdict(srv, rec.pane)[1] == "idle"
        c.clear_output()
        c.type(b"1")
        proc.communicate(timeout=10)
        srv.wait_for(lambda: f"tma: {rec.pane} is idle" in c.output(), timeout=10)
        assert "returned" not in c.output()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rec.settle() == b""  # nothing typed


def test_menu_confirm_entry_asks_again_and_nothing_fireable_says_so(srv, attach):
    user = Path(srv.env["XDG_CONFIG_HOME"]) / "tma" / "actions"
    user.mkdir(parents=True)
    (user / "halt.toml").write_text(
        'min_engine_version = "0.1"\nlabel = "Halt"\ndescription = "d"\nkind = "keys"\n'
        'confirm = true\n[when]\nstate = ["working"]\n[keys]\ncodex = ["C-c"]\n')
    rec = _agent(srv, "codex", "working")
    _verdict(srv, rec.pane)
    c = attach("s")
    c.clear_output()
    proc = _menu(srv, rec.pane, c)
    try:
        srv.wait_for(lambda: "Interrupt" in c.output() and "Halt" in c.output())
        c.clear_output()
        c.type(b"2")  # Halt: a nested yes/no menu, nothing sent yet
        srv.wait_for(lambda: "Yes, fire it" in c.output())
        assert rec.received() == b""
        c.type(b"y")
        proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rec.settle(1) == b"\x03"
    idle = _agent(srv, "gemini", "idle")
    _verdict(srv, idle.pane)
    res = _act(srv, "--menu", "--pane", idle.pane)
    assert (res.returncode, res.stderr) == (0, f"tma: no actions are fireable on {idle.pane} "
                                               "right now\n")


# ---------------------------------------------------------------- command actions


def _user_action(srv, name: str, body: str) -> None:
    user = Path(srv.env["XDG_CONFIG_HOME"]) / "tma" / "actions"
    user.mkdir(parents=True, exist_ok=True)
    (user / f"{name}.toml").write_text(
        f'min_engine_version = "0.1"\nlabel = "{name}"\ndescription = "d"\nkind = "exec"\n'
        + body)


def test_a_command_action_gets_context_only_in_its_environment(srv):
    out = srv.root / "env.txt"
    _user_action(srv, "note", f'command = "env | grep ^TMA_ | sort > {out}; exit 3"\n'
                              '[when]\nstate = ["idle"]\n')
    rec = _agent(srv, "codex", "idle")
    srv.tmux("select-pane", "-t", rec.pane, "-T", "$(touch /tmp/pwned-by-title) `x`")
    res = _act(srv, "note", "--pane", rec.pane, "--arg", "one two", "--arg", "2", "--json")
    doc = json.loads(res.stdout)
    assert (res.returncode, doc["outcome"], doc["exit_code"]) == (3, "exited", 3), res.stderr
    env = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert env["TMA_ACTION"] == "note" and env["TMA_PANE"] == rec.pane
    assert (env["TMA_AGENT"], env["TMA_STATE"]) == ("codex", "idle")
    assert env["TMA_TITLE"] == "$(touch /tmp/pwned-by-title) `x`"  # data, never code
    assert (env["TMA_ARG"], env["TMA_ARG_1"], env["TMA_ARG_2"], env["TMA_ARG_COUNT"]) == \
        ("one two", "one two", "2", "2")
    assert not Path("/tmp/pwned-by-title").exists()
    assert srv.option(rec.pane, "@agent_action") == ""
    assert rec.settle() == b""
    assert _act(srv, "approve", "--pane", rec.pane, "--arg", "x").returncode == 2


def test_a_sync_command_past_its_timeout_is_killed(srv):
    _user_action(srv, "slow", 'command = "sleep 30"\ntimeout_ms = 300\n')
    rec = _agent(srv, "codex", "idle")
    t0 = time.monotonic()
    res = _act(srv, "slow", "--pane", rec.pane, "--json")
    assert (res.returncode, json.loads(res.stdout)["outcome"]) == (124, "timeout")
    assert time.monotonic() - t0 < 10 and "timed out" in res.stderr
    assert srv.option(rec.pane, "@agent_action") == ""


def test_a_detached_command_holds_the_lock_then_releases_and_reports(srv):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((HERE.parents[1] / "schemas" / "act-completion.schema.json")
                        .read_text())
    done = srv.root / "done.json"
    srv.config.write_text(f'[notify]\ncommand = "cat > {done}.tmp; env | grep ^TMA_ >> '
                          f'{done}.env; mv {done}.tmp {done}"\n')
    gate = srv.root / "go"
    _user_action(srv, "bg", f'command = "while [ ! -e {gate} ]; do sleep 0.05; done; exit 7"\n'
                            'detach = true\n')
    rec = _agent(srv, "codex", "idle")
    res = _act(srv, "bg", "--pane", rec.pane, "--json")
    doc = json.loads(res.stdout)
    assert (res.returncode, doc["outcome"]) == (0, "spawned"), res.stderr
    lock = srv.option(rec.pane, "@agent_action")
    assert lock.endswith(":bg") and lock.split(":")[2] != "0"
    again = _act(srv, "bg", "--pane", rec.pane)
    assert again.returncode == 5  # the supervisor holds it
    gate.touch()
    srv.wait_for(done.exists)
    payload = json.loads(done.read_text())
    jsonschema.validate(payload, schema)
    assert (payload["action"], payload["pane"], payload["outcome"], payload["exit_code"]) == \
        ("bg", rec.pane, "exited", 7)
    assert "TMA_OUTCOME=exited" in Path(f"{done}.env").read_text()
    assert srv.option(rec.pane, "@agent_action") == ""


def test_a_detached_command_past_its_deadline_is_killed(srv):
    done = srv.root / "done.json"
    srv.config.write_text(f'[notify]\ncommand = "cat > {done}.tmp; mv {done}.tmp {done}"\n')
    _user_action(srv, "bg", 'command = "sleep 60"\ndetach = true\ndetach_timeout_ms = 300\n')
    rec = _agent(srv, "codex", "idle")
    assert _act(srv, "bg", "--pane", rec.pane).returncode == 0
    srv.wait_for(done.exists)
    payload = json.loads(done.read_text())
    assert (payload["outcome"], payload["exit_code"]) == ("timeout", None)
    assert srv.option(rec.pane, "@agent_action") == ""


def test_a_terminal_is_asked_to_confirm(srv):
    import os
    import pty

    user = Path(srv.env["XDG_CONFIG_HOME"]) / "tma" / "actions"
    user.mkdir(parents=True)
    (user / "halt.toml").write_text(
        'min_engine_version = "0.1"\nlabel = "Halt"\ndescription = "d"\nkind = "keys"\n'
        'confirm = true\n[when]\nstate = ["working"]\n[keys]\ncodex = ["C-c"]\n')
    rec = _agent(srv, "codex", "working")
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "act", "halt", "--pane",
            rec.pane]

    def run(answer: bytes) -> tuple[int, bytes]:
        pid, fd = pty.fork()
        if pid == 0:  # pragma: no cover - the child
            os.execvpe(argv[0], argv, srv.env)
        seen = b""
        while b"[y/N]" not in seen:
            seen += os.read(fd, 1024)
        os.write(fd, answer)
        while True:
            try:
                chunk = os.read(fd, 1024)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        _pid, status = os.waitpid(pid, 0)
        os.close(fd)
        return os.waitstatus_to_exitcode(status), seen

    code, seen = run(b"n\n")
    assert code == 4 and b"not confirmed" in seen
    assert rec.settle() == b""
    code, seen = run(b"y\n")
    assert code == 0 and b"sent `halt`" in seen
    assert rec.settle(1) == b"\x03"


def test_selectors_must_match_exactly_one_pane(srv):
    a = _agent(srv, "codex", "working")
    b = _agent(srv, "claude", "working")
    for r in (a, b):
        _verdict(srv, r.pane)
    res = _act(srv, "interrupt", "--state", "working")
    assert res.returncode == 1 and "match 2 panes" in res.stderr and a.pane in res.stderr
    res = _act(srv, "interrupt", "--agent", "gemini")
    assert res.returncode == 3
    res = _act(srv, "interrupt", "--agent", "codex")
    assert res.returncode == 0, res.stderr
    assert a.settle(1) == b"\x1b" and b.settle() == b""
    assert _act(srv, "interrupt", "--pane", a.pane, "--agent", "codex").returncode == 2
