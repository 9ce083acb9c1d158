"""The bundled manifests against the reference captures (real screens of older agent builds).

The captures are read in place from the shared reference folder (override it with
TMA_REFERENCE_CAPTURES). Every screen row of its expectations.tsv is one test. Assertions are
about claims and verdicts, never about which rule index fired.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tma.core import bundled, fixture, states
from tma.core.explain import Detection, detect, prior_stamp
from tma.core.fold import Facts
from tma.core.rules import Screen

REFERENCE_DIR = Path(
    os.environ.get("TMA_REFERENCE_CAPTURES", "/work/shared/reference/captures")
)
EXPECTATIONS = REFERENCE_DIR / "expectations.tsv"
ABSENT = f"reference captures not found at {REFERENCE_DIR} (set TMA_REFERENCE_CAPTURES)"

HOLD_PRIOR = "hold-prior"

# Reference rows whose expectation a later decision replaced, with that decision. Each key
# must still name a row that says `was`, so a change to the reference shows up here.
SUPERSEDED: dict[str, dict[str, str]] = {
    "claude_history_model_picker.txt": {
        "was": HOLD_PRIOR,
        "now": states.IDLE,
        "why": (
            "issue 8: a model picker opened at an idle composer reads idle, not unknown. The "
            "pinned claude 2.1.197 draws this same picker (live capture "
            "claude-2.1.197_idle_model_picker.txt); mid-turn the turn's spinner row and "
            "title stay above it and working outranks it"
        ),
    },
}


@dataclass(frozen=True)
class Row:
    file: str
    agent: str
    state: str
    detail: str
    note: str


def read_rows(path: Path) -> list[Row]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [
            Row(
                r["file"],
                r["agent"],
                r["expected_state"],
                "" if r["expected_detail"] in ("", "-") else r["expected_detail"],
                r.get("note") or "",
            )
            for r in reader
        ]


def supersede(row: Row) -> Row:
    change = SUPERSEDED.get(row.file)
    if change is None:
        return row
    return Row(row.file, row.agent, change["now"], "", f"{row.note} [superseded: {change['why']}]")


RAW_ROWS = read_rows(EXPECTATIONS) if EXPECTATIONS.is_file() else []
ROWS = [supersede(r) for r in RAW_ROWS]
SCREEN_ROWS = [r for r in ROWS if r.file.endswith(".txt") and r.agent != "example"]
SMOKE_ROWS = [r for r in ROWS if r.file == "_harness_smoke.txt"]


def params(rows: list[Row]) -> list:
    if not rows:
        return [pytest.param(None, id="absent", marks=pytest.mark.skip(reason=ABSENT))]
    return [pytest.param(r, id=r.file) for r in rows]


def load_capture(directory: Path, name: str) -> fixture.Capture:
    # Bytes in, so a trailing \r or a missing final newline survives exactly.
    return fixture.parse((directory / name).read_bytes().decode("utf-8"))


# ---------------------------------------------------------------- shared row checks
# The live-fixture test carries its own copy of these, so neither file imports the other.


def run(agent: str, cap: fixture.Capture, height: int | None, *, prev=None,
        at: int | None = None, now: int | None = None) -> Detection:
    at = cap.captured_at if at is None else at
    now = at + 10 if now is None else now
    screen = Screen(cap.body, cap.title, height)
    facts = Facts(foreground_is_agent=cap.foreground_is_agent)  # the fold's foreground cap
    return detect(bundled.load(agent), screen, captured_at=at, now=now, prev=prev,
                  facts=facts)


def note_says(note: str, pattern: str) -> bool:
    return re.search(pattern, note, re.IGNORECASE) is not None


EXACTLY_ONE = r"exactly (?:one|1) claim"
NO_IDLE = r"\bno (?:working/)?idle claim"
NO_WORKING = r"never working|\bno working\b|not raise working"
DWELL = r"\+1000\b.*\+10000\b"
HOOK_IDLE_PRIOR = r"hook-idle prior"
CARVE_OUT = r"evidence_at\s*=\s*captured_at\s*-\s*5"
NOT_TITLE = r"must not satisfy the identity title pattern"
DRAFT_VARIANT = r"variant test: replace the 'Type your message"


def check_row(row: Row, cap: fixture.Capture, height: int | None) -> None:
    det = run(row.agent, cap, height)
    claims = det.result.claims
    if row.state == HOLD_PRIOR:
        assert det.result.history_view, "a history view must raise the freeze"
        assert det.state == states.UNKNOWN, "with no prior a frozen screen reads unknown"
        for source in (states.SOURCE_CAPTURE, states.SOURCE_HOOK):
            prev = prior_stamp(states.IDLE, source=source, at=cap.captured_at - 60_000)
            held = run(row.agent, cap, height, prev=prev)
            assert held.state == states.IDLE, f"prior idle ({source}) must hold"
            assert held.state != states.BLOCKED
        return

    assert (det.state, det.detail) == (row.state, row.detail), (
        f"claims: { {s: c.rule.label for s, c in claims.items()} }"
    )
    assert det.source == states.SOURCE_CAPTURE
    if row.state in (states.IDLE, states.WORKING):
        assert states.BLOCKED not in claims, "an idle or working screen never raises blocked"
    if note_says(row.note, EXACTLY_ONE):
        assert list(claims) == [row.state], f"exactly one claim, got {sorted(claims)}"
    if note_says(row.note, NO_IDLE):
        assert states.IDLE not in claims, "this screen must raise no idle claim"
    if note_says(row.note, NO_WORKING):
        assert states.WORKING not in claims, "this screen must raise no working claim"
    if note_says(row.note, DWELL) and row.state == states.IDLE:
        prev = prior_stamp(states.WORKING, at=cap.captured_at)
        t = cap.captured_at
        early = run(row.agent, cap, height, prev=prev, at=t + 1000, now=t + 1000)
        assert early.state == states.WORKING, "idle chrome inside the dwell holds working"
        late = run(row.agent, cap, height, prev=prev, at=t + 10_000, now=t + 10_000)
        assert late.state == states.IDLE, "idle chrome past the dwell publishes idle"
        assert late.plan.set_attention, "working -> idle raises the done mark"
    if note_says(row.note, HOOK_IDLE_PRIOR):
        prev = prior_stamp(states.IDLE, source=states.SOURCE_HOOK, at=cap.captured_at - 5)
        held = run(row.agent, cap, height, prev=prev)
        assert held.state == states.IDLE and held.state != states.BLOCKED
    if note_says(row.note, CARVE_OUT):
        prev = prior_stamp(states.WORKING, source=states.SOURCE_HOOK, at=cap.captured_at - 5)
        over = run(row.agent, cap, height, prev=prev)
        assert (over.state, over.detail) == (row.state, row.detail), "newer blocker chrome wins"
    if note_says(row.note, NOT_TITLE):
        assert not bundled.load(row.agent).identity.title_matches(cap.title)


def draft_variant(body: str) -> str:
    """Gemini's composer with a two-row draft instead of the placeholder, first row dropped."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if "Type your message or @path/to/file" in line:
            lines[i : i + 1] = [" > first line of a draft", "   second line of the draft"]
            break
    else:  # pragma: no cover - the capture changed under us
        raise AssertionError("no composer placeholder row in this capture")
    return "\n".join(lines[1:])


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("row", params(SCREEN_ROWS))
def test_reference_screen(row: Row) -> None:
    cap = load_capture(REFERENCE_DIR, row.file)
    assert cap.agent == row.agent
    check_row(row, cap, None)  # the pane height was not recorded: the whole body is visible


@pytest.mark.parametrize(
    "row", params([r for r in SCREEN_ROWS if note_says(r.note, DRAFT_VARIANT)])
)
def test_reference_idle_survives_a_draft(row: Row) -> None:
    cap = load_capture(REFERENCE_DIR, row.file)
    varied = fixture.Capture(cap.headers, draft_variant(cap.body))
    det = run(row.agent, varied, None)
    assert det.state == states.IDLE
    assert list(det.result.claims) == [states.IDLE]


@pytest.mark.parametrize("row", params(SMOKE_ROWS))
def test_reference_harness_smoke_parses(row: Row) -> None:
    cap = load_capture(REFERENCE_DIR, row.file)
    assert cap.agent == "example"
    assert cap.body  # a body follows the separator


def test_superseded_rows_still_say_what_they_replaced() -> None:
    if not RAW_ROWS:
        pytest.skip(ABSENT)
    said = {r.file: r.state for r in RAW_ROWS}
    for name, change in SUPERSEDED.items():
        assert said.get(name) == change["was"], f"{name}: the reference changed; drop or update"


def test_reference_covers_every_bundled_agent_but_none_unknown() -> None:
    if not SCREEN_ROWS:
        pytest.skip(ABSENT)
    agents = {r.agent for r in SCREEN_ROWS}
    assert agents <= set(bundled.names())
    # Every bundled agent but Copilot, Qwen Code and aider has reference screens: the reference set
    # predates them; their rules rest on the lab's captures (tests/fixtures/captures).
    assert agents == set(bundled.names()) - {"copilot", "qwen", "aider"}
