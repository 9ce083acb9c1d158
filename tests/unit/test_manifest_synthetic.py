"""Synthetic screens and payloads for the bundled manifests, and the specification's example manifest.

These cover what no capture shows: Claude's bottom-row logic case by case, the usage-limit
screens and notifications that cannot be produced on demand, dialogs the mock LLM cannot
trigger, and the hook-event mapping of every agent. Assertions are about claims and verdicts,
never about rule indices.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tma.core import bundled, fixture, intake, manifest as M, states
from tma.core.explain import Detection, detect, prior_stamp
from tma.core.rules import Screen, strip_ansi

T0 = 1_796_000_000_000
RULE = "─" * 100


def read(agent: str, body: str, title: str = "", height: int | None = None,
         prev=None, manifest: M.Manifest | None = None) -> Detection:
    return detect(manifest or bundled.load(agent), Screen(body, title, height),
                  captured_at=T0, now=T0 + 10, prev=prev)


def claims(det: Detection) -> dict[str, str]:
    return {s: c.detail for s, c in det.result.claims.items()}


# ---------------------------------------------------------------- bundled set invariants


def test_bundled_manifests_all_load() -> None:
    manifests = bundled.load_all()
    assert sorted(manifests) == ["aider", "claude", "codex", "copilot", "cursor", "gemini",
                                "opencode", "pi", "qwen"]
    assert bundled.names() == sorted(manifests)
    for name, m in manifests.items():
        assert m.name == name
        assert m.min_engine_version == "0.1"
        assert M.long_process_names(m) == []
        assert bundled.text(name).startswith("#")  # every manifest opens with its comment


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """Point the bundled loader at a scratch directory instead of the package data."""
    monkeypatch.setattr(bundled, "_files", lambda: tmp_path)
    bundled._names.cache_clear()
    bundled._load_all.cache_clear()
    yield tmp_path
    bundled._names.cache_clear()
    bundled._load_all.cache_clear()


def test_a_broken_bundled_manifest_is_fatal(fake_package) -> None:
    (fake_package / "good.toml").write_text(
        'min_engine_version = "0.1"\n[identity]\nprocess_names = ["good"]\n[capture]\n',
        encoding="utf-8")
    (fake_package / "broken.toml").write_text(
        'min_engine_version = "0.1"\n[identity]\nprocess_names = ["x"]\n[capture]\n'
        '[[rules]]\nstate = "blocked"\nregion = "title"\nmatch = { contains = "!" }\n',
        encoding="utf-8")
    (fake_package / "notes.txt").write_text("not a manifest", encoding="utf-8")
    assert bundled.names() == ["broken", "good"]
    assert bundled.text("good").startswith("min_engine_version")
    # the blocked rule on the title region is a load error, and one bad file fails the set
    with pytest.raises(bundled.BundledManifestError, match="broken.toml"):
        bundled.load_all()


def test_unknown_bundled_name_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        bundled.text("nope")
    with pytest.raises(KeyError):
        bundled.load("nope")


@pytest.mark.parametrize("name", bundled.names())
def test_bundled_invariants(name: str) -> None:
    m = bundled.load(name)
    for h in m.hooks:
        # turn_end sits on exactly the idle-claiming entries
        assert h.turn_end == (h.state == states.IDLE), h
        if h.detail:
            assert h.detail in states.EMITTED_DETAILS
    for r in m.rules:
        if r.detail:
            assert r.detail in states.EMITTED_DETAILS
        assert not (r.region.kind == "title" and r.state == states.BLOCKED)
    assert set(m.visible) <= {states.WORKING, states.BLOCKED, states.IDLE}
    # aider's one hook is its notifications command: no session start or end
    assert (states.LIFECYCLE in m.covers) == (name != "aider")


def test_identities() -> None:
    ms = bundled.load_all()
    assert ms["codex"].identity.process_names == ("codex", "codex-aarch64-a")
    assert "node" not in ms["codex"].identity.process_names
    assert ms["opencode"].identity.process_names == ("opencode", "opencode.exe")
    gemini = ms["gemini"].identity
    assert gemini.process_names == ("node",)
    for title in ("◇  Ready (work-gemini)" + " " * 40, "✦  Working… (work-gemini)",
                  "✋  Action Required (work-gemini)"):
        assert gemini.title_matches(title)
    for title in ("◇ Ready (one space)", "node", "Gemini"):
        assert not gemini.title_matches(title)
    assert ms["cursor"].identity.title_matches("Cursor Agent")
    assert not ms["cursor"].identity.title_matches("Just OK")
    qwen = ms["qwen"].identity
    assert qwen.process_names == ("node",)
    for title in ("Qwen - proj", "◐\ufe0e Qwen - proj", "✳\ufe0e Qwen - proj"):
        assert qwen.title_matches(title)
    for title in ("node", "qwen", "Qwen Code", "◇  Ready (proj)"):
        assert not qwen.title_matches(title)
    assert ms["pi"].identity.title_matches("π - work-pi")
    copilot = ms["copilot"].identity
    assert copilot.process_names == ("node", "copilot")
    for title in ("GitHub Copilot", "say hello - GitHub Copilot"):
        assert copilot.title_matches(title)
    for title in ("node", "GitHub Copilot CLI docs - Firefox", "vm"):
        assert not copilot.title_matches(title)
    assert not ms["pi"].identity.title_matches("pi - work")


def test_visible_states_and_telemetry() -> None:
    ms = bundled.load_all()
    assert ms["claude"].visible == ("working", "idle", "blocked")
    assert ms["codex"].visible == ("working", "blocked")
    assert ms["gemini"].visible == ("working", "blocked")
    assert ms["cursor"].visible == ("working", "blocked")
    assert ms["copilot"].visible == ("blocked", "working", "idle")
    assert ms["opencode"].visible == ("blocked", "working")
    assert ms["pi"].visible == ("working",)
    assert ms["qwen"].visible == ("working", "blocked")
    assert ms["aider"].visible == ("working", "blocked", "idle")
    assert ms["aider"].decisive == ("working",)
    channels = {n: (m.context.channel, m.context.format) if m.context else None
                for n, m in ms.items()}
    assert channels == {
        "claude": ("event", "claude-statusline-json"),
        "codex": ("file-tail", "codex-rollout-jsonl"),
        "copilot": None,
        "cursor": ("event", "cursor-statusline-json"),
        "gemini": None,
        "opencode": None,
        "pi": ("event", "pi-context-json"),
        "qwen": None,
        "aider": None,
    }
    assert ms["claude"].normalize_detail("ratelimited") == "rate_limit"
    assert ms["claude"].normalize_detail("rate-limited") == "rate_limit"


def test_pi_has_no_blocked_rule_at_all() -> None:
    pi = bundled.load("pi")
    assert all(r.state != states.BLOCKED for r in pi.rules)
    assert all(h.state != states.BLOCKED for h in pi.hooks)


CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"


@pytest.mark.parametrize("split", ["(esc to| cancel, 2s)", "(esc| to cancel, 2s)",
                                   "(esc to cancel,| 2s)"])
def test_gemini_loading_row_wrapped_inside_its_parenthesis_is_still_working(split) -> None:
    """Gemini's `(esc to cancel, 2s)` is a text that shrinks beside a long phrase and
    wraps in the columns left to it (seen on Qwen Code, its fork, in a live run:
    qwen-0.24.4_working_wrapped_w100.txt). The real working capture, its loading row's
    parenthesis wrapped by hand at each word; a wrap after `cancel,` kept the words."""
    cap = fixture.parse((CAPTURES / "gemini-0.61.0_working.txt").read_text(encoding="utf-8"))
    whole = "(esc to cancel, 2s)"
    assert whole in cap.body
    row = next(r for r in cap.body.split("\n") if whole in r)
    column = len(strip_ansi(row[:row.index(whole)]))
    head, tail = split.split("|")
    wrapped = row.replace(whole, head) + "\n" + " " * column + tail.lstrip()
    body = cap.body.replace(row, wrapped)
    assert whole not in body
    det = read("gemini", body, cap.title, cap.height)
    assert det.state == states.WORKING, claims(det)


def test_qwen_wrapped_loading_row_with_content_to_its_right_is_still_working() -> None:
    """Qwen's loading row puts its right-hand content after a flexible gap: with the
    parenthesis wrapped (the live capture), that content stands on the first row after
    `esc to`. The real capture with a right-hand note added there."""
    cap = fixture.parse((CAPTURES / "qwen-0.24.4_working_wrapped_w100.txt").read_text(
        encoding="utf-8"))
    row = next(r for r in cap.body.split("\n") if r.rstrip().endswith("esc to"))
    body = cap.body.replace(row, row.rstrip() + "  ? hint")
    assert "esc to  ? hint\n" in body and "esc to cancel" not in body
    assert read("qwen", body, cap.title, cap.height).state == states.WORKING


# ---------------------------------------------------------------- hook mapping


def mapped(agent: str, event: str, payload: object = "{}"):
    text = payload if isinstance(payload, str) else json.dumps(payload)
    m = bundled.load(agent).map_event(event, text)
    if m is None:
        return None
    if m.lifecycle:
        return ("lifecycle", m.lifecycle)
    return (m.state, m.detail, m.turn_end)


WORKING = ("working", "", False)
IDLE_TURN = ("idle", "", True)
PERMISSION = ("blocked", "permission", False)
START = ("lifecycle", "start")
END = ("lifecycle", "end")

CODEX_TURN = {
    "type": "agent-turn-complete", "thread-id": "t-main", "turn-id": "u1", "cwd": "/w",
    "client": "codex-tui", "input-messages": ["say hello"],
    "last-assistant-message": "Hello.",
}
CODEX_TITLE_THREAD = dict(
    CODEX_TURN, **{"thread-id": "t-title", "input-messages": [
        "Generate a concise, single-line task title of at most 36 characters and under five "
        "words where possible. Start with an imperative verb."]},
)

HOOK_CASES = [
    # claude
    ("claude", "SessionStart", {"source": "startup"}, START),
    ("claude", "SessionEnd", {"reason": "prompt_input_exit"}, END),
    ("claude", "UserPromptSubmit", {"prompt": "hi"}, WORKING),
    ("claude", "PreToolUse", {"tool_name": "Bash"}, WORKING),
    ("claude", "PostToolUse", {"tool_name": "Bash"}, WORKING),
    ("claude", "PermissionRequest", {"tool_name": "Bash", "tool_input": {"command": "ls"}},
     PERMISSION),
    ("claude", "PermissionRequest", {"tool_name": "ExitPlanMode"}, ("blocked", "plan", False)),
    ("claude", "PermissionRequest", {"tool_name": "AskUserQuestion"},
     ("blocked", "question", False)),
    # the tool name quoted inside a command string is escaped, so it is not a plan
    ("claude", "PermissionRequest",
     {"tool_name": "Bash", "tool_input": {"command": 'echo \'"tool_name": "ExitPlanMode"\''}},
     PERMISSION),
    ("claude", "Notification", {"notification_type": "permission_prompt",
                                "message": "Claude needs your permission"}, PERMISSION),
    ("claude", "Notification", {"notification_type": "elicitation_dialog"}, PERMISSION),
    ("claude", "Notification", {"notification_type": "idle_prompt",
                                "message": "Claude is waiting for your input"}, None),
    ("claude", "PreCompact", {"trigger": "manual", "custom_instructions": ""},
     ("working", "compacting", False)),
    ("claude", "PreCompact", {"trigger": "auto"}, ("working", "compacting", False)),
    ("claude", "SessionStart", {"source": "compact"}, START),
    ("claude", "Stop", {"stop_hook_active": False}, IDLE_TURN),
    ("claude", "SubagentStop", {}, None),
    # codex
    ("codex", "SessionStart", {"source": "startup"}, START),
    ("codex", "SessionEnd", {"reason": "other"}, END),
    ("codex", "UserPromptSubmit", {"prompt": "hi"}, WORKING),
    ("codex", "PreToolUse", {"tool_name": "Bash"}, WORKING),
    ("codex", "PreToolUse", {"tool_name": "request_user_input", "tool_input": {"questions": []}},
     ("blocked", "question", False)),
    # the tool name quoted inside a command string is escaped, so it is not a question
    ("codex", "PreToolUse",
     {"tool_name": "exec_command", "tool_input": {"cmd": 'echo \'"tool_name": "request_user_input"\''}},
     WORKING),
    ("codex", "PreCompact", {"trigger": "manual"}, ("working", "compacting", False)),
    ("codex", "PostCompact", {"trigger": "manual"}, IDLE_TURN),
    ("codex", "PostCompact", {"trigger": "auto"}, WORKING),
    ("codex", "PostToolUse", {"tool_name": "Bash"}, WORKING),
    ("codex", "PermissionRequest", {"tool_name": "Bash"}, PERMISSION),
    ("codex", "Stop", {"last_assistant_message": "done"}, IDLE_TURN),
    ("codex", "notify", CODEX_TURN, IDLE_TURN),
    ("codex", "notify", {"type": "approval-requested", "thread-id": "t-main"}, None),
    ("codex", "notify", CODEX_TITLE_THREAD, None),
    # gemini
    ("gemini", "SessionStart", {"source": "startup"}, START),
    ("gemini", "SessionEnd", {"reason": "exit"}, END),
    ("gemini", "BeforeAgent", {"prompt": "hi"}, WORKING),
    ("gemini", "BeforeTool", {"tool_name": "run_shell_command"}, WORKING),
    ("gemini", "AfterTool", {"tool_name": "run_shell_command"}, WORKING),
    ("gemini", "AfterAgent", {"prompt_response": "ok"}, IDLE_TURN),
    ("gemini", "Notification", {"notification_type": "ToolPermission",
                                "message": "Tool Confirm Shell Command requires execution"},
     PERMISSION),
    ("gemini", "Notification", {"notification_type": "ToolPermission",
                                "message": "Tool requires confirmation",
                                "details": {"type": "ask_user", "title": "Ask User"}},
     ("blocked", "question", False)),
    ("gemini", "Notification", {"notification_type": "ToolPermission",
                                "message": "Tool requires confirmation",
                                "details": {"type": "exit_plan_mode", "title": "Plan Approval"}},
     ("blocked", "plan", False)),
    ("gemini", "Notification", {"notification_type": "ToolPermission",
                                "details": {"type": "edit", "title": "Confirm Edit: a.md"}},
     PERMISSION),
    ("gemini", "Notification", {"notification_type": "SomethingElse"}, None),
    ("gemini", "BeforeModel", {}, None),
    ("gemini", "AfterModel", {}, None),
    # cursor
    ("cursor", "sessionStart", {}, START),
    ("cursor", "sessionEnd", {}, END),
    ("cursor", "beforeSubmitPrompt", {"prompt": "hi"}, WORKING),
    ("cursor", "preToolUse", {}, WORKING),
    ("cursor", "postToolUse", {}, WORKING),
    ("cursor", "postToolUseFailure", {"failure_type": "error", "is_interrupt": False}, WORKING),
    ("cursor", "postToolUseFailure", {"failure_type": "error", "is_interrupt": True}, None),
    ("cursor", "stop", {}, IDLE_TURN),
    ("cursor", "beforeShellExecution", {}, None),
    # copilot (the event name is the hook's command line; payloads are camelCase)
    ("copilot", "sessionStart", {"source": "new", "initialPrompt": "hi"}, WORKING),
    ("copilot", "sessionStart", {"source": "resume"}, START),
    ("copilot", "sessionEnd", {"reason": "user_exit"}, END),
    ("copilot", "userPromptSubmitted", {"prompt": "hi"}, WORKING),
    ("copilot", "preToolUse", {"toolName": "bash", "toolArgs": {"command": "ls"}}, WORKING),
    ("copilot", "preToolUse", {"toolName": "ask_user", "toolArgs": {}},
     ("blocked", "question", False)),
    ("copilot", "preToolUse", {"toolName": "exit_plan_mode", "toolArgs": {}},
     ("blocked", "plan", False)),
    # a command that names the tool in its text is not a question
    ("copilot", "preToolUse", {"toolName": "bash", "toolArgs": {"command": '"toolName": "ask_user"'}},
     WORKING),
    ("copilot", "permissionRequest", {"hookName": "permissionRequest", "toolName": "bash"},
     PERMISSION),
    ("copilot", "notification", {"notification_type": "permission_prompt"}, PERMISSION),
    ("copilot", "notification", {"notification_type": "elicitation_dialog"},
     ("blocked", "question", False)),
    ("copilot", "notification", {"notification_type": "something_else"}, None),
    ("copilot", "postToolUse", {"toolName": "bash"}, WORKING),
    ("copilot", "agentStop", {"stopReason": "end_turn"}, IDLE_TURN),
    ("copilot", "errorOccurred", {"recoverable": True}, None),
    # opencode
    ("opencode", "session-start", {}, START),
    ("opencode", "user-prompt-submit", {}, WORKING),
    ("opencode", "stop", {}, IDLE_TURN),
    ("opencode", "permission-required", {"request_id": "per_1"}, PERMISSION),
    ("opencode", "question-required", {"question_id": "que_1"},
     ("blocked", "question", False)),
    ("opencode", "question-required", {"question_id": "que_2", "header": "Build Agent"},
     ("blocked", "plan", False)),
    ("opencode", "question-required", {"question_id": "que_3", "header": "Colour"},
     ("blocked", "question", False)),
    ("opencode", "session-end", {}, None),
    # pi
    ("pi", "session_start", {}, START),
    ("pi", "session_shutdown", {}, END),
    ("pi", "before_agent_start", {}, WORKING),
    ("pi", "tool_execution_start", {}, WORKING),
    ("pi", "agent_settled", {}, IDLE_TURN),
    ("pi", "agent_end", {}, IDLE_TURN),
    ("pi", "turn_end", {}, None),
]


@pytest.mark.parametrize(
    "agent,event,payload,expected", HOOK_CASES,
    ids=[f"{a}-{e}-{i}" for i, (a, e, _, _) in enumerate(HOOK_CASES)],
)
def test_map_event(agent: str, event: str, payload: object, expected) -> None:
    assert mapped(agent, event, payload) == expected


def test_codex_notify_title_thread_leaves_a_working_pane_alone() -> None:
    codex = bundled.load("codex")
    prev = prior_stamp(states.WORKING, source=states.SOURCE_HOOK, at=T0)
    title = intake.decide(prev, codex, "notify", json.dumps(CODEX_TITLE_THREAD), "", T0 + 5)
    assert title.kind == intake.UNMAPPED
    turn = intake.decide(prev, codex, "notify", json.dumps(CODEX_TURN), "", T0 + 5)
    assert turn.plan is not None and turn.plan.state == states.IDLE and turn.record_turn


# ---------------------------------------------------------------- claude: usage limits (hooks)

QUOTA = [
    ("quota_auto_resume_fired", "Usage limit reset — Claude is continuing your task",
     ("working", "rate_limit", False)),
    ("quota_auto_resume_stale", "Usage limit reset — press enter to continue",
     ("blocked", "rate_limit", False)),
    ("quota_auto_resume_disabled",
     "Automatic continue was turned off — the task will not resume on its own",
     ("blocked", "rate_limit", False)),
]


@pytest.mark.parametrize("kind,message,expected", QUOTA, ids=[q[0] for q in QUOTA])
def test_claude_usage_limit_notifications(kind: str, message: str, expected) -> None:
    payload = {"session_id": "s1", "hook_event_name": "Notification", "message": message,
               "notification_type": kind}
    assert mapped("claude", "Notification", payload) == expected
    decision = intake.decide(None, bundled.load("claude"), "Notification",
                             json.dumps(payload), "s1", T0)
    assert decision.plan is not None
    assert (decision.plan.state, decision.plan.detail) == expected[:2]


def test_claude_usage_limit_name_in_a_message_is_not_the_type() -> None:
    payload = {"notification_type": "idle_prompt",
               "message": "see quota_auto_resume_stale in the docs"}
    assert mapped("claude", "Notification", payload) is None


# ---------------------------------------------------------------- claude: screens

HISTORY = [
    "❯ say hello",
    "",
    "● Hello from mockllm. This is a short scripted reply.",
    "",
]


def claude(rows: list[str], footer: str = "  ? for shortcuts · ← for agents",
           blanks: int = 3) -> str:
    """A Claude screen: history, the given rows, then the composer box and its footer."""
    lines = HISTORY + rows + ["", RULE, "❯ ", RULE, footer] + [""] * blanks
    return "\n".join(lines) + "\n"


CLAUDE_WORKING_ROWS = {
    "live spinner": ["· Seasoning… (2s · ↓ 14 tokens)"],
    "long spinner": ["✶ Actioning… (4m 16s · ↓ 16.8k tokens)"],
    "spinner without a duration yet": ["✢ Flambéing… "],
    "ascii frame": ["* Pondering… (3s · ↑ 2 tokens)"],
    "spinner with its tip": ["✳ Topsy-turvying… (2s · ↓ 14 tokens)",
                             "  ⎿  Tip: Start with small features or bug fixes"],
    "newer spinner below completion history": [
        "✻ Brewed for 0s", "", "❯ next please", "", "● On it.", "", "✽ Wrangling… (5s)"],
    "waiting on background work": ["✻ Waiting for 1 background agent to finish"],
    "waiting on a workflow": ["✻ Waiting for 2 dynamic workflows to finish"],
}

CLAUDE_NOT_WORKING_ROWS = {
    "completion with done": ["✻ Crunched for 8s · done 2:37 PM"],
    "bare completion": ["✻ Brewed for 0s"],
    "completion with minutes": ["✻ Cooked for 4m 0s"],
    "completion below an old spinner": ["· Wrangling… (3s)", "", "● Done.", "",
                                        "✻ Churned for 8s"],
    "truncated completion": ["✻ Crunched for 8s · done 2:3…"],
    "indented ellipsis in tool output": ["● Bash(sleep 5)", "  ⎿  Running… (5s)"],
    "prose with an ellipsis": ["  Thinking about it… (not a spinner, indented prose)"],
}


@pytest.mark.parametrize("case", list(CLAUDE_WORKING_ROWS))
def test_claude_bottom_row_working(case: str) -> None:
    det = read("claude", claude(CLAUDE_WORKING_ROWS[case]), title="✳ Claude Code")
    assert det.state == states.WORKING
    assert det.result.claims[states.WORKING].source == "screen"
    assert states.BLOCKED not in det.result.claims


@pytest.mark.parametrize("case", list(CLAUDE_NOT_WORKING_ROWS))
def test_claude_bottom_row_not_working(case: str) -> None:
    det = read("claude", claude(CLAUDE_NOT_WORKING_ROWS[case]), title="✳ Claude Code")
    assert states.WORKING not in det.result.claims
    assert det.state == states.IDLE


def test_claude_working_footer_without_a_spinner_row() -> None:
    det = read("claude", claude([], footer="  esc to interrupt · ← for agents"),
               title="✳ Claude Code")
    assert det.state == states.WORKING


def test_claude_body_row_outranks_the_braille_title() -> None:
    det = read("claude", claude(["· Seasoning… (2s · ↓ 14 tokens)"]), title="⠐ Claude Code")
    assert det.result.claims[states.WORKING].source == "screen"
    older = read("claude", claude([]), title="⠂ Run shell command")
    assert older.state == states.WORKING
    assert older.result.claims[states.WORKING].source == "title"


def test_claude_tall_pane_with_blank_rows_under_the_ui() -> None:
    """Claude draws inline: a short session leaves blank rows under the footer."""
    working = claude(["· Seasoning… (2s · ↓ 14 tokens)"],
                     footer="  esc to interrupt · ← for agents", blanks=45)
    assert read("claude", working, height=60).state == states.WORKING
    idle = claude(["✻ Brewed for 0s"], blanks=45)
    det = read("claude", idle, title="Claude Code", height=60)  # no ✳ in the title
    assert det.state == states.IDLE


@pytest.mark.parametrize("rows", [
    ["● Do you want to proceed with the refactor? It touches six files."],
    ["  Options:", "  1. Yes, keep the old API", "  2. No, drop it"],
    ["✻ Cooked for 4m 0s"],
], ids=["prose question", "numbered yes without cursor", "past-tense completion"])
def test_claude_prose_never_blocks(rows: list[str]) -> None:
    det = read("claude", claude(rows), title="✳ Claude Code")
    assert states.BLOCKED not in det.result.claims
    assert states.WORKING not in det.result.claims
    assert det.state == states.IDLE


def dialog(*rows: str) -> str:
    return "\n".join(HISTORY + [RULE] + list(rows) + [""] * 4) + "\n"


PERMISSION_DIALOG = dialog(
    " Bash command", "", "   echo hi > mockllm-hi.txt", "   Print hi", "",
    " Do you want to proceed?", " ❯ 1. Yes",
    "   2. Yes, and always allow access to work-claude/ from this project",
    "   3. Yes, and switch to auto mode · shift+tab", "   4. No", "",
    " Tip: auto mode handles these prompts for you", "",
    " Esc to cancel · Tab to amend",
)
AUTO_MODE_DIALOG = dialog(
    " Make auto mode your default permission mode?", "",
    " Auto mode lets Claude handle permission prompts automatically. Claude checks each tool",
    " call for risky actions and prompt injection before executing.", "",
    " ❯ Yes, set auto mode as my default permission mode",
    "   No, keep manual mode",
)
PLAN_DIALOG = dialog(
    " Ready to code?", "", " Here is Claude's plan:", "   1. Add the flag", "",
    " Claude has written up a plan and is ready to execute. Would you like to proceed?", "",
    " ❯ 1. Yes, and use auto mode", "   2. Yes, auto-accept edits",
    "   3. Yes, manually approve edits", "   4. No, keep planning", "",
    " Tell Claude what to change",
)
TRUST_DIALOG = dialog(
    " Accessing workspace:", "", " /tmp/work", "",
    " Quick safety check: Is this a project you created or one you trust?", "",
    " ❯ 1. Yes, I trust this folder", "   2. No, exit", "", " Enter to confirm · Esc to cancel",
)
QUESTION_DIALOG = dialog(
    " ☐ Deploy", "", " Deploy to production now?", "",
    " ❯ 1. Yes", "     Ship it", "   2. No", "     Wait for review",
    "   3. Type something.", "", "   4. Chat about this", "",
    " Enter to select · ↑/↓ to navigate · Esc to cancel",
)


@pytest.mark.parametrize("body,detail", [
    (PERMISSION_DIALOG, "permission"),
    (AUTO_MODE_DIALOG, "question"),
    (PLAN_DIALOG, "plan"),
    (PLAN_DIALOG.replace(" ❯ 1. Yes, and use auto mode", "   1. Yes, and use auto mode")
                .replace("   2. Yes, auto-accept", " ❯ 2. Yes, auto-accept"), "plan"),
    (TRUST_DIALOG, "trust"),
    (QUESTION_DIALOG, "question"),
], ids=["permission", "auto-mode default", "plan", "plan with the cursor moved", "trust",
        "ask user question"])
def test_claude_dialogs(body: str, detail: str) -> None:
    det = read("claude", body, title="✳ Claude Code")
    assert (det.state, det.detail) == (states.BLOCKED, detail)
    assert det.result.claims.get(states.WORKING) is None


def test_claude_auto_mode_dialog_is_not_a_permission() -> None:
    """approve/deny gate on detail=permission, so they must never see this dialog as one."""
    det = read("claude", AUTO_MODE_DIALOG, title="✳ Claude Code")
    assert det.detail != states.PERMISSION


# Auto mode's fallback approval, captured at 100 columns (claude 2.1.332, lab mock). The
# captured sentence is the session-wide case; the binary words the per-call case (a session
# whose check is served but gave no result for this one call) differently, and the lab mock
# cannot serve the check at all, so that wording is only reachable here.
AUTOCHECK_CAPTURE = Path(__file__).resolve().parents[1] / "fixtures" / "captures" / (
    "claude-2.1.332_blocked_autocheck_bash_w100.txt")
AUTOCHECK_SESSION = "Auto mode can't check actions in this session, so this one needs your approval"
AUTOCHECK_CALL = "Auto mode couldn't check this action, so it needs your approval"


def autocheck_screen() -> str:
    cap = fixture.parse(AUTOCHECK_CAPTURE.read_text(encoding="utf-8"))
    body = strip_ansi(cap.body)
    assert AUTOCHECK_SESSION in body
    return body


def test_claude_autocheck_approval_for_one_call_is_a_permission() -> None:
    det = read("claude", autocheck_screen().replace(AUTOCHECK_SESSION, AUTOCHECK_CALL),
               title="✳ Claude Code", height=30)
    assert (det.state, det.detail) == (states.BLOCKED, states.PERMISSION)


def test_claude_autocheck_sentence_without_its_options_is_not_blocked() -> None:
    """The sentence quoted in the transcript, with no No/Yes rows under it, is prose."""
    for sentence in (AUTOCHECK_SESSION, AUTOCHECK_CALL):
        det = read("claude", claude([f"● {sentence}", "", "✻ Worked for 2s"]),
                   title="✳ Claude Code")
        assert det.state == states.IDLE
        assert states.BLOCKED not in det.result.claims


WAIT_FOOTERS = [
    ["  Usage limit reached · limit resets 3:45pm",
     "  Continuing automatically at 3:45pm · Esc to cancel"],
    ["  Usage limit reached", "  Continuing shortly · Esc to cancel"],
    ["  Usage limit reached · continuing automatically at 3:45pm · esc to cancel"],
]


@pytest.mark.parametrize("footer", WAIT_FOOTERS, ids=["at time", "shortly", "one line"])
def test_claude_usage_limit_wait_reads_working_rate_limit(footer: list[str]) -> None:
    body = claude(["✻ Worked for 2m 3s"], footer="\n".join(footer))
    det = read("claude", body, title="✳ Claude Code")
    assert (det.state, det.detail) == (states.WORKING, "rate_limit")


def test_claude_stale_usage_limit_reads_blocked_rate_limit() -> None:
    body = claude(["✻ Worked for 2m 3s"],
                  footer="  Your usage limit has reset\n  Press enter to continue")
    det = read("claude", body, title="✳ Claude Code")
    assert (det.state, det.detail) == (states.BLOCKED, "rate_limit")


def test_claude_usage_limit_menu_reads_blocked_rate_limit() -> None:
    body = dialog(" Usage limit reached · limit resets 3:45pm", "",
                  " What do you want to do?", "", " ❯ 1. Stop and wait for limit to reset",
                  "   2. Wait here, then continue automatically at 3:45pm",
                  "   3. Upgrade your plan", "", " Enter to confirm · Esc to cancel")
    det = read("claude", body, title="✳ Claude Code")
    assert (det.state, det.detail) == (states.BLOCKED, "rate_limit")


def test_claude_permission_prompt_during_a_wait_is_a_permission() -> None:
    body = PERMISSION_DIALOG.replace(
        " Esc to cancel · Tab to amend",
        " Esc to cancel · Tab to amend\n  Your usage limit has reset\n  Press enter to continue")
    det = read("claude", body, title="✳ Claude Code")
    assert (det.state, det.detail) == (states.BLOCKED, "permission")


def test_claude_usage_limit_notices_in_history_are_not_live() -> None:
    rows = ["  ⎿  Usage limit has reset · Press enter to continue",
            "  ⎿  Usage limit reset · Continuing automatically", "", "✻ Worked for 12s"]
    det = read("claude", claude(rows), title="✳ Claude Code")
    assert det.state == states.IDLE
    assert set(det.result.claims) == {states.IDLE}


def test_claude_history_overlay_freezes() -> None:
    body = dialog("   Showing detailed transcript · ctrl+o to toggle", "",
                  "   ❯ 1. Yes", "     2. No")
    det = read("claude", body, title="✳ Claude Code",
               prev=prior_stamp(states.BLOCKED, at=T0 - 1000))
    assert det.result.history_view
    assert det.state == states.BLOCKED  # held: the overlay says nothing about the pane
    prose = read("claude", claude(["● To switch, select model in /model."]), title="✳ x")
    assert not prose.result.history_view


def test_claude_model_picker_reads_idle_not_history() -> None:
    """Issue 8: the picker is opened at an idle composer, so it is idle chrome, not a freeze.
    It cannot open over a dialog that waits on the human, so a blocked prior gives way."""
    body = dialog("   Select model", "   Switch between Claude models.", "",
                  "   ❯ 1. Default (recommended)", "     2. Opus", "",
                  "   Enter to set as default · s to use this session only · Esc to cancel")
    det = read("claude", body, title="", prev=prior_stamp(states.BLOCKED, at=T0 - 1000))
    assert not det.result.history_view
    assert det.state == states.IDLE
    assert set(det.result.claims) == {states.IDLE}


# ---------------------------------------------------------------- gemini

GEMINI_061_TAIL = [
    "  Executing Hooks: logBeforeAgent, logPreCompress, logAfterAgent      ? for shortcuts",
    RULE,
    " Shift+Tab to accept edits",
    "",
    " >   Type your message or @path/to/file",
    "",
    " workspace (/directory)                      sandbox                     /model",
    " /tmp/agentlab/work-gemini                   no sandbox                    Auto",
]


def gemini(transcript: list[str], tail: list[str], blanks: int = 9) -> str:
    return "\n".join(transcript + tail + [""] * blanks) + "\n"


def test_gemini_061_idle_placeholder_and_draft() -> None:
    transcript = [" > say hello", "", "✦ Hello from mockllm.", "", ""]
    assert list(read("gemini", gemini(transcript, GEMINI_061_TAIL), height=30)
                .result.claims) == [states.IDLE]
    draft = GEMINI_061_TAIL[:4] + [" > please refactor the parser so that", "   it streams"] \
        + GEMINI_061_TAIL[5:]
    assert list(read("gemini", gemini(transcript, draft), height=30)
                .result.claims) == [states.IDLE]


def test_gemini_061_idle_in_a_tall_pane() -> None:
    body = gemini([" > say hello", "", "✦ Hello."], GEMINI_061_TAIL, blanks=50)
    assert read("gemini", body, height=70).state == states.IDLE


def test_gemini_061_blocked_screen_raises_no_idle_claim() -> None:
    """A user echo (" > …") under a markdown rule must not pass for the composer."""
    transcript = ["✦ Here is the plan.", RULE, " > RUNTOOL now", "", "✦ I will run a command.", ""]
    box = [
        "╭" + "─" * 98 + "╮",
        "│ ? Shell  echo hi > mockllm-hi.txt" + " " * 64 + "│",
        "│ ╭" + "─" * 94 + "╮ │",
        "│ │ echo hi > mockllm-hi.txt" + " " * 70 + "│ │",
        "│ ╰" + "─" * 94 + "╯ │",
        "│ Allow execution of [Shell]?" + " " * 70 + "│",
        "│" + " " * 98 + "│",
        "│ ● 1. Allow once" + " " * 82 + "│",
        "│   2. Allow for this session" + " " * 70 + "│",
        "│   3. No, suggest changes (esc)" + " " * 67 + "│",
        "╰" + "─" * 98 + "╯",
    ]
    det = read("gemini", gemini(transcript, box, blanks=3), height=30)
    assert (det.state, det.detail) == (states.BLOCKED, "permission")
    assert set(det.result.claims) == {states.BLOCKED}


def test_gemini_edit_confirmation_blocks() -> None:
    body = "\n".join(["│ Apply this change?", "│", "│ ● 1. Allow once",
                      "│   2. Allow for this session", "│   3. Modify with external editor"])
    assert read("gemini", body).state == states.BLOCKED


# ---------------------------------------------------------------- codex

CODEX_FOOTER = ["", "  mock-model default · /tmp/work", "  ← for agents · ? for shortcuts"]


def test_codex_hooks_need_review_is_trust() -> None:
    body = "\n".join([""] * 10 + [
        "  Hooks need review", "", "  1 hook is new or changed.",
        "  Hooks can run outside the sandbox after you trust them.", "",
        "› 1. Review hooks", "  2. Trust all and continue",
        "  3. Continue without trusting (hooks won't run)", "",
        "  Press enter to confirm or esc to cancel",
    ])
    det = read("codex", body, title="work-codex")
    assert (det.state, det.detail) == (states.BLOCKED, "trust")
    assert states.IDLE not in det.result.claims


def test_codex_edit_approval_is_permission() -> None:
    body = "\n".join([""] * 10 + [
        "  Would you like to make the following edits?", "", "  notes.txt +1 -0", "",
        "› 1. Yes, proceed (y)", "  2. No, and tell Codex what to do differently (esc)", "",
        "  Press enter to confirm or esc to cancel",
    ])
    det = read("codex", body, title="[ ! ] Action Required | work-codex")
    assert (det.state, det.detail) == (states.BLOCKED, "permission")
    assert states.IDLE not in det.result.claims


def test_codex_answered_approval_in_history_is_not_blocked() -> None:
    body = "\n".join(["  Would you like to run the following command?", "", "  $ ls",
                      "✔ You approved codex to run ls this time"] + [""] * 20
                     + ["› Ask Codex to do anything"] + CODEX_FOOTER)
    det = read("codex", body, title="say hello | work-codex")
    assert det.state == states.IDLE


def test_codex_working_from_the_title_alone() -> None:
    body = "\n".join(["• Working slowly through this"] + [""] * 20
                     + ["› Ask Codex to do anything"] + CODEX_FOOTER)
    det = read("codex", body, title="⠼ say hello | work-codex")
    assert det.state == states.WORKING


# ---------------------------------------------------------------- opencode

OPENCODE_QUESTION = "\n".join([
    "  ┃  Which colour should the button be?",
    "  ┃",
    "  ┃  1. Red",
    "  ┃  2. Blue",
    "  ┃  3. Type your own answer",
    "  ┃",
    "  ┃  ↑↓ select  enter submit  esc dismiss",
    "",
])


def test_opencode_question_dialog() -> None:
    det = read("opencode", OPENCODE_QUESTION)
    assert (det.state, det.detail) == (states.BLOCKED, "question")
    with_status = OPENCODE_QUESTION + "   ■■⬝⬝⬝⬝⬝⬝  esc interrupt     ctrl+p commands\n"
    det = read("opencode", with_status)
    assert (det.state, det.detail) == (states.BLOCKED, "question")


def test_opencode_multi_select_question() -> None:
    body = OPENCODE_QUESTION.replace("enter submit", "enter toggle")
    assert read("opencode", body).detail == "question"


def test_opencode_numbered_prose_is_not_a_question() -> None:
    body = "\n".join(["     1. Red", "     2. Blue", "",
                      "   /tmp/work                          120 (0%)  ctrl+p commands"])
    assert read("opencode", body).state == states.IDLE


# ---------------------------------------------------------------- pi

PI_EXTENSION_PROMPT = "\n".join([
    " RUNTOOL now", "", " $ echo hi > mockllm-hi.txt", "", " ⠴ Working...", "", RULE, "",
    " Allow bash command?", "", "   echo hi > mockllm-hi.txt", "", " → Allow", "   Deny", "",
    " ↑↓ navigate  enter select  escape/ctrl+c cancel", "", RULE,
    "/tmp/agentlab/work-pi (master)",
    "↑300 ↓60 0.1%/100k (auto)                                         mock-model",
])


def test_pi_extension_prompt_reads_working_never_blocked() -> None:
    det = read("pi", PI_EXTENSION_PROMPT, title="π - work-pi", height=30)
    assert det.state == states.WORKING
    assert states.BLOCKED not in det.result.claims


# ---------------------------------------------------------------- the specification's example

SEED_003_EXAMPLE = r'''
min_engine_version = "0.1"

[identity]
process_names = ["claude"]

[hooks]
covers = ["working", "blocked", "idle", "lifecycle"]

[[hooks.map]]
event = "Notification"
matcher = "permission_prompt|elicitation_dialog"
claim = { state = "blocked", detail = "permission" }

[[hooks.map]]
event = "Stop"
claim = { state = "idle" }
turn_end = true

[[hooks.map]]
event = "SessionStart"
claim = { lifecycle = "start" }

[[hooks.map]]
event = "SessionEnd"
claim = { lifecycle = "end" }

[capture]
visible = ["working", "idle", "blocked"]

[telemetry.context]
channel = "event"
format = "claude-statusline-json"

[[rules]]
state = "blocked"
detail = "permission"
priority = 100
region = "tail_lines(5)"
match = { any = [ { contains = "Do you want to proceed?" }, { regex = "❯\\s" } ] }

[[rules]]
state = "idle"
priority = 10
region = "tail_lines(50)"
skip_state_update = true
match = { all = [ { contains = "transcript" }, { not = { contains = "❯" } } ] }

[details]
rate_limit = { aliases = ["ratelimited", "rate-limited"] }
'''


@pytest.fixture(scope="module")
def seed_manifest() -> M.Manifest:
    return M.loads("claude", SEED_003_EXAMPLE)


def test_seed_example_loads_as_written(seed_manifest: M.Manifest) -> None:
    m = seed_manifest
    assert m.identity.process_names == ("claude",)
    assert m.hook_capable and m.covers == ("working", "blocked", "idle", "lifecycle")
    assert m.visible == ("working", "idle", "blocked")
    assert m.context == M.ContextTelemetry("event", "claude-statusline-json")
    assert m.normalize_detail("rate-limited") == "rate_limit"
    assert [(r.state, r.detail, r.priority, str(r.region), r.skip_state_update)
            for r in m.rules] == [
        ("blocked", "permission", 100, "tail_lines(5)", False),
        ("idle", "", 10, "tail_lines(50)", True),
    ]


def test_seed_example_hooks(seed_manifest: M.Manifest) -> None:
    m = seed_manifest
    perm = m.map_event("Notification", '{"notification_type":"permission_prompt"}')
    assert perm is not None and (perm.state, perm.detail) == ("blocked", "permission")
    assert m.map_event("Notification", '{"notification_type":"elicitation_dialog"}') is not None
    assert m.map_event("Notification", '{"notification_type":"idle_prompt"}') is None
    stop = m.map_event("Stop", "{}")
    assert stop is not None and stop.state == "idle" and stop.turn_end
    start, end = m.map_event("SessionStart", "{}"), m.map_event("SessionEnd", "{}")
    assert start is not None and start.lifecycle == "start"
    assert end is not None and end.lifecycle == "end"
    assert m.map_event("UserPromptSubmit", "{}") is None  # not mapped in the example


def test_seed_example_screens(seed_manifest: M.Manifest) -> None:
    m = seed_manifest
    asking = "history\n" * 10 + " Do you want to proceed?\n 1. Yes\n 2. No\n"
    det = read("claude", asking, manifest=m)
    assert (det.state, det.detail) == (states.BLOCKED, "permission")
    cursor = "history\n" * 10 + " ❯ 1. Yes\n   2. No\n"
    assert read("claude", cursor, manifest=m).state == states.BLOCKED
    # the question scrolled out of the five-line window: nothing matches, no prior: unknown
    scrolled = " Do you want to proceed?\n" + "later output\n" * 6
    assert read("claude", scrolled, manifest=m).state == states.UNKNOWN
    # "transcript" with no ❯ in the last 50 lines is a history view: the prior is held
    viewer = "old line\n" * 5 + "Showing detailed transcript · ctrl+o to toggle\n"
    det = read("claude", viewer, manifest=m, prev=prior_stamp(states.IDLE, at=T0 - 1))
    assert det.result.history_view and det.state == states.IDLE
    # with a ❯ in view it is no history view
    live = "transcript of the session\n❯ \n"
    det = read("claude", live, manifest=m)
    assert not det.result.history_view and det.state == states.BLOCKED
