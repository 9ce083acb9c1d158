"""The harness's own screen classes (agents.py) against the recorded captures.

Not a live test: it runs everywhere in well under a second. It keeps the live suite's
"the screen shows X" honest: every capture of today's agents whose state the suite
drives must fall in the class the suite waits for.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import agents as agents_mod
import pytest

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
ANSI = re.compile(r"\x1b\[[0-9;:?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]")
# the startup dialogs the suite answers
DIALOGS = {"claude-2.1.332_blocked_automode.txt", "codex-0.171.0_blocked_hooks_trust.txt"}


def cases() -> list[tuple[str, str, str]]:
    tsv = CAPTURES / "expectations.tsv"
    if not tsv.is_file():
        return []
    out = []
    with tsv.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            name, state, detail = row["file"], row["expected_state"], row["expected_detail"]
            version = name.split("_", 1)[0]  # claude-2.1.332
            if version not in agents_mod.BY_KEY:
                continue
            if "\n# screen_class: " in (CAPTURES / name).read_text(encoding="utf-8"):
                continue  # a screen past the happy path (overlay, retry...): never driven
            if name in DIALOGS:
                want = "dialog"
            elif state == "blocked" and detail == "permission":
                want = "prompt"
            elif name == "pi-0.73.1_blocked.txt":
                want = "prompt"  # the suite's extension prompt; tma must say working
            elif state in ("idle", "working"):
                want = state
            else:
                continue  # plan, question and trust screens the suite never drives
            out.append((name, version, want))
    return out


def read_capture(path: Path) -> tuple[dict[str, str], str]:
    text = path.read_text(encoding="utf-8")
    head, _, body = text.partition("\n---\n")
    meta = {}
    for line in head.splitlines():
        if line.startswith("# ") and ": " in line:
            key, _, value = line[2:].partition(": ")
            meta[key] = value
    height = int(meta.get("height", "0") or 0)
    lines = ANSI.sub("", body).split("\n")
    if height:
        lines = lines[-height - 1:] if lines and lines[-1] == "" else lines[-height:]
    return meta, "\n".join(lines)


@pytest.mark.parametrize("name,key,want", cases(), ids=[c[0] for c in cases()])
def test_capture_falls_in_the_class_the_suite_waits_for(name, key, want):
    meta, screen = read_capture(CAPTURES / name)
    agent = agents_mod.BY_KEY[key]
    got = agent.classify(screen, meta.get("title", ""), meta.get("command", agent.binary))
    assert got == want, f"{name}: class {got!r}, the suite waits for {want!r}"


def test_there_are_captures_to_check():
    assert len(cases()) >= 20
