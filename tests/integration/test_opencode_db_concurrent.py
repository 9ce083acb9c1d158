"""OpenCode's database read while a real process writes it, as OpenCode does.

A writer process (its own SQLite connection, WAL, as OpenCode keeps the database)
appends messages and tool-call parts and mutates each part pending -> running ->
completed, one transaction per change, as fast as it can; meanwhile the store pages the
session over its one held read-only connection. No read comes back "database is locked"
and no event is torn: every page is one snapshot, so a completed call always has its
whole output, a row is never seen half-mutated, and the pages stay in order.
"""

from __future__ import annotations

import subprocess
import sys
import time

from tests.helpers import recorded_transcripts as tx
from tma.runtime.transcript import opencode_db

APPENDS = 400

WRITER = r"""
import json, sqlite3, sys
path, session, appends = sys.argv[1], sys.argv[2], int(sys.argv[3])
conn = sqlite3.connect(path, timeout=5, isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
base = 1796590100000
def part(i, status):
    state = {"status": status, "input": {"command": f"echo {i}"}, "time": {"start": base + i}}
    if status == "completed":
        state.update(output="x" * (i % 97 + 1), metadata={"exit": 0}, time={"start": base + i, "end": base + i + 1})
    return json.dumps({"type": "tool", "tool": "bash", "callID": f"call_{i:05d}", "state": state})
for i in range(appends):
    mid, pid = f"msg_zz{i:06d}", f"prt_zz{i:06d}"  # after the session's own rows, in order
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?,?,?,?,?)",
                 (mid, session, base + i, base + i, json.dumps({"role": "assistant", "time": {"created": base + i}})))
    conn.execute("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?,?,?,?,?,?)",
                 (pid, mid, session, base + i, base + i, part(i, "pending")))
    conn.execute("COMMIT")
    for status in ("running", "completed"):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE part SET data = ?, time_updated = ? WHERE id = ?", (part(i, status), base + i, pid))
        conn.execute("COMMIT")
print("done", appends, flush=True)
"""


def check_page(evs, older) -> None:
    """One page is one snapshot: in order, and every call whole."""
    cursors = [c for c, _ in evs]
    assert len(set(cursors)) == len(cursors)
    for cursor, e in evs:
        assert e.kind != "unknown", (cursor, e.data)
        if e.kind == "tool_result" and e.data["call_id"].startswith("call_"):
            n = int(e.data["call_id"][5:])
            if e.data["status"] == "ok":
                assert e.data["bytes"] == n % 97 + 1, (cursor, e.data)
            else:
                assert (e.data["status"], e.data["bytes"]) == ("pending", 0)
    if older is not None:
        assert older == evs[-1][0]


def test_paging_while_a_process_appends_and_mutates_rows(tmp_path):
    path = tx.load_sql(tx.OPENCODE / "plain.sql", tmp_path / "opencode.db")
    db = opencode_db.OpenCodeDB(str(path))
    try:
        sid = db.sessions()[0]["id"]
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), sid, str(APPENDS)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pages = walks = 0
        seen_growth = set()
        deadline = time.monotonic() + 120
        while writer.poll() is None and time.monotonic() < deadline:
            # the newest page, then a walk back through a few older ones
            evs, older = db.page(sid, last=25)
            check_page(evs, older)
            pages += 1
            seen_growth.add(len(db.page(sid, last=1000)[0]))
            for _ in range(3):
                if older is None:
                    break
                evs, older = db.page(sid, before=older, last=25)
                check_page(evs, older)
                pages += 1
            walks += 1
        out, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
        assert out.strip() == f"done {APPENDS}"
        assert pages >= 20 and len(seen_growth) >= 5  # the reads did overlap the writes
        # at rest: every call appended is there, completed, once
        final = []
        before = None
        while True:
            evs, older = db.page(sid, before=before, last=100)
            check_page(evs, older)
            assert before is None or evs[0][0] != before
            final += evs
            if older is None or len(final) > 10 * APPENDS:
                break
            before = older
        results = [e for _, e in final if e.kind == "tool_result"]
        assert len(results) == APPENDS and {e.data["status"] for e in results} == {"ok"}
    finally:
        db.close()
