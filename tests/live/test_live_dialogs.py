"""The dialogs an agent draws in the middle of a session, on the real pinned agents: its own
question tool, a plan approval, a compaction (issue 17).

One agent start per agent and mode (hookless, daemon) walks that agent's dialogs in turn;
each is drawn by the fake LLM calling the agent's OWN tool (`CALLTOOL:<name>{json}`, see
fakellm.py) or, for a compaction, by `/compact` typed in the composer while the fake LLM
holds the summary request open (`FakeLLM.hold`) until the harness has measured:

  agent     question (blocked/question)      plan (blocked/plan)             compaction
  claude    AskUserQuestion                  ExitPlanMode after a Write of   /compact
                                             the plan file, in plan mode
                                             (shift+tab twice)
  codex     request_user_input (Plan mode,   a <proposed_plan> reply in
            shift+tab)                       Plan mode: "Implement this plan?"
  gemini    ask_user                         exit_plan_mode after write_file
                                             in plan mode (shift+tab twice)
  opencode  question                         plan_exit in the plan agent (tab),
                                             behind OPENCODE_EXPERIMENTAL_PLAN_MODE=1
  pi                                                                         /compact
  copilot   ask_user                         exit_plan_mode in Plan mode     /compact
                                             (shift+tab)
  qwen      ask_user_question                exit_plan_mode in plan mode
                                             (shift+tab four times)
  aider     "Add URL to the chat?" (a URL
            in the typed line; n Enter)

A compaction must read working/compacting. Each dialog is dismissed with Esc, and the
agent must be idle again. Codex has no compaction in the walk (the issue asks for claude
and pi; copilot's is walked too); gemini's and opencode's compactions are not walked
either, and pi has no question or plan tool.

Every step keeps the usual deadlines (hookless: freshness + poll + 1 s, a turn end
dwell + freshness + poll + 1 s; daemon: 1.5 s, an idle screen dwell + 1.5 s) and the
walk is checked for what must never be seen: a question or a plan read working or idle, a
compaction read idle or blocked, besides the checks of test_live_agents.py. A step that
fails is recorded and the walk goes on to the next dialog, so one run says which dialog
tma misreads and what it read.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.helpers.live import agents as agents_mod
from tests.helpers.live.fakellm import AFTER_TOOL, QUICK
from tests.helpers.live.harness import (
    DAEMON_DEADLINE,
    DAEMON_IDLE_DEADLINE,
    HOOKLESS_DEADLINE,
    HOOKLESS_TURN_DEADLINE,
    Scenario,
    record_scenario,
)
from tests.helpers.live.steps import answer_dialog

pytestmark = pytest.mark.live

MODES = ("hookless", "daemon")
QUESTION = {"question": "Which colour should the new button be",
            "header": "Colour",
            "options": [{"label": "Blue", "description": "Matches the theme"},
                        {"label": "Green", "description": "Stands out"}]}
PLAN_TEXT = "# Plan: add a greeting file\n\n1. Create hello.txt.\n2. Check it.\n"


def call(name: str, args: dict) -> str:
    return f"CALLTOOL:{name}{json.dumps(args, separators=(',', ':'))}"


@dataclass(frozen=True)
class Walk:
    """One dialog: the keys that set the agent's mode first (each waits for its regex),
    the line typed, the class the screen shows, tma's verdict and detail."""

    name: str
    cls: str  # question | plan | compacting
    line: str
    echo: str  # what the composer shows once the line is typed
    mode_keys: tuple[tuple[str, str], ...] = ()
    dismiss: tuple[str, ...] = ("Escape",)
    hold: bool = False  # the fake LLM holds every text reply until the step is measured
    before: str = ""  # a quick turn first (a compaction needs a conversation)

    @property
    def verdict(self) -> tuple[str, str]:
        return ("working", "compacting") if self.cls == "compacting" else ("blocked", self.cls)


def _claude_plan() -> str:
    return ("plan1 FORCETOOL " + call("Write", {"file_path": "@PLANFILE@", "content": PLAN_TEXT})
            + " " + call("ExitPlanMode", {}))


def _gemini_plan() -> str:
    return ("plan1 " + call("write_file", {"file_path": "@PLANSDIR@/greeting.md",
                                            "content": PLAN_TEXT})
            + " " + call("exit_plan_mode", {"plan_filename": "greeting.md"}))


COMPACT = Walk("compaction", "compacting", "/compact", "/compact", hold=True,
               before="compact1 hello")
WALKS: dict[str, tuple[Walk, ...]] = {
    "claude": (
        Walk("question", "question",
             "ask1 " + call("AskUserQuestion", {"questions": [dict(QUESTION,
                                                                   multiSelect=False)]}),
             "ask1"),
        COMPACT,
        # manual -> accept edits -> plan; Esc rejects the plan and stays in plan mode
        Walk("plan", "plan", _claude_plan(), "plan1",
             mode_keys=(("BTab", r"accept edits on"), ("BTab", r"plan mode on"))),
    ),
    "codex": (
        # request_user_input answers "unavailable" outside Plan mode; Esc interrupts it
        Walk("question", "question",
             "ask1 " + call("request_user_input", {"questions": [dict(QUESTION, id="colour")]}),
             "ask1", mode_keys=(("BTab", r"Plan mode"),)),
        # Esc: "esc back" to the composer, still in Plan mode
        Walk("plan", "plan", "plan1 SAY{<proposed_plan>\\n" + PLAN_TEXT.replace("\n", "\\n")
             + "</proposed_plan>}SAY", "plan1"),
    ),
    "gemini": (
        Walk("question", "question",
             "ask1 " + call("ask_user", {"questions": [dict(QUESTION, type="choice",
                                                            multiSelect=False)]}),
             "ask1"),
        # default -> auto-accept edits -> plan
        Walk("plan", "plan", _gemini_plan(), "plan1",
             mode_keys=(("BTab", r"auto-accept edits"), ("BTab", r"plan Shift\+Tab"))),
    ),
    "opencode": (
        Walk("question", "question",
             "ask1 " + call("question", {"questions": [dict(QUESTION, multiple=False)]}),
             "ask1"),
        # the plan agent (tab); plan_exit asks "switch to the build agent?" (EXTRA_ENV)
        Walk("plan", "plan", "plan1 " + call("plan_exit", {}), "plan1",
             mode_keys=(("Tab", r"Plan · mock-model"),)),
    ),
    "pi": (COMPACT,),
    "copilot": (
        # ask_user takes an elicitation form: a message and a JSON schema of the answer
        Walk("question", "question",
             "ask1 " + call("ask_user", {
                 "message": QUESTION["question"] + "?",
                 "requestedSchema": {"properties": {"colour": {
                     "type": "string", "title": "Colour", "enum": ["blue", "green"]}},
                     "required": ["colour"]}}),
             "ask1"),
        # /compact keeps the idle footer; the row "<glyph> Compacting conversation history"
        # above the cwd row is what says working/compacting
        COMPACT,
        # Interactive -> Plan (shift+tab); Esc closes the review and stays in Plan mode
        Walk("plan", "plan",
             "plan1 " + call("exit_plan_mode", {"summary": "- Create hello.txt\n- Check it"}),
             "plan1", mode_keys=(("BTab", r"(?m)^ (?:← open sidebar · )?Plan · "),)),
    ),
    "qwen": (
        Walk("question", "question",
             "ask1 " + call("ask_user_question", {"questions": [dict(QUESTION,
                                                                     multiSelect=False)]}),
             "ask1"),
        # Ask permissions -> auto-accept edits -> Auto -> YOLO -> plan; Esc is "No, keep
        # planning"
        Walk("plan", "plan", "plan1 " + call("exit_plan_mode", {"plan": PLAN_TEXT}), "plan1",
             mode_keys=(("BTab", r"auto-accept edits \("), ("BTab", r"Auto mode \("),
                        ("BTab", r"YOLO mode \("), ("BTab", r"plan mode \("))),
    ),
    # aider has no question tool and no plan mode: its questions are yes/no lines. A URL in
    # the typed line makes it ask "Add URL to the chat?" before any model call (nothing is
    # fetched unless the answer is yes); `n` Enter declines and the line goes to the model
    "aider": (
        Walk("question", "question", "ask1 see https://example.com/page", "ask1",
             dismiss=("n", "Enter")),
    ),
}
# opencode 1.18.33 offers plan_exit only under its experimental plan mode
EXTRA_ENV = {"opencode": {"OPENCODE_EXPERIMENTAL_PLAN_MODE": "1"}}
CASES = [(mode, a.key) for mode in MODES for a in agents_mod.AGENTS
         if a.key != "claude-2.1.197" and a.agent in WALKS]


def deadline(mode: str, idle: bool, turn_end: bool) -> float:
    if mode == "daemon":
        return DAEMON_IDLE_DEADLINE if idle else DAEMON_DEADLINE
    return HOOKLESS_TURN_DEADLINE if turn_end else HOOKLESS_DEADLINE


@pytest.mark.parametrize("mode,key", CASES, ids=[f"{m}-{k}" for m, k in CASES])
def test_agent_dialogs(scenario_factory, fake_llm, mode, key):
    agent = agents_mod.BY_KEY[key]
    if agent.agent in EXTRA_ENV:
        agent = dataclasses.replace(agent, env=dict(agent.env, **EXTRA_ENV[agent.agent]))
    sc: Scenario = scenario_factory(agent, mode)
    failed: list[str] = []

    def step(name: str, cls: str, expected: str, since: float, *, detail: str | None = None,
             turn_end: bool = False, screen_timeout: float = 60) -> bool:
        """A soft step: a miss is recorded and the walk goes on."""
        try:
            sc.step(name, cls, expected,
                    deadline(mode, expected == "idle", turn_end), since=since,
                    detail=detail, screen_timeout=screen_timeout)
            return True
        except AssertionError as exc:
            failed.append(str(exc).splitlines()[0][:300])
            return False

    t_start = time.time()
    durations: dict[str, float] = {}
    ok = False
    try:
        sc.start()
        since = t_start
        for dialog in agent.dialogs:
            sc.wait_screen(lambda s: s.cls == "dialog", 90, f"the {dialog.name} dialog", since)
            since = answer_dialog(sc, dialog)
        sc.step("idle", "idle", "idle", deadline(mode, True, False), since=since,
                screen_timeout=90)
        durations["start"] = round(time.time() - t_start, 1)
        for walk in WALKS[agent.agent]:
            t0 = time.time()
            run_walk(sc, fake_llm, walk, step)
            durations[walk.name] = round(time.time() - t0, 1)

        # every problem of the walk in one message: the steps tma missed (and what it
        # read), what must never be seen, a failing status line
        problems = failed + [f"never seen: {x}" for x in sc.never_seen()]
        if sc.ticker is not None and sc.ticker.failures:
            problems.append(f"tma status failed: {sc.ticker.failures[:3]}")
        assert not problems, f"{agent.key} [{mode}]: " + " | ".join(problems)
        ok = True
    finally:
        if (not ok or os.environ.get("TMA_LIVE_DUMP")) and sc.monitor is not None \
                and not sc.dumped:
            sc.dump()
        record_scenario({"agent": agent.key, "mode": mode, "ok": ok, "walk": "dialogs",
                         "seconds": round(time.time() - t_start, 1), "durations": durations,
                         "never_seen": sc.never_seen() if sc.monitor else [],
                         "failures": sc.failures,
                         "daemon": sc.daemon.status() if sc.daemon is not None else None})


def run_walk(sc: Scenario, fake_llm, walk: Walk,
             step: Callable[..., bool]) -> None:
    state, detail = walk.verdict
    if walk.before:
        t = sc.type_line(walk.before)
        # (claude sends a declined question's result with this prompt: AFTER_TOOL's text)
        reply = sc.wait_screen(lambda s: s.cls == "idle" and (
            QUICK[:30] in s.screen or AFTER_TOOL[:30] in s.screen), 30, "the quick reply", t)
        # the turn end's dwell must be over: a compaction read while tma still says
        # working from the turn would be no reading at all
        assert sc.monitor is not None
        if sc.monitor.wait(lambda s: s.state == "idle", 15, reply.t) is None:
            raise AssertionError(f"{sc.agent.key}: tma never said idle after the quick reply")
    for key, regex in walk.mode_keys:
        t = time.time()
        sc.keys(key)
        sc.wait_regex(regex, 15, since=t)
    held = sc.slow_id() if walk.hold else ""
    if held:
        fake_llm.hold(held)
    try:
        t = sc.type_line(walk.line, echo=walk.echo)
        step(walk.name, walk.cls, state, t, detail=detail)
    finally:
        if held:
            fake_llm.release(held)
    assert sc.monitor is not None
    drawn = any(s.cls == walk.cls for s in sc.monitor.snapshot() if s.t >= t)
    if walk.cls == "compacting":
        since = time.time()
    else:
        # a dialog never drawn has failed its step already: dismiss whatever is there
        settle_on_class(sc, walk.cls, 30.0 if drawn else 2.0)
        since = time.time()
        sc.keys(*walk.dismiss)
    step(f"idle_after_{walk.name}", "idle", "idle", since, turn_end=True)


def settle_on_class(sc: Scenario, cls: str, timeout: float = 30.0) -> bool:
    """Keys sent to a dialog still being drawn can be lost: wait until the class has held
    for 0.5 s (six samples). False when it never did (the step has failed already; the
    walk dismisses whatever is there and goes on)."""
    assert sc.monitor is not None
    deadline_t = time.time() + timeout
    while time.time() < deadline_t:
        recent = sc.monitor.snapshot()[-6:]
        if len(recent) == 6 and all(s.cls == cls for s in recent):
            return True
        time.sleep(0.05)
    return False

