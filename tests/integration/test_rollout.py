"""The Codex rollout tail: the poll cycle stamps the gauge from the file codex named."""

from __future__ import annotations

import json

from tma.runtime import cycle, rollout

LINES = [
    {"type": "turn_context", "payload": {"model": "gpt-5-codex"}},
    {"type": "event_msg", "payload": {"type": "token_count", "info": {
        "total_token_usage": {"total_tokens": 136000}, "model_context_window": 272000}}},
]


def test_rollout_tail_stamps_context_and_model(srv):
    rollout = srv.root / "rollout-abc.jsonl"
    rollout.write_text("".join(json.dumps(x) + "\n" for x in LINES))
    node, codex = srv.fake("node"), srv.fake("codex")
    pane = srv.new_pane(f"sh -c '{codex} 100000 & exec {node} 100000'")
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "node")
    payload = json.dumps({"session_id": "abc", "transcript_path": str(rollout),
                          "model": "gpt-5-codex"})
    res = srv.tma("event", "--agent", "codex", "--kind", "SessionStart", "--pane", pane,
                  input=payload, manifests=False, env={"TMA_HOOK_STRICT": "1"})
    assert res.returncode == 0 and res.stdout == ""
    assert srv.option(pane, "@agent_transcript") == str(rollout)
    srv.next_second()
    row = srv.row(pane, manifests=False)
    assert row["agent"] == "codex" and row["context"] == 50 and row["model"] == "gpt-5-codex"
    assert row["tokens"] is None  # codex's hybrid count is not stamped
    at = srv.option(pane, "@agent_context_at")
    srv.next_second()
    srv.ls(manifests=False)  # unchanged file: no new reading
    assert srv.option(pane, "@agent_context_at") == at


def test_the_cycle_tails_the_rollout_format_only():
    assert cycle.ROLLOUT_FORMAT == rollout.FORMAT
