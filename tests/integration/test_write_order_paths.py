"""`@agent_stamped_at` is the last pane option of every write block the real producers send
(the contract), recorded off the wire of a private tmux server: the hook intake (a claim
with its event name and companions, the same claim again, a turn end, OpenCode's
registration, permission, reply and question) and the poll cycle (a publish from the
screen, the same screen again, a change). Each block still lands: the stamps read back as
written. (`tma debug stamp` and the daemon render through the same `tma.tmux.write`,
whose every form tests/unit/test_write_order.py covers.)"""

from __future__ import annotations

import json
import re

from tma.runtime import config, cycle, hook, manifests
from tma.tmux.adapter import PendingSource, Server

PANE_SET = re.compile(r"set-option -p ((?:-F |-u )*)-t (%\d+) (@\w+)")


class Recording(Server):
    """The tma adapter, keeping every line it sends through `source-file -`."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.lines: list[str] = []

    def begin_source(self, lines: list[str]) -> PendingSource:  # source() sends through it
        self.lines.extend(lines)
        return super().begin_source(lines)


def recorder(srv) -> Recording:
    return Recording(srv.tmux_bin, socket_name=srv.name)


def stamping(line: str) -> set[str]:
    """The panes whose @agent_stamped_at the line sets (a removal unsets it: not a write)."""
    return {pane for flags, pane, key in PANE_SET.findall(line)
            if key == "@agent_stamped_at" and "-u" not in flags}


def assert_stamped_last(lines: list[str]) -> int:
    """Every line that stamps a pane sets nothing of that pane after stamped_at; the
    number of such lines."""
    blocks = [line for line in lines if stamping(line)]
    for line in blocks:
        for pane in stamping(line):
            keys = [k for _f, p, k in PANE_SET.findall(line) if p == pane]
            assert keys[-1] == "@agent_stamped_at", f"{pane}: set after stamped_at: {keys}"
    return len(blocks)


def fire(server, srv, agent: str, kind: str, pane: str, payload: dict, now: int) -> None:
    table = manifests.hook_tables(None, [])[agent]
    cfg = config.Config(path=None)
    cfg.claude_reply_lane = False  # the PermissionRequest hook does not hold for a verdict
    hook.handle(server, cfg, table, kind, pane, json.dumps(payload), now)


def test_the_hook_intake_writes_stamped_at_last(srv):
    rec = recorder(srv)
    claude = srv.agent_pane("claude")
    base = 1_800_000_000_000
    fire(rec, srv, "claude", "UserPromptSubmit", claude,
         {"session_id": "s-1", "model": "opus"}, base)
    fire(rec, srv, "claude", "PermissionRequest", claude,
         {"session_id": "s-1", "tool_name": "Bash", "tool_use_id": "toolu_1",
          "tool_input": {"command": "rm -rf build"}}, base + 1000)
    fire(rec, srv, "claude", "PermissionRequest", claude,  # the same claim again
         {"session_id": "s-1", "tool_name": "Bash", "tool_use_id": "toolu_1",
          "tool_input": {"command": "rm -rf build"}}, base + 2000)
    fire(rec, srv, "claude", "Stop", claude, {"session_id": "s-1"}, base + 3000)
    o = srv.options(claude)
    assert (o["@agent_state"], o["@tma_hook_event"], o["@agent_stamped_at"]) == (
        "idle", "Stop", str(base + 3000))

    oc = srv.agent_pane("opencode")
    fire(rec, srv, "opencode", "session-start", oc,
         {"session_id": "ses_1", "api_endpoint": "http://127.0.0.1:1"}, base)
    fire(rec, srv, "opencode", "permission-required", oc,
         {"session_id": "ses_1", "permission": "bash", "request_id": "per_1"}, base + 1000)
    fire(rec, srv, "opencode", "permission-replied", oc,
         {"session_id": "ses_1", "request_id": "per_1", "reply": "once"}, base + 2000)
    fire(rec, srv, "opencode", "question-required", oc,
         {"session_id": "ses_1", "question_id": "que_1", "header": "Colour"}, base + 3000)
    o = srv.options(oc)
    assert (o["@agent_detail"], o["@agent_question_request"]) == ("question", "que_1")
    assert assert_stamped_last(rec.lines) >= 8


def test_the_poll_cycle_writes_stamped_at_last(srv):
    rec = recorder(srv)
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-BLOCKED")
    c = cycle.Cycle(rec, config.Config(path=None), str(srv.manifests))
    c.run(everything=True)  # a publish
    assert srv.option(pane, "@agent_state") == "blocked"
    c.fresh().run(everything=True)  # the same screen again: the short write or a refresh
    srv.draw(pane, "FAKE-WORKING")
    c.fresh().run(everything=True)
    assert srv.option(pane, "@agent_state") == "working"
    assert assert_stamped_last(rec.lines) == 3
