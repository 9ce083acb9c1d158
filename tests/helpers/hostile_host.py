"""A compromised fleet host: a real process that speaks the protocol on its stdio, as a
host's `--via` argv, and says whatever its scenario tells it to.

    python -m tests.helpers.hostile_host SCENARIO.json

The scenario (JSON) keys, all optional:
- `hello`: keys merged into the hello answer (host, tma_version, scopes);
- `rows`: the snapshot's rows, each merged over a plain blocked claude row; `count` N
  repeats the last row N times with panes %0..%N-1 (a legal flood);
- `stderr`: text written to stderr at start (the transport's own words);
- `exit_after_stderr`: exit with this code right after writing stderr (a broken host);
- `card`: the card answer's keys (pane, options, ...); `error`: answer every request but
  hello and snapshot with this error frame's message;
- `stream`: after `subscribe`, send a snapshot this often (seconds), forever;
  `flood` (bool): re-send the big snapshot as fast as the pipe takes it;
  `new_episode` (bool): each streamed snapshot gives row 0 a new episode.
Requests are logged (one JSON line each) to the scenario's `log` path when given.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

BASE_ROW = {"pane": "%1", "agent": "claude", "state": "blocked", "detail": "permission",
            "since": 1, "since_ms": 1000, "episode_ms": 1000, "locator": "s:1.0",
            "attention": False, "done": False, "session": None, "transcript": None,
            "permission_request": None, "stamped_at_ms": None, "context": None,
            "context_at_ms": None, "muted": False, "tokens": None, "quota": None,
            "cost_usd": None, "repo": None, "branch": None, "worktree": None,
            "pending_tool": None, "pending_call": None, "pending_summary": None,
            "server": "/tmp/tmux-0/default", "host": "hostile"}


def rows(scenario: dict, episode: int = 0) -> list[dict]:
    out = [{**BASE_ROW, **r} for r in scenario.get("rows", [{}])]
    count = scenario.get("count")
    if count:
        last = out[-1]
        out = out[:-1] + [{**last, "pane": f"%{i}"} for i in range(count)]
    if episode:
        out[0] = {**out[0], "episode_ms": out[0]["episode_ms"] + episode,
                  "since_ms": out[0]["since_ms"] + episode}
    return out


def frame(t: str, rid: str, **keys) -> bytes:
    return (json.dumps({"schema": 1, "id": rid, "t": t, **keys}, ensure_ascii=False)
            + "\n").encode()


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as fh:
        sc = json.load(fh)
    out = sys.stdout.buffer
    lock = threading.Lock()

    def send(data: bytes) -> None:
        with lock:
            try:
                out.write(data)
                out.flush()
            except BrokenPipeError:
                os._exit(0)

    if sc.get("stderr"):
        sys.stderr.write(sc["stderr"])
        sys.stderr.flush()
        if "exit_after_stderr" in sc:
            return int(sc["exit_after_stderr"])
    log = open(sc["log"], "a", encoding="utf-8") if sc.get("log") else None  # noqa: SIM115
    for raw in sys.stdin.buffer:
        req = json.loads(raw)
        if log is not None:
            log.write(json.dumps(req) + "\n")
            log.flush()
        rid, t = req["id"], req["t"]
        if t == "hello":
            send(frame("hello", rid, **{"host": "hostile", "tma_version": "0.0",
                                        "reconcile_interval_ms": 1000,
                                        "scopes": ["read", "act:answer"],
                                        **sc.get("hello", {})}))
        elif t == "snapshot":
            send(frame("snapshot", rid, agents=rows(sc)))
        elif sc.get("error"):
            send(frame("error", rid, code="internal", message=sc["error"]))
        elif t == "subscribe":
            send(frame("ack", rid))
            if sc.get("stream") is not None or sc.get("flood"):
                threading.Thread(target=_stream, args=(sc, rid, send), daemon=True).start()
        elif t == "receipts":
            send(frame("receipts", rid, receipts=[]))
        elif t == "card":
            card = {"card": "permission", "pane": req["pane"], "agent": "claude",
                    "lane": "screen", "options": [], "extraction": "exact",
                    "pending_call": None, "binder": {"expect_episode_ms": 1000}}
            send(frame("card", rid, **{**card, **sc.get("card", {})}))
        else:
            send(frame("error", rid, code="unsupported", message="no"))
    return 0


def _stream(sc: dict, rid: str, send) -> None:
    episode = 0
    big = frame("snapshot", rid, agents=rows(sc)) if sc.get("flood") else b""
    while True:
        if big:
            send(big)
            continue
        time.sleep(sc["stream"])
        episode += 1
        send(frame("snapshot", rid, agents=rows(sc, episode if sc.get("new_episode")
                                                 else 0)))


if __name__ == "__main__":
    sys.exit(main())
