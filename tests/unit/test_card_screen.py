"""What a permission dialog asks, read off real screens by the manifests' `[dialog]` rules.

Screens: the reference captures (read in place from the shared folder, skipped when it is
absent), the live captures in tests/fixtures/captures, and the wrapped-command dialogs in
tests/fixtures/dialogs (each pinned agent asked to run one long command at 40 and 100
columns, drawn by the lab against its fake model).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from tma.core import bundled, card, fixture, manifest
from tma.core.rules import raw_lines, strip_ansi

ROOT = Path(__file__).resolve().parents[2]
LIVE = ROOT / "tests" / "fixtures" / "captures"
DIALOGS = ROOT / "tests" / "fixtures" / "dialogs"
REFERENCE = Path(os.environ.get("TMA_REFERENCE_CAPTURES", "/work/shared/reference/captures"))
ABSENT = f"reference captures not found at {REFERENCE} (set TMA_REFERENCE_CAPTURES)"

LONG = ("echo aaaa-one bbbb-two cccc-three dddd-four eeee-five ffff-six gggg-seven "
        "hhhh-eight iiii-nine > /tmp/cs-wrap-target.txt")


def _rules(agent: str) -> manifest.DialogRules | None:
    return bundled.load(agent).dialog


def screen(path: Path) -> tuple[str, list[str]]:
    cap = fixture.parse(path.read_text(encoding="utf-8"))
    return cap.agent, raw_lines(strip_ansi(cap.body))


def ask(path: Path) -> card.ScreenAsk | None:
    agent, lines = screen(path)
    return card.extract(agent, lines, _rules(agent))


# ------------------------------------------------------------------ reference captures

# file -> (tool, summary, extraction): every blocked/permission row of expectations.tsv
REFERENCE_ASKS = {
    "claude_blocked_permission_w100.txt": ("Write", "Write: notes.txt", "exact"),
    "claude_blocked_permission_w60.txt": ("Write", "Write: notes.txt", "exact"),
    "codex_blocked_w100.txt": ("Bash", "Bash: touch [path]xxxxxxxxxxxxxxxxxxxxxxxxxxxx", "exact"),
    "codex_blocked_w60.txt": ("Bash", "Bash: touch [path]xxxxxxxxxxxxxxxxxxxxxxxxxxxx", "exact"),
    "cursor_blocked_w100.txt": ("Bash", "Bash: uname -a", "exact"),
    "cursor_blocked_w60.txt": ("Bash", "Bash: uname -a", "exact"),
    "gemini_blocked_w100.txt": ("Bash", "Bash: rm -rf /tmp/h19_probe_b", "exact"),
    "gemini_blocked_w60.txt": ("Bash", "Bash: rm -rf /tmp/h19_probe_c", "exact"),
    "opencode_blocked_edit_w60.txt": ("Edit", "Edit: notes.txt", "exact"),
    "opencode_blocked_permission_w100.txt": ("Bash", "Bash: echo hello-from-tma", "exact"),
    "opencode_blocked_permission_w60.txt": ("Bash", "Bash: echo hello-from-tma", "exact"),
}


def reference_rows() -> list[dict[str, str]]:
    path = REFERENCE / "expectations.tsv"
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def test_every_reference_permission_screen_has_an_expectation() -> None:
    rows = reference_rows()
    if not rows:
        pytest.skip(ABSENT)
    permission = {r["file"] for r in rows
                  if r["expected_state"] == "blocked" and r["expected_detail"] == "permission"}
    assert permission == set(REFERENCE_ASKS)


@pytest.mark.parametrize("name", sorted(REFERENCE_ASKS))
def test_reference_permission_screen(name: str) -> None:
    if not (REFERENCE / name).is_file():
        pytest.skip(ABSENT)
    got = ask(REFERENCE / name)
    assert got is not None
    assert (got.tool, got.summary, got.extraction) == REFERENCE_ASKS[name]
    assert got.options and got.options[0].kind == "allow-once"


REFERENCE_OTHER = sorted(r["file"] for r in reference_rows()
                         if r["file"].endswith(".txt") and r["agent"] != "example"
                         and r["expected_detail"] != "permission")


@pytest.mark.parametrize("name", REFERENCE_OTHER or ["(reference captures absent)"])
def test_reference_screens_without_a_permission_dialog(name: str) -> None:
    """Idle, working, history and trust screens, pi's included."""
    if not (REFERENCE / name).is_file():
        pytest.skip(ABSENT)
    assert ask(REFERENCE / name) is None


# ------------------------------------------------------------------ live captures

ECHO = "Bash: echo hi > mockllm-hi.txt"
LIVE_ASKS: dict[str, tuple[str, str, str]] = {
    # 2.1.197 puts the description under the command at the same indent: the reading guesses
    # which row it is, so it is never `exact`
    "claude-2.1.197_blocked.txt": ("Bash", ECHO, "wrapped"),
    "claude-2.1.332_blocked.txt": ("Bash", ECHO, "exact"),
    "codex-0.171.0_blocked.txt": ("Bash", ECHO, "exact"),
    "gemini-0.61.0_blocked.txt": ("Bash", ECHO, "exact"),
    "opencode-1.18.33_blocked.txt": ("Bash", ECHO, "exact"),
    **{f"claude-2.1.332_blocked_shell_w{w}.txt": ("Bash", ECHO, "exact") for w in (40, 60, 200)},
    **{f"claude-2.1.332_blocked_edit_diff_w{w}.txt": ("Edit", "Edit: notes.txt", "exact")
       for w in (40, 60, 100, 200)},
    **{f"claude-2.1.332_blocked_write_w{w}.txt": ("Write", "Write: notes.txt", "exact")
       for w in (40, 60, 100, 200)},
    **{f"claude-2.1.332_blocked_mcp_tool_w{w}.txt":
       ("lab — Ping Tool", 'lab — Ping Tool: text: "hi"', "exact") for w in (40, 60, 100, 200)},
    **{f"codex-0.171.0_blocked_shell_w{w}.txt": ("Bash", ECHO, "exact") for w in (40, 60, 100, 200)},
    **{f"codex-0.171.0_blocked_file_write_w{w}.txt":
       ("Edit", "Edit: /var/tmp/codex-lab/notes.txt", "exact") for w in (40, 60, 100, 200)},
    # at 40 columns the heading wraps; the tool name is read off its second row
    **{f"codex-0.171.0_blocked_mcp_tool_w{w}.txt":
       ("write_note", "write_note: text: remember the milk", "exact")
       for w in (40, 60, 100, 200)},
    **{f"gemini-0.61.0_blocked_shell_w{w}.txt": ("Bash", "Bash: ls -la /tmp", "exact")
       for w in (40, 60, 100, 200)},
    **{f"gemini-0.61.0_blocked_edit_diff_w{w}.txt": ("Edit", "Edit: button.toml", "exact")
       for w in (40, 60, 100, 200)},
    **{f"gemini-0.61.0_blocked_write_file_w{w}.txt": ("Write", "Write: notes.md", "exact")
       for w in (40, 60, 100, 200)},
    **{f"gemini-0.61.0_blocked_tool_web_fetch_w{w}.txt":
       ("WebFetch", "WebFetch: http://127.0.0.1:18093/nothing", "exact")
       for w in (40, 60, 100, 200)},
    # at 40 columns the header row is cut with "…": the tool is known, its arguments are not
    "gemini-0.61.0_blocked_mcp_tool_w40.txt": ("paint_button", "paint_button", "failed"),
    **{f"gemini-0.61.0_blocked_mcp_tool_w{w}.txt":
       ("paint_button", 'paint_button: {"colour":"blue"}', "exact") for w in (60, 100, 200)},
    **{f"opencode-1.18.33_blocked_shell_w{w}.txt": ("Bash", ECHO, "exact")
       for w in (40, 60, 100, 200)},
    **{f"opencode-1.18.33_blocked_edit_diff_w{w}.txt": ("Edit", "Edit: button.toml", "exact")
       for w in (40, 60, 100, 200)},
    **{f"opencode-1.18.33_blocked_write_w{w}.txt": ("Edit", "Edit: notes.md", "exact")
       for w in (40, 60, 100, 200)},
    # Copilot: the command from the inner box, the file from the question row
    **{f"copilot-1.0.102_blocked_permission_bash_w{w}.txt":
       ("Bash", "Bash: echo approved > approved.txt", "exact")
       for w in (40, 60, 80, 100, 120, 200)},
    **{f"copilot-1.0.102_blocked_permission_touch_w{w}.txt":
       ("Bash", "Bash: touch denied_esc.txt", "exact") for w in (40, 120)},
    **{f"copilot-1.0.102_blocked_permission_feedback_w{w}.txt":
       ("Bash", "Bash: touch denied_three.txt", "exact") for w in (40, 120)},
    **{f"copilot-1.0.102_blocked_permission_create_w{w}.txt":
       ("Write", "Write: /tmp/copilotlab/proj/new.txt", "exact") for w in (80, 120, 200)},
    **{f"copilot-1.0.102_blocked_permission_create_cpclab_w{w}.txt":
       ("Write", "Write: /tmp/cpclab/proj/new.txt", "exact") for w in (60, 100)},
    **{f"copilot-1.0.102_blocked_permission_edit_w{w}.txt":
       ("Edit", "Edit: /tmp/copilotlab/proj/enter.txt", "exact") for w in (120,)},
    # at 40 columns the question row breaks the path at a `/`: the tool only
    "copilot-1.0.102_blocked_permission_create_w40.txt": ("Write", "Write", "failed"),
    "copilot-1.0.102_blocked_permission_edit_w40.txt": ("Edit", "Edit", "failed"),
    # the command sits on its own row between the header and "Allow execution of: '…'?"
    **{f"qwen-0.24.4_blocked_permission_shell_w{w}.txt": ("Bash", ECHO, "exact")
       for w in (40, 60, 80, 100, 120, 200)},
    **{f"qwen-0.24.4_blocked_permission_edit_w{w}.txt": ("Edit", "Edit: README.md", "exact")
       for w in (40, 80, 120, 200)},
    **{f"qwen-0.24.4_blocked_permission_write_w{w}.txt": ("Write", "Write: notes.txt", "exact")
       for w in (40, 60, 80, 100, 120, 200)},
    # aider asks on one row, what it asks about printed just above it
    **{f"aider-0.86.2_blocked_permission_shell_w{w}.txt":
       ("Bash", "Bash: echo hi >> ran.txt", "exact") for w in (40, 80, 120, 200)},
    **{f"aider-0.86.2_blocked_permission_create_w{w}.txt": ("Write", "Write: hello.txt", "exact")
       for w in (40, 80, 120, 200)},
}


# Claude 2.1.332's approval when auto mode cannot check an action: the tool and its input
# read as usual, but the options are unnumbered ("❯ No" / "Yes"), so the card offers no
# option and no key (the approve action's `1` is a no-op on this menu; Esc cancels).
OUT_HI = "Bash: echo hi > /tmp/d34lab/outside-hi.txt"
OUT_AGAIN = "Bash: echo again > /tmp/d34lab/outside-hi2.txt"
AUTOCHECK_ASKS: dict[str, tuple[str, str, str]] = {
    **{f"claude-2.1.332_blocked_autocheck_bash_w{w}.txt": ("Bash", OUT_HI, "exact")
       for w in (40, 60, 100, 200)},
    **{f"claude-2.1.332_blocked_autocheck_bash_yes_w{w}.txt": ("Bash", OUT_HI, "exact")
       for w in (40, 60, 100, 200)},
    # at 40 columns the command wraps after ">"
    "claude-2.1.332_blocked_autocheck_bash_again_w40.txt": ("Bash", OUT_AGAIN, "wrapped"),
    **{f"claude-2.1.332_blocked_autocheck_bash_again_w{w}.txt": ("Bash", OUT_AGAIN, "exact")
       for w in (60, 100, 200)},
    **{f"claude-2.1.332_blocked_autocheck_write_w{w}.txt":
       ("Write", "Write: ../../outside-w.txt", "exact") for w in (40, 60, 100, 200)},
}


@pytest.mark.parametrize("name", sorted(AUTOCHECK_ASKS))
def test_live_unnumbered_permission_screen(name: str) -> None:
    got = ask(LIVE / name)
    assert got is not None
    assert (got.tool, got.summary, got.extraction) == AUTOCHECK_ASKS[name]
    assert got.options == ()


def live_rows() -> list[dict[str, str]]:
    with (LIVE / "expectations.tsv").open(encoding="utf-8", newline="") as fh:
        # captures of an agent with no bundled manifest yet (copilot) wait for it
        return [r for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
                if r["agent"] in bundled.names()]


def test_every_live_permission_screen_has_an_expectation() -> None:
    permission = {r["file"] for r in live_rows()
                  if r["expected_state"] == "blocked" and r["expected_detail"] == "permission"}
    assert permission == set(LIVE_ASKS) | set(AUTOCHECK_ASKS)


@pytest.mark.parametrize("name", sorted(LIVE_ASKS))
def test_live_permission_screen(name: str) -> None:
    got = ask(LIVE / name)
    assert got is not None
    assert (got.tool, got.summary, got.extraction) == LIVE_ASKS[name]
    assert got.options and got.options[0].kind == "allow-once"
    if got.extraction != "failed":
        assert got.input and got.input[0][1] in got.summary


NOT_PERMISSION = sorted(r["file"] for r in live_rows()
                        if not (r["expected_state"] == "blocked"
                                and r["expected_detail"] == "permission")
                        and r["agent"] in ("claude", "codex", "gemini", "opencode", "cursor",
                                           "copilot", "qwen", "aider"))


@pytest.mark.parametrize("name", NOT_PERMISSION)
def test_live_screen_without_a_permission_dialog_gives_none(name: str) -> None:
    """Idle, working, trust, plan and question screens (some with a finished permission
    dialog still in the transcript) show no permission dialog."""
    assert ask(LIVE / name) is None


def test_options_carry_the_dialogs_own_rows_and_keys() -> None:
    got = ask(LIVE / "claude-2.1.332_blocked.txt")
    assert got is not None
    assert [(o.kind, o.name, o.option_id) for o in got.options] == [
        ("allow-once", "1. Yes", "1"),
        ("allow-always", "2. Yes, and always allow access to /tmp/agentlab-332/work-claude "
         "from this project", "2"),
        ("other", "3. Yes, and switch to auto mode · auto mode handles these prompts for you",
         "3"),
        ("reject-once", "4. No", "4"),
    ]
    got = ask(LIVE / "opencode-1.18.33_blocked.txt")
    assert got is not None
    assert [(o.kind, o.name, o.option_id) for o in got.options] == [
        ("allow-once", "Allow once", ""), ("allow-always", "Allow always", ""),
        ("reject-once", "Reject", "")]


def test_cursor_rows_carry_their_accelerator() -> None:
    if not (REFERENCE / "cursor_blocked_w60.txt").is_file():
        pytest.skip(ABSENT)
    got = ask(REFERENCE / "cursor_blocked_w60.txt")
    assert got is not None
    assert [(o.kind, o.option_id) for o in got.options] == [
        ("allow-once", "y"), ("allow-always", ""), ("other", ""), ("reject-once", "n")]


# ------------------------------------------------------------------ wrapped commands

WRAPPED = sorted(p.name for p in DIALOGS.glob("*_permission_wrapped_w*.txt"))


def test_wrapped_fixtures_are_there() -> None:
    assert {n.split("-")[0] for n in WRAPPED} == {"claude", "codex", "gemini", "opencode"}


@pytest.mark.parametrize("name", WRAPPED)
def test_a_wrapped_command_is_joined_back_and_says_so(name: str) -> None:
    got = ask(DIALOGS / name)
    assert got is not None
    assert got.tool == "Bash"
    assert got.extraction == "wrapped"
    assert got.input == (("command", LONG),)
    assert got.summary == f"Bash: {LONG}"


def test_a_redraw_that_lost_the_space_after_the_digit_still_gives_the_option() -> None:
    got = ask(DIALOGS / "claude-2.1.197_permission_wrapped_w40.txt")
    assert got is not None
    assert [(o.kind, o.name, o.option_id) for o in got.options] == [
        ("allow-once", "1. Yes", "1"),
        ("allow-always", "2.Yes, and always allow access to", "2"),
        ("reject-once", "3. No", "3"),
    ]


# ------------------------------------------------------------------ properties


def test_summary_is_one_line_without_control_characters_and_bounded() -> None:
    got = ask(LIVE / "claude-2.1.332_blocked.txt")
    assert got is not None
    lines = screen(LIVE / "claude-2.1.332_blocked.txt")[1]
    at = next(i for i, line in enumerate(lines) if line.strip() == "echo hi > mockllm-hi.txt")
    lines[at] = " echo \x07hi\x1b " + "x" * 400
    got = card.extract("claude", lines, _rules("claude"))
    assert got is not None and got.extraction == "exact"
    assert len(got.summary) <= card.SUMMARY_MAX and "\n" not in got.summary
    assert all(ord(c) >= 32 for c in got.summary)
    assert got.summary.endswith("…")


def test_no_rules_or_no_lines_give_none() -> None:
    _, lines = screen(LIVE / "claude-2.1.332_blocked.txt")
    assert card.extract("claude", lines, None) is None
    assert card.extract("claude", [], _rules("claude")) is None
    assert _rules("pi") is None  # pi draws no permission dialog of its own


ALL_RULES = [(a, _rules(a)) for a in ("claude", "codex", "copilot", "cursor", "gemini",
                                      "opencode")]
ROW = st.one_of(
    st.text(max_size=80),
    st.sampled_from(["Do you want to proceed?", "❯ 1. Yes", "Bash command", "╌╌╌╌╌╌", "",
                     "│ │ rm -rf x │ │", "? Shell  ls", "╭──╮", "╰──╯", "$ echo", "┃  △ Permission "
                     "required", "→ Edit a", "Allow once   Reject", "Run this command?",
                     "Would you like to run the following command?", "Destination:",
                     "Allow execution of [Shell]?", "URLs to fetch:", "- http://x", "cccc-"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ROW, max_size=40), st.integers(0, len(ALL_RULES) - 1))
def test_extract_never_raises(lines: list[str], which: int) -> None:
    agent, dialog = ALL_RULES[which]
    got = card.extract(agent, lines, dialog)
    if got is not None:
        assert got.extraction in card.EXTRACTIONS
        assert len(got.summary) <= card.SUMMARY_MAX and "\n" not in got.summary


# ------------------------------------------------------------------ the manifest table


BASE = 'min_engine_version = "0.1"\n[identity]\nprocess_names = ["x"]\n[capture]\n'


@pytest.mark.parametrize(("table", "message"), [
    ("[dialog]\noption = '(?P<name>a)'\n", "[dialog].anchor: required"),
    ("[dialog]\nanchor = '('\noption = '(?P<name>a)'\n", "[dialog].anchor: bad regex"),
    ("[dialog]\nanchor = 'a'\noption = 'a'\n", "[dialog].option: needs a (?P<name>"),
    ("[dialog]\nanchor = 'a'\noption = '(?P<name>a)'\nbogus = 1\n", "unknown field 'bogus'"),
    ("[dialog]\nanchor = 'a'\noption = '(?P<name>a)'\n[[dialog.targets]]\nheader = 'h'\n",
     "[[dialog.targets]][0]: needs tool"),
    ("[dialog]\nanchor = 'a'\noption = '(?P<name>a)'\n[[dialog.targets]]\nheader = 'h'\n"
     "tool = 'T'\nuntil = '['\n", "[[dialog.targets]][0].until: bad regex"),
    ("[dialog]\nanchor = 'a'\noption = '(?P<name>a)'\nkinds = [{ kind = 'Allow Once', "
     "match = 'a' }]\n", "[[dialog.kinds]][0].kind"),
    ("[dialog]\nanchor = 'a'\noption = '(?P<name>a)'\nabove = -1\n", "[dialog].above"),
])
def test_a_broken_dialog_table_fails_the_manifest_naming_the_field(table: str,
                                                                   message: str) -> None:
    with pytest.raises(manifest.ManifestError, match=None) as exc:
        manifest.loads("x", BASE + table)
    assert message in str(exc.value)


def test_a_target_form_on_names_the_dialog_its_anchor_row_is() -> None:
    """A one-row question (aider's): the tool is told by the anchor's row, the text
    stands above it; `on` picks the form, and a bad `on` fails the manifest."""
    rules = manifest.loads("x", BASE + """
[dialog]
anchor = '^(?:Run shell command|Create new file)\\?'
option = '(?P<name>\\((?P<id>[A-Z])\\)[^/\\[]*)'
[[dialog.targets]]
header = '^Tokens: '
tool = "Bash"
on = '^Run shell command'
[[dialog.targets]]
header = '^Tokens: '
tool = "Write"
key = "file_path"
on = '^Create new file'
""").dialog
    shell = card.extract("x", ["Tokens: 2k sent, 9 received.", "echo hi >> ran.txt",
                               "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:"], rules)
    assert shell is not None and (shell.tool, shell.input, shell.extraction) == (
        "Bash", (("command", "echo hi >> ran.txt"),), "exact")
    assert [(o.name, o.option_id) for o in shell.options] == [
        ("(Y)es", "Y"), ("(N)o", "N"), ("(D)on't ask again", "D")]
    new = card.extract("x", ["Tokens: 2k sent, 9 received.", "hello.txt",
                             "Create new file? (Y)es/(N)o [Yes]:"], rules)
    assert new is not None and (new.tool, new.input) == ("Write", (("file_path", "hello.txt"),))
    with pytest.raises(manifest.ManifestError, match=r"\[\[dialog.targets\]\]\[0\].on"):
        manifest.loads("x", BASE + "[dialog]\nanchor = 'a'\noption = '(?P<name>a)'\n"
                       "[[dialog.targets]]\nheader = 'h'\ntool = 'T'\non = '('\n")


def test_a_manifest_without_a_dialog_table_loads_with_none() -> None:
    assert manifest.loads("x", BASE).dialog is None


def test_a_user_manifest_with_a_broken_dialog_is_skipped_with_one_line(tmp_path: Path) -> None:
    """The runtime loader's rule for any broken field: the file is skipped, one line names
    the file and the field, and the other manifests load."""
    from tma.runtime import manifests

    (tmp_path / "quill.toml").write_text(
        BASE + "[dialog]\nanchor = 'Allow?'\noption = '(?P<name>[0-9]+\\. .*'\n",
        encoding="utf-8")
    good = bundled.text("opencode")
    (tmp_path / "opencode.toml").write_text(good, encoding="utf-8")
    mset = manifests.load(str(tmp_path))
    assert list(mset.manifests) == ["opencode"]
    assert mset.manifests["opencode"].dialog is not None
    lines: list[str] = []
    manifests.report_skipped(mset, lines.append)
    assert len(lines) == 1
    assert lines[0].startswith(f"tma: skipping manifest {tmp_path / 'quill.toml'}: "
                               "[dialog].option: bad regex")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=60)
       | st.text(alphabet="\t\x00\x1b\x7f\x85\x9f\xa0 a│❯", max_size=30))
def test_printable_drops_control_characters_and_turns_tabs_into_spaces(text):
    """The row cleaner in C (a printable row as it is, else one str.translate) says what
    the character-by-character definition says: C0 and C1 controls out, a tab a space."""
    want = "".join(" " if c == "\t" else c for c in text
                   if c == "\t" or not (ord(c) < 32 or 127 <= ord(c) < 160))
    assert card._printable(text) == want
