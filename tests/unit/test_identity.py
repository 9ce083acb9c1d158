"""Pane identity: the process walk, title narrowing, the foreground check, carve-outs."""

from __future__ import annotations

import pytest

from tma.core.identity import (
    NESTED,
    REMOTE,
    Identification,
    PaneFacts,
    Proc,
    ProcTable,
    identify,
    is_shell_only,
    normalize_comm,
)
from tma.core.manifest import loads


def manifest(name: str, names: list[str], titles: list[str] | None = None):
    lines = ['min_engine_version = "0.1"', "[identity]", f"process_names = {names!r}"]
    if titles is not None:
        quoted = ", ".join('"' + t.replace("\\", "\\\\") + '"' for t in titles)
        lines.append(f"title_patterns = [{quoted}]")
    lines.append("[capture]")
    return loads(name, "\n".join(lines) + "\n")


CLAUDE = manifest("claude", ["claude"])
CODEX = manifest("codex", ["codex", "codex-aarch64-a"])
GEMINI = manifest(
    "gemini", ["gemini", "node"], ["^◇  Ready ", "^✦  Working…", "^✋  Action Required "]
)
CURSOR = manifest("cursor", ["cursor-agent", "agent", "node"], ["^Cursor Agent$"])
OPENCODE = manifest("opencode", ["opencode"])
PI = manifest("pi", ["pi"], ["^π "])
ALL = [CLAUDE, CODEX, GEMINI, CURSOR, OPENCODE, PI]

GEMINI_READY = "◇  Ready (work-gemini)" + " " * 58  # gemini pads its title to 80 columns
GEMINI_WORKING = "✦  Working… (work-gemini)"
GEMINI_BLOCKED = "✋  Action Required (work-gemini)"


def P(pid: int, ppid: int, comm: str, pgid: int | None = None, tpgid: int = 0) -> Proc:
    return Proc(pid=pid, ppid=ppid, pgid=pid if pgid is None else pgid, tpgid=tpgid, comm=comm)


def shell_with(*children: Proc, fg: int, pid: int = 100, comm: str = "bash") -> ProcTable:
    """A pane root shell (its own group) whose tty's foreground group is `fg`."""
    return ProcTable.of([P(1, 0, "init"), P(pid, 1, comm, tpgid=fg), *children])


def pane(cmd: str, title: str = "host", anchor: int = 0, registered: str = "") -> PaneFacts:
    return PaneFacts(100, cmd, title, anchor_pid=anchor, registered_agent=registered)


# ---------------------------------------------------------------- normalize_comm


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("claude", "claude"),
        ("/opt/homebrew/bin/codex", "codex"),
        ("/usr/bin/node /x/.bin/gemini", "node"),
        ("  claude  ", "claude"),
        ("", ""),
        (".claude-wrapped", "claude"),
        ("/nix/store/abc/bin/.claude-wrapped", "claude"),
        (".opencode-wrapp", "opencode"),
        (".codex-w", "codex"),
        ("claude-wrapped", "claude-wrapped"),  # no leading dot: not a nix wrapper
        (".-wrapped", ".-wrapped"),  # nothing left to be the name
        (".opencode-x", ".opencode-x"),
        ("-bash", "-bash"),  # the login-shell dash is kept here
        ("codex-aarch64-a", "codex-aarch64-a"),
    ],
)
def test_normalize_comm(raw: str, want: str) -> None:
    assert normalize_comm(raw) == want


# ---------------------------------------------------------------- ProcTable


def test_subtree_bfs_includes_root_and_is_cycle_safe() -> None:
    table = ProcTable.of(
        [P(100, 1, "bash"), P(300, 100, "b"), P(200, 100, "a"), P(400, 200, "c"),
         P(500, 600, "x"), P(600, 500, "y"), P(7, 1, "other")]
    )
    assert [p.pid for p in table.subtree(100)] == [100, 200, 300, 400]
    assert {p.pid for p in table.subtree(500)} == {500, 600}
    assert table.subtree(0) == []
    assert table.subtree(999) == []
    assert table.get(400).comm == "c" and table.get(999) is None


def test_subtree_of_missing_root_still_finds_children() -> None:
    table = ProcTable.of([P(200, 100, "claude")])
    assert [p.pid for p in table.subtree(100)] == [200]


# ---------------------------------------------------------------- observation


def test_claude_foreground() -> None:
    table = shell_with(P(200, 100, "claude"), fg=200)
    got = identify(pane("claude", "✳ Claude Code"), table, ALL)
    assert (got.agent, got.pid, got.foreground_is_agent) == ("claude", 200, True)
    assert got.via == "observed"
    assert got.anchor_pid == 0 and got.out_of_scope is None
    assert "claude" in got.reason


def test_codex_node_launcher_is_foreground() -> None:
    # codex 0.171: `node …/.bin/codex` (group leader) -> native `codex` in the same group.
    table = shell_with(P(200, 100, "node"), P(201, 200, "codex", pgid=200), fg=200)
    got = identify(pane("node", "work-codex"), table, ALL)
    assert got.agent == "codex" and got.pid == 201
    # pane_current_command says `node`; a name check would wrongly say background.
    assert got.foreground_is_agent is True


def test_node_alone_is_never_codex() -> None:
    table = shell_with(P(200, 100, "node"), fg=200)
    got = identify(pane("node", "work-codex"), table, ALL)
    assert got.agent is None
    assert got.out_of_scope is None
    assert "title" in got.reason


def test_bare_node_dev_server_with_hostname_title() -> None:
    table = shell_with(P(200, 100, "node"), fg=200)
    assert identify(pane("node", "devbox.local"), table, ALL).agent is None


def test_codex_truncated_comm() -> None:
    table = shell_with(P(200, 100, "codex-aarch64-a"), fg=200)
    got = identify(pane("codex-aarch64-apple-darwin"), table, ALL)
    assert got.agent == "codex" and got.pid == 200 and got.foreground_is_agent


def test_agent_deep_in_subtree_with_shell_in_foreground() -> None:
    # bash -> make (bg job) -> sh -> claude, while bash itself owns the tty again.
    table = shell_with(
        P(200, 100, "make"), P(210, 200, "sh", pgid=200), P(220, 210, "claude", pgid=200), fg=100
    )
    got = identify(pane("bash"), table, ALL)
    assert got.agent == "claude" and got.pid == 220
    assert got.foreground_is_agent is False
    assert "not in the foreground" in got.reason


def test_foreground_node_in_another_group_is_not_the_agent() -> None:
    # gemini backgrounded (group 200); a node dev server (group 300) owns the tty.
    table = shell_with(P(200, 100, "node"), P(300, 100, "node"), fg=300)
    got = identify(pane("node", GEMINI_READY), table, ALL)
    assert got.agent == "gemini" and got.pid == 200
    assert got.foreground_is_agent is False


def test_group_leader_preferred_then_lowest_pid() -> None:
    table = shell_with(P(150, 100, "claude", pgid=140), P(160, 100, "claude"), fg=160)
    assert identify(pane("claude"), table, [CLAUDE]).pid == 160
    table = shell_with(P(170, 100, "claude", pgid=1), P(160, 100, "claude", pgid=1), fg=1)
    assert identify(pane("claude"), table, [CLAUDE]).pid == 160


def test_foreground_falls_back_to_name_when_groups_unknown() -> None:
    procs = [P(100, 1, "bash", tpgid=0), P(200, 100, "claude")]
    got = identify(pane("claude"), ProcTable.of(procs), ALL)
    assert got.agent == "claude" and got.foreground_is_agent is True
    got = identify(pane("bash"), ProcTable.of(procs), ALL)
    assert got.foreground_is_agent is False
    procs = [P(100, 1, "bash", tpgid=200), P(200, 100, "claude", pgid=0)]
    assert identify(pane("claude"), ProcTable.of(procs), ALL).foreground_is_agent is True


def test_nix_wrapped_names() -> None:
    table = shell_with(P(200, 100, ".claude-wrapped"), fg=200)
    got = identify(pane(".claude-wrapped"), table, ALL)
    assert got.agent == "claude" and got.foreground_is_agent
    table = shell_with(P(200, 100, ".opencode-wrapp"), fg=200)
    got = identify(pane(".opencode-wrapped"), table, ALL)
    assert got.agent == "opencode" and got.pid == 200 and got.foreground_is_agent


def test_manifest_order_decides() -> None:
    table = shell_with(P(200, 100, "claude"), fg=200)
    other = manifest("other", ["claude"])
    assert identify(pane("claude"), table, [CLAUDE, other]).agent == "claude"
    assert identify(pane("claude"), table, [other, CLAUDE]).agent == "other"


def test_first_manifest_with_any_match_wins_even_if_deeper() -> None:
    # The manifest order, not the tree order, decides between two agents in one pane.
    table = shell_with(P(200, 100, "opencode"), P(300, 200, "claude", pgid=200), fg=200)
    assert identify(pane("opencode"), table, ALL).agent == "claude"


def test_no_table_no_registration() -> None:
    got = identify(pane("claude"), None, ALL)
    assert got == Identification(agent=None, reason=got.reason)
    assert "ps" in got.reason


def test_no_agent() -> None:
    table = shell_with(P(200, 100, "vim"), fg=200)
    got = identify(pane("vim"), table, ALL)
    assert got.agent is None and got.via is None and got.pid == 0


# ---------------------------------------------------------------- title narrowing


@pytest.mark.parametrize("title", [GEMINI_READY, GEMINI_WORKING, GEMINI_BLOCKED])
def test_gemini_titles_claim_node(title: str) -> None:
    table = shell_with(P(200, 100, "node"), fg=200)
    got = identify(pane("node", title), table, ALL)
    assert got.agent == "gemini" and got.pid == 200 and got.foreground_is_agent
    assert got.anchor_pid == 200


@pytest.mark.parametrize(
    "title", ["devbox", "◇ Ready (one space)", "✦ Working…", "Ready (work-gemini)", ""]
)
def test_gemini_titles_that_do_not_match(title: str) -> None:
    table = shell_with(P(200, 100, "node"), fg=200)
    assert identify(pane("node", title), table, ALL).agent is None


def test_title_flicker_held_by_anchor() -> None:
    table = shell_with(P(200, 100, "node"), fg=200)
    got = identify(pane("node", "devbox", anchor=200), table, ALL)
    assert got.agent == "gemini" and got.anchor_pid == 200
    assert "anchor" in got.reason


def test_anchor_dropped_when_pid_changes() -> None:
    # gemini restarted as pid 210; the stored anchor 200 no longer holds.
    table = shell_with(P(210, 100, "node"), fg=210)
    got = identify(pane("node", "devbox", anchor=200), table, ALL)
    assert got.agent is None and got.anchor_pid == 0
    # With a matching title the new pid is anchored instead.
    got = identify(pane("node", GEMINI_WORKING, anchor=200), table, ALL)
    assert got.agent == "gemini" and got.anchor_pid == 210


def test_cursor_post_turn_title_does_not_match_but_anchor_holds() -> None:
    table = shell_with(P(200, 100, "agent"), fg=200)
    assert identify(pane("agent", "Cursor Agent"), table, ALL).agent == "cursor"
    assert identify(pane("agent", "Just OK"), table, ALL).agent is None
    held = identify(pane("agent", "Just OK", anchor=200), table, ALL)
    assert held.agent == "cursor" and held.anchor_pid == 200


def test_pi_comm_and_title() -> None:
    table = shell_with(P(200, 100, "pi"), fg=200)
    got = identify(pane("pi", "π - work-pi"), table, ALL)
    assert got.agent == "pi" and got.anchor_pid == 200 and got.foreground_is_agent
    assert identify(pane("pi", "pi - work-pi"), table, ALL).agent is None


def test_pi_stale_title_after_exit_is_not_an_agent() -> None:
    table = shell_with(fg=100)
    assert identify(pane("bash", "π - work-pi"), table, ALL).agent is None


def test_failed_narrowing_falls_through_to_next_manifest() -> None:
    # Both gemini and cursor list node; cursor's title wins once gemini's gate fails.
    table = shell_with(P(200, 100, "node"), fg=200)
    got = identify(pane("node", "Cursor Agent"), table, ALL)
    assert got.agent == "cursor" and got.anchor_pid == 200


def test_registration_bypasses_title_gate() -> None:
    table = shell_with(P(200, 100, "node"), fg=200)
    got = identify(pane("node", "devbox", registered="gemini"), table, ALL)
    assert (got.agent, got.pid, got.via, got.anchor_pid) == ("gemini", 200, "registered", 0)
    assert got.foreground_is_agent
    # A title match still anchors the registered pane.
    got = identify(pane("node", GEMINI_READY, registered="gemini"), table, ALL)
    assert got.via == "registered" and got.anchor_pid == 200


def test_registration_for_another_agent_does_not_bypass() -> None:
    table = shell_with(P(200, 100, "node"), fg=200)
    got = identify(pane("node", "devbox", registered="claude"), table, ALL)
    # No gemini claim (title fails); the claude registration stands alone, pid-less.
    assert (got.agent, got.pid, got.via) == ("claude", 0, "registered")


def test_process_only_manifest_clears_anchor() -> None:
    table = shell_with(P(200, 100, "claude"), fg=200)
    assert identify(pane("claude", anchor=200), table, ALL).anchor_pid == 0


# ---------------------------------------------------------------- carve-outs


@pytest.mark.parametrize("cmd", REMOTE)
def test_remote_carve_out(cmd: str) -> None:
    # A stray local `claude` child must not flip a remote-shell pane into an agent.
    table = shell_with(P(200, 100, cmd), P(300, 100, "claude", pgid=300), fg=200)
    got = identify(pane(cmd, "✳ Claude Code"), table, ALL)
    assert got.agent is None
    assert (got.out_of_scope, got.out_of_scope_command) == ("remote", cmd)
    assert "remote shell" in got.reason


@pytest.mark.parametrize("cmd", NESTED)
def test_nested_carve_out(cmd: str) -> None:
    table = shell_with(P(200, 100, cmd), fg=200)
    got = identify(pane(cmd), table, ALL)
    assert got.agent is None
    assert (got.out_of_scope, got.out_of_scope_command) == ("nested", cmd)


def test_carve_out_normalizes_the_foreground_command() -> None:
    got = identify(pane("/usr/bin/ssh"), None, ALL)
    assert (got.out_of_scope, got.out_of_scope_command) == ("remote", "ssh")


@pytest.mark.parametrize(("cmd", "kind"), [("docker", "remote"), ("tmux", "nested")])
def test_registration_outranks_carve_out(cmd: str, kind: str) -> None:
    table = shell_with(P(200, 100, cmd), fg=200)
    got = identify(pane(cmd, registered="claude"), table, ALL)
    assert (got.agent, got.pid, got.foreground_is_agent, got.via) == (
        "claude", 0, False, "registered"
    )
    assert got.registered_behind == kind
    assert got.out_of_scope is None and got.anchor_pid == 0


def test_registration_naming_unknown_manifest_is_ignored() -> None:
    table = shell_with(P(200, 100, "ssh"), fg=200)
    got = identify(pane("ssh", registered="nosuch"), table, ALL)
    assert got.agent is None and got.out_of_scope == "remote"
    table = shell_with(fg=100)
    assert identify(pane("bash", registered="nosuch"), table, ALL).agent is None


# ---------------------------------------------------------------- registration only


def test_registration_only_is_pid_zero() -> None:
    table = shell_with(fg=100)
    got = identify(pane("bash", registered="claude"), table, ALL)
    assert (got.agent, got.pid, got.foreground_is_agent, got.via) == (
        "claude", 0, False, "registered"
    )
    assert got.registered_behind is None


def test_registration_only_without_table() -> None:
    got = identify(pane("claude", registered="claude"), None, ALL)
    assert (got.agent, got.pid, got.via) == ("claude", 0, "registered")


def test_registration_corroborates_observation() -> None:
    table = shell_with(P(200, 100, "claude"), fg=200)
    got = identify(pane("claude", registered="claude"), table, ALL)
    assert (got.agent, got.pid, got.via) == ("claude", 200, "registered")


# ---------------------------------------------------------------- shell-only (reaper)


def test_is_shell_only() -> None:
    assert is_shell_only(shell_with(fg=100, comm="-bash"), 100)
    assert is_shell_only(shell_with(P(200, 100, "zsh"), P(300, 200, "/bin/sh"), fg=300), 100)
    assert is_shell_only(ProcTable.of([P(100, 1, "login"), P(101, 100, "-zsh")]), 100)
    assert is_shell_only(ProcTable.of([]), 100)  # the pane is gone: nothing live
    # gemini runs pid-less as a registered `node`: a live agent holds forever.
    assert not is_shell_only(shell_with(P(200, 100, "node"), fg=200, comm="-bash"), 100)
    assert not is_shell_only(shell_with(P(200, 100, "sleep"), fg=100), 100)
    # Only the pane's own subtree counts.
    assert is_shell_only(shell_with(P(200, 1, "node"), fg=100), 100)


def test_a_title_match_beats_another_manifests_anchor_hold() -> None:
    # cursor and gemini both run as `node`. An anchor says only "this pid was claimed
    # before", not by whom: gemini's own title must win over cursor holding by anchor.
    table = shell_with(P(200, 100, "node"), fg=200)
    got = identify(pane("node", GEMINI_WORKING, anchor=200), table, [CURSOR, GEMINI])
    assert got.agent == "gemini" and got.anchor_pid == 200
    # with no title match anywhere the anchor still holds (title flicker)
    held = identify(pane("node", "devbox", anchor=200), table, [CURSOR, GEMINI])
    assert held.agent == "cursor"
