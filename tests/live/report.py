"""Render the live suite's results (JSONL from harness.py) as the bench/RESULTS.md section.

    python tests/live/report.py RESULTS.jsonl [...]      # one file per pytest run

Each file is one run of the suite. Prints markdown: the pass table (agent x step x mode,
with the median and worst detection latency over the runs), the median and worst latency
per mode, for the daemon mode the p50/p95 latency per step over every agent and run, and
the pass rate (runs whose every scenario passed).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

STEPS = ("dialog:automode", "dialog:hooks-trust", "idle", "working", "idle_after_reply",
         "prompt", "idle_after_tool", "exited")


def load(paths: list[Path]) -> tuple[list[dict], list[dict]]:
    steps, scenarios = [], []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            (steps if rec.get("kind") == "step" else scenarios).append(rec)
    return steps, scenarios


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:+.1f}"


def render(paths: list[Path]) -> str:
    steps, scenarios = load(paths)
    runs = sorted({r["run"] for r in steps} | {r["run"] for r in scenarios})
    out = []
    by_cell: dict[tuple, list[dict]] = defaultdict(list)
    for r in steps:
        by_cell[(r["agent"], r["mode"], r["step"])].append(r)
    agents = sorted({r["agent"] for r in steps})
    modes = [m for m in ("hookless", "hooked", "daemon") if any(r["mode"] == m for r in steps)]
    out.append(f"Runs: {len(runs)} ({', '.join(runs)}).\n")
    for mode in modes:
        out.append(f"#### {mode}: passes / runs, median and worst latency (s)\n")
        present = [s for s in STEPS if any(k[1] == mode and k[2] == s for k in by_cell)]
        out.append("| agent | " + " | ".join(present) + " |")
        out.append("|---|" + "---|" * len(present))
        for agent in agents:
            cells = []
            for step in present:
                rs = by_cell.get((agent, mode, step), [])
                if not rs:
                    cells.append("n/a")
                    continue
                ok = sum(1 for r in rs if r["ok"])
                lats = [r["latency"] for r in rs if r["latency"] is not None]
                med = statistics.median(lats) if lats else None
                worst = max(lats) if lats else None
                src = {r["source"] for r in rs if r["ok"] and r["source"]}
                tag = f" {'/'.join(sorted(src))}" if mode == "hooked" and src else ""
                cells.append(f"{ok}/{len(rs)} · {fmt(med)} / {fmt(worst)}{tag}")
            out.append(f"| {agent} | " + " | ".join(cells) + " |")
        out.append("")
    out.append("#### Detection latency per mode and deadline (every step of every run)\n")
    out.append("| mode | deadline | steps | passed | median | worst | worst step |")
    out.append("|---|---|---|---|---|---|---|")
    for mode in modes:
        for limit in sorted({r["deadline"] for r in steps if r["mode"] == mode}):
            group = [r for r in steps if r["mode"] == mode and r["deadline"] == limit]
            rs = [r for r in group if r["latency"] is not None]
            if not rs:
                continue
            worst = max(rs, key=lambda r: r["latency"])
            out.append(f"| {mode} | {limit:g} s | {len(group)} | "
                       f"{sum(1 for r in group if r['ok'])} | "
                       f"{statistics.median(r['latency'] for r in rs):+.1f} s | "
                       f"{worst['latency']:+.1f} s | {worst['agent']} {worst['step']} |")
        rs = [r for r in steps if r["mode"] == mode and r["latency"] is not None]
        out.append(f"| {mode} | all | {sum(1 for r in steps if r['mode'] == mode)} | "
                   f"{sum(1 for r in steps if r['mode'] == mode and r['ok'])} | "
                   f"{statistics.median(r['latency'] for r in rs):+.1f} s | "
                   f"{max(r['latency'] for r in rs):+.1f} s | |")
    out.append("")
    if "daemon" in modes:
        out.extend(daemon_percentiles(steps))
    per_run: dict[str, list[bool]] = defaultdict(list)
    for sc in scenarios:
        per_run[sc["run"]].append(bool(sc["ok"]))
    green = sum(1 for run in runs if per_run.get(run) and all(per_run[run]))
    total_sc = sum(len(v) for v in per_run.values())
    ok_sc = sum(sum(v) for v in per_run.values())
    out.append(f"Pass rate: {green}/{len(runs)} runs fully green; "
               f"{ok_sc}/{total_sc} agent scenarios passed.")
    fails = [r for r in steps if not r["ok"]]
    if fails:
        out.append("\nFailed steps:\n")
        for r in fails:
            out.append(f"- {r['run']} {r['agent']} {r['mode']} {r['step']}: {r['note']}")
    return "\n".join(out) + "\n"


def percentile(xs: list[float], q: float) -> float:
    """The q-th percentile (0-100), linear between the closest ranks (numpy's default)."""
    xs = sorted(xs)
    k = (len(xs) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def daemon_percentiles(steps: list[dict]) -> list[str]:
    """The daemon tier's detection latency per step, over every agent and run."""
    out = ["#### daemon: detection latency per step, every agent and run (s)\n",
           "| step | deadline | steps | passed | p50 | p95 | worst | worst agent |",
           "|---|---|---|---|---|---|---|---|"]
    for step in STEPS:
        group = [r for r in steps if r["mode"] == "daemon" and r["step"] == step]
        lats = [r["latency"] for r in group if r["latency"] is not None]
        if not lats:
            continue
        worst = max((r for r in group if r["latency"] is not None), key=lambda r: r["latency"])
        limits = "/".join(f"{x:g}" for x in sorted({r["deadline"] for r in group}))
        out.append(f"| {step} | {limits} s | {len(group)} | "
                   f"{sum(1 for r in group if r['ok'])} | {percentile(lats, 50):+.2f} | "
                   f"{percentile(lats, 95):+.2f} | {worst['latency']:+.2f} | "
                   f"{worst['agent']} |")
    out.append("")
    return out


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    sys.stdout.write(render([Path(a) for a in argv]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
