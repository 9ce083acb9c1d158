"""`tma transcript` and `tma last` on a private tmux server: a fake agent pane whose hooks
named its transcript (the real `tma event` path, with a payload the pinned agent sent),
read through the tests' synthetic store (TMA_TRANSCRIPT_STORES), as the commands run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.schemas import _schema

jsonschema = pytest.importorskip("jsonschema")

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
    # Copilot names it camelCase, and only as its turn ends (agentStop)
    pane = srv.agent_pane("copilot")
    path = srv.root / "events.jsonl"
    path.write_text("")
    payload = dict(_lab("copilot-1.0.102", "agentStop"), transcriptPath=str(path))
    _event(srv, pane, "copilot", "agentStop", payload)
    assert srv.option(pane, "@agent_transcript") == str(path)
    assert srv.option(pane, "@agent_session") == payload["sessionId"]


REPO = Path(__file__).resolve().parents[2]
STORE = {"TMA_TRANSCRIPT_STORES": "claude=tests.helpers.synthetic_store", "PYTHONPATH": str(REPO)}
SCHEMA = _schema("transcript.schema.json")
SID = "5e6f7a8b-0000-4111-8222-933344445555"


def _talk(turns: int) -> list[dict]:
    out: list[dict] = [{"type": "meta", "session": SID, "cwd": "/w", "version": "2.1.332",
                        "model": "m", "ts": "2026-12-01T09:00:00.000Z"}]
    for i in range(turns):
        ts = f"2026-12-01T09:{i:02d}:00.000Z"
        out += [{"type": "user", "text": f"question {i}", "ts": ts},
                {"type": "assistant", "text": f"looking at {i}", "ts": ts,
                 "calls": [{"name": "Bash", "id": f"c{i}", "input": {"command": f"ls {i}"}}]},
                {"type": "result", "id": f"c{i}", "ok": True, "output": "a.py\nb.py", "ts": ts},
                {"type": "assistant", "text": f"answer {i}\n\nsecond paragraph \x1b[31m{i}",
                 "ts": ts}]
    return out


def _write(path: Path, recs: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def _claude(srv, path: Path | None, *, session: str = SID) -> str:
    pane = srv.agent_pane("claude")
    payload = {"session_id": session, "hook_event_name": "UserPromptSubmit"}
    if path is not None:
        payload["transcript_path"] = str(path)
    _event(srv, pane, "claude", "UserPromptSubmit", payload)
    return pane


def _tma(srv, *args: str, **kw):
    return srv.tma(*args, manifests=False, env=STORE, **kw)


def _doc(res) -> dict:
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc


def test_transcript_pages_a_panes_file_newest_first(srv):
    path = _write(srv.root / "t.jsonl", _talk(30))
    pane = _claude(srv, path)
    doc = _doc(_tma(srv, "transcript", "--pane", pane, "--json", "--last", "5"))
    assert (doc["pane"], doc["host"], doc["agent"]) == (pane, None, "claude")
    assert doc["session"]["session_id"] == SID
    assert [e["kind"] for e in doc["events"]] == ["assistant_text", "tool_result", "tool_call",
                                                  "assistant_text", "user_message"]
    assert doc["events"][0]["body"]["text"].startswith("answer 29\n\nsecond paragraph")
    heads = _doc(_tma(srv, "transcript", "--pane", pane, "--json", "--last", "5", "--headers"))
    assert [e["body"] for e in heads["events"]] == [None] * 5
    assert [e["cursor"] for e in heads["events"]] == [e["cursor"] for e in doc["events"]]
    older = _doc(_tma(srv, "transcript", "--pane", pane, "--json", "--before", doc["older"],
                      "--last", "4"))
    assert older["events"][0]["body"]["text"] == "answer 28\n\nsecond paragraph \x1b[31m28"
    # for a person: one line per event, newest first, nothing that drives the terminal
    res = _tma(srv, "transcript", "--pane", pane, "--last", "2")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith(doc["events"][0]["cursor"] + "  2026-12-01T09:29:00.000Z  "
                                                             "assistant_text  answer 29")
    assert "tool_result" in lines[1] and "ok c29" in lines[1]
    assert lines[2] == f"(older: --before {doc['events'][1]['cursor']})"
    assert "\x1b" not in res.stdout
    one = _tma(srv, "transcript", "--pane", pane, "--event", doc["events"][0]["cursor"])
    assert (one.returncode, one.stdout) == (0, "answer 29\n\nsecond paragraph [31m29\n")
    ev = _doc(_tma(srv, "transcript", "--pane", pane, "--event", doc["events"][2]["cursor"],
                   "--json"))
    assert ev["event"]["name"] == "Bash" and json.loads(ev["event"]["body"]["text"]) == {
        "command": "ls 29"}


def test_transcript_found_by_session_and_directory_without_a_hook_path(srv):
    pane = _claude(srv, None)
    cwd = srv.display(pane, "#{pane_current_path}")
    _write(srv.home / ".synthetic" / cwd.replace("/", "-") / f"{SID}.jsonl", _talk(2))
    doc = _doc(_tma(srv, "transcript", "--pane", pane, "--json", "--last", "1"))
    assert doc["events"][0]["body"]["text"].startswith("answer 1")
    # another session's file in the same directory is never taken for it
    other = _claude(srv, None, session="another-session")
    res = _tma(srv, "transcript", "--pane", other)
    assert res.returncode == 1 and "no claude transcript for session another-session" in (
        res.stderr), res.stderr


def test_last_prints_the_agents_last_answer(srv):
    pane = _claude(srv, _write(srv.root / "t.jsonl", _talk(3)))
    res = _tma(srv, "last", "--pane", pane)
    assert (res.returncode, res.stdout) == (
        0, "looking at 2\n\nanswer 2\n\nsecond paragraph [31m2\n"), res.stderr
    two = _tma(srv, "last", "--pane", pane, "--turns", "2")
    assert two.stdout.startswith("looking at 1\n\nanswer 1\n") and two.stdout.endswith(
        "answer 2\n\nsecond paragraph [31m2\n")
    # a new prompt the agent has not answered yet: the answer before it
    with open(srv.root / "t.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "user", "text": "and now?"}) + "\n")
    assert _tma(srv, "last", "--pane", pane).stdout.startswith("looking at 2\n")


def test_nothing_to_show_no_pane_and_a_refused_cursor_are_their_exits(srv):
    path = _write(srv.root / "t.jsonl", _talk(3))
    pane = _claude(srv, path)
    shell = srv.shell_pane()
    res = _tma(srv, "transcript", "--pane", "%999")
    assert (res.returncode, res.stderr) == (3, "tma: no pane %999\n")
    assert _tma(srv, "last", "--pane", "%999").returncode == 3
    res = _tma(srv, "transcript", "--pane", shell)
    assert res.returncode == 1 and "runs no agent" in res.stderr, res.stderr
    # no reader for this agent (a store module this tma does not have)
    res = srv.tma("transcript", "--pane", pane, manifests=False,
                  env={"TMA_TRANSCRIPT_STORES": "claude=tests_tx_no_such_store"})
    assert res.returncode == 1 and "no transcript reader for claude" in res.stderr, res.stderr
    cursor = _doc(_tma(srv, "transcript", "--pane", pane, "--json"))["events"][0]["cursor"]
    with open(path, "r+b") as fh:
        fh.truncate(50)
    res = _tma(srv, "transcript", "--pane", pane, "--event", cursor)
    assert res.returncode == 4 and "no longer addresses" in res.stderr, res.stderr
    res = _tma(srv, "transcript", "--pane", pane, "--before", cursor)
    assert res.returncode == 4
    path.write_text("")
    res = _tma(srv, "last", "--pane", pane)
    assert res.returncode == 1 and "no answer" in res.stderr, res.stderr
    for bad in (["--last", "0"], ["--last", "1001"], ["--event", "c", "--before", "c"],
                ["--event", "c", "--headers"], ["--timeout", "3"]):
        assert _tma(srv, "transcript", "--pane", pane, *bad).returncode == 2, bad
    assert _tma(srv, "last", "--pane", pane, "--turns", "0").returncode == 2
