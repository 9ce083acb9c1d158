"""Which prompt a blocked screen shows (tma.core.prompt), over real screens of every
bundled agent: one prompt captured at several widths reads as one, different prompts
read as different, and what cannot be read changes nothing.

Screens: the live captures (tests/fixtures/captures, with their expectations.tsv), the
reference captures (read in place, skipped when absent) and the wrapped-command dialogs
(tests/fixtures/dialogs: one long command each at 40 and 100 columns). A family is one
file name with its `_wNN` width suffix taken off: the same prompt drawn at each width.
"""

from __future__ import annotations

import csv
import os
import re
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from tma.core import bundled, fixture, prompt, states
from tma.core.card import Option, ScreenAsk
from tma.core.rules import Screen, evaluate

ROOT = Path(__file__).resolve().parents[2]
LIVE = ROOT / "tests" / "fixtures" / "captures"
DIALOGS = ROOT / "tests" / "fixtures" / "dialogs"
REFERENCE = Path(os.environ.get("TMA_REFERENCE_CAPTURES", "/work/shared/reference/captures"))


def _blocked_screens(folder: Path) -> list[tuple[str, str, str]]:
    """(file, expected detail, identity) of every screen a folder expects blocked."""
    tsv = folder / "expectations.tsv"
    if tsv.is_file():
        with tsv.open(encoding="utf-8", newline="") as fh:
            rows = [(r["file"], r["expected_detail"]) for r in
                    csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
                    if r["expected_state"] == "blocked"
                    # captures of an agent with no bundled manifest yet (copilot) wait for it
                    and r["agent"] in bundled.names()]
    else:
        rows = [(p.name, "permission") for p in sorted(folder.glob("*.txt"))]
    out = []
    for name, detail in rows:
        cap = fixture.parse((folder / name).read_text(encoding="utf-8"))
        manifest = bundled.load(cap.agent)
        screen = Screen(cap.body, cap.title, cap.height)
        claim = evaluate(manifest, screen).claim(states.BLOCKED)
        assert claim is not None and claim.detail == detail, name  # the rules' own tests
        out.append((name, detail, prompt.of_screen(screen, claim.detail, manifest.dialog)))
    return out


def _all() -> list[tuple[str, str, str]]:
    screens = _blocked_screens(LIVE) + _blocked_screens(DIALOGS)
    if (REFERENCE / "expectations.tsv").is_file():
        screens += _blocked_screens(REFERENCE)
    return screens


SCREENS = _all()


def _family(name: str) -> str:
    return re.sub(r"_w\d+(?=\.txt$)", "", name)


def test_one_prompt_reads_the_same_at_every_width():
    """A resize repaints the prompt: its identity does not move (the option rows, which
    wrap, are cut and even drop out at narrow widths, are not part of it)."""
    families: dict[str, set[str]] = defaultdict(set)
    for name, _detail, ident in SCREENS:
        families[_family(name)].add(ident)
    wide = [f for f in families if sum(_family(n) == f for n, _, _ in SCREENS) > 1]
    assert len(wide) >= 30  # the corpus really holds prompts at several widths
    # the reference gemini pair is two prompts, not one at two widths: the lab asked
    # about /tmp/h19_probe_b at 100 columns and /tmp/h19_probe_c at 60
    families.pop("gemini_blocked.txt", None)
    unstable = {f: sorted(v) for f, v in families.items() if len(v) != 1}
    # gemini's MCP dialog cuts its arguments at 40 columns ('…'): that reading is
    # unread (no digest), which changes nothing against the wider ones; likewise
    # copilot's file dialogs break the path at a `/` at 40 columns: the tool only, unread
    assert set(unstable) <= {"gemini-0.61.0_blocked_mcp_tool.txt",
                             "copilot-1.0.102_blocked_permission_create.txt",
                             "copilot-1.0.102_blocked_permission_edit.txt"}, unstable
    for idents in unstable.values():
        assert not any(prompt.changed(a, b) for a in idents for b in idents)


def test_every_permission_dialog_of_a_bundled_agent_is_read():
    """Every agent with a permission prompt (all but pi) has its dialogs read: approve and
    deny, the answers typed as keys, are bound to a prompt the screen names."""
    read = {n.split("-")[0].split("_")[0] for n, d, i in SCREENS
            if d == "permission" and i.split(":")[1]}
    assert read == {"aider", "claude", "codex", "copilot", "cursor", "gemini", "opencode",
                    "qwen"}


def test_different_prompts_read_as_different():
    """Another command, another file, another tool: another prompt. (The lab asked every
    agent to run `echo hi > mockllm-hi.txt`: one identity across agents is right, a
    pane's episodes are compared within the pane.)"""
    ident_of = {n: i for n, _d, i in SCREENS}
    if "gemini_blocked_w100.txt" in ident_of:  # the reference pair: _b and _c
        assert prompt.changed(ident_of["gemini_blocked_w100.txt"],
                              ident_of["gemini_blocked_w60.txt"])
    pairs = [("claude-2.1.332_blocked_write_w100.txt", "claude-2.1.332_blocked_edit_diff_w100.txt"),
             ("claude-2.1.332_blocked_shell_w60.txt", "claude-2.1.332_permission_wrapped_w40.txt"),
             ("claude-2.1.332_blocked_shell_w60.txt", "claude-2.1.332_blocked_mcp_tool_w60.txt"),
             ("codex-0.171.0_blocked_shell_w60.txt", "codex-0.171.0_blocked_file_write_w60.txt"),
             ("codex-0.171.0_blocked_shell_w60.txt", "codex-0.171.0_blocked_mcp_tool_w60.txt"),
             ("gemini-0.61.0_blocked_shell_w60.txt", "gemini-0.61.0_blocked_write_file_w60.txt"),
             ("gemini-0.61.0_blocked_edit_diff_w60.txt", "gemini-0.61.0_blocked_write_file_w60.txt"),
             ("opencode-1.18.33_blocked_shell_w60.txt", "opencode-1.18.33_blocked_write_w60.txt"),
             ("opencode-1.18.33_blocked_edit_diff_w60.txt", "opencode-1.18.33_blocked_write_w60.txt"),
             ("aider-0.86.2_blocked_permission_shell_w80.txt",
              "aider-0.86.2_blocked_permission_create_w80.txt"),
             ("qwen-0.24.4_blocked_permission_shell_w80.txt",
              "qwen-0.24.4_blocked_permission_write_w80.txt"),
             ("qwen-0.24.4_blocked_permission_edit_w80.txt",
              "qwen-0.24.4_blocked_permission_write_w80.txt")]
    for a, b in pairs:
        assert prompt.changed(ident_of[a], ident_of[b]), (a, b)
    assert ident_of["claude-2.1.332_blocked_shell_w60.txt"] == \
        ident_of["claude-2.1.332_blocked.txt"]  # one command, two lab runs: one prompt
    commands = {i for _n, d, i in SCREENS if d == "permission" and i.split(":")[1]}
    assert len(commands) >= 15


def test_kinds_of_prompt_are_told_apart_where_no_dialog_is_read():
    """Trust, plan and question screens have no `[dialog]` reading: their identity is
    their detail alone, so a plan approval after a permission prompt is a new prompt,
    and two questions in a row are the honest limit (one prompt)."""
    ident_of = {n: i for n, _d, i in SCREENS}
    plan = ident_of["claude-2.1.332_blocked_plan.txt"]
    question = ident_of["claude-2.1.332_blocked_question.txt"]
    assert (plan, question) == ("plan:", "question:")
    assert prompt.changed(ident_of["claude-2.1.332_blocked.txt"], plan)
    assert prompt.changed(plan, question)
    assert not prompt.changed(question, ident_of["claude-2.1.332_blocked_automode.txt"])


def _ask(tool: str, text: str, extraction: str = "exact") -> ScreenAsk:
    return ScreenAsk(tool, f"{tool}: {text}", (("command", text),),
                     (Option("allow-once", "1. Yes", "1"),), extraction)


_words = st.lists(st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=1,
                          max_size=8), min_size=1, max_size=8)


@given(_words, st.lists(st.sampled_from([" ", "\n", "  ", "\t", ""]), min_size=8,
                        max_size=8))
def test_a_reflow_never_changes_the_identity(words, breaks):
    """The same words joined by any whitespace (a row break where a narrower pane wraps
    them, or none where a join glued them back) are the same prompt."""
    plain = " ".join(words)
    wrapped = "".join(w + b for w, b in zip(words, breaks, strict=False))
    assert prompt.identity("permission", _ask("Bash", plain)) == \
        prompt.identity("permission", _ask("Bash", wrapped))


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_different_targets_are_different_prompts(a, b):
    ia, ib = (prompt.identity("permission", _ask("Bash", t)) for t in (a, b))
    assert prompt.changed(ia, ib) == ("".join(a.split()) != "".join(b.split()))
    cut = prompt.identity("permission", _ask("Bash", a, "failed"))
    assert cut == "permission:" and not prompt.changed(cut, ib)  # unread changes nothing


_ident = st.one_of(st.just(""), st.builds(prompt.identity, st.sampled_from(
    ["permission", "plan", "question", "trust", ""]), st.one_of(st.none(), st.builds(
        _ask, st.sampled_from(["Bash", "Edit"]), st.sampled_from(["ls", "rm -rf x", "a.txt"])))))


@given(_ident, _ident)
def test_changed_is_symmetric_and_irreflexive(a, b):
    assert prompt.changed(a, b) == prompt.changed(b, a)
    assert not prompt.changed(a, a)
    if not a or not b:
        assert not prompt.changed(a, b)


@given(st.integers(1, 2**53), _ident, st.integers(1, 2**53))
def test_a_stored_identity_names_its_own_episode_only(since, ident, other):
    value = prompt.value(since, ident)
    assert prompt.stored(value, since) == (ident if prompt.valid(ident) else "")
    if other != since:
        assert prompt.stored(value, other) == ""


@pytest.mark.parametrize("value", ["", "x", "12", "12:", "12:per mission:", "12:p:zz",
                                   "12:p:0123456789abcdeF", "a:permission:", "0:permission:",
                                   "12:permission:0123", "12:#{E:x}:"])
def test_a_value_no_tma_wrote_names_no_episode(value):
    assert prompt.stored(value, 12) == ""


@given(st.binary(max_size=300))
def test_the_digest_is_hashlibs_sha256(data):
    """The interpreter's own SHA-256 (hashlib would load OpenSSL's bindings first, ~2.5 ms
    a run that reads a dialog): the digest of every stored identity is unchanged."""
    import hashlib

    assert prompt._sha256(data) == hashlib.sha256(data).hexdigest()


def test_reading_a_prompt_loads_no_openssl():
    import subprocess
    import sys

    code = ("import sys\nfrom tma.core import prompt\nfrom tma.core.card import ScreenAsk\n"
            "ident = prompt.identity('permission', ScreenAsk('Bash', 'Bash: ls', "
            "(('command', 'ls -la'),), (), 'exact'))\n"
            "assert prompt.names_target(ident), ident\n"
            "print('hashlib' in sys.modules, '_hashlib' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert res.stdout.split() == ["False", "False"]
