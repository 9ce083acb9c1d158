"""`tma transcript` and `tma last` on a private tmux server: a fake agent pane whose hooks
named its transcript (the real `tma event` path, with a payload the pinned agent sent),
read through the tests' synthetic store (TMA_TRANSCRIPT_STORES), as the commands run.
"""

from __future__ import annotations

import json
from pathlib import Path

LAB = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "lab"


def _lab(name: str, event: str) -> dict:
    for line in (LAB / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        if doc.get("event") == event:
            return doc["stdin"]
    raise AssertionError(f"no {event} in {name}")


def _event(srv, pane: str, agent: str, kind: str, payload: dict) -> None:
    res = srv.tma("event", "--agent", agent, "--kind", kind, "--pane", pane,
                  input=json.dumps(payload), manifests=False, env={"TMA_HOOK_STRICT": "1"})
    assert res.returncode == 0, res.stderr


def test_every_hooked_agent_names_its_transcript_on_the_pane(srv):
    for agent, lab in (("claude", "claude-2.1.332"), ("gemini", "gemini-0.61.0")):
        pane = srv.agent_pane(agent)
        path = srv.root / f"{agent}.jsonl"
        path.write_text("")
        payload = dict(_lab(lab, "SessionStart"), transcript_path=str(path))
        _event(srv, pane, agent, "SessionStart", payload)
        assert srv.option(pane, "@agent_transcript") == str(path)
        assert srv.option(pane, "@agent_session") == payload["session_id"]
