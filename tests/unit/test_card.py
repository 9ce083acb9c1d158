"""tma.runtime.act.card: the card of one cycle row, lane by lane, as the protocol writes it.

The hook lane's inputs are real payloads the pinned agents sent through the lab
(tests/fixtures/hooks/lab), run through the hook intake's own parking of the call.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tma.core import bundled, card as core_card, fixture, proto
from tma.core.codec import Stamp
from tma.core.rules import raw_lines, strip_ansi
from tma.runtime import hook
from tma.runtime.act import card, card_screen
from tma.runtime.cycle import Row
from tma.tmux.read import Pane
from tma.ui import cards as text_render, rows as render

LAB = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "lab"
CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
VECTORS = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "proto" / "vectors"


def _row(state: str = "blocked", detail: str = "permission", agent: str = "claude",
         options: dict | None = None, session: str = "") -> Row:
    pane = Pane(pane_id="%1", pane_pid=1, session_name="s", window_index="0",
                pane_index="0", current_command=agent, window_activity=0, alternate_on=False,
                scroll_position=0, height=24, current_path="/nowhere", session_id="$0",
                window_id="@0", width=80, window_active=True, pane_active=True,
                tty="/dev/pts/0", title="t", options=options or {})
    stamp = Stamp(state=state, detail=detail, since=1757030400000, name=agent, session=session)
    return Row(pane=pane, stamp=stamp, agent=agent)


def _lab(name: str, event: str) -> dict:
    for line in (LAB / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        if doc.get("event") == event:
            return doc["stdin"]
    raise AssertionError(f"no {event} in {name}")


def _parked(payload: dict, call: str = "") -> dict:
    """The pane options the hook intake writes for a blocked call (its own functions)."""
    tool = payload["tool_name"]
    summary, full = hook._pending(json.dumps(payload), tool)
    return {"@agent_pending_tool": tool, "@agent_pending_call": call,
            "@agent_pending_summary": summary, "@agent_pending_input": full,
            "@agent_permission_request": "tma-abc123"}


def _keys(path: str) -> list[str]:
    return list(json.loads((VECTORS / path).read_text(encoding="utf-8")))


# ---------------------------------------------------------------- none / informational


@pytest.mark.parametrize("state", ["idle", "working", "unknown"])
def test_a_pane_that_is_not_blocked_has_no_card(state):
    frame = card.build(_row(state, "", options={"@agent_pending_tool": "Bash"}))
    assert isinstance(frame, proto.NoCard)
    assert card.document(frame) == {"schema": 1, "id": "0", "t": "card", "card": "none"}


@pytest.mark.parametrize("detail,words", [
    ("plan", "plan"), ("trust", "trust"), ("rate_limit", "Rate limited"),
    ("question", "question"), ("", "Blocked"), ("frobnicate", "Blocked: frobnicate")])
def test_any_other_blocked_detail_is_informational(detail, words):
    frame = card.build(_row("blocked", detail))
    assert isinstance(frame, proto.InformationalCard)
    assert frame.detail == (detail or "unknown") and words in frame.headline
    doc = card.document(frame)
    if VECTORS.is_dir():
        assert list(doc) == _keys("card-informational.json")
    assert set(doc) == {"schema", "id", "t", "card", "detail", "headline"}  # no control


def test_an_informational_card_carries_the_summary_when_the_hook_named_it():
    frame = card.build(_row("blocked", "plan", options={"@agent_pending_summary": "ExitPlanMode"}))
    assert frame.headline.endswith(": ExitPlanMode")


# ---------------------------------------------------------------- the hook lane


def _permission_requests() -> list[tuple[str, dict]]:
    """Every PermissionRequest a pinned agent sent through the lab, with its tool input."""
    out = []
    for path in sorted(LAB.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            doc = json.loads(line)
            stdin = doc.get("stdin")
            if doc.get("event") == "PermissionRequest" and isinstance(stdin, dict) \
                    and isinstance(stdin.get("tool_input"), dict):
                out.append((f"{path.stem}:{len(out)}", stdin))
    return out


@pytest.mark.parametrize("name,payload", _permission_requests(),
                         ids=[n for n, _ in _permission_requests()])
def test_every_real_permission_request_parks_its_input_exactly(name, payload):
    assert {name.split("-")[0] for name, _ in _permission_requests()} == {"claude", "codex", "qwen"}
    parked = _parked(payload)
    assert card.hook_input(parked) == payload["tool_input"]
    assert parked["@agent_pending_summary"].startswith(payload["tool_name"])


@pytest.mark.parametrize("lab", ["claude-2.1.332_dialogs-run", "codex-0.171.0_dialogs-run"])
def test_the_hook_lane_carries_the_real_payloads_tool_and_input_exactly(lab):
    payload = _lab(lab, "PermissionRequest")
    frame = card.build(_row(agent=lab.split("-")[0], options=_parked(payload, "p-1")))
    assert isinstance(frame, proto.PermissionCard)
    assert (frame.lane, frame.extraction) == ("hook", "exact")
    assert [(o.kind, o.option_id) for o in frame.options] == [("allow-once", "approve"),
                                                              ("reject-once", "deny")]
    assert frame.pending_call == proto.PendingCall("Bash", payload["tool_input"], "p-1")
    assert frame.binder == proto.Binder(1757030400000, "tma-abc123")
    doc = card.document(frame)
    if VECTORS.is_dir():
        assert list(doc) == _keys("card-permission-hook.json")
    # the wire form reads back as the same card
    assert proto.parse_line(proto.dumps(frame), proto.RESPONSE) == frame


def test_the_parked_input_is_inert_for_tmux_and_round_trips():
    nasty = {"command": "rm -rf #{pane_id},$HOME \"x\" 'y' \\ \x01", "n": 3, "deep": {"a": [1]}}
    full = hook.pending_input(nasty)
    assert set(full) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
    assert card.hook_input({"@agent_pending_input": full}) == nasty


def test_an_input_over_four_kib_is_cut_visibly_or_not_kept():
    big = {"file_path": "/tmp/x", "content": "y" * 10_000}
    cut = card.hook_input({"@agent_pending_input": hook.pending_input(big)})
    assert cut["file_path"] == "/tmp/x" and cut["content"] == "y" * 256 + "…"
    assert len(json.dumps(cut)) <= hook.PENDING_INPUT_MAX
    many = {f"k{i}": i for i in range(1000)}  # no long string to cut: nothing fits
    assert hook.pending_input(many) == ""
    assert card.hook_input({"@agent_pending_input": "not base64!"}) == {}
    assert card.hook_input({"@agent_pending_input": base64.b64encode(b"[1]").decode()}) == {}


def test_a_hook_card_with_no_parked_input_still_names_the_tool():
    frame = card.build(_row(options={"@agent_pending_tool": "Bash", "@agent_pending_call": "c"}))
    assert frame.lane == "hook" and frame.pending_call == proto.PendingCall("Bash", {}, "c")
    assert frame.binder.expect_permission_request is None


# ---------------------------------------------------------------- the api lane


def test_opencode_permission_goes_over_its_api():
    frame = card.build(_row(agent="opencode", options={"@agent_permission_request": "per_1"}))
    assert (frame.lane, frame.pending_call) == ("api", None)
    assert [o.option_id for o in frame.options] == ["once", "always", "reject"]
    assert frame.binder.expect_permission_request == "per_1"


def test_opencode_question_without_an_endpoint_is_informational_at_once():
    frame = card.build(_row(detail="question", agent="opencode"))
    assert isinstance(frame, proto.InformationalCard) and frame.detail == "question"


# ---------------------------------------------------------------- the screen lane


def test_the_screen_lane_without_dialog_rules_fails_and_never_reads_the_screen():
    read = []
    frame = card.build(_row(), manifest=SimpleNamespace(dialog=None),
                       screen=lambda: read.append(1) or ["x"])
    assert (frame.lane, frame.extraction, frame.options, frame.pending_call) == (
        "screen", "failed", (), None)
    assert read == []  # no rules: no capture


@pytest.mark.parametrize("capture", ["claude-2.1.332_blocked.txt", "codex-0.171.0_blocked.txt"])
def test_the_screen_lane_reads_a_real_dialog_with_the_manifests_rules(capture):
    """A real captured permission dialog, the bundled manifest's [dialog] rules: the card
    carries what the extractor read, options keyed by the digits the dialog shows."""
    cap = fixture.parse((CAPTURES / capture).read_text(encoding="utf-8"))
    lines = raw_lines(strip_ansi(cap.body))
    manifest = bundled.load(cap.agent)
    frame = card.build(_row(agent=cap.agent), manifest=manifest, screen=lambda: lines)
    ask = core_card.extract(cap.agent, lines, manifest.dialog)
    assert ask is not None and ask.extraction == "exact"
    assert (frame.lane, frame.extraction) == ("screen", "exact")
    assert frame.pending_call == proto.PendingCall("Bash", {"command": "echo hi > mockllm-hi.txt"},
                                                   "")
    assert [(o.kind, o.name, o.option_id) for o in frame.options] == [
        (o.kind, o.name, o.option_id) for o in ask.options]
    assert frame.options[0] == proto.CardOption("allow-once", frame.options[0].name, "1")
    if VECTORS.is_dir():
        assert list(card.document(frame)) == _keys("card-permission-screen.json")


def test_an_option_the_dialog_shows_no_key_for_has_no_option_id(monkeypatch):
    ask = core_card.ScreenAsk(tool="Bash", summary="Bash: ls", input=(("command", "ls"),),
                              options=(core_card.Option("allow-once", "Yes", "y"),
                                       core_card.Option("reject-once", "(esc) No", "")),
                              extraction="wrapped")
    monkeypatch.setattr(card_screen, "_core_extract", lambda agent, lines, rules: ask)
    frame = card.build(_row(), manifest=SimpleNamespace(dialog={"r": 1}), screen=lambda: ["x"])
    assert frame.options == (proto.CardOption("allow-once", "Yes", "y"),
                             proto.CardOption("reject-once", "(esc) No"))
    assert "option_id" not in card.document(frame)["options"][1]  # no keycap
    assert frame.extraction == "wrapped"


def test_an_extractor_that_raises_leaves_a_failed_card(monkeypatch):
    def boom(agent, lines, rules):
        raise RuntimeError("bad rule")

    monkeypatch.setattr(card_screen, "_core_extract", boom)
    frame = card.build(_row(), manifest=SimpleNamespace(dialog={"r": 1}), screen=lambda: ["x"])
    assert (frame.lane, frame.extraction) == ("screen", "failed")


# ---------------------------------------------------------------- ls --json and the text


def test_ls_rows_name_the_pending_call_from_the_hook_else_the_screen():
    keys = list(render.ROW_KEYS)
    assert keys[keys.index("worktree") + 1:keys.index("server")] == ["pending_tool",
                                                                      "pending_summary"]
    hooked = _row(options={"@agent_pending_tool": "Bash", "@agent_pending_summary": "Bash: ls"})
    d = render.row_dict(hooked, server="", host="", screen={"%1": ("Edit", "Edit: f")})
    assert (d["pending_tool"], d["pending_summary"]) == ("Bash", "Bash: ls")
    d = render.row_dict(_row(), server="", host="", screen={"%1": ("Edit", "Edit: f")})
    assert (d["pending_tool"], d["pending_summary"]) == ("Edit", "Edit: f")
    d = render.row_dict(_row(), server="", host="")
    assert (d["pending_tool"], d["pending_summary"]) == (None, None)
    idle = _row("idle", "", options={"@agent_pending_tool": "Bash"})
    assert render.row_dict(idle, server="", host="")["pending_tool"] is None


def test_the_text_form_says_the_tool_input_and_options():
    payload = _lab("claude-2.1.332_dialogs-run", "PermissionRequest")
    out = text_render.text(card.document(card.build(_row(options=_parked(payload)))), "%1")
    assert "hook lane, exact" in out and "tool: Bash" in out
    assert '"command": "echo hi > mockllm-hi.txt"' in out
    assert "[approve] Yes  (allow-once)" in out and "[deny] No  (reject-once)" in out
    assert text_render.text({"card": "none"}, "%4") == "%4: not blocked, nothing asked\n"


# ---------------------------------------------------------------- the rollout (Codex)

ROLLOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "codex-0.171.0"


def _asking(tmp_path: Path, scenario: str) -> tuple[Path, dict]:
    """A copy of a recorded rollout cut where the approval dialog was on screen: after
    its last function_call record (Codex writes the call, then asks). -> (the copy, the
    call's record payload)."""
    src = next((ROLLOUTS / scenario).glob("rollout-*.jsonl"))
    lines = src.read_bytes().splitlines(keepends=True)
    at = max(i for i, ln in enumerate(lines)
             if json.loads(ln).get("payload", {}).get("type") == "function_call")
    out = tmp_path / src.name
    out.write_bytes(b"".join(lines[:at + 1]))
    return out, json.loads(lines[at])["payload"]


def _codex_row(path: Path, options: dict | None = None) -> Row:
    return _row(agent="codex", options={"@agent_transcript": str(path), **(options or {})})


@pytest.mark.parametrize("scenario", ["tool-approved", "tool-denied"])
def test_a_codex_card_names_the_call_its_rollout_waits_on(tmp_path, scenario):
    path, call = _asking(tmp_path, scenario)
    row = _codex_row(path)
    got = card.rollout_call(row, {"HOME": str(tmp_path)})
    assert got == proto.PendingCall(call["name"], json.loads(call["arguments"]), call["call_id"])
    assert got.tool == "exec_command" and got.input["cmd"] == "echo hi > mockllm-hi.txt"
    # the screen lane with no dialog rules read nothing: the card's call is the rollout's
    frame = card.build(row, manifest=SimpleNamespace(dialog=None),
                       rollout=lambda: card.rollout_call(row, {"HOME": str(tmp_path)}))
    assert (frame.lane, frame.extraction, frame.pending_call) == ("screen", "failed", got)


@pytest.mark.parametrize("scenario", ["tool-approved", "tool-denied", "plain"])
def test_an_answered_call_or_a_finished_turn_is_no_pending_call(scenario):
    # the whole recording: the call was answered (run or refused) and the turn ended
    path = next((ROLLOUTS / scenario).glob("rollout-*.jsonl"))
    assert card.rollout_call(_codex_row(path), {}) is None


def test_a_screen_read_call_gives_way_to_the_rollouts_and_keeps_the_dialogs_options(tmp_path):
    cap = fixture.parse((CAPTURES / "codex-0.171.0_blocked.txt").read_text(encoding="utf-8"))
    lines = raw_lines(strip_ansi(cap.body))
    path, call = _asking(tmp_path, "tool-approved")
    row = _codex_row(path)
    plain = card.build(row, manifest=bundled.load("codex"), screen=lambda: lines)
    frame = card.build(row, manifest=bundled.load("codex"), screen=lambda: lines,
                       rollout=lambda: card.rollout_call(row, {}))
    assert frame.pending_call == proto.PendingCall("exec_command", json.loads(call["arguments"]),
                                                   call["call_id"])
    assert plain.pending_call.tool == "Bash"  # what the screen alone reads
    assert (frame.lane, frame.extraction, frame.options) == (
        plain.lane, plain.extraction, plain.options)


def test_a_hook_card_keeps_the_hooks_call_and_gains_the_rollouts_call_id(tmp_path):
    path, call = _asking(tmp_path, "tool-approved")
    payload = _lab("codex-0.171.0_dialogs-run", "PermissionRequest")
    row = _codex_row(path, _parked(payload))  # Codex's hook sends no call id
    frame = card.build(row, rollout=lambda: card.rollout_call(row, {}))
    assert frame.lane == "hook" and frame.extraction == "exact"
    assert frame.pending_call == proto.PendingCall("Bash", payload["tool_input"], call["call_id"])
    # a hook that parked no input (over 4 KiB): the rollout's call whole
    bare = _codex_row(path, {"@agent_pending_tool": "Bash", "@agent_pending_call": ""})
    frame = card.build(bare, rollout=lambda: card.rollout_call(bare, {}))
    assert frame.pending_call.tool == "exec_command" and frame.pending_call.call_id
    # another agent's card never asks its transcript
    asked = []
    card.build(_row(agent="claude"), manifest=SimpleNamespace(dialog=None),
               rollout=lambda: asked.append(1))
    assert asked == []


def test_a_rollout_that_does_not_read_never_refuses_the_card(tmp_path):
    row = _codex_row(tmp_path / "gone.jsonl")
    assert card.rollout_call(row, {"HOME": str(tmp_path)}) is None

    def broken():
        raise RuntimeError("boom")

    frame = card.build(row, manifest=SimpleNamespace(dialog=None), rollout=broken)
    assert (frame.lane, frame.pending_call) == ("screen", None)


def _appended(path: Path, *records: dict) -> Path:
    with open(path, "a", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    return path


def test_a_call_answered_in_a_running_turn_or_a_turn_that_ended_is_not_pending(tmp_path):
    path, call = _asking(tmp_path, "tool-approved")
    ts = "2026-12-06T20:41:45.000Z"
    # the result came back and the turn goes on (the model has not answered yet)
    answered = _appended(tmp_path / "a.jsonl", *[json.loads(x) for x in path.read_text().splitlines()],
                         {"timestamp": ts, "type": "response_item",
                          "payload": {"type": "function_call_output", "call_id": call["call_id"],
                                      "output": "Process exited with code 0\nOutput:\n"}})
    assert card.rollout_call(_codex_row(answered), {}) is None
    # the turn ended with the call never answered (interrupted at the prompt)
    ended = _appended(tmp_path / "b.jsonl", *[json.loads(x) for x in path.read_text().splitlines()],
                      {"timestamp": ts, "type": "event_msg",
                       "payload": {"type": "turn_aborted", "reason": "interrupted"}})
    assert card.rollout_call(_codex_row(ended), {}) is None
    assert card.rollout_call(_codex_row(path), {}) is not None  # the same file, still asking


def test_tma_cards_row_reads_the_rollout_with_the_sessions_environment(tmp_path):
    path, call = _asking(tmp_path, "tool-approved")
    payload = _lab("codex-0.171.0_dialogs-run", "PermissionRequest")
    row = _codex_row(path, _parked(payload))
    session = SimpleNamespace(manifests=None, server=None, config=None, env={})
    frame = card.for_row(session, row)
    assert frame.pending_call.call_id == call["call_id"]
