"""tma serve's `window` and `event` (tma.runtime.fleet.serve.Conn over the transcript
room) on real files through the tests' synthetic store: frames that validate against
schemas/proto.schema.json in the golden vectors' key order, a 200-event window within
32 KiB, paging to the start, and the error a device branches on for each refusal."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers.schemas import _schema
from tma.core import proto
from tma.runtime.fleet.serve import Conn, transcript_answer
from tma.runtime.transcript import stores

jsonschema = pytest.importorskip("jsonschema")
SCHEMA = _schema("proto.schema.json")
VECTORS = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "proto" / "vectors"
SID = "7d2f0c55-aaaa-4bbb-8ccc-0123456789ab"
CWD = "/work/app"


def realistic(n: int) -> list[dict]:
    """Turns as an agent writes them: a prompt, some thinking-aloud text, tool calls with
    their results (long outputs), a closing answer."""
    out: list[dict] = [{"type": "meta", "session": SID, "cwd": CWD, "version": "2.1.332",
                        "model": "claude-sonnet-4-5", "ts": "2026-12-01T10:00:00.000Z"}]
    for i in range(n):
        ts = f"2026-12-01T10:{i % 60:02d}:00.000Z"
        out.append({"type": "user", "ts": ts,
                    "text": f"Please fix the failing test number {i} in tests/unit and explain why"})
        out.append({"type": "assistant", "ts": ts, "text": "I'll look at the test first. " * 4,
                    "calls": [{"name": "Bash", "id": f"toolu_{i:020d}",
                               "input": {"command": f"pytest -q tests/unit -k case_{i}",
                                         "description": "run the failing test"}}]})
        out.append({"type": "result", "ts": ts, "id": f"toolu_{i:020d}", "ok": i % 3 != 0,
                    "output": "F" * 40 + "\n" + "E   AssertionError: " + "x" * 3000})
        out.append({"type": "assistant", "ts": ts, "text": "The fixture was stale. " * 20})
        out.append({"type": "noise", "ts": ts})
    return out


def write(path: Path, recs: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")


def row(pane: str, agent: str = "claude", transcript: str = "", session: str = SID):
    opts = {"@agent_transcript": transcript} if transcript else {}
    return SimpleNamespace(agent=agent, pane=SimpleNamespace(pane_id=pane, options=opts,
                                                            current_path=CWD),
                           stamp=SimpleNamespace(session=session, state="working"))


class Device:
    """A Conn driven frame by frame, as serve's loop drives it, every answer checked."""

    def __init__(self, rows, env, scopes=("read",)) -> None:
        self.out: list[bytes] = []
        self.conn = Conn(host="h", version="0", scopes=scopes, device=None, interval_ms=2000,
                         rows=lambda _sel: (rows, "/tmp/sock", None), write=self.out.append,
                         ledger=None, fire=None, card=None, clock=lambda: 0, log=lambda _t: None,
                         transcripts=lambda r, req: transcript_answer(r, req, env))
        self.n = 0
        self.ask("hello", app="t", app_version="0", device="d")

    def ask(self, t: str, **body) -> dict:
        self.n += 1
        self.conn.line(json.dumps({"schema": 1, "id": str(self.n), "t": t, **body}).encode())
        line = self.out.pop()
        assert not self.out
        doc = json.loads(line)
        jsonschema.validate(doc, SCHEMA)
        assert proto.dumps(proto.parse_line(line, proto.RESPONSE)).encode() + b"\n" == line
        doc["_bytes"] = len(line)
        return doc


@pytest.fixture
def host(tmp_path):
    path = tmp_path / "home" / "t.jsonl"
    write(path, realistic(120))
    env = {"HOME": str(tmp_path / "home"), stores.ENV: "claude=tests.helpers.synthetic_store"}
    return Device([row("%1", transcript=str(path)), row("%2", agent="cursor")], env), path


def test_a_window_of_200_events_fits_32_kib_newest_first(host, tmp_path):
    d, _path = host
    w = d.ask("window", pane="%1")  # 200 asked: what fits the frame, newest first
    assert w["t"] == "window" and w["_bytes"] <= 32 * 1024
    assert 100 < len(w["events"]) < 200 and w["budget_truncated"] is True
    assert w["older"] == w["events"][-1]["cursor"]
    nxt = d.ask("window", pane="%1", before=w["older"])  # and the next page goes on there
    assert nxt["events"][0]["cursor"] not in {e["cursor"] for e in w["events"]}
    # 200 headers without previews (an agent's sidecar records) fit whole
    quiet = tmp_path / "home" / "quiet.jsonl"
    write(quiet, [{"type": "noise", "ts": "2026-12-01T10:00:00.000Z"}] * 300)
    d.conn._rows = lambda _sel: ([row("%3", transcript=str(quiet))], "/tmp/sock", None)
    w = d.ask("window", pane="%3")
    assert len(w["events"]) == 200 and w["budget_truncated"] is False
    assert w["_bytes"] <= 32 * 1024
    d.conn._rows = lambda _sel: ([row("%1", transcript=str(_path))], "/tmp/sock", None)
    w = d.ask("window", pane="%1")
    assert w["session"] == {"agent": "synthetic", "session_id": SID, "cwd": CWD,
                            "version": "2.1.332", "model": "claude-sonnet-4-5"}
    assert [e["kind"] for e in w["events"][:5]] == [
        "bookkeeping", "assistant_text", "tool_result", "tool_call", "assistant_text"]
    assert all(e["body"] is None for e in w["events"])
    assert w["older"] == w["events"][-1]["cursor"] and w["unknown"] == 0


def test_the_device_lowers_the_budget_and_the_host_clamps_it(host):
    d, _path = host
    w = d.ask("window", pane="%1", last=5000,
              budget={"header_bytes": 20, "read_bytes": 1 << 40, "frame_bytes": 8192})
    assert w["_bytes"] <= 8192 and w["budget_truncated"] is True and w["events"]
    assert all(len((e["preview"] or "").encode()) <= 20 for e in w["events"])
    w = d.ask("window", pane="%1", last=0)
    assert len(w["events"]) == 1  # clamped to 1..1000


def test_paging_with_older_reaches_the_start_and_every_event_once(host):
    d, _path = host
    seen, before = [], None
    while True:
        body = {"pane": "%1", "last": 97} | ({"before": before} if before else {})
        w = d.ask("window", **body)
        seen += [e["cursor"] for e in w["events"]]
        if w["older"] is None:
            break
        before = w["older"]
    assert len(seen) == len(set(seen)) == 1 + 120 * 6


def test_an_event_comes_with_its_body_in_the_vectors_key_order(host):
    d, _path = host
    w = d.ask("window", pane="%1", last=6)
    call = next(e for e in w["events"] if e["kind"] == "tool_call")
    ev = d.ask("event", pane="%1", cursor=call["cursor"])
    assert ev["body"]["kind"] == "json" and json.loads(ev["body"]["text"])["command"]
    assert {k: v for k, v in ev.items() if k not in ("id", "body", "_bytes")} == {
        k: v for k, v in call.items() if k != "body"} | {"schema": 1, "t": "event"}
    if not VECTORS.is_dir():
        pytest.skip("the golden vectors are not here")
    vec_w = json.loads((VECTORS / "window.json").read_text())
    assert [k for k in w if k != "_bytes"] == list(vec_w)
    order = {e["kind"]: list(e) for e in vec_w["events"]}
    for e in w["events"]:
        assert list(e) == order[e["kind"]], e["kind"]
    vec_e = {e["kind"]: list(e) for e in json.loads((VECTORS / "events.json").read_text())}
    assert [k for k in ev if k != "_bytes"] == vec_e["tool_call"]


def test_each_refusal_is_the_code_a_device_branches_on(host, tmp_path):
    d, path = host
    w = d.ask("window", pane="%1", last=3)
    assert d.ask("window", pane="%9")["code"] == "not-found"  # no agent pane there
    assert d.ask("event", pane="%9", cursor=w["older"])["code"] == "not-found"
    no = d.ask("window", pane="%2")  # an agent whose transcripts tma does not read
    assert no["code"] == "unsupported" and "Cursor CLI" in no["message"]
    assert d.ask("event", pane="%1", cursor="t1.1.2.3.4.0")["code"] == "cursor-invalid"
    assert d.ask("event", pane="%1", cursor="garbage")["code"] == "cursor-invalid"
    # the agent's file replaced (a new session at the same path): the old cursors are void
    write(tmp_path / "new.jsonl", realistic(2))
    (tmp_path / "new.jsonl").replace(path)
    assert d.ask("window", pane="%1", before=w["older"])["code"] == "cursor-invalid"
    assert d.ask("event", pane="%1", cursor=w["events"][0]["cursor"])["code"] == "cursor-invalid"
    assert d.ask("window", pane="%1")["t"] == "window"  # a fresh window from the end works
    path.unlink()
    gone = d.ask("window", pane="%1")
    assert gone["code"] == "unsupported" and "claude on %1" in gone["message"]


def test_a_connection_without_read_reads_no_transcript(tmp_path):
    d = Device([row("%1")], {"HOME": str(tmp_path)}, scopes=("act:answer",))
    assert d.ask("window", pane="%1")["code"] == "scope-denied"


def test_the_transcript_document_shares_the_protocols_event_header():
    doc = _schema("transcript.schema.json")
    for name in ("cursor", "body", "event_header", "session_meta"):
        assert doc["$defs"][name] == SCHEMA["$defs"][name], name
