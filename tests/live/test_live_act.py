"""`tma act` on the real pinned agents: every bundled action fired at a real screen.

Each agent runs against the fake LLM in the live suite's private tmux server, and
`tma act NAME --pane P --json` is run the way a key binding runs it. Every `tma act`
reaches tmux through a recording wrapper (TMA_TMUX_BIN), so the test sees which lane
answered: the keys lane shows a `send-keys` line in the log, the hook and API lanes none.

What counts as "it worked" is never tma's own word alone:

  approve      the fake LLM's shell tool call ran (fakellm-hi.txt exists) and the agent
               sent the tool's result back to the fake LLM
  deny         the prompt is gone, the agent is idle again, and the file was never made
  interrupt    the held slow stream was dropped by the agent (not released by the test),
               and the next screen is idle, without the reply's closing words
  steer        the fake LLM receives the --text at an idle agent
  steer_now    the --text, typed mid-turn, is held by the agent while the turn runs and
               reaches the fake LLM once the turn ends

OpenCode runs hooked with `--port`: approve and deny reply over its HTTP API (`replied`,
no send-keys). pi runs hookless, for its interrupt (its only keys action).

Claude runs hooked (`tma install-hooks claude --yes`): with the PermissionRequest hook
holding, approve and deny answer over the hook reply lane (outcome `replied`, no
send-keys at all); then the lane is turned off in the hook's config.toml
(`[hooks] claude_reply_lane = false`) and the same session answers by keys. Codex and
Gemini run hookless. Gemini has no steer/steer_now on purpose (see steer.toml). Copilot
runs hooked: after an Esc deny no hook fires, and its screen must bring the pane back to
idle.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from tests.helpers.live import agents as agents_mod
from tests.helpers.live.harness import Scenario
from tests.helpers.live.opencode import free_port, opencode, wait_option
from tests.helpers.live.steps import answer_dialog, settle
from tma.runtime.act import opencode_api

pytestmark = pytest.mark.live

TOOL_FILE = "fakellm-hi.txt"
CLAUDES = ("claude-2.1.197", "claude-2.1.332")


# ---------------------------------------------------------------- tma act, recorded
def tmux_recorder(sc: Scenario) -> tuple[Path, Path]:
    """A tmux wrapper that logs every call (and what `source-file -` reads) before
    running the real tmux. -> (wrapper, log)."""
    log = sc.root / "act-tmux.log"
    wrapper = sc.root / "tmux-recorder"
    wrapper.write_text(f"""#!/bin/sh
printf 'ARGV %s\\n' "$*" >>'{log}'
case " $* " in
  *" source-file - "*|*" source-file -") tee -a '{log}' | '{sc.server.tmux_bin}' "$@" ;;
  *) exec '{sc.server.tmux_bin}' "$@" ;;
esac
""")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper, log


def act(sc: Scenario, name: str, *extra: str) -> tuple[dict, list[str]]:
    """Run `tma act NAME --pane P --json`; -> (the result object, the send-keys lines it
    produced)."""
    wrapper, log = tmux_recorder(sc)
    log.write_text("")
    res = sc.server.tma("act", name, "--pane", sc.pane, "--json", *extra, timeout=60,
                        env={"TMA_TMUX_BIN": str(wrapper)})
    assert res.stdout.strip(), f"tma act {name} printed no JSON (exit {res.returncode}): " \
                               f"{res.stderr}"
    out = json.loads(res.stdout)
    assert out["exit_code"] == res.returncode, (out, res.returncode)
    keys = [ln for ln in log.read_text().splitlines() if "send-keys" in ln]
    return out, keys


def expect(sc: Scenario, name: str, outcome: str, *extra: str) -> list[str]:
    out, keys = act(sc, name, *extra)
    assert out["outcome"] == outcome, (
        f"{sc.agent.key}: tma act {name} -> {out}\nscreen:\n{sc.screen()}")
    return keys


# ---------------------------------------------------------------- screens and the fake LLM
def llm_mark(fake_llm) -> int:
    return len(fake_llm.requests)


def llm_since(fake_llm, mark: int) -> list[dict]:
    with fake_llm._lock:
        return list(fake_llm.requests[mark:])


def wait_llm(sc: Scenario, fake_llm, mark: int, pred, timeout: float, what: str) -> dict:
    deadline = time.time() + timeout
    while time.time() < deadline:
        hit = next((r for r in llm_since(fake_llm, mark) if pred(r)), None)
        if hit is not None:
            return hit
        time.sleep(0.1)
    seen = [(r.get("decision"), r.get("prompt", "")[-60:]) for r in llm_since(fake_llm, mark)]
    raise AssertionError(f"{sc.agent.key}: the fake LLM never received {what} in "
                         f"{timeout:.0f}s; got {seen}; screen:\n{sc.screen()}")


def prompted(marker: str):
    return lambda r: marker in (r.get("prompt") or "")


def wait_cls(sc: Scenario, cls: str, since: float, timeout: float = 30) -> None:
    sc.wait_screen(lambda s: s.cls == cls, timeout, f"the {cls} screen", since)


def verdict(sc: Scenario, state: str, detail: str | None = None, timeout: float = 15) -> float:
    """Wait for tma's stamp to say `state` (and `detail`): the gate reads it (a fresh
    stamp is consumed as it is, not re-detected); -> seconds waited."""
    t0 = time.time()

    def now() -> tuple[str, str]:
        return sc.pane_option("@agent_state"), sc.pane_option("@agent_detail")

    got = now()
    while got[0] != state or (detail is not None and got[1] != detail):
        assert time.time() - t0 < timeout, (
            f"{sc.agent.key}: tma still says {got} {timeout:.0f}s after the screen showed "
            f"{state}/{detail}; screen:\n{sc.screen()}")
        time.sleep(0.1)
        got = now()
    return time.time() - t0


def start(sc: Scenario) -> None:
    sc.start()
    for dialog in sc.agent.dialogs:
        answer_dialog(sc, dialog)
    wait_cls(sc, "idle", 0, 90)
    sc.quiet("")
    verdict(sc, "idle")


def at_prompt(sc: Scenario) -> float:
    """Ask for the fake LLM's shell tool call; return once its approval prompt is up and
    drawn."""
    (sc.work / TOOL_FILE).unlink(missing_ok=True)
    t = sc.type_line(sc.agent.tool_prompt)
    wait_cls(sc, "prompt", t, 60)
    sc.wait_regex(sc.agent.approve_ready, 30, since=t)
    settle(sc, sc.agent.approve_ready)
    verdict(sc, "blocked", "permission")
    return t


def working(sc: Scenario, fake_llm) -> str:
    """Start a held slow reply; return its id once the agent streams it."""
    slow = sc.slow_id()
    t = sc.type_line(sc.agent.slow_prompt.format(id=slow))
    wait_cls(sc, "working", t)
    deadline = time.time() + 30
    while not fake_llm.streaming(slow):
        assert time.time() < deadline, f"{sc.agent.key}: the slow stream never opened"
        time.sleep(0.1)
    time.sleep(0.5)  # a few words on screen: the turn is well under way
    verdict(sc, "working")
    return slow


# ---------------------------------------------------------------- the actions
def check_approve(sc: Scenario, fake_llm, outcome: str = "sent") -> list[str]:
    at_prompt(sc)
    mark = llm_mark(fake_llm)
    t = time.time()
    keys = expect(sc, "approve", outcome)
    wait_llm(sc, fake_llm, mark, lambda r: r.get("decision") == "after_tool", 30,
             "the tool's result")
    assert (sc.work / TOOL_FILE).exists(), f"{sc.agent.key}: approved, the tool did not run"
    wait_cls(sc, "idle", t)
    return keys


def check_deny(sc: Scenario, fake_llm, outcome: str = "sent") -> list[str]:
    at_prompt(sc)
    t = time.time()
    keys = expect(sc, "deny", outcome)
    sc.wait_screen(lambda s: s.cls not in ("prompt", None), 30, "the prompt gone", t)
    wait_cls(sc, "idle", t)
    time.sleep(1.0)  # a tool that ran anyway would have written by now
    assert not (sc.work / TOOL_FILE).exists(), f"{sc.agent.key}: denied, the tool ran"
    assert sc.monitor is not None
    assert not any(s.cls == "prompt" for s in sc.monitor.snapshot() if s.t > t + 2.0), \
        f"{sc.agent.key}: the prompt came back after deny"
    return keys


def check_interrupt(sc: Scenario, fake_llm) -> None:
    done_before = sc.screen().count("Slow reply complete")
    slow = working(sc, fake_llm)
    t = time.time()
    keys = expect(sc, "interrupt", "sent")
    assert keys, "interrupt sent no keys"
    wait_cls(sc, "idle", t, 20)
    deadline = time.time() + 10
    while fake_llm.streaming(slow):  # never released: only the agent can have ended it
        assert time.time() < deadline, f"{sc.agent.key}: the stream still runs after interrupt"
        time.sleep(0.1)
    assert sc.screen().count("Slow reply complete") <= done_before, "the reply ran to its end"
    fake_llm.release(slow)


def check_steer(sc: Scenario, fake_llm) -> None:
    verdict(sc, "idle")
    marker = f"STEER{os.urandom(3).hex()}"
    mark = llm_mark(fake_llm)
    t = time.time()
    keys = expect(sc, "steer", "sent", "--text", f"{marker} say hello")
    assert any(marker in k for k in keys), keys
    wait_llm(sc, fake_llm, mark, prompted(marker), 30, f"the steer text {marker}")
    sc.wait_regex(r"Hello from the tma fake model", 30, since=t)
    wait_cls(sc, "idle", t)


def check_steer_now(sc: Scenario, fake_llm) -> None:
    """Claude and Qwen Code hold the message until the turn ends; Codex 0.171.0 steers the
    running turn with it at once (it goes out to the model while the old stream is still open)."""
    slow = working(sc, fake_llm)
    marker = f"QUEUED{os.urandom(3).hex()}"
    mark = llm_mark(fake_llm)
    expect(sc, "steer_now", "sent", "--text", f"{marker} after this")
    if sc.agent.agent == "codex":
        wait_llm(sc, fake_llm, mark, prompted(marker), 30, f"the steer text {marker} mid-turn")
        fake_llm.release(slow)
    else:
        sc.wait_regex(marker, 10)  # the agent shows it queued
        time.sleep(1.0)
        early = [r for r in llm_since(fake_llm, mark) if marker in (r.get("prompt") or "")]
        assert not early, f"{sc.agent.key}: the queued message went out mid-turn: {early}"
        assert fake_llm.streaming(slow), f"{sc.agent.key}: steer_now ended the turn"
        fake_llm.release(slow)
        wait_llm(sc, fake_llm, mark, prompted(marker), 30,
                 f"the queued text {marker} after the turn")
    wait_cls(sc, "idle", time.time())
    sc.wait_regex(r"Hello from the tma fake model", 30)


def quit_agent(sc: Scenario) -> None:
    for key, wait_for in sc.agent.exit_steps:
        if wait_for:
            sc.wait_regex(wait_for, 15)
        sc.keys(key)
    sc.wait_screen(lambda s: s.cls == "exited", 30, "the shell back")


def keys_lane(keys: list[str], agent: agents_mod.Agent, action: str) -> None:
    assert keys, f"{agent.key}: {action} over the keys lane sent no send-keys"


# ---------------------------------------------------------------- the tests
@pytest.mark.parametrize("key", CLAUDES)
def test_claude_every_action(scenario_factory, fake_llm, key):
    sc: Scenario = scenario_factory(agents_mod.BY_KEY[key], "hooked")
    start(sc)

    # the hook reply lane: PermissionRequest holds, act replies, nothing is typed
    at_prompt(sc)
    holder = sc.pane_option("@tma_reply_holder")
    assert holder.isdigit(), f"no hook holds the prompt (@tma_reply_holder {holder!r})"
    (sc.work / TOOL_FILE).unlink(missing_ok=True)
    mark = llm_mark(fake_llm)
    t = time.time()
    keys = expect(sc, "approve", "replied")
    assert keys == [], f"approve over the hook lane typed into the pane: {keys}"
    wait_llm(sc, fake_llm, mark, lambda r: r.get("decision") == "after_tool", 30,
             "the tool's result")
    assert (sc.work / TOOL_FILE).exists(), "approved over the hook lane, the tool did not run"
    wait_cls(sc, "idle", t)

    at_prompt(sc)
    t = time.time()
    keys = expect(sc, "deny", "replied")
    assert keys == [], f"deny over the hook lane typed into the pane: {keys}"
    sc.wait_screen(lambda s: s.cls not in ("prompt", None), 30, "the prompt gone", t)
    wait_cls(sc, "idle", t)
    time.sleep(1.0)
    assert not (sc.work / TOOL_FILE).exists(), "denied over the hook lane, the tool ran"

    # the lane off: the same prompts are answered by keys
    config = sc.home / ".config" / "tma" / "config.toml"
    assert not config.exists() or "[hooks]" not in config.read_text()
    config.parent.mkdir(parents=True, exist_ok=True)
    with open(config, "a", encoding="utf-8") as fh:
        fh.write("\n[hooks]\nclaude_reply_lane = false\n")
    keys_lane(check_approve(sc, fake_llm), sc.agent, "approve")
    check_steer(sc, fake_llm)
    check_steer_now(sc, fake_llm)
    check_interrupt(sc, fake_llm)
    keys_lane(check_deny(sc, fake_llm), sc.agent, "deny")
    quit_agent(sc)


def check_steer_refused(sc: Scenario) -> None:
    """An agent without a steer arm: steer is refused before anything is typed."""
    out, keys = act(sc, "steer", "--text", "hello")
    assert (out["outcome"], out["reason"], keys) == ("refused", "wrong-agent", []), out


def test_codex_every_action(scenario_factory, fake_llm):
    sc: Scenario = scenario_factory(agents_mod.BY_KEY["codex-0.171.0"], "hookless")
    start(sc)
    keys_lane(check_approve(sc, fake_llm), sc.agent, "approve")
    keys_lane(check_deny(sc, fake_llm), sc.agent, "deny")
    check_steer(sc, fake_llm)
    check_interrupt(sc, fake_llm)
    check_steer_now(sc, fake_llm)
    quit_agent(sc)


def test_gemini_approve_deny_interrupt(scenario_factory, fake_llm):
    sc: Scenario = scenario_factory(agents_mod.BY_KEY["gemini-0.61.0"], "hookless")
    start(sc)
    keys_lane(check_approve(sc, fake_llm), sc.agent, "approve")
    keys_lane(check_deny(sc, fake_llm), sc.agent, "deny")
    check_interrupt(sc, fake_llm)
    verdict(sc, "idle")
    check_steer_refused(sc)  # steer is not Gemini's
    quit_agent(sc)


def test_copilot_approve_deny_interrupt(scenario_factory, fake_llm):
    """Copilot runs hooked: its hooks say blocked at the prompt, and no hook follows an
    Esc deny, so the idle after deny is the screen's (idle is in copilot's `visible`).
    approve is `1`, and the tool runs exactly once; interrupt is Escape twice."""
    sc: Scenario = scenario_factory(agents_mod.BY_KEY["copilot-1.0.102"], "hooked")
    start(sc)
    mark = llm_mark(fake_llm)
    keys_lane(check_approve(sc, fake_llm), sc.agent, "approve")
    verdict(sc, "idle")
    ran = [r for r in llm_since(fake_llm, mark) if r.get("decision") == "after_tool"]
    assert len(ran) == 1, f"approve answered {len(ran)} tool results: {ran}"
    keys_lane(check_deny(sc, fake_llm), sc.agent, "deny")
    verdict(sc, "idle", timeout=20)  # no hook after an Esc deny: the screen brings it back
    check_interrupt(sc, fake_llm)
    verdict(sc, "idle", timeout=20)
    check_steer_refused(sc)  # steer is not Copilot's yet
    quit_agent(sc)


def test_aider_approve_deny_interrupt_steer(scenario_factory, fake_llm):
    """aider by keys: approve `y` Enter on "Run shell command?" runs the command exactly once
    (it appends a line: one line in the file), deny `n` Enter leaves it unrun, interrupt
    C-c drops a held reply, steer types and submits at its `>` prompt. aider sends no model
    call after a command, so the effect is read off the file, not the fake model."""
    sc: Scenario = scenario_factory(agents_mod.BY_KEY["aider-0.86.2"], "hookless")
    start(sc)
    (sc.work / TOOL_FILE).unlink(missing_ok=True)
    t = sc.type_line("SAY{```bash\\necho hi >> fakellm-hi.txt\\n```}SAY")
    wait_cls(sc, "prompt", t, 60)
    sc.wait_regex(sc.agent.approve_ready, 30, since=t)
    settle(sc, sc.agent.approve_ready)
    verdict(sc, "blocked", "permission")
    t = time.time()
    keys_lane(expect(sc, "approve", "sent"), sc.agent, "approve")
    wait_cls(sc, "idle", t)
    sc.wait_regex(r"Running echo hi >> fakellm-hi\.txt", 10, since=t)
    time.sleep(1.0)  # a second run would have appended by now
    assert (sc.work / TOOL_FILE).read_text() == "hi\n", "approve: the command did not run once"
    # a second approve finds no prompt: refused, nothing typed
    out, keys = act(sc, "approve")
    assert out["outcome"] == "refused" and keys == [], out
    keys_lane(check_deny(sc, fake_llm), sc.agent, "deny")
    check_interrupt(sc, fake_llm)
    check_steer(sc, fake_llm)
    quit_agent(sc)


def test_qwen_approve_deny_interrupt_steer(scenario_factory, fake_llm):
    """Qwen Code by keys: approve `1` ("› 1. Yes, allow once") runs the call once, deny
    Escape leaves it unrun, steer types and submits, steer_now queues the text until the
    turn ends (qwen's "Enter to steer"), interrupt Escape ends a held turn."""
    sc: Scenario = scenario_factory(agents_mod.BY_KEY["qwen-0.24.4"], "hookless")
    start(sc)
    keys_lane(check_approve(sc, fake_llm), sc.agent, "approve")
    keys_lane(check_deny(sc, fake_llm), sc.agent, "deny")
    check_steer(sc, fake_llm)
    check_steer_now(sc, fake_llm)
    check_interrupt(sc, fake_llm)
    # an interrupted turn's text comes back into the composer: clear it before quitting
    sc.wait_regex(r"(?m)^> SLOWREPLY", 10)
    sc.keys("C-u")
    quit_agent(sc)


    """pi's interrupt is a keystroke (Escape, interrupt.toml's `pi` arm), sent while pi
    streams a held slow reply: pi drops the stream itself and its `Working...` row goes.
    pi has no permission prompt (approve and deny do not cover it) and no steer arm."""
    sc: Scenario = scenario_factory(agents_mod.BY_KEY["pi-0.73.1"], "hookless")
    start(sc)
    check_interrupt(sc, fake_llm)
    # once interrupted, pi takes the next prompt as usual
    t = sc.type_line("say hello")
    sc.wait_regex(r"Hello from the tma fake model", 30, since=t)
    wait_cls(sc, "idle", t)
    quit_agent(sc)


def test_opencode_approve_deny_over_http(scenario_factory, fake_llm):
    """OpenCode serving HTTP (`--port`): act answers over its API, never by keys."""
    sc: Scenario = scenario_factory(opencode(f"--port {free_port()}"), "hooked")
    start(sc)
    wait_option(sc, "@agent_api_endpoint", bool)
    for name, ran in (("approve", True), ("deny", False)):
        at_prompt(sc)
        wait_option(sc, "@agent_permission_request", bool)
        mark = llm_mark(fake_llm)
        t = time.time()
        keys = expect(sc, name, "replied")
        assert keys == [], f"{name} over OpenCode's API typed into the pane: {keys}"
        sc.wait_screen(lambda s: "Permission required" not in s.screen, 30, "the dialog gone",
                       t)
        if ran:
            wait_llm(sc, fake_llm, mark, lambda r: r.get("decision") == "after_tool", 30,
                     "the tool's result")
        wait_cls(sc, "idle", t)
        time.sleep(0.5 if ran else 1.0)
        assert (sc.work / TOOL_FILE).exists() is ran, f"{name}: the tool ran: " \
            f"{(sc.work / TOOL_FILE).exists()}"
    quit_agent(sc)


QUESTIONS = [
    {"question": "Which colour", "header": "Colour",
     "options": [{"label": "Blue", "description": "calm"},
                 {"label": "Green", "description": "bold"}]},
    {"question": "Which extras", "header": "Extras", "multiple": True,
     "options": [{"label": "Border", "description": "line"},
                 {"label": "Shadow", "description": "drop"},
                 {"label": "Icon", "description": "glyph"}]},
]


def type_long(sc: Scenario, text: str, echo: str) -> float:
    """Type a line longer than the composer's width in short pieces (one long burst reads
    as a paste), wait for `echo`, then press Enter; -> the instant Enter was sent."""
    t0 = time.time()
    for i in range(0, len(text), 60):
        sc.server.tmux("send-keys", "-t", sc.pane, "-l", text[i:i + 60])
        time.sleep(0.05)
    sc.wait_screen(lambda s: echo in s.screen, 15, f"the typed text {echo!r}", t0)
    time.sleep(0.5)
    t = time.time()
    sc.keys("Enter")
    return t


def test_opencode_question_reply_over_http(scenario_factory, fake_llm):
    """A real question from OpenCode's question tool (two questions, the second multiple
    choice), answered by `tma act question_reply` over its API: never a key, and OpenCode
    hands the model exactly the labels chosen."""
    sc: Scenario = scenario_factory(opencode(f"--port {free_port()}"), "hooked")
    start(sc)
    wait_option(sc, "@agent_api_endpoint", bool)
    call = json.dumps({"questions": QUESTIONS}, separators=(",", ":"))
    t = type_long(sc, f"ask1 CALLTOOL:question{call}", '"Icon"')
    # two questions draw as tabs (Colour, Extras, Confirm) over the one key-hint footer
    sc.wait_regex(r"↑↓ select\s+enter \w+\s+esc dismiss", 60, since=t)
    verdict(sc, "blocked", "question")
    rid = wait_option(sc, "@agent_question_request", bool)
    assert rid.startswith("que_"), rid
    # GET /question on the real server: the request, verbatim, in tma's reading of it
    endpoint = opencode_api.resolve_endpoint(
        {"@agent_api_endpoint": sc.pane_option("@agent_api_endpoint")}, None)
    [req] = [r for r in opencode_api.questions(endpoint, 10.0) if r.id == rid]
    assert [(q.question, q.header, q.labels, q.multiple, q.custom) for q in req.questions] == [
        ("Which colour", "Colour", ("Blue", "Green"), False, True),
        ("Which extras", "Extras", ("Border", "Shadow", "Icon"), True, True)]
    assert req.questions[0].options[0].description == "calm"
    assert req.session_id.startswith("ses_") and req.call_id, req

    # the labels are checked against the real request: two for a single-choice question
    # is refused, and nothing reaches OpenCode (its dialog stays up)
    out, keys = act(sc, "question_reply", "--answer", "Colour=Blue", "--answer", "1=Green",
                    "--answer", "2=Border")
    assert (out["outcome"], out["reason"], keys) == ("refused", "requires-unmet", []), out
    assert "takes one choice, not 2" in out["message"], out
    time.sleep(1.0)
    assert sc.pane_option("@agent_question_request") == rid
    assert sc.pane_option("@agent_state") == "blocked"

    mark = llm_mark(fake_llm)
    out, keys = act(sc, "question_reply", "--answer", "Colour=Green", "--answer",
                    "Extras=Shadow", "--answer", "2=Border")
    assert (out["outcome"], keys) == ("replied", []), out
    assert "Colour=Green; Extras=Shadow, Border" in out["message"], out
    hit = wait_llm(sc, fake_llm, mark, lambda r: r.get("decision") == "after_tool", 30,
                   "the question tool's result")
    result = hit.get("tool_result") or ""
    assert '"Which colour"="Green"' in result, result
    assert '"Which extras"="Shadow, Border"' in result, result
    wait_cls(sc, "idle", t)
    wait_option(sc, "@agent_question_request", lambda v: v == "")
    # answered: OpenCode no longer holds it, and tma no longer offers the action
    again, keys = act(sc, "question_reply", "--answer", "Colour=Blue", "--answer", "2=Icon")
    assert again["outcome"] == "refused" and keys == [], again
    quit_agent(sc)


def test_claude_approves_auto_modes_unnumbered_approval(scenario_factory, fake_llm,
                                                        monkeypatch):
    """Claude Code 2.1.332 in auto mode cannot run its server-side safety check through
    the fake LLM: the first tool call opens a notice (Enter stays in auto mode), then the
    approval "Auto mode can't check actions in this session, so this one needs your
    approval" over `❯ No` / `Yes`, no digits, for a file write outside the working folder.
    approve walks the cursor to Yes (Down, read back) and presses Enter, over keys (no
    PermissionRequest hook fires for this dialog), and the file is written once."""
    agent = agents_mod.BY_KEY["claude-2.1.332"]
    manual = agents_mod.SETUP["claude"]

    def auto_mode(agent, home, work, base_url, cache, hooked) -> None:
        manual(agent, home, work, base_url, cache, hooked)
        settings = home / ".claude" / "settings.json"
        doc = json.loads(settings.read_text())
        doc["permissions"]["defaultMode"] = "auto"
        settings.write_text(json.dumps(doc, indent=2) + "\n")

    monkeypatch.setitem(agents_mod.SETUP, "claude", auto_mode)
    sc: Scenario = scenario_factory(agent, "hookless")
    sc.start()
    sc.wait_regex(r"auto mode on", 90)
    wait_cls(sc, "idle", 0, 90)
    verdict(sc, "idle")

    # a write outside the working folder: auto mode lets one inside it through unasked
    outside = sc.root / "outside-w.txt"
    outside.unlink(missing_ok=True)
    call = json.dumps({"file_path": str(outside), "content": "hi\n"})
    t = sc.type_line(f"CALLTOOL:Write{call} now", echo="now")
    sc.wait_regex(r"Enter to stay in auto mode", 60, since=t)
    settle(sc, r"Enter to stay in auto mode")  # an Enter sent mid-draw is lost
    sc.keys("Enter")
    sample = sc.wait_regex(r"this one needs your approval[\s\S]*\n\s*❯ No\s*\n\s*Yes\s*\n",
                           30, since=t)
    settle(sc, r"❯ No")
    verdict(sc, "blocked", "permission")
    assert not outside.exists()
    mark = llm_mark(fake_llm)
    keys = expect(sc, "approve", "sent")
    assert [k.split(" -- ", 1)[-1].strip().strip('"') for k in keys] == ["Down", "Enter"], keys
    wait_llm(sc, fake_llm, mark, lambda r: r.get("decision") == "after_tool", 30,
             "the tool's result")
    assert outside.exists(), "approved, the tool did not run"
    wait_cls(sc, "idle", sample.t)
    assert outside.read_text() == "hi\n"
    assert sum(r.get("decision") == "after_tool" for r in llm_since(fake_llm, mark)) == 1
    quit_agent(sc)
