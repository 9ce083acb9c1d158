"""`tma card --pane` on a private tmux server: the card the cycle's verdict earns.

A fake agent (a process named like the agent) is blocked through the real hook path
(`tma event` with a payload the pinned agent really sent, from the lab fixtures), or
shows a real captured permission dialog with no hook at all (the screen lane); an
OpenCode question is fetched from a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.helpers.keyrecorder import KeyRecorder
from tma.core import fixture, proto

LAB = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "lab"
CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"


def _lab(name: str, event: str) -> dict:
    for line in (LAB / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        if doc.get("event") == event:
            return doc["stdin"]
    raise AssertionError(f"no {event} in {name}")


def _card(srv, pane: str) -> dict:
    res = srv.tma("card", "--pane", pane, "--json", manifests=False, check=True)
    doc = json.loads(res.stdout)
    proto.parse_line(json.dumps(doc), proto.RESPONSE)  # a well-formed protocol frame
    return doc


def _event(srv, pane: str, agent: str, kind: str, payload: dict) -> None:
    res = srv.tma("event", "--agent", agent, "--kind", kind, "--pane", pane,
                  input=json.dumps(payload), manifests=False, env={"TMA_HOOK_STRICT": "1"})
    assert res.returncode == 0, res.stderr


def test_a_pane_that_asks_nothing_has_no_card(srv):
    pane = srv.agent_pane("claude")
    _event(srv, pane, "claude", "UserPromptSubmit", {"session_id": "s1"})
    assert _card(srv, pane) == {"schema": 1, "id": "0", "t": "card", "card": "none"}
    res = srv.tma("card", "--pane", pane, manifests=False)
    assert (res.returncode, res.stdout) == (0, f"{pane}: not blocked, nothing asked\n")
    shell = srv.shell_pane()
    assert _card(srv, shell)["card"] == "none"  # no agent at all


def test_no_such_pane_exits_3(srv):
    srv.agent_pane("claude")
    res = srv.tma("card", "--pane", "%999", manifests=False)
    assert (res.returncode, res.stderr) == (3, "tma: no pane %999\n")
    assert srv.tma("card", manifests=False).returncode == 2  # --pane is required


def test_a_claude_permission_request_is_a_hook_card_with_the_call_exactly(srv):
    srv.config.write_text("[hooks]\nclaude_reply_lane = false\n")
    pane = srv.agent_pane("claude")
    payload = _lab("claude-2.1.332_dialogs-run", "PermissionRequest")
    _event(srv, pane, "claude", "PermissionRequest", payload)
    doc = _card(srv, pane)
    assert (doc["card"], doc["pane"], doc["agent"], doc["lane"], doc["extraction"]) == (
        "permission", pane, "claude", "hook", "exact")
    assert doc["pending_call"] == {"tool": "Bash", "input": payload["tool_input"],
                                   "call_id": payload["prompt_id"]}
    assert [o["kind"] for o in doc["options"]] == ["allow-once", "reject-once"]
    assert doc["binder"]["expect_episode_ms"] > 0
    row = srv.row(pane, manifests=False)
    assert (row["pending_tool"], row["pending_summary"]) == (
        "Bash", "Bash: echo hi > mockllm-hi.txt")
    text = srv.tma("card", "--pane", pane, manifests=False, check=True).stdout
    assert "tool: Bash" in text and "echo hi > mockllm-hi.txt" in text
    # the call is answered: the card and the row let go of it
    _event(srv, pane, "claude", "PostToolUse", {"session_id": payload["session_id"]})
    assert _card(srv, pane)["card"] == "none"
    assert srv.option(pane, "@agent_pending_input") == ""
    row = srv.row(pane, manifests=False)
    assert (row["pending_tool"], row["pending_summary"]) == (None, None)


def test_a_plan_approval_is_informational(srv):
    srv.config.write_text("[hooks]\nclaude_reply_lane = false\n")
    pane = srv.agent_pane("claude")
    _event(srv, pane, "claude", "PermissionRequest",
           {"session_id": "s1", "tool_name": "ExitPlanMode", "tool_input": {"plan": "1. do it"}})
    doc = _card(srv, pane)
    assert (doc["card"], doc["detail"]) == ("informational", "plan")
    assert list(doc) == ["schema", "id", "t", "card", "detail", "headline"]
    assert "1. do it" in doc["headline"]


class _Questions:
    """A loopback stand-in for OpenCode's server: GET /question answers `body` after
    `delay` seconds."""

    def __init__(self, body, delay: float = 0.0) -> None:
        outer = self
        self.body, self.delay, self.paths = body, delay, []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                outer.paths.append(self.path)
                time.sleep(outer.delay)
                raw = json.dumps(outer.body).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def opencode_question():
    asked = _lab("opencode-1.18.33_question-run", "question.asked")
    servers = []

    def make(delay: float = 0.0) -> tuple[_Questions, dict]:
        server = _Questions([asked], delay)
        servers.append(server)
        return server, asked

    yield make
    for s in servers:
        s.close()


def _ask(srv, pane: str, asked: dict, url: str) -> None:
    _event(srv, pane, "opencode", "question-required",
           {"session_id": asked["sessionID"], "question_id": asked["id"], "api_endpoint": url})


def test_an_opencode_question_is_fetched_from_its_server(srv, opencode_question):
    server, asked = opencode_question()
    pane = srv.agent_pane("opencode")
    _ask(srv, pane, asked, server.url)
    doc = _card(srv, pane)
    assert server.paths == ["/question"]
    assert (doc["card"], doc["request_id"]) == ("question", asked["id"])
    q = asked["questions"][0]
    assert doc["questions"] == [{"question": q["question"], "header": q["header"],
                                 "options": q["options"], "multiple": False, "custom": True}]
    assert doc["binder"]["expect_permission_request"] == asked["id"]


def test_a_question_server_slower_than_750_ms_leaves_an_informational_card(srv,
                                                                          opencode_question):
    server, asked = opencode_question(delay=3.0)
    pane = srv.agent_pane("opencode")
    _ask(srv, pane, asked, server.url)
    t0 = time.monotonic()
    doc = _card(srv, pane)
    took = time.monotonic() - t0
    assert (doc["card"], doc["detail"]) == ("informational", "question")
    assert took < 2.5, took  # the fetch gave up at 750 ms, not at the server's 3 s


@pytest.mark.parametrize("capture", ["claude-2.1.332_blocked.txt", "codex-0.171.0_blocked.txt"])
def test_a_dialog_no_hook_named_is_read_off_the_screen(srv, capture):
    """A hookless agent showing a real captured permission dialog: the card is the screen
    lane, read by the bundled manifest's [dialog] rules; ls --json names the call too."""
    cap = fixture.parse((CAPTURES / capture).read_text(encoding="utf-8"))
    pane = KeyRecorder.start(srv, cap.agent, cap).pane
    doc = _card(srv, pane)
    assert (doc["card"], doc["lane"], doc["extraction"]) == ("permission", "screen", "exact"), doc
    assert doc["pending_call"] == {"tool": "Bash", "input": {"command": "echo hi > mockllm-hi.txt"},
                                   "call_id": ""}
    assert doc["options"][0]["kind"] == "allow-once" and doc["options"][0]["option_id"] == "1"
    row = srv.row(pane, manifests=False)
    assert (row["state"], row["detail"]) == ("blocked", "permission")
    assert (row["pending_tool"], row["pending_summary"]) == (
        "Bash", "Bash: echo hi > mockllm-hi.txt")
    hooked = srv.agent_pane(cap.agent)  # a pane no dialog is drawn on asks nothing
    assert srv.row(hooked, manifests=False)["pending_tool"] is None
