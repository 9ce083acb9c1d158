"""The bundled manifests against live captures of today's agents, and rule coverage.

The live fixtures live in tests/fixtures/captures/ (override with TMA_LIVE_CAPTURES), with an
expectations.tsv in the reference layout: file, agent, expected_state, expected_detail,
note. Each capture's `height` header bounds the `visible` region, as the pane height does
in production.

The coverage test asks, for every rule of every bundled manifest, for a positive (the rule
matches a screen whose expected state is the rule's state) and a negative (a screen of the
same agent that expects another state, where the rule stays silent or, for chrome that
co-renders, fires without deciding the verdict). It looks in the live and the reference
corpus together. Rules for screens that cannot be produced on demand are
listed in SYNTHETIC_ONLY with the reason, and test_manifest_synthetic.py covers them.
"""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tma.core import bundled, fixture, states
from tma.core.explain import Detection, detect, prior_stamp
from tma.core.fold import Facts
from tma.core.manifest import Rule
from tma.core.rules import Screen

ROOT = Path(__file__).resolve().parents[2]
LIVE_DIR = Path(os.environ.get("TMA_LIVE_CAPTURES", ROOT / "tests" / "fixtures" / "captures"))
LIVE_TSV = LIVE_DIR / "expectations.tsv"
LIVE_ABSENT = (
    f"live fixtures not produced yet: {LIVE_TSV} does not exist (set TMA_LIVE_CAPTURES)"
)
REFERENCE_DIR = Path(
    os.environ.get("TMA_REFERENCE_CAPTURES", "/work/shared/reference/captures")
)
REFERENCE_TSV = REFERENCE_DIR / "expectations.tsv"

HOLD_PRIOR = "hold-prior"

# Rules no live or reference screen can show, keyed (agent, state, detail, priority). Each
# has synthetic tests in test_manifest_synthetic.py. A key that stops matching a rule fails
# test_synthetic_only_names_real_rules.
SYNTHETIC_ONLY: dict[tuple[str, str, str, int], str] = {
    ("claude", "working", "rate_limit", 80): (
        "usage-limit wait footer: a real claude.ai usage limit cannot be triggered on demand"
    ),
    ("claude", "blocked", "rate_limit", 95): (
        "stale usage-limit footer: needs a limit reset that lands during a machine sleep"
    ),
    ("claude", "blocked", "rate_limit", 96): (
        "usage-limit options menu: needs a real claude.ai usage limit"
    ),
}


@dataclass(frozen=True)
class Row:
    corpus: str
    directory: Path
    file: str
    agent: str
    state: str
    detail: str
    note: str


def read_rows(corpus: str, path: Path) -> list[Row]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        rows = [
            Row(
                corpus,
                path.parent,
                r["file"],
                r["agent"],
                r["expected_state"],
                "" if (r.get("expected_detail") or "") in ("", "-") else r["expected_detail"],
                r.get("note") or "",
            )
            for r in reader
        ]
    return [r for r in rows if r.file.endswith(".txt") and r.agent in bundled.names()]


LIVE_ROWS = read_rows("live", LIVE_TSV)
REFERENCE_ROWS = read_rows("reference", REFERENCE_TSV)


def load_capture(row: Row) -> fixture.Capture:
    return fixture.parse((row.directory / row.file).read_bytes().decode("utf-8"))


def height_of(row: Row, cap: fixture.Capture) -> int | None:
    # Live captures record the pane height; the reference ones did not (whole body visible).
    return cap.height if row.corpus == "live" else None


# ---------------------------------------------------------------- row checks
# A copy of the reference test's checks, so that neither test file imports the other.


def run(agent: str, cap: fixture.Capture, height: int | None, *, prev=None,
        at: int | None = None, now: int | None = None) -> Detection:
    at = cap.captured_at if at is None else at
    now = at + 10 if now is None else now
    # The fold's foreground cap, as production applies it: a shell in the foreground
    # (the agent quit or was killed) caps the pane at unknown whatever the screen shows.
    facts = Facts(foreground_is_agent=cap.foreground_is_agent)
    return detect(bundled.load(agent), Screen(cap.body, cap.title, height),
                  captured_at=at, now=now, prev=prev, facts=facts)


def note_says(note: str, pattern: str) -> bool:
    return re.search(pattern, note, re.IGNORECASE) is not None


EXACTLY_ONE = r"exactly (?:one|1) claim"
NO_IDLE = r"\bno (?:working/)?idle claim"
NO_WORKING = r"never working|\bno working\b|not raise working"
DWELL = r"\+1000\b.*\+10000\b"


def check_row(row: Row, cap: fixture.Capture, height: int | None) -> None:
    det = run(row.agent, cap, height)
    claims = det.result.claims
    if row.state == HOLD_PRIOR:
        assert det.result.history_view and det.state == states.UNKNOWN
        prev = prior_stamp(states.IDLE, at=cap.captured_at - 60_000)
        assert run(row.agent, cap, height, prev=prev).state == states.IDLE
        return
    assert (det.state, det.detail) == (row.state, row.detail), (
        f"claims: { {s: c.rule.label for s, c in claims.items()} }"
    )
    if row.state in (states.IDLE, states.WORKING):
        assert states.BLOCKED not in claims, "an idle or working screen never raises blocked"
    if note_says(row.note, EXACTLY_ONE):
        assert list(claims) == [row.state], f"exactly one claim, got {sorted(claims)}"
    if note_says(row.note, NO_IDLE):
        assert states.IDLE not in claims
    if note_says(row.note, NO_WORKING):
        assert states.WORKING not in claims
    if note_says(row.note, DWELL) and row.state == states.IDLE:
        prev = prior_stamp(states.WORKING, at=cap.captured_at)
        t = cap.captured_at
        assert run(row.agent, cap, height, prev=prev, at=t + 1000,
                   now=t + 1000).state == states.WORKING
        assert run(row.agent, cap, height, prev=prev, at=t + 10_000,
                   now=t + 10_000).state == states.IDLE


def params(rows: list[Row], absent: str) -> list:
    if not rows:
        return [pytest.param(None, id="absent", marks=pytest.mark.skip(reason=absent))]
    return [pytest.param(r, id=f"{r.corpus}:{r.file}") for r in rows]


# ---------------------------------------------------------------- live screens


@pytest.mark.parametrize("row", params(LIVE_ROWS, LIVE_ABSENT))
def test_live_screen(row: Row) -> None:
    cap = load_capture(row)
    assert cap.agent == row.agent
    check_row(row, cap, height_of(row, cap))


def test_live_pi_extension_prompt_reads_working() -> None:
    """The lab's "Allow bash command?" pi prompt is never blocked: pi has no blocked rule."""
    rows = [r for r in LIVE_ROWS if r.agent == "pi"]
    if not rows:
        pytest.skip(LIVE_ABSENT)
    prompts = [r for r in rows if "Allow bash command?" in load_capture(r).body]
    if not prompts:
        pytest.skip("no live pi capture shows the lab extension's prompt")
    for row in prompts:
        cap = load_capture(row)
        det = run("pi", cap, height_of(row, cap))
        assert det.state == states.WORKING
        assert states.BLOCKED not in det.result.claims


# ---------------------------------------------------------------- past the happy path

# What each `screen_class` header promises, whatever the agent (lab_capture.py --screen-class).
SCREEN_CLASS_VERDICT = {
    "trust-dialog": {(states.BLOCKED, "trust")},
    "overlay": {(states.IDLE, ""), (states.WORKING, "")},  # working: opened mid-turn
    "api-retry": {(states.WORKING, "")},
    "api-error": {(states.IDLE, "")},
    "shell-foreground": {(states.UNKNOWN, "")},
    # dialogs the live suite's screen classes do not name (file writes and edits, questions,
    # plans), compaction, and an extension's own prompt drawn under pi's working row
    "permission-dialog": {(states.BLOCKED, "permission")},
    # a permission dialog for a tool other than the shell (file write, edit with a diff, web
    # fetch, MCP): the live suite drives the shell prompt only
    "tool-dialog": {(states.BLOCKED, states.PERMISSION)},
    "question-dialog": {(states.BLOCKED, "question")},
    "plan-dialog": {(states.BLOCKED, "plan")},
    "compaction": {(states.WORKING, "compacting")},
    "extension-prompt": {(states.WORKING, "")},
    # a screen at 40 columns or fewer whose chrome wraps into rows the suite's one-line
    # screen classes do not read; tma reads it like the same screen at full width
    "narrow": {(states.IDLE, ""), (states.WORKING, ""), (states.BLOCKED, states.PERMISSION)},
}


def screen_class_rows() -> list[tuple[Row, fixture.Capture]]:
    out = []
    for row in LIVE_ROWS:
        cap = load_capture(row)
        if "screen_class" in cap.headers:
            out.append((row, cap))
    return out


def test_screen_classes_read_as_their_class_promises() -> None:
    rows = screen_class_rows()
    if not rows:
        pytest.skip(LIVE_ABSENT)
    for row, cap in rows:
        klass = cap.headers["screen_class"]
        assert klass in SCREEN_CLASS_VERDICT, f"{row.file}: unknown screen_class {klass!r}"
        assert (row.state, row.detail) in SCREEN_CLASS_VERDICT[klass], row.file
        det = run(row.agent, cap, height_of(row, cap))
        assert (det.state, det.detail) in SCREEN_CLASS_VERDICT[klass], row.file


def test_a_shell_in_the_foreground_caps_the_screen_at_unknown() -> None:
    """The agent quit or was killed: its last frame may still look idle or blocked, and the
    foreground cap must win. At least one such screen must read otherwise on its own, or
    this test would pass without the cap."""
    rows = [(r, c) for r, c in screen_class_rows() if not c.foreground_is_agent]
    if not rows:
        pytest.skip(LIVE_ABSENT)
    alone = set()
    for row, cap in rows:
        det = run(row.agent, cap, height_of(row, cap))
        assert det.state == states.UNKNOWN, row.file
        assert det.plan.reason == "agent not in the foreground: capped at unknown", row.file
        screen_only = detect(bundled.load(row.agent), Screen(cap.body, cap.title, cap.height),
                             captured_at=cap.captured_at, now=cap.captured_at + 10)
        alone.add(screen_only.state)
    assert alone - {states.UNKNOWN, None}, "no shell-foreground screen reads as a state alone"


@pytest.mark.parametrize(("command", "foreground"), [
    ("bash", False), ("-zsh", False), ("fish", False), ("claude", True), ("node", True),
    ("codex-aarch64-a", True), ("", True),
])
def test_fixture_foreground_comes_from_the_command_header(command: str, foreground: bool) -> None:
    cap = fixture.parse(f"# agent: pi\n# title: t\n# command: {command}\n---\nbody\n")
    assert cap.command == command
    assert cap.foreground_is_agent is foreground


# ---------------------------------------------------------------- rule coverage


def rule_key(agent: str, rule: Rule) -> tuple[str, str, str, int]:
    return (agent, rule.state, rule.detail, rule.priority)


def rule_expectation(rule: Rule) -> str:
    return HOLD_PRIOR if rule.skip_state_update else rule.state


def coverage() -> dict[tuple[str, str, str, int], tuple[list[str], list[str]]]:
    """For every rule: the screens it is positive on and the screens it is negative on."""
    found: dict[tuple[str, str, str, int], tuple[list[str], list[str]]] = {}
    manifests = bundled.load_all()
    for agent, manifest in manifests.items():
        for rule in manifest.rules:
            found[rule_key(agent, rule)] = ([], [])
    for row in LIVE_ROWS + REFERENCE_ROWS:
        cap = load_capture(row)
        det = run(row.agent, cap, height_of(row, cap))
        for report in det.result.reports:
            positives, negatives = found[rule_key(row.agent, report.rule)]
            rule = report.rule
            where = f"{row.corpus}:{row.file}"
            if row.state == rule_expectation(rule):
                if report.matched:
                    positives.append(where)
            elif not report.matched:
                negatives.append(where)
            elif not rule.skip_state_update and det.state != rule.state:
                # It fires, but on chrome that co-renders under a higher slot (the idle
                # composer under a working spinner): the screen still reads right.
                negatives.append(where)
    return found


def test_rule_keys_are_unique() -> None:
    for agent, manifest in bundled.load_all().items():
        keys = [rule_key(agent, r) for r in manifest.rules]
        assert len(keys) == len(set(keys)), f"{agent}: two rules share state/detail/priority"


def test_synthetic_only_names_real_rules() -> None:
    keys = {rule_key(a, r) for a, m in bundled.load_all().items() for r in m.rules}
    assert set(SYNTHETIC_ONLY) <= keys


def test_synthetic_only_rules_have_no_captured_positive() -> None:
    """Once a capture shows one of these screens, the rule leaves SYNTHETIC_ONLY."""
    if not LIVE_ROWS:
        pytest.skip(LIVE_ABSENT)
    found = coverage()
    captured = [key for key in SYNTHETIC_ONLY if found[key][0]]
    assert not captured, f"captured now, drop from SYNTHETIC_ONLY: {captured}"


def test_every_rule_has_a_positive_and_a_negative_screen() -> None:
    if not LIVE_ROWS:
        pytest.skip(LIVE_ABSENT + "; coverage is judged over both corpora together")
    missing = []
    for key, (positives, negatives) in sorted(coverage().items()):
        if key in SYNTHETIC_ONLY:
            continue
        if not positives:
            missing.append(f"{key}: no positive screen")
        if not negatives:
            missing.append(f"{key}: no negative screen")
    assert not missing, "rules without captured evidence:\n" + "\n".join(missing)


# ---------------------------------------------------------------- live hook payloads

HOOKS_DIR = Path(os.environ.get("TMA_LIVE_HOOKS", ROOT / "tests" / "fixtures" / "hooks" / "lab"))
HOOKS_ABSENT = f"no recorded hook payloads at {HOOKS_DIR} (set TMA_LIVE_HOOKS)"


def _claude_permission(p: dict) -> str:
    return {"ExitPlanMode": "blocked/plan", "AskUserQuestion": "blocked/question"}.get(
        p.get("tool_name"), "blocked/permission")


def _claude_notification(p: dict) -> str | None:
    kind = p.get("notification_type")
    if kind in ("permission_prompt", "elicitation_dialog"):
        return "blocked/permission"
    return {"quota_auto_resume_fired": "working/rate_limit",
            "quota_auto_resume_stale": "blocked/rate_limit",
            "quota_auto_resume_disabled": "blocked/rate_limit"}.get(kind)


def _codex_notify(p: dict) -> str | None:
    if p.get("type") != "agent-turn-complete":
        return None
    first = (p.get("input-messages") or [""])[0]
    return None if first.startswith("Generate a concise, single-line task title") else "idle/*"


def _gemini_notification(p: dict) -> str | None:
    if p.get("notification_type") != "ToolPermission":
        return None
    kind = (p.get("details") or {}).get("type")
    return {"ask_user": "blocked/question", "exit_plan_mode": "blocked/plan"}.get(
        kind, "blocked/permission")


# What each recorded event must map to: start/end, "<state>/<detail>" with * for turn_end,
# or None for an event that stays unmapped. Unlisted events must stay unmapped.
LIVE_HOOK_EXPECTATIONS = {
    "claude": {
        "SessionStart": "start", "SessionEnd": "end", "UserPromptSubmit": "working/",
        "PreToolUse": "working/", "PostToolUse": "working/", "Stop": "idle/*",
        "PermissionRequest": _claude_permission, "Notification": _claude_notification,
        "PreCompact": "working/compacting",
    },
    "codex": {
        "SessionStart": "start", "SessionEnd": "end", "UserPromptSubmit": "working/",
        "PreToolUse": lambda p: (
            "blocked/question" if p.get("tool_name") == "request_user_input" else "working/"),
        "PostToolUse": "working/", "Stop": "idle/*", "PreCompact": "working/compacting",
        "PostCompact": lambda p: "idle/*" if p.get("trigger") == "manual" else "working/",
        "PermissionRequest": "blocked/permission", "notify": _codex_notify,
    },
    "gemini": {
        "SessionStart": "start", "SessionEnd": "end", "BeforeAgent": "working/",
        "BeforeTool": "working/", "AfterTool": "working/", "AfterAgent": "idle/*",
        "Notification": _gemini_notification,
    },
    "copilot": {
        "sessionStart": lambda p: "working/" if "initialPrompt" in p else "start",
        "sessionEnd": "end", "userPromptSubmitted": "working/",
        "preToolUse": lambda p: {"ask_user": "blocked/question",
                                 "exit_plan_mode": "blocked/plan"}.get(p.get("toolName"),
                                                                       "working/"),
        "permissionRequest": "blocked/permission", "postToolUse": "working/",
        "notification": lambda p: {"permission_prompt": "blocked/permission",
                                   "elicitation_dialog": "blocked/question"}.get(
                                       p.get("notification_type")),
        "agentStop": "idle/*", "preCompact": "working/compacting",
        "errorOccurred": None,  # every try says recoverable, the last one too: the screen's
    },
    # the notifications command: stdin is aider's terminal, tma-hook passes '{}' on argv
    "aider": {"notify": "idle/*"},
    "qwen": {
        "SessionStart": "start", "SessionEnd": "end", "UserPromptSubmit": "working/",
        "PreToolUse": "working/", "PostToolUse": "working/", "Stop": "idle/*",
        "StopFailure": "idle/*", "PreCompact": "working/compacting",
        "PermissionRequest": lambda p: {
            "ask_user_question": "blocked/question", "exit_plan_mode": "blocked/plan"}.get(
            p.get("tool_name"), "blocked/permission"),
        "Notification": lambda p: "idle/*" if p.get("notification_type") == "idle_prompt"
        else None,
    },
    "pi": {
        "session_start": "start", "session_shutdown": "end", "before_agent_start": "working/",
        "tool_execution_start": "working/", "agent_settled": "idle/*", "agent_end": "idle/*",
    },
}


def _recorded(path: Path) -> list[tuple[str, dict, str]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("stdin") is not None:
            payload = record["stdin"]
        elif record.get("argv_extra"):
            payload = record["argv_extra"][-1]
            payload = json.loads(payload) if isinstance(payload, str) else payload
        else:
            payload = {}
        out.append((record["event"], payload, json.dumps(payload)))
    return out


HOOK_FILES = sorted(HOOKS_DIR.glob("*.jsonl")) if HOOKS_DIR.is_dir() else []


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=p.name) for p in HOOK_FILES
     if p.name.split("-")[0] in LIVE_HOOK_EXPECTATIONS]
    or [pytest.param(None, id="absent", marks=pytest.mark.skip(reason=HOOKS_ABSENT))],
)
def test_live_hook_payloads_map(path: Path) -> None:
    agent = path.name.split("-")[0]
    manifest = bundled.load(agent)
    table = LIVE_HOOK_EXPECTATIONS[agent]
    for event, payload, raw in _recorded(path):
        want = table.get(event)
        if callable(want):
            want = want(payload)
        got = manifest.map_event(event, raw)
        shown = None if got is None else (
            got.lifecycle or f"{got.state}/{got.detail}{'*' if got.turn_end else ''}")
        assert shown == want, f"{path.name}: {event} {raw[:120]}"
