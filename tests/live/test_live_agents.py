"""Real agent CLIs, driven through their states; tma's verdict read from its public surfaces.

For each pinned agent and each mode (hookless: screen and process only, with `tma status`
ticking once a second like a status line; hooked: hooks installed by `tma install-hooks`;
daemon: no hooks and no status line, `tma daemon --ensure` alone writes the stamps),
one scenario walks:

  dialog:*          startup dialogs (claude 2.1.332 auto-mode question, codex hook trust):
                    blocked before the harness answers
  idle              composer up
  working           a slow streamed reply (held open by the fake LLM until released)
  idle_after_reply  the reply finished (a turn end: the 3 s dwell applies)
  prompt            a shell tool call waiting for approval: blocked/permission
                    (pi: working, its prompt is the suite's extension UI)
  idle_after_tool   approved, ran, finished (a turn end)
  exited            the agent quit, the shell is back: no row

Each step times "the screen shows it" -> "tma reports it" against the design's deadlines:
hookless <= freshness + poll + 1 s (a turn end: dwell + freshness + poll + 1 s), hooked
<= 1 s (a turn end: dwell + 1 s), daemon <= 1.5 s (an idle composer: dwell + 1.5 s). After the walk, the whole sample log is checked for what
must never be seen: idle while the screen is blocked, blocked while it works.
"""

from __future__ import annotations

import os
import time

import pytest

from tests.helpers import tmux_matrix
from tests.helpers.live import agents as agents_mod
from tests.helpers.live.fakellm import QUICK
from tests.helpers.live.harness import (
    DAEMON_DEADLINE,
    DAEMON_IDLE_DEADLINE,
    HOOKED_DEADLINE,
    HOOKED_TURN_DEADLINE,
    HOOKLESS_DEADLINE,
    HOOKLESS_TURN_DEADLINE,
    Scenario,
    record_scenario,
)
from tests.helpers.live.steps import answer_dialog, settle

pytestmark = pytest.mark.live

MODES = ("hookless", "hooked", "daemon")
#: The modes that also run on a second tmux (tests/helpers/tmux_matrix.live_extra: 3.4 in CI).
#: The daemon mode only (the control-mode path, the one most bound to a release); the
#: hookless cycle's reads are the tmux contract suite's on every build, and running real
#: agents hookless on 3.4 as well cost CI about 3 minutes.
TMUX_MODES = ("daemon",)
_EXTRA = tmux_matrix.live_extra()
CASES = [(mode, a.key, None) for mode in MODES for a in agents_mod.AGENTS] + [
    (mode, a.key, _EXTRA) for mode in TMUX_MODES for a in agents_mod.AGENTS
    if _EXTRA is not None]

# Steps a hook drives in hooked mode, per agent, from the bundled manifests' [[hooks.map]]:
# the prompt submit claims working, the permission request blocked (pi: its tool events keep
# it working), the turn end idle, the session end removes the row (opencode's plugin has no
# end event: its exit stays with the process walk). The startup dialogs and the first
# composer come before any hook can fire, and keep the hookless deadlines.
_TURN = {"working", "idle_after_reply", "prompt", "idle_after_tool"}
HOOK_STEPS: dict[str, frozenset[str]] = {
    "claude": frozenset(_TURN | {"exited"}),
    "codex": frozenset(_TURN | {"exited"}),
    "gemini": frozenset(_TURN | {"exited"}),
    "opencode": frozenset(_TURN),
    "pi": frozenset(_TURN | {"exited"}),
    "copilot": frozenset(_TURN | {"exited"}),
    "qwen": frozenset(_TURN | {"exited"}),
    # aider's one hook, its notifications command, fires at the prompt after a model call
    # (and before the first question of a reply, which the screen then outranks): the
    # reply's end. Working, the prompt, the idle after a command and the exit are the
    # screen's and the process walk's.
    "aider": frozenset({"idle_after_reply"}),
}
TURN_ENDS = frozenset({"idle_after_reply", "idle_after_tool"})


def approve(sc: Scenario) -> float:
    sc.wait_regex(sc.agent.approve_ready, 30)
    settle(sc, sc.agent.approve_ready)
    t = time.time()
    sc.keys(*sc.agent.approve_keys)
    return t


def quit_agent(sc: Scenario) -> float:
    t0 = time.time()
    for key, wait_for in sc.agent.exit_steps:
        if wait_for:
            sc.wait_regex(wait_for, 15, since=t0)
        sc.keys(key)
    return t0


@pytest.mark.parametrize("mode,key,build", CASES,
                         ids=[f"{m}-{k}" + (f"-{b.id}" if b else "") for m, k, b in CASES])
def test_agent_states(scenario_factory, fake_llm, mode, key, build):
    agent = agents_mod.BY_KEY[key]
    sc: Scenario = scenario_factory(agent, mode, build)
    hooked = mode == "hooked"
    hook_steps = HOOK_STEPS[agent.agent] if hooked else frozenset()

    def deadline(step: str) -> float:
        if mode == "daemon":  # every idle screen, the first composer too: dwell + 1.5 s
            return DAEMON_IDLE_DEADLINE if step.startswith("idle") else DAEMON_DEADLINE
        # an agent with no end event (OpenCode) is removed once its walked pid is gone,
        # like a hookless pane: the 30 s reaper (REAP_MS) is only for pid-less registrations
        if step in hook_steps:
            return HOOKED_TURN_DEADLINE if step in TURN_ENDS else HOOKED_DEADLINE
        return HOOKLESS_TURN_DEADLINE if step in TURN_ENDS else HOOKLESS_DEADLINE

    def step(name: str, cls: str, expected: str, since: float, **kw) -> None:
        sc.step(name, cls, expected, deadline(name), since=since,
                hook_step=name in hook_steps, **kw)

    t_start = time.time()
    ok = False
    try:
        sc.start()
        since = t_start
        for dialog in agent.dialogs:
            step(f"dialog:{dialog.name}", "dialog", "blocked", since, screen_timeout=90)
            since = answer_dialog(sc, dialog)
        step("idle", "idle", "idle", since, screen_timeout=90)

        slow = sc.slow_id()
        t = sc.type_line(agent.slow_prompt.format(id=slow))
        step("working", "working", "working", t)
        fake_llm.release(slow)
        step("idle_after_reply", "idle", "idle", time.time())

        t = sc.type_line(agent.tool_prompt)
        step("prompt", "prompt", agent.prompt_verdict, t, detail=agent.prompt_detail)
        step_t = approve(sc)
        step("idle_after_tool", "idle", "idle", step_t)
        assert (sc.work / "fakellm-hi.txt").exists(), "the approved tool call did not run"

        t = quit_agent(sc)
        step("exited", "exited", "", t, screen_timeout=30)

        seen = sc.never_seen()
        assert not seen, f"{agent.key} [{mode}]: " + "; ".join(seen)
        ticker_failures = sc.ticker.failures if sc.ticker else []
        assert not ticker_failures, f"tma status failed: {ticker_failures[:3]}"
        ok = True
    finally:
        # TMA_LIVE_DUMP=1: the screens of a passing walk too (where the time went)
        if (not ok or os.environ.get("TMA_LIVE_DUMP")) and sc.monitor is not None \
                and not sc.failures:
            sc.dump()
        record_scenario({"agent": agent.key, "mode": mode, "ok": ok,
                         "tmux": build.version if build else "system",
                         "seconds": round(time.time() - t_start, 1),
                         "never_seen": sc.never_seen() if sc.monitor else [],
                         "failures": sc.failures,
                         # the daemon's counters over the walk (reads, captures, edges)
                         "daemon": sc.daemon.status() if sc.daemon is not None else None})


def test_copilot_failed_model_call_ends_idle_in_hooked_mode(scenario_factory, fake_llm):
    """A model call that fails (the fake model answers HTTP 400; Copilot does not retry a
    400) ends Copilot's turn with errorOccurred and no agentStop: the hooks leave their
    working claim open. The screen's idle footer, decisive in copilot.toml, ends it once
    it has stood for the dwell, well inside a hookless turn end's deadline (not the 60 s
    decay window)."""
    sc: Scenario = scenario_factory(agents_mod.BY_KEY["copilot-1.0.102"], "hooked")
    t0 = time.time()
    try:
        sc.start()
        sc.step("idle", "idle", "idle", HOOKLESS_DEADLINE, since=t0, screen_timeout=90)
        t = sc.type_line("HTTPFAIL:400 now")
        # timed from the error on screen: the composer's idle footer can still be up for a
        # moment after Enter, before the turn's working footer replaces it
        failed = sc.wait_regex(r"scripted HTTP 400", 30, since=t)
        assert any(r.get("decision") == "http_400" for r in fake_llm.requests)
        assert sc.monitor is not None
        # the hooks did claim the turn (userPromptSubmitted), and no hook closes it
        assert sc.monitor.wait(lambda s: s.state == "working" and s.source == "hook", 10, t), \
            "no hook claimed the turn"
        sc.step("idle_after_error", "idle", "idle", HOOKLESS_TURN_DEADLINE, since=failed.t)
        assert sc.pane_option("@agent_source") == "capture"  # the screen ended it
        t = quit_agent(sc)
        sc.step("exited", "exited", "", HOOKED_DEADLINE, since=t, hook_step=True,
                screen_timeout=30)
        assert not sc.never_seen(), sc.never_seen()
    finally:
        if sc.monitor is not None and sc.failures and not sc.dumped:
            sc.dump()


def test_copilot_compaction_ends_idle_in_hooked_mode(scenario_factory, fake_llm):
    """`/compact` fires preCompact (mapped to working/compacting) as the summary's model call
    starts, and no hook at all when it is back: no agentStop, no postCompact (lab, 1.0.102).
    While the fake model holds the summary, the hook and the screen's Compacting row say
    working/compacting; once it is back the idle footer, decisive, ends the hook's claim
    within a hookless turn end's deadline."""
    sc: Scenario = scenario_factory(agents_mod.BY_KEY["copilot-1.0.102"], "hooked")
    t0 = time.time()
    try:
        sc.start()
        sc.step("idle", "idle", "idle", HOOKLESS_DEADLINE, since=t0, screen_timeout=90)
        t = sc.type_line("compact1 hello")
        reply = sc.wait_screen(lambda s: s.cls == "idle" and QUICK[:30] in s.screen, 30,
                               "the quick reply", t)
        assert sc.monitor is not None
        assert sc.monitor.wait(lambda s: s.state == "idle", 15, reply.t) is not None
        held = sc.slow_id()
        fake_llm.hold(held)
        try:
            t = sc.type_line("/compact", echo="/compact")
            sc.step("compacting", "compacting", "working", HOOKLESS_DEADLINE, since=t,
                    detail="compacting")
            assert sc.monitor.wait(lambda s: s.state == "working" and s.detail == "compacting"
                                   and s.source == "hook", 10, t) is not None, \
                "preCompact did not claim working/compacting"
        finally:
            fake_llm.release(held)
        done = sc.wait_regex(r"Compaction completed", 60, since=t)
        sc.step("idle_after_compaction", "idle", "idle", HOOKLESS_TURN_DEADLINE, since=done.t)
        assert sc.pane_option("@agent_source") == "capture"  # the screen ended it
        t = quit_agent(sc)
        sc.step("exited", "exited", "", HOOKED_DEADLINE, since=t, hook_step=True,
                screen_timeout=30)
        assert not sc.never_seen(), sc.never_seen()
    finally:
        if sc.monitor is not None and sc.failures and not sc.dumped:
            sc.dump()
