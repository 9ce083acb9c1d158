#!/usr/bin/env python3
"""Benchmark reading a transcript (run by hand; results go to bench/RESULTS.md).

  python bench/bench_transcript.py [--size-mb 200] [--runs 21]

1. A generated transcript of --size-mb of realistic records (prompts, text, tool calls
   with their inputs, long tool results, sidecar records: the tests' synthetic store,
   tests/helpers/synthetic_store.py, whose records stand in for an agent's) is paged from
   its end: the newest page of 200 events, read cold (no page of it kept: each run a
   fresh reader) and warm (the same request again: the one `stat` a quiet file costs),
   with the bytes each read, and the window frame it becomes (tma.runtime.transcript).
   The file is in the OS page cache, as a transcript an agent is writing is.
2. `window` over `tma serve --stdio` on a private tmux server, for a fake `claude` pane
   whose hook named that file: the frame's bytes and events for `last` 200 (the realistic
   records, then sidecar records alone, whose 200 headers fit whole), and the request's
   round trip (serve runs a cycle to find the pane, then reads the page).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--size-mb", "3", "--runs", "2"]]

ROOT = Path(__file__).resolve().parents[1]
STORE = "tests.helpers.synthetic_store"


def turn(i: int) -> list[dict]:
    ts = f"2026-12-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
    call = f"toolu_01{i:022d}"
    return [
        {"type": "user", "ts": ts, "text": f"Turn {i}: the test in tests/unit/test_case_{i % 97}"
                                           ".py fails since the last refactor; fix it and say why."},
        {"type": "noise", "ts": ts}, {"type": "noise", "ts": ts},
        {"type": "assistant", "ts": ts,
         "text": "Let me look at the failing test and the fixture it uses first. " * 3,
         "calls": [{"name": "Bash", "id": call,
                    "input": {"command": f"python -m pytest -q tests/unit/test_case_{i % 97}.py",
                              "description": "Run the failing test"}}]},
        {"type": "result", "ts": ts, "id": call, "ok": i % 4 != 0,
         "output": ("tests/unit/test_case.py::test_x FAILED\n" + "E   AssertionError: "
                    + "expected value " * 150)},
        {"type": "assistant", "ts": ts,
         "text": "The fixture was built before the refactor renamed its field; " * 12},
        {"type": "noise", "ts": ts},
    ]


def generate(path: Path, size: int) -> int:
    """About `size` bytes of turns; the number of records written."""
    head = {"type": "meta", "session": "bench-session", "cwd": "/work/app",
            "version": "2.1.332", "model": "claude-sonnet-4-5"}
    block = "".join(json.dumps(r) + "\n" for i in range(400) for r in turn(i)).encode()
    per = 400 * len(turn(0))
    n = 1
    with open(path, "wb") as fh:
        fh.write((json.dumps(head) + "\n").encode())
        written = 0
        while written < size:
            fh.write(block)
            written += len(block)
            n += per
        fh.write(b'{"type": "assistant", "text": "a line the agent is still wri')
    return n


def ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples):.2f} ms, min {min(samples):.2f} ms"


def bench_page(path: Path, runs: int) -> None:
    sys.path[:0] = [str(ROOT), str(ROOT / "src")]
    from tests.helpers import synthetic_store
    from tma.core import proto
    from tma.core.transcript.window import Limits
    from tma.runtime.transcript import locate, page, read

    cold, warm, frame_ms, read_bytes = [], [], [], []
    for _ in range(runs):
        page._pages.clear()
        page._heads.clear()
        t0 = time.perf_counter()
        pg = page.read_page(str(path), synthetic_store, before=None, limits=Limits())
        cold.append((time.perf_counter() - t0) * 1000)
        read_bytes.append(pg.read)
        t0 = time.perf_counter()
        again = page.read_page(str(path), synthetic_store, before=None, limits=Limits())
        warm.append((time.perf_counter() - t0) * 1000)
        assert again is pg
    env = {"HOME": str(path.parent), "TMA_TRANSCRIPT_STORES": f"claude={STORE}"}
    t = locate.Target("%1", "claude", "bench-session", "/work/app", str(path))
    for _ in range(runs):
        page._pages.clear()
        page._heads.clear()
        t0 = time.perf_counter()
        w = read.window(t, env, rid="7")
        frame_ms.append((time.perf_counter() - t0) * 1000)
    line = proto.encode(w)
    print(f"file: {path.stat().st_size / 1e6:.0f} MB")
    print(f"newest page, cold: {ms(cold)}; {len(pg.entries)} events, read "
          f"{max(read_bytes)} bytes (at most {1 << 20})")
    print(f"newest page, quiet file (one stat): {ms(warm)}")
    print(f"window frame, cold (page + headers + fit): {ms(frame_ms)}; {len(w.events)} events "
          f"in {len(line)} bytes, budget_truncated={w.budget_truncated}")


def bench_serve(path: Path, work: Path, runs: int) -> None:
    name = f"tma-bench-tx-{os.getpid()}"
    env = dict(os.environ, HOME=str(work), XDG_CACHE_HOME=str(work / "cache"),
               XDG_CONFIG_HOME=str(work / "cfg"), XDG_RUNTIME_DIR=str(work / "run"),
               TMA_TRANSCRIPT_STORES=f"claude={STORE}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    (work / "run").mkdir(mode=0o700)
    env.pop("TMUX", None)
    env.pop("TMUX_PANE", None)
    claude = work / "claude"
    claude.symlink_to(shutil.which("sleep") or "/bin/sleep")
    tma = [sys.executable, "-m", "tma", "--socket-name", name]

    def tmux(*a: str) -> str:
        return subprocess.run(["tmux", "-u", "-L", name, "-f", "/dev/null", *a], env=env,
                              check=True, capture_output=True, text=True).stdout.strip()

    quiet = work / "quiet.jsonl"
    quiet.write_text("".join(json.dumps({"type": "noise", "ts": "2026-12-01T10:00:00.000Z"})
                             + "\n" for _ in range(400)))
    serve = None
    try:
        tmux("new-session", "-d", "-s", "b", "-x", "100", "-y", "30", f"exec {claude} 100000")
        panes = [tmux("display-message", "-p", "#{pane_id}")]
        panes.append(tmux("new-window", "-d", "-P", "-F", "#{pane_id}", f"exec {claude} 100000"))
        for pane, file in zip(panes, (path, quiet), strict=True):
            res = subprocess.run(tma + ["event", "--agent", "claude", "--kind",
                                        "UserPromptSubmit", "--pane", pane], env=env,
                                 input=json.dumps({"session_id": f"s{pane[1:]}",
                                                   "transcript_path": str(file)}),
                                 text=True, capture_output=True)
            assert res.returncode == 0, res.stderr
        serve = subprocess.Popen(tma + ["serve", "--stdio"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        buf = b""

        def ask(doc: dict) -> bytes:
            nonlocal buf
            assert serve is not None and serve.stdin and serve.stdout
            serve.stdin.write(json.dumps(doc).encode() + b"\n")
            serve.stdin.flush()
            fd = serve.stdout.fileno()
            while b"\n" not in buf:
                ready, _, _ = select.select([fd], [], [], 30)
                assert ready, "serve did not answer"
                chunk = os.read(fd, 1 << 20)
                assert chunk, "serve closed"
                buf += chunk
            line, buf = buf.split(b"\n", 1)
            return line + b"\n"

        ask({"schema": 1, "id": "1", "t": "hello", "app": "bench", "app_version": "0",
             "device": "bench"})
        for label, pane in (("realistic records", panes[0]), ("sidecar records", panes[1])):
            took, line = [], b""
            for i in range(runs):
                t0 = time.perf_counter()
                line = ask({"schema": 1, "id": str(i + 2), "t": "window", "pane": pane,
                            "last": 200})
                took.append((time.perf_counter() - t0) * 1000)
            doc = json.loads(line)
            assert doc["t"] == "window", doc
            print(f"window over serve, {label}: {len(doc['events'])} of 200 events in "
                  f"{len(line)} bytes (at most {32 * 1024}), budget_truncated="
                  f"{doc['budget_truncated']}; round trip {ms(took)}")
            assert len(line) <= 32 * 1024
    finally:
        if serve is not None:
            serve.kill()
            serve.wait()
        subprocess.run(["tmux", "-L", name, "kill-server"], env=env, capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=float, default=200)
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tma-bench-tx-"))
    try:
        path = work / "transcript.jsonl"
        t0 = time.perf_counter()
        n = generate(path, int(args.size_mb * 1e6))
        print(f"generated {n} records in {time.perf_counter() - t0:.1f} s")
        bench_page(path, args.runs)
        bench_serve(path, work, max(3, args.runs // 3))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
