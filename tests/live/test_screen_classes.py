"""The harness's own screen classes (agents.py) against the recorded captures.

Not a live test: it runs everywhere in well under a second. It keeps the live suite's
"the screen shows X" honest: every capture of today's agents whose state the suite
drives must fall in the class the suite waits for.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from tests.helpers.live import agents as agents_mod

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
ANSI = re.compile(r"\x1b\[[0-9;:?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]")
# the startup dialogs the suite answers
DIALOGS = {"claude-2.1.332_blocked_automode.txt", "codex-0.171.0_blocked_hooks_trust.txt"}
# the dialogs test_live_dialogs.py draws (its screen classes are named after tma's detail),
# checked at the width the suite's panes have
DRIVEN = {("claude", "question"), ("claude", "plan"), ("claude", "compacting"),
          ("codex", "question"), ("codex", "plan"), ("gemini", "question"), ("gemini", "plan"),
          ("opencode", "question"), ("opencode", "plan"), ("pi", "compacting"),
          ("qwen", "question"), ("qwen", "plan"), ("aider", "question"),
          ("copilot", "compacting")}
SUITE_WIDTH = "100"


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
            text = (CAPTURES / name).read_text(encoding="utf-8")
            if "\n# screen_class: " in text:
                continue  # a screen past the happy path (overlay, retry...): never driven
            width = re.search(r"(?m)^# width: (\d+)$", text)
            if name in DIALOGS:
                want = "dialog"
            elif state == "blocked" and detail == "permission":
                want = "prompt"
            elif name == "pi-0.73.1_blocked.txt":
                want = "prompt"  # the suite's extension prompt; tma must say working
            elif (row["agent"], detail) in DRIVEN:
                if width is not None and width.group(1) != SUITE_WIDTH:
                    continue  # the suite's panes are 100 columns wide
                want = detail
            elif state in ("idle", "working"):
                want = state
            else:
                continue  # trust screens, and dialogs the suite never drives
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
