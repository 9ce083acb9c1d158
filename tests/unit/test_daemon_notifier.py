"""The daemon notifier's batch: what it asks tmux to commit for a read's rows."""

from __future__ import annotations

from tma.core.codec import Stamp
from tma.daemon.notifier import decide
from tma.runtime.config import Config
from tma.runtime.notify import gate as notify_gate
from tma.tmux import notify as tnotify

NOW = 1_800_000_000_000


class _Pane:
    def __init__(self, pane_id, options=None):
        self.pane_id = pane_id
        self.options = options or {}


class _Row:
    def __init__(self, pane_id, stamp, options=None, foreign=False):
        self.pane = _Pane(pane_id, options)
        self.stamp = stamp
        self.foreign = foreign


def _cfg(**notify):
    cfg = Config()
    cfg.notify = notify
    return cfg


def test_one_marker_per_due_pane_and_none_for_the_rest():
    rows = [_Row("%1", Stamp(state="blocked", since=NOW - 10)),
            _Row("%2", Stamp(state="blocked", since=NOW - 10, notified_at=NOW - 5)),
            _Row("%3", Stamp(state="idle", attention=True, since=NOW - 10)),
            _Row("%4", Stamp(state="working", since=NOW - 10)),
            _Row("%5", Stamp(state="blocked", since=NOW - 10), foreign=True)]
    plan = decide(rows, _cfg(), NOW, notify_gate)
    assert list(plan.candidates) == [("N", "%1")]
    assert plan.candidates[("N", "%1")][1:] == ("blocked", NOW)
    assert plan.lines == tnotify.marker_lines("%1", "blocked", NOW)
    plan = decide(rows, _cfg(on=["done"]), NOW, notify_gate)
    assert list(plan.candidates) == [("N", "%3")]


def test_context_high_only_with_its_table():
    opts = {"@agent_context_pct": "90", "@agent_context_at": str(NOW)}
    rows = [_Row("%1", Stamp(state="working", since=NOW), opts),
            _Row("%2", Stamp(state="working", since=NOW),
                 {"@agent_context_pct": "10", "@agent_context_at": str(NOW),
                  "@agent_context_notified_at": "1"})]
    assert decide(rows, _cfg(), NOW, notify_gate).lines == []
    plan = decide(rows, _cfg(context_high={"threshold": 80}), NOW, notify_gate)
    assert list(plan.candidates) == [("X", "%1")]
    assert tnotify.context_rearm_line("%2") in plan.lines


def test_the_read_back_is_parsed_per_pane_and_control_clients_are_left_out():
    fr = tnotify.FRAME
    # what tmux prints for the batch: one line per record, other commands' output between
    out = "\n".join([fr.record("N", ["%1", str(NOW), ""]), "stray output",
                     fr.record("X", ["%2", "5", "99999999999999"]),
                     fr.record("C", ["/dev/pts/3", "0", "%1", "1800000000"]),
                     fr.record("C", ["client-9", "1", "%2", "1800000000"]),
                     fr.record("C", ["/dev/pts/4", "0", "", ""]),
                     fr.record("N", ["%4", "too", "many", "fields"]), ""])
    clients, marks = tnotify.parse_batch(out)
    assert clients == ["/dev/pts/3", "/dev/pts/4"]
    assert marks == {("N", "%1"): (str(NOW), ""), ("X", "%2"): ("5", "99999999999999")}
    # the control client shows %2 but says nothing about a person's input
    assert tnotify.parse_clients(out) == (clients, [("%1", 1_800_000_000)])


def test_on_screen_needs_the_pane_shown_and_input_within_the_window():
    watchers = [("%1", NOW // 1000 - 30), ("%2", NOW // 1000 - 31)]
    cfg = _cfg()  # the default: 30 s
    assert notify_gate.quiet_if_active_s(cfg) == 30
    assert notify_gate.on_screen(cfg, "%1", watchers, NOW)
    assert not notify_gate.on_screen(cfg, "%2", watchers, NOW)  # 31 s idle
    assert not notify_gate.on_screen(cfg, "%3", watchers, NOW)  # shown nowhere
    assert notify_gate.on_screen(_cfg(quiet_if_active_s=60), "%2", watchers, NOW)
    assert not notify_gate.on_screen(_cfg(quiet_if_active_s=0), "%1", watchers, NOW)


def test_held_done_notes_combine_into_one_naming_each():
    from tma.runtime.notify.note import Note, message, payload

    notes = [Note(trigger="done", agent="claude", pane="%1", locator="s:1.0", since_ms=900),
             Note(trigger="done", agent="codex", pane="%4", locator="s:2.0", since_ms=300),
             Note(trigger="done", agent="claude", pane="%7", locator="s:3.0", since_ms=500)]
    one = Note.combined(notes)
    assert message(one) == "tma: 3 agents done — claude %1, codex %4, claude %7"
    doc = payload(one)
    assert (doc["state"], doc["agent"], doc["pane"], doc["age_ms"]) == (
        "done", "3 agents", "%1", 300)
    assert notify_gate.coalesce_done_ms(_cfg()) == 3000
    assert notify_gate.coalesce_done_ms(_cfg(coalesce_done_ms=0)) == 0


def test_at_the_cap_the_oldest_child_is_killed_reaped_and_recorded(monkeypatch, tmp_path):
    import os

    from tma.daemon import notifier as mod
    from tma.runtime.notify import (
        backends as notify_backends,
        log as notify_log,
        note as notify_note,
    )

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setattr(mod, "MAX_IN_FLIGHT", 2)
    part = mod.Notifier(daemon=None)
    note = notify_note.Note(trigger="blocked", agent="a", pane="%1")
    kids = [notify_backends.run_sink(["sleep", "30"], "sleep 30", note, False, NOW) for _ in range(3)]
    waiter = notify_backends.run_sink(["sleep", "30"], "notify-send (desktop)", note, False, NOW,
                              {"TMA_JUMP_BIN": "tma"})
    try:
        for kid in kids:
            part.adopt(kid)
        assert [c.pid for c in part.children] == [kids[1].pid, kids[2].pid]
        try:  # killed and reaped: no zombie left
            assert os.waitpid(kids[0].pid, os.WNOHANG) is None
        except ChildProcessError:
            pass
        assert "2 notification commands" in notify_log.last_failure()["reason"]
        part.adopt(waiter)  # the cap again: kids[1] goes
        assert [c.pid for c in part.children] == [kids[2].pid, waiter.pid]
        notify_log.clear_failure()
        part.children[-1].kill("x")  # a desktop waiter killed: not a failure
        assert waiter.waiter and notify_log.last_failure() is None
    finally:
        for kid in kids[2:]:
            try:
                kid.kill("cleanup")
            except OSError:
                pass


def test_a_desktop_waiter_past_its_wait_is_ended_unrecorded(monkeypatch, tmp_path):
    """Where no `timeout` bounds notify-send, the daemon ends a waiter that outlived
    WAIT_SECS + GRACE_SECS (not a failure: nobody clicked)."""
    import os

    from tma.daemon import notifier as mod
    from tma.runtime.notify import (
        backends as notify_backends,
        log as notify_log,
        note as notify_note,
    )

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setattr(notify_backends, "WAIT_SECS", 0)
    monkeypatch.setattr(mod, "GRACE_SECS", 0)
    part = mod.Notifier(daemon=None)
    note = notify_note.Note(trigger="blocked", agent="a", pane="%1")
    waiter = notify_backends.run_sink(["sleep", "30"], "notify-send (desktop)", note, False,
                                      NOW, {"TMA_JUMP_BIN": "tma"})
    plain = notify_backends.run_sink(["sleep", "30"], "sleep 30", note, False, NOW)
    try:
        part.adopt(waiter)
        part.adopt(plain)
        assert waiter.deadline is not None and plain.deadline is None
        part._reap()
        assert [c.pid for c in part.children] == [plain.pid]
        try:
            assert os.waitpid(waiter.pid, os.WNOHANG) is None
        except ChildProcessError:
            pass
        assert notify_log.last_failure() is None
    finally:
        plain.kill("cleanup")
