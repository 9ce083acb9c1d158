"""A second writer's stamp on a pane tma does not identify is read, never removed
(the contract: "where its tokens fall inside the closed set, tma reads them as its own").

Each cycle below really produces: the stamps are older than the freshness window and
every `tma ls` runs in a new second (past the stampede guard).
"""

from __future__ import annotations

import json
import time

from tma.core import options


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def stamp_foreign(srv, pane: str, **values: str) -> dict[str, str]:
    for key, value in values.items():
        srv.tmux("set-option", "-p", "-t", pane, f"@{key}", value)
    return srv.options(pane)


def cycles(srv, n: int = 3) -> list[list[dict]]:
    out = []
    for _ in range(n):
        srv.next_second()
        out.append(srv.ls())
    return out


def test_a_nameless_valid_stamp_is_listed_and_kept(srv):
    pane = srv.shell_pane()
    old = str(now_ms() - 60_000)  # stale: every cycle looks at the pane
    before = stamp_foreign(srv, pane, agent_state="working", agent_source="hook",
                           agent_evidence_at=old, agent_since=old, agent_stamped_at=old)
    for rows in cycles(srv):
        [row] = rows
        assert (row["pane"], row["state"]) == (pane, "working")
        assert srv.options(pane) == before  # read, never rewritten or removed
    plain = srv.tma("status", "--format", "plain", check=True).stdout
    assert plain == "●1\n"
    text = srv.tma("ls", check=True)
    assert pane in text.stdout and "working" in text.stdout and text.stderr == ""
    # doctor names it as another producer's pane
    srv.env.setdefault("XDG_RUNTIME_DIR", str(srv.root / "run"))
    doc = json.loads(srv.tma("doctor", "--json", check=True).stdout)
    assert doc["foreign_panes"] == [{"pane": pane, "locator": "s:0.0", "agent": ""}]
    text = srv.tma("doctor", check=True).stdout
    assert f"{pane} s:0.0: no @agent_name" in text


def test_a_bare_state_token_is_read_too(srv):
    """getpipher/agent-status writes only @agent_state (idle/working)."""
    pane = srv.shell_pane()
    before = stamp_foreign(srv, pane, agent_state="idle")
    for rows in cycles(srv):
        assert [(r["pane"], r["state"]) for r in rows] == [(pane, "idle")]
    assert srv.options(pane) == before


def test_an_out_of_set_token_is_silent_and_kept(srv):
    pane = srv.shell_pane()
    before = stamp_foreign(srv, pane, agent_state="thinking",
                           agent_stamped_at=str(now_ms() - 60_000))
    for rows in cycles(srv):
        assert rows == []
    assert srv.options(pane) == before
    assert srv.tma("status", check=True).stdout == ""


def test_a_tma_stamp_whose_agent_exited_is_removed(srv):
    """The same pane shape with tma's own stamp (named for a loaded manifest, as every
    tma write is): the agent is gone, so the stamp goes."""
    pane = srv.shell_pane()
    old = str(now_ms() - 60_000)
    res = srv.tma("debug", "stamp", pane, "--state", "idle", "--source", "capture",
                  "--name", "fake", "--pid", "999999", "--evidence-at", old,
                  "--stamped-at", old, "--hash", "ab12")
    assert res.returncode == 0, res.stderr
    assert srv.option(pane, "@agent_state") == "idle"
    srv.next_second()
    assert srv.ls() == []
    assert not set(options.EPISODE_OPTIONS) & set(srv.options(pane))


def rollups(srv, pane: str) -> tuple[str, str]:
    """(@agent_summary of the pane's window, @agent_session_summary of its session)."""
    window, session = srv.display(pane, "#{window_id} #{session_id}").split()
    return (srv.tmux("show-options", "-w", "-q", "-v", "-t", window, "@agent_summary").strip(),
            srv.tmux("show-options", "-q", "-v", "-t", session,
                     "@agent_session_summary").strip())


def test_a_second_writers_stamp_is_counted_in_both_rollups(srv):
    """The contract: a valid token is counted for free (no rollup code of the writer's
    own), an out-of-set one contributes nothing, and withdrawing the stamp takes the
    count down."""
    agent = srv.agent_pane()
    srv.draw(agent, "FAKE-WORKING")
    foreign = srv.tmux("split-window", "-d", "-t", agent, "-P", "-F", "#{pane_id}",
                       "exec sh").strip()
    old = str(now_ms() - 60_000)
    stamp_foreign(srv, foreign, agent_state="blocked", agent_detail="permission",
                  agent_source="hook", agent_name="my-agent", agent_evidence_at=old,
                  agent_since=old, agent_stamped_at=old)
    garbled = srv.shell_pane()  # another window of the same session
    stamp_foreign(srv, garbled, agent_state="thinking", agent_stamped_at=old)
    alone = srv.shell_pane(session="t")  # a session with only a second writer in it
    stamp_foreign(srv, alone, agent_state="idle")

    rows = cycles(srv, 1)[0]
    assert sorted((r["pane"], r["state"]) for r in rows) == sorted(
        [(agent, "working"), (foreign, "blocked"), (alone, "idle")])
    assert rollups(srv, agent) == ("blocked:1 working:1", "blocked:1 working:1")
    assert rollups(srv, garbled) == ("", "blocked:1 working:1")  # its window: no count
    assert rollups(srv, alone) == ("idle:1", "idle:1")

    for pane in (foreign, alone):  # the writers' agents exit: they take their stamps down
        for key in ("state", "detail", "source", "name", "evidence_at", "since",
                    "stamped_at"):
            srv.tmux("set-option", "-p", "-u", "-t", pane, f"@agent_{key}")
    cycles(srv, 1)
    assert rollups(srv, agent) == ("working:1", "working:1")
    assert rollups(srv, alone) == ("", "")
