"""Output for the person reading it: `ls` and `status` on a real terminal (a pty) read as a
table and a plain line; piped (a script, tmux's `#()`) they stay byte-for-byte the
machine formats."""

from __future__ import annotations

import re
import sys

from tests.helpers.ptyclient import PtyClient, run_on_pty


def _pty(srv, *args: str, cols: int = 120) -> tuple[int, str]:
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), *args]
    return run_on_pty(argv, srv.env, cols=cols)


def _two_agents(srv) -> tuple[str, str]:
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.tmux("select-pane", "-t", a, "-T", "fix the parser")
    srv.tmux("select-pane", "-t", b, "-T", "")
    srv.draw(a, "FAKE-BLOCKED\n")
    srv.draw(b, "FAKE-WORKING\n")
    return a, b


def test_ls_on_a_terminal_is_a_table_with_ages_and_glyphs(srv):
    a, b = _two_agents(srv)
    piped = srv.tma("ls", check=True).stdout  # stamps the panes (and is the TSV form)
    rc, out = _pty(srv, "ls")
    assert rc == 0, out
    lines = out.splitlines()
    assert re.match(r"^\s+PANE\s+AGENT\s+STATE\s+DETAIL\s+AGE\s+WHERE\s+(REPO\s+BRANCH\s+)?TITLE$", lines[0]), out
    blocked = next(line for line in lines if a in line)
    assert re.search(rf"{a}\s+fake\s+⚑ blocked\s+permission\s+\d+s\s+s:\d+\.0\s+"
                     r"(.*\s)?fix the parser$", blocked), out
    assert re.search(rf"{b}\s+fake\s+● working\s+\d+s\s", out), out
    assert "\t" not in out and not re.search(r"\b1\d{12}\b", out)  # no epoch ms on screen
    # the columns line up under the header
    starts = {line.index(" fake ") + 1 for line in lines[1:]}
    assert starts == {lines[0].index("AGENT")}
    # piped: the tab-separated rows, one per agent, since in epoch ms
    rows = [line.split("\t") for line in piped.splitlines()]
    assert [r[0] for r in rows] == [a, b]
    assert all(len(r) == 12 for r in rows) and rows[0][2:4] == ["blocked", "permission"]
    assert re.fullmatch(r"1\d{12}", rows[0][4])


def test_ls_on_a_narrow_terminal_cuts_the_title_not_the_columns(srv):
    a = srv.agent_pane()
    srv.tmux("select-pane", "-t", a, "-T", "a very long pane title " * 6)
    srv.draw(a, "FAKE-IDLE\n")
    srv.tma("ls", check=True)
    rc, out = _pty(srv, "ls", cols=90)
    assert rc == 0, out
    row = next(line for line in out.splitlines() if a in line)
    assert len(row) == 90 and row.endswith("…"), out


def test_ls_on_a_terminal_with_no_agents_says_so(srv):
    srv.shell_pane()
    rc, out = _pty(srv, "ls")
    assert rc == 0 and out == "no agent panes (tma doctor says what it sees)\n"
    assert srv.tma("ls", check=True).stdout == ""  # piped: empty, as scripts expect


def test_status_on_a_terminal_is_plain_with_a_newline(srv):
    _two_agents(srv)
    piped = srv.tma("status", check=True).stdout
    assert piped.startswith("#[range=user|tma:blocked]#[fg=colour231,bg=red]⚑1"
                            "#[fg=default,bg=default]#[norange]")
    assert not piped.endswith("\n")
    rc, out = _pty(srv, "status")
    assert rc == 0
    assert out == "⚑1 ●1\n", repr(out)
    # under #() (no terminal) it is byte-for-byte what it was
    assert srv.tma("status", check=True).stdout == piped


def test_status_plain_in_a_pipe_is_one_line_and_reads_the_same_under_a_status_job(srv):
    """plain ends its line in a pipe (`read`, `wc -l` count it); the tmux format, whose
    bytes the daemon's segment shares, stays without one. Under #() tmux keeps a job's
    first line, so the newline changes nothing a status line shows."""
    _two_agents(srv)
    assert srv.tma("status", "--format", "plain", check=True).stdout == "⚑1 ●1\n"
    assert not srv.tma("status", check=True).stdout.endswith("\n")
    job = " ".join([sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
                    str(srv.manifests), "status", "--format", "plain"])
    srv.tmux("set-option", "-g", "status-interval", "1", ";",
             "set-option", "-g", "status-right", f"[#({job})]")
    client = PtyClient(srv, cols=120)  # a job's output shows on a client's status line
    try:
        srv.wait_for(lambda: "[⚑1 ●1]" in client.output(), timeout=15)
    finally:
        client.close()


def test_status_on_a_terminal_with_no_agents_says_so(srv):
    srv.shell_pane()
    rc, out = _pty(srv, "status")
    assert rc == 0 and out == "no agents\n"
    assert srv.tma("status", check=True).stdout == ""


def test_act_refusals_say_why_in_words_and_keep_the_reason_in_json(srv):
    import json

    idle, working, blocked = srv.agent_pane(), srv.agent_pane(), srv.agent_pane()
    shell = srv.shell_pane()
    srv.draw(idle, "FAKE-IDLE\n")
    srv.draw(working, "FAKE-WORKING\n")
    srv.draw(blocked, "FAKE-BLOCKED\n")
    srv.ls()
    cases = [
        (idle, "approve", 4, "gated", f"{idle} is idle, not at a permission prompt: "
                                      "nothing to approve"),
        (working, "deny", 4, "gated", f"{working} is working, not at a permission prompt: "
                                      "nothing to deny"),
        (shell, "approve", 4, "gated", f"{shell} carries no agent state (tma sees no agent "
                                       "there): nothing to approve"),
        (blocked, "approve", 4, "wrong-agent",  # no action manifest has a `fake` arm
         f"`approve` does not apply to fake panes ({blocked}); it covers aider, claude, codex, "
         "copilot, cursor, gemini, opencode, qwen"),
        ("%999", "approve", 3, None, "no pane %999 (it closed, or never existed): "
                                     "nothing to approve"),
    ]
    for pane, action, code, reason, why in cases:
        res = srv.tma("act", action, "--pane", pane, "--json")
        assert res.returncode == code, res.stderr
        assert res.stderr == f"tma: {why} (exit {code})\n"
        doc = json.loads(res.stdout)
        assert (doc["reason"], doc["message"], doc["exit_code"]) == (reason, why, code)


def test_ls_fits_80_and_40_columns_without_wrapping(srv):
    """At 80 and 40 columns the low-priority columns drop (title, branch, repo, where,
    detail, age); PANE, AGENT and STATE stay, and no line is wider than the terminal."""
    a, b = _two_agents(srv)
    srv.tmux("select-pane", "-t", b, "-T", "a long title " * 5)
    srv.tma("ls", check=True)
    for cols in (80, 40):
        rc, out = _pty(srv, "ls", cols=cols)
        assert rc == 0, out
        lines = out.splitlines()
        assert all(len(line) <= cols for line in lines), (cols, out)
        assert "PANE" in lines[0] and "STATE" in lines[0]
        assert re.search(rf"{a}\s+fake\s+⚑ blocked", out), out
    assert "WHERE" not in lines[0] and "TITLE" not in lines[0]  # 40 columns


def test_wait_on_a_terminal_prints_the_table_not_tsv(srv):
    a, _b = _two_agents(srv)
    srv.tma("ls", check=True)
    rc, out = _pty(srv, "wait", "--pane", a, "--until", "blocked", "--timeout", "10")
    assert rc == 0, out
    assert "\t" not in out and not re.search(r"\b1\d{12}\b", out), out  # no epoch ms
    assert re.search(rf"{a}\s+fake\s+⚑ blocked\s+permission\s+\d+s", out), out
    piped = srv.tma("wait", "--pane", a, "--until", "blocked", "--timeout", "10").stdout
    assert piped.startswith(a + "\t") and re.search(r"\t1\d{12}\t", piped)  # scripts: TSV
