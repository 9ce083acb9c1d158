"""`[select]`: a menu with no digits, answered by walking its cursor (tma.core.actions.menu).

Over the real captures of Claude Code 2.1.332's approval when auto mode cannot check an
action (`❯ No` over `Yes`, no digits): what the bundled `approve` reads there and which
key it presses first, and that no other captured Claude screen reads as such a menu (its
numbered dialogs keep their `[keys]` arm, `1`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tma.core import fixture
from tma.core.actions import menu as M, schema as S
from tma.core.rules import raw_lines, strip_ansi
from tma.runtime.act import registry as actions

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
APPROVE = actions.load("/nonexistent").get("approve")
DENY = actions.load("/nonexistent").get("deny")
SEL = APPROVE.select["claude"]
AUTOCHECK = sorted(CAPTURES.glob("claude-2.1.332_blocked_autocheck_*.txt"))
ASKING = [p for p in AUTOCHECK if "_notice_" not in p.name]


def _expected() -> dict[str, tuple[str, str]]:
    out = {}
    for line in (CAPTURES / "expectations.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        f = line.split("\t")
        if len(f) >= 4:
            out[f[0]] = (f[2], f[3])
    return out


def _visible(path: Path) -> list[str]:
    cap = fixture.parse(path.read_text(encoding="utf-8"))
    return raw_lines(strip_ansi(cap.body))[-(cap.height or 30):]


def test_the_captures_are_here():
    assert len(ASKING) == 16, [p.name for p in ASKING]  # bash, bash_yes, write, again × 4
    assert all(_expected()[p.name] == ("blocked", "permission") for p in ASKING)


@pytest.mark.parametrize("path", ASKING, ids=lambda p: p.name)
def test_approve_walks_the_cursor_to_yes_on_the_unnumbered_approval(path):
    menu = M.read(_visible(path), SEL)
    on_yes = "_bash_yes_" in path.name
    assert menu == M.Menu(("No", "Yes"), 1 if on_yes else 0)
    assert M.unusable(menu, SEL) is None
    # the first key: Enter where the screen shows the cursor on Yes, else Down (never "1",
    # which does nothing there, and never Enter on No, which denies)
    assert M.next_key(menu, SEL) == ("Enter" if on_yes else "Down")
    assert M.next_key(M.Menu(menu.options, 1), SEL) == "Enter"


def test_no_other_claude_capture_reads_as_a_menu():
    """The numbered dialogs (`❯ 1. Yes`), the auto-mode notice, the startup dialog with its
    unnumbered `❯ Yes, set auto mode ...` and every other Claude screen keep `[keys]`."""
    others = [p for p in sorted(CAPTURES.glob("claude-*.txt")) if p not in ASKING]
    assert len(others) > 50
    read = {p.name: M.read(_visible(p), SEL) for p in others}
    assert {n: m for n, m in read.items() if m is not None} == {}


def test_the_amend_row_is_read_too():
    """Tab turns the No row into a text field: `1` would be typed into it (lab, 2.1.332)."""
    lines = [" Do you want to proceed?", " ❯ No, and tell Claude what to do differently",
             "   Yes", "", " Esc to cancel"]
    menu = M.read(lines, SEL)
    assert menu == M.Menu(("No, and tell Claude what to do differently", "Yes"), 0)
    assert M.next_key(menu, SEL) == "Down"
    assert M.read([" ❯ No, xy", "   Yes"], SEL) == M.Menu(("No, xy", "Yes"), 0)


@pytest.mark.parametrize(("lines", "why"), [
    ([" ❯ Yes"], None),  # one row (the user's own message in the transcript) is no menu
    (["   No", "   Yes"], "cursor cannot be read"),
    ([" ❯ No", " ❯ Yes"], "cursor cannot be read"),
    ([" ❯ No", "   No"], "offers no 'Yes'"),
])
def test_what_is_not_a_usable_menu(lines, why):
    menu = M.read(lines, SEL)
    if why is None:
        assert menu is None
    else:
        assert menu is not None and why in (M.unusable(menu, SEL) or "")


def test_the_bottommost_run_is_the_menu():
    lines = [" ❯ Yes", "   No", "● text", " ❯ No", "   Yes"]
    assert M.read(lines, SEL) == M.Menu(("No", "Yes"), 0)


def test_only_approve_has_a_select_arm_and_keys_stay():
    assert APPROVE.keys["claude"] == ("1",)  # the numbered "❯ 1. Yes" dialogs: unchanged
    assert (SEL.option, SEL.move, SEL.confirm) == ("Yes", "Down", "Enter")
    assert set(APPROVE.select) == {"claude"}
    assert DENY.select == {} and DENY.keys["claude"] == ("Escape",)


BASE = {"min_engine_version": "0.1", "label": "L", "description": "d", "kind": "keys",
        "keys": {"claude": ["1"]}}
ARM = {"row": r"^(?P<cursor>❯)?\s*(?P<option>\w+)$", "option": "Yes", "move": "Down",
       "confirm": "Enter"}


def test_a_select_arm_loads():
    a = S.from_dict("x", {**BASE, "select": {"claude": ARM}})
    assert a.select["claude"] == S.Select(re.compile(ARM["row"]), "Yes", "Down", "Enter")


@pytest.mark.parametrize(("doc", "message"), [
    ({"select": {"claude": {**ARM, "colour": 1}}}, "[select].claude: unknown field 'colour'"),
    ({"select": {"claude": {k: v for k, v in ARM.items() if k != "move"}}},
     "[select].claude.move: required"),
    ({"select": {"codex": ARM}}, "needs a [keys].codex arm too"),
    ({"select": {"claude": {**ARM, "row": "(?P<option>x"}}}, "row: not a valid regex"),
    ({"select": {"claude": {**ARM, "row": "(?P<option>x)"}}}, "named group(s) cursor"),
    ({"select": {"claude": {**ARM, "option": ""}}}, "option: must be a non-empty string"),
    ({"select": {"claude": "Down"}}, "[select].claude: must be a table"),
    ({"text": True, "keys": {"claude": ["{text}"]}, "select": {"claude": ARM}},
     "a text action has no [select] arm"),
    ({"kind": "exec", "command": "true", "keys": None, "select": {"claude": ARM}},
     "select: only for kind = \"keys\""),
])
def test_a_select_arm_is_checked(doc, message):
    full = {**BASE, **doc}
    full = {k: v for k, v in full.items() if v is not None}
    with pytest.raises(S.ActionError) as exc:
        S.from_dict("x", full)
    assert message in str(exc.value)


def test_a_claim_is_given_back_only_while_it_is_still_this_acts():
    from tma.tmux import action_lock

    line = action_lock.unclaim_line("%3", ("s1767225600000",), "00ff")
    mine = action_lock.claim_value(("s1767225600000",), "00ff")
    assert line == ("set-option -p -F -t %3 @agent_answered "
                    f'"#{{?#{{==:#{{@agent_answered}},{mine}}},,#{{@agent_answered}}}}"')
