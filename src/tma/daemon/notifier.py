"""The daemon's notifier: blocked, done and context_high, rung once per episode.

After every read (the first one is the cold start) and after a reload, every agent
row is asked (tma.core.notice) whether it is due: blocked, or idle with attention
(`done`), listed in `[notify] on`, with `@agent_notified_at` older than the episode.
Each due pane's marker is committed server-side, all of them in one spawn: the set
holds if the pane left the state or the episode is already rung (a hook writer or a
previous daemon got there first), and the marker is read back with the mute deadline.
Only a pane whose marker reads back as this write's value rings; a muted one has
its marker consumed and rings nothing. The marker lives in the pane, so a daemon
killed and restarted re-announces nothing already rung.

context_high has its own flag, `@agent_context_notified_at`: set from absent (and
read back) when a real reading reaches the threshold, unset when one falls below
threshold - 10.

A pane in front of a person is not rung: shown on an attached client (the active pane
of its session's current window) whose last input is within `[notify]
quiet_if_active_s`. The clients, their panes and their last input are read in the
same spawn as the markers; a quiet pane's marker is consumed all the same (the person
saw the state arrive, so walking away later rings nothing for that episode), and it
counts as `suppressed`.

`done` is held for `[notify] coalesce_done_ms` from the first one: every `done`
committed in that window goes out as one notification ("3 agents done: …"); blocked
and context_high are never held. The markers are committed as before (at the read),
so holding changes when the ring happens, never whether; a daemon that stops rings
what it holds on its way out.

Sinks (tma.runtime.notify.dispatch) never block the loop: a command or desktop notifier is
started and reaped on later reads or ticks, at most MAX_IN_FLIGHT at once (the
oldest is killed at the cap). A desktop notification with actions is such a child: it
waits for the click (notify_backends.WAIT_SECS at most, under `timeout`; the daemon
ends one that outlives that by GRACE_SECS, where no `timeout` was found), and the
click's `tma act` / `tma jump` runs from it, never from the loop.
"""

from __future__ import annotations

import os
import time

from tma.core import notice
from tma.core.actions import gate as actions_gate
from tma.daemon.parts import Part
from tma.runtime.act import card_screen, registry as actions
from tma.runtime.act.fire import target_of
from tma.runtime.notify import (
    backends as notify_backends,
    dispatch as notify,
    gate as notify_gate,
    http as notify_http,
    said,
)
from tma.runtime.notify.note import Note
from tma.tmux import notify as tnotify

MAX_IN_FLIGHT = 64
REAP_EVERY_MS = 500
GRACE_SECS = 30


def _mono() -> int:
    return time.monotonic_ns() // 1_000_000


def _wall() -> int:
    return time.time_ns() // 1_000_000


class Notifier(Part):
    name = "notifier"

    def __init__(self, daemon) -> None:
        super().__init__(daemon)
        self.children: list = []  # tma.runtime.notify.backends.Child, oldest first
        self.rows: list = []
        self.counts = {"blocked": 0, "done": 0, "context_high": 0, "muted": 0,
                       "suppressed": 0, "coalesced": 0}
        self._jump: dict[str, str] | None = None
        self._actions: object = None  # tma.runtime.act.registry.ActionSet, loaded on the first ring
        self._next_reap: int | None = None
        self.held: list[Note] = []  # done notes waiting for the coalescing window
        self._flush_at: int | None = None  # monotonic ms the held notes go out
        self._told: set[str] = set()  # the push sinks' refused secrets already logged
        self._push_problems()

    # ------------------------------------------------------------ the Part hooks
    def on_read(self, rows: list, transitions: list, now: int) -> None:
        self.rows = rows
        self._reap()
        self.dispatch(rows, now)

    def reloaded(self) -> None:
        """A reload acts as a cold start for `notify.on` (a trigger just switched on
        rings for the episodes standing now)."""
        self._actions = None  # a user action file may have changed with the config
        self._told = set()
        self._push_problems()
        self.dispatch(self.rows, _wall())

    def deadline(self) -> int | None:
        """While a sink child runs: the next time to look whether it ended; while done
        notes are held: the end of their window."""
        due = self._flush_at
        if self.children:
            if self._next_reap is None:
                self._next_reap = _mono() + REAP_EVERY_MS
            due = self._next_reap if due is None else min(due, self._next_reap)
        return due

    def tick(self, now_mono: int) -> None:
        self._next_reap = None
        self._reap()
        if self._flush_at is not None and now_mono >= self._flush_at:
            self.flush(_wall())

    def status(self) -> dict:
        """Counts, and the sinks each trigger reaches as this process sees them: sink (5)
        as `kind`/`what` (its PATH and session bus, which doctor's own environment may not
        share), and every sink that rings as `rings` (tma.runtime.notify.dispatch.reaches,
        under the config this daemon runs)."""
        cfg = self.daemon.cfg
        sinks = {}
        for trigger in notify_gate.TRIGGERS:
            if notify_gate.enabled(cfg, trigger):
                kind, what = notify_backends.sink(cfg, trigger, daemon=True)
                sinks[trigger] = {"kind": kind, "what": what,
                                  "rings": notify.reaches(cfg, trigger, sink5=(kind, what))}
        return {"notify": {"fired": dict(self.counts), "in_flight": len(self.children),
                           "sink": sinks, "push": notify_http.stats()}}

    def close(self) -> None:
        self.flush(_wall())  # their markers are committed: nobody else would ring them
        self._reap()

    # ------------------------------------------------------------ dispatch
    def dispatch(self, rows: list, now: int) -> None:
        cfg = self.daemon.cfg
        plan = decide(rows, cfg, now, notify_gate)
        if not plan.lines:
            return
        lines = list(plan.lines)
        if plan.candidates:
            lines.append(tnotify.clients_line())
        out = tnotify.commit(self.daemon.server, lines)
        _clients, marks = tnotify.parse_batch(out)
        clients, watchers = tnotify.parse_clients(out)  # (pane shown, last input) each
        for key, (row, trigger, value) in plan.candidates.items():
            got = marks.get(key)
            if got is None or got[0] != str(value):
                continue  # the marker did not commit: rung already, or the state moved
            if notice.muted(got[1], now):
                self.counts["muted"] += 1
                continue
            if notify_gate.on_screen(cfg, row.pane.pane_id, watchers, now):
                self.counts["suppressed"] += 1
                continue
            self._fire(row, trigger, clients, now)

    def _fire(self, row, trigger: str, clients: list[str], now: int) -> None:
        stamp = row.stamp
        note = Note.for_pane(trigger, row.agent or stamp.name, row.pane, detail=stamp.detail,
                             session=stamp.session,
                             since_ms=now - max(stamp.since, stamp.turn_at), tty=row.pane.tty)
        if trigger == "blocked" and not note.summary and card_screen.wants_screen(row):
            note = self._screen_asks(row, note)
        if notify_gate.last_sentence(self.daemon.cfg):
            note = self._said(row, note)
        self.counts[trigger] += 1
        answers = self._answers(row) if trigger == "blocked" else ()
        window = notify_gate.coalesce_done_ms(self.daemon.cfg) if trigger == "done" else 0
        if window > 0:
            self.held.append(note)
            if self._flush_at is None:
                self._flush_at = _mono() + window
            return
        self._send(note, now, clients, answers, stamp.episode_ms)

    def flush(self, now: int) -> None:
        """Ring the held done notes: one as itself, several as one combined note."""
        held, self.held, self._flush_at = self.held, [], None
        if not held:
            return
        if len(held) > 1:
            self.counts["coalesced"] += len(held)
        self._send(held[0] if len(held) == 1 else Note.combined(held), now, None)

    def _push_problems(self) -> None:
        """One log line per push sink whose secret is refused (a secret file others can
        read) or unreadable, at start, at a reload, and at a ring that finds a new one
        (a chmod after the start): that sink sends nothing, and each of its rings leaves
        only the failure record doctor shows."""
        try:
            problems = notify_gate.push_problems(self.daemon.cfg)
        except Exception:  # noqa: BLE001 - a ring never waits on a log line
            return
        for p in problems:
            if p["problem"] not in self._told:
                self._told.add(p["problem"])
                self.daemon.log(f"tma daemon: {p['problem']}; {p['sink']} sends nothing "
                                "until then")

    def _send(self, note: Note, now: int, clients: list[str] | None,
              answers: tuple = (), episode_ms: int = 0) -> None:
        self._push_problems()
        started = notify.dispatch(self.daemon.server, self.daemon.cfg, note, wait=False,
                                  now=now, clients=clients, daemon=True, jump=self._jump_env(),
                                  answers=answers, episode_ms=episode_ms)
        for child in started:
            self.adopt(child)

    def _screen_asks(self, row, note: Note) -> Note:
        """What only the screen knows a blocked pane asks (no hook parked the call): the
        tool and summary of its card's screen lane. Best effort: a manifest with no
        `[dialog]` rules costs no capture, and a failure leaves the note as it was."""
        try:
            asks = card_screen.screen_pending(self.daemon.server, [row],
                                              self.daemon.cycle.manifests())
        except Exception as exc:  # noqa: BLE001 - a ring never waits on a dialog read
            self.daemon.log(f"tma daemon: the card of {row.pane.pane_id} was not read: {exc}")
            return note
        tool, summary = asks.get(row.pane.pane_id, ("", ""))
        return note.replace(tool=tool, summary=summary) if summary else note

    def _said(self, row, note: Note) -> Note:
        """The agent's last sentence from its transcript (`[notify] last_sentence`).
        Best effort: a transcript that does not read leaves the note as it was."""
        try:
            return said.fill(self.daemon.cfg, note, row.pane, os.environ)
        except Exception as exc:  # noqa: BLE001 - a ring never waits on a transcript
            self.daemon.log(f"tma daemon: {row.pane.pane_id}'s last sentence was not read: "
                            f"{exc}")
            return note

    def adopt(self, child) -> None:
        """Track a started sink child; at the cap the oldest is killed and reaped."""
        self._reap()
        while len(self.children) >= MAX_IN_FLIGHT:
            self.children.pop(0).kill(f"killed: {MAX_IN_FLIGHT} notification commands "
                                      "were still running")
        if child.waiter:
            child.deadline = time.monotonic() + notify_backends.WAIT_SECS + GRACE_SECS
        self.children.append(child)

    def _answers(self, row) -> tuple:
        """The Approve / Deny buttons this blocked row's desktop notification may carry."""
        if notify_gate.desktop_actions(self.daemon.cfg) != "answer":
            return ()
        try:
            if self._actions is None:
                self._actions = actions.load()
            return answer_buttons(row.agent or row.stamp.name, row.pane, row.stamp,
                                  self._actions)
        except Exception:  # a broken bundled action: the notification still rings
            return ()

    def _jump_env(self) -> dict[str, str]:
        if self._jump is None:
            from tma.install.binary import running_tma
            from tma.runtime.notify import backends as notify_backends

            self._jump = notify_backends.jump_env(self.daemon.server.flags(), running_tma())
        return self._jump

    def _reap(self) -> None:
        now = time.monotonic()
        kept = []
        for c in self.children:
            if c.deadline is not None and now > c.deadline:
                c.kill("a desktop notification outlived its wait")  # not recorded: a waiter
            elif not c.poll():
                kept.append(c)
        self.children = kept


def answer_buttons(agent: str, pane, stamp, aset) -> tuple[tuple[str, str], ...]:
    """The desktop buttons a blocked pane gets: each of approve / deny (from the action
    set `aset`) whose gate passes on the pane as read (blocked on a permission prompt,
    an action that covers the agent), as (name, label). An action that asks for
    confirmation, types text or runs a command is never a button. The broker checks
    everything again, on a fresh screen, when the button is clicked."""
    if stamp is None or aset is None:
        return ()
    out = []
    for name in notify_backends.ANSWERS:
        action = aset.get(name)
        if action is None or action.confirm or action.text or action.kind == "exec":
            continue
        if actions_gate.gate(action, target_of(pane, stamp, agent, None)) is None:
            out.append((name, action.label or name.title()))
    return tuple(out)


class Plan:
    """One read's notification work: the batch lines and what each read-back means."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        # (tag, pane) -> (row, trigger, marker value)
        self.candidates: dict[tuple[str, str], tuple] = {}


def decide(rows: list, cfg, now: int, gate) -> Plan:
    """Every marker to commit (and context flag to re-arm) for these rows."""
    on = tuple(t for t in ("blocked", "done") if gate.enabled(cfg, t))
    threshold = gate.context_threshold(cfg) if gate.enabled(cfg, "context_high") else None
    plan = Plan()
    for row in rows:
        if row.foreign:
            continue
        pane = row.pane.pane_id
        trigger = notice.due(row.stamp, on)
        if trigger is not None:
            value = notice.marker(now, row.stamp)
            plan.lines.extend(tnotify.marker_lines(pane, trigger, value))
            plan.candidates[("N", pane)] = (row, trigger, value)
        if threshold is None:
            continue
        step = notice.context_step(row.pane.options, threshold)
        if step == notice.FIRE:
            plan.lines.extend(tnotify.context_fire_lines(pane, now))
            plan.candidates[("X", pane)] = (row, "context_high", now)
        elif step == notice.REARM:
            plan.lines.append(tnotify.context_rearm_line(pane))
    return plan

