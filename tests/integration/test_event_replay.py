"""Replay hook payloads captured from the real agents (tests/fixtures/hooks/lab) through
`tma event` and check every stamp against the manifest's mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tma.core import bundled

HOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "lab"
LOGS = ["claude-2.1.197", "claude-2.1.332", "codex-0.171.0", "gemini-0.61.0", "qwen-0.24.4",
        "aider-0.86.2"]


def _events(name: str) -> list[tuple[str, str]]:
    out = []
    for line in (HOOKS / f"{name}.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["event"] == "notify":
            payload = rec["argv_extra"][-1] if rec["argv_extra"] else {}
        else:
            payload = rec.get("stdin") or {}
        out.append((rec["event"], json.dumps(payload)))
    return out


@pytest.mark.parametrize("name", LOGS)
def test_replay(srv, name):
    agent = name.split("-")[0]
    srv.config.write_text("[hooks]\nclaude_reply_lane = false\n")
    if agent == "codex":
        node, codex = srv.fake("node"), srv.fake("codex")
        pane = srv.new_pane(f"sh -c '{codex} 100000 & exec {node} 100000'")
    else:
        pane = srv.agent_pane("node" if agent in ("gemini", "qwen") else agent)
    # the bundled manifest, read in this process without the runtime loader's cache (which
    # would write under this process's HOME) and without the user's own manifests
    manifest = bundled.load(agent)
    expected = None
    session = ""
    seen = 0
    for kind, payload in _events(name):
        res = srv.tma("event", "--agent", agent, "--kind", kind, "--pane", pane, input=payload,
                      manifests=False, env={"TMA_HOOK_STRICT": "1"})
        assert (res.returncode, res.stdout, res.stderr) == (0, "", ""), kind
        doc = json.loads(payload) if payload else {}
        m = manifest.map_event(kind, payload)
        title_thread = kind == "notify" and session and doc.get("thread-id") not in (None, session)
        if m is not None and not title_thread:
            if m.lifecycle == "end":
                expected = None
            elif m.lifecycle == "start":
                expected = ("idle", "")
                session = doc.get("session_id") or session
            elif (m.state, m.detail) == ("blocked", "permission") and expected is not None \
                    and expected[0] == "blocked" and expected[1] not in ("", "permission"):
                # the same pending dialog reported again (claude's generic permission_prompt
                # some seconds after a plan or question): its detail stands (core.intake)
                session = session or doc.get("session_id", "")
            else:
                expected = (m.state, m.detail)
                session = session or doc.get("session_id", "")
        o = srv.options(pane)
        got = (o.get("@agent_state", ""), o.get("@agent_detail", "")) if o.get(
            "@agent_state") else None
        assert got == expected, (kind, payload[:200])
        if expected is not None:
            assert o["@agent_source"] == "hook"
            seen += 1
    assert seen >= 5
    if agent == "aider":  # its one hook is the notifications command: no session end
        assert expected == ("idle", "")
    else:
        assert expected is None  # every log ends with SessionEnd: the pane is deregistered
