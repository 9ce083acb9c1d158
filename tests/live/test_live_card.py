"""`tma card` on a real Claude: a PermissionRequest held by the hook is a hook-lane card
that carries the tool and the command exactly as Claude asked for them.

Claude runs hooked (`tma install-hooks claude --yes`) against the fake LLM, which asks
for one shell tool call (`echo hi > fakellm-hi.txt`) when a prompt says RUNTOOL. While
the PermissionRequest hook holds, the card is read with `tma card --pane P --json` and
`tma ls --json`; the prompt is then denied over the same hook lane (so nothing runs).

OpenCode runs hooked with `--port`: its question tool's request is a question card, read
from its own server with GET /question. Copilot's permission card is read off its screen.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.helpers.live import agents as agents_mod
from tests.helpers.live.fakellm import KEY_TOOL, TOOL_CMD
from tests.helpers.live.harness import Scenario
from tests.helpers.live.opencode import free_port, opencode, wait_option
from tests.helpers.live.steps import answer_dialog, settle
from tma.runtime.act import opencode_api as api

pytestmark = pytest.mark.live

CLAUDES = ("claude-2.1.197", "claude-2.1.332")


def _stamped(sc: Scenario, state: str, detail: str = "", timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while (sc.pane_option("@agent_state"), sc.pane_option("@agent_detail") if detail
           else "") != (state, detail):
        assert time.time() < deadline, (
            f"{sc.agent.key}: tma never said {state}/{detail}; screen:\n{sc.screen()}")
        time.sleep(0.1)


def _screen(sc: Scenario, cls: str, since: float, timeout: float = 60) -> None:
    sc.wait_screen(lambda s: s.cls == cls, timeout, f"the {cls} screen", since)


def _card(sc: Scenario) -> dict:
    res = sc.server.tma("card", "--pane", sc.pane, "--json", timeout=60)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _ask_for_the_tool(sc: Scenario) -> None:
    """A prompt that makes the fake model call the shell tool, up to its permission."""
    t = sc.type_line(f"{KEY_TOOL} now" if sc.agent.agent != "aider" else sc.agent.tool_prompt)
    _screen(sc, "prompt", t)
    sc.wait_regex(sc.agent.approve_ready, 30, since=t)
    settle(sc, sc.agent.approve_ready)
    _stamped(sc, "blocked", "permission")


def _check_bash_card(sc: Scenario, card: dict) -> None:
    assert card["pending_call"]["tool"] == "Bash"
    assert card["pending_call"]["input"]["command"] == TOOL_CMD
    rows, _raw = sc.ls_rows()
    row = next(r for r in rows if r["pane"] == sc.pane)
    assert (row["pending_tool"], row["pending_summary"]) == ("Bash", f"Bash: {TOOL_CMD}")


def _deny_then_exit(sc: Scenario, outcome: str) -> None:
    """Deny the prompt (nothing runs), see the card let go, and leave the agent."""
    res = sc.server.tma("act", "deny", "--pane", sc.pane, "--json", timeout=60)
    assert json.loads(res.stdout)["outcome"] == outcome, res.stdout + res.stderr
    _screen(sc, "idle", time.time() - 0.1, 60)
    deadline = time.time() + 15
    while (card := _card(sc))["card"] != "none":
        assert time.time() < deadline, f"the card stayed after deny: {card}"
        time.sleep(0.5)
    assert not (sc.work / "fakellm-hi.txt").exists(), "denied, the tool ran"
    for key_, wait_for in sc.agent.exit_steps:
        if wait_for:
            sc.wait_regex(wait_for, 15)
        sc.keys(key_)
    sc.wait_screen(lambda s: s.cls == "exited", 30, "the shell back")


@pytest.mark.parametrize("key", CLAUDES)
def test_a_real_permission_request_is_a_hook_card_with_tool_and_command(scenario_factory,
                                                                          fake_llm, key):
    sc: Scenario = scenario_factory(agents_mod.BY_KEY[key], "hooked")
    sc.start()
    for dialog in sc.agent.dialogs:
        answer_dialog(sc, dialog)
    _screen(sc, "idle", 0, 90)
    sc.quiet("")

    _ask_for_the_tool(sc)
    holder = sc.pane_option("@tma_reply_holder")
    assert holder.isdigit(), f"no hook holds the prompt (@tma_reply_holder {holder!r})"

    card = _card(sc)
    assert (card["card"], card["lane"], card["extraction"]) == ("permission", "hook", "exact"), \
        card
    _check_bash_card(sc, card)
    assert card["pending_call"]["call_id"]  # Claude names the prompt it parked
    assert [o["kind"] for o in card["options"]] == ["allow-once", "reject-once"]
    assert card["binder"]["expect_permission_request"] == sc.pane_option(
        "@agent_permission_request")

    # answer it over the same lane: nothing runs, and the card lets go
    _deny_then_exit(sc, "replied")


def test_a_real_copilot_permission_is_a_screen_card_with_tool_and_command(scenario_factory):
    """Copilot parks no call through its hooks (tma does not answer them): its card comes
    from the screen lane, the manifest's [dialog] read of the live dialog. Denied with the
    keys lane's Escape, nothing runs and the card lets go."""
    sc: Scenario = scenario_factory(agents_mod.BY_KEY["copilot-1.0.102"], "hookless")
    sc.start()
    _screen(sc, "idle", 0, 90)
    sc.quiet("")

    _ask_for_the_tool(sc)

    card = _card(sc)
    assert (card["card"], card["lane"], card["extraction"]) == (
        "permission", "screen", "exact"), card
    _check_bash_card(sc, card)
    kinds = [o["kind"] for o in card["options"]]
    assert kinds[0] == "allow-once" and "reject-once" not in kinds, card  # Esc rejects
    _deny_then_exit(sc, "sent")


def test_a_real_aider_question_is_a_screen_card_with_tool_and_command(scenario_factory):
    """aider asks "Run shell command?" on one row with the command printed above it: the
    card comes from the screen lane, its [dialog] read, with the inline (Y)es/(N)o/(D)on't
    ask again options. Denied by keys (n Enter), nothing runs and the card lets go."""
    sc: Scenario = scenario_factory(agents_mod.BY_KEY["aider-0.86.2"], "hookless")
    sc.start()
    _screen(sc, "idle", 0, 90)
    sc.quiet("")

    _ask_for_the_tool(sc)

    card = _card(sc)
    assert (card["card"], card["lane"], card["extraction"]) == (
        "permission", "screen", "exact"), card
    _check_bash_card(sc, card)
    assert [o["kind"] for o in card["options"]] == ["allow-once", "reject-once",
                                                    "allow-always"], card
    _deny_then_exit(sc, "sent")


QUESTION = {"question": "Which colour should the new button be",
            "header": "Colour",
            "options": [{"label": "Blue", "description": "Matches the theme"},
                        {"label": "Green", "description": "Stands out"}]}


def test_a_real_opencode_question_is_a_question_card(scenario_factory):
    """OpenCode with its HTTP server (`--port`): the question tool's request, fetched with
    GET /question, is the card verbatim; then it is dismissed over the same API."""
    port = free_port()
    sc: Scenario = scenario_factory(opencode(f"--port {port}"), "hooked")
    sc.start()
    sc.wait_regex(r"ctrl\+p commands", 90)
    endpoint = wait_option(sc, "@agent_api_endpoint", bool)
    ask = "ask1 CALLTOOL:question" + json.dumps({"questions": [dict(QUESTION, multiple=False)]},
                                                separators=(",", ":"))
    sc.type_line(ask, echo="ask1")
    rid = wait_option(sc, "@agent_question_request", bool, 60)
    _stamped(sc, "blocked", "question")

    res = sc.server.tma("card", "--pane", sc.pane, "--json", timeout=60)
    assert res.returncode == 0, res.stderr
    card = json.loads(res.stdout)
    if card["card"] == "informational":  # the first v1 read boots OpenCode's instance
        time.sleep(2)
        card = json.loads(sc.server.tma("card", "--pane", sc.pane, "--json", timeout=60).stdout)
    assert (card["card"], card["agent"], card["request_id"]) == ("question", "opencode", rid), card
    [q] = card["questions"]
    assert (q["question"], q["header"], q["options"], q["multiple"]) == (
        QUESTION["question"], QUESTION["header"], QUESTION["options"], False)

    resolved = api.resolve_endpoint({"@agent_api_endpoint": endpoint}, None)
    assert api.reject_question(resolved, rid, 10.0).outcome == "replied"
    wait_option(sc, "@agent_question_request", lambda v: v == "")
    for key_, _ in sc.agent.exit_steps:
        sc.keys(key_)
    sc.wait_screen(lambda s: not agents_mod.screen_has_agent(sc.agent, s.screen, s.title), 30,
                   "the shell back")
