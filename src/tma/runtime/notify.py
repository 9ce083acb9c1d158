"""Notification sinks: what happens once a notification has been decided.

The caller owns *whether* to fire (the trigger, the per-state-run dedup marker, mute);
this module owns *how*: a plain `Note` goes to the sinks in a fixed order, and every
sink swallows its own errors, because the hook path must never fail and never print.

1. a `display-message` on every attached client (tma.tmux.notify escapes the text),
   unless `message = false`;
2. `bell = true`: a BEL byte to the pane's tty;
3. `osc = true`: `ESC ] 9 ; <agent> <state> BEL` to the pane's tty (never the title);
4. `log = PATH`: one JSON line per notification (the payload plus `at`);
5. the resolved command, `sh -c CMD`, payload on stdin and `TMA_*` in the environment;
   or, with no command, a desktop notifier (notify-send with a session bus, osascript):
   the daemon's default (`desktop = "auto"`), the hook path's with `desktop = true`.
   The daemon's notify-send offers a "jump" action that runs `tma jump --pane`.

A command that cannot start, exits non-zero, dies of a signal or outlives its timeout
leaves one record, `<runtime dir>/notify-error`; its next clean exit removes it.

The jobs live apart: `[notify]` is read by tma.runtime.notify_gate, the Note and its
payload are tma.runtime.notify_note, the log line and the failure record
tma.runtime.notify_log, sink (5)'s detection and processes tma.runtime.notify_backends;
this module dispatches (and answers `tma debug notify-test`).

Import-light on purpose (os and tma only at module level): the hook path imports it
when a notification fires.
"""

from __future__ import annotations

import os

from tma.runtime import notify_gate, notify_log, notify_sinks
from tma.runtime.notify_backends import Child, notify_send_actions, run_sink, sink, sink_argv
from tma.runtime.notify_note import Note, child_env, dumps, message, osc9, payload, stdin
from tma.tmux import notify as tnotify

TRIGGERS = notify_gate.TRIGGERS


def write_tty(tty: str, data: bytes) -> None:
    """Write to a pane's tty without ever blocking; every failure is silent."""
    if not tty.startswith("/dev/") or not data:
        return
    try:
        fd = os.open(tty, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return
    try:
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def dispatch(server, cfg, note: Note, *, wait: bool = True, now: int | None = None,
             clients: list[str] | None = None, daemon: bool = False,
             jump: dict[str, str] | None = None) -> list[Child]:
    """Fire one notification through every configured sink, in order. Never raises,
    never writes to stdout. `clients` (attached client names) and `note.tty` skip the
    tmux read when the caller already has them; `now` is the log line's `at`.
    `daemon`: the daemon's resolution of sink (5) (a desktop notifier by default);
    `jump`: jump_env() when the desktop notification may offer a jump action.
    Returns the children started with wait=False (the caller reaps them)."""
    if now is None:
        now = notify_log.now_ms()
    bell = notify_gate.flag(cfg, "bell")
    osc = notify_gate.flag(cfg, "osc")
    show = notify_gate.message_on(cfg)
    tty = note.tty or ""
    # (1) display-message on every attached client (and resolve the tty on the way)
    try:
        if (show and clients is None) or ((bell or osc) and not tty):
            found, resolved = tnotify.targets(server, note.pane, (bell or osc) and not tty)
            if clients is None:
                clients = found
            tty = tty or resolved
        if show and clients:
            tnotify.display(server, clients, message(note))
    except Exception:
        pass
    # (2) bell, (3) OSC 9: both to the pane's tty
    try:
        if bell:
            write_tty(tty, b"\x07")
        if osc:
            write_tty(tty, osc9(note))
    except Exception:
        pass
    # (4) log
    log = notify_gate.log_path(cfg)
    if log is not None:
        notify_log.append_log(log, note, now)
    # (5) the command, or a desktop notifier
    out: list[Child] = []
    try:
        kind, what = sink(cfg, note.trigger, daemon)
        actions = kind == "desktop" and jump is not None and not wait \
            and what == "notify-send" and notify_send_actions()
        run = sink_argv(kind, what, note, actions=actions)
        child = None
        if run is not None:
            child = run_sink(run[0], run[1], note, wait, now, jump if actions else None)
        if child is not None:
            out.append(child)
    except Exception:
        pass
    # (6) the registered sinks (tma.runtime.notify_sinks): each returns at once
    try:
        notify_sinks.fire_all(notify_sinks.Ring(server=server, cfg=cfg, now=now,
                                                daemon=daemon, clients=clients), note)
    except Exception:
        pass
    return out


# ------------------------------------------------------------------ tma debug notify-test


def test_note(trigger: str, cwd: str) -> Note:
    """A made-up note for `tma debug notify-test` (repo and branch from cwd)."""
    from tma.runtime.git import resolve

    repo, branch, _wt = resolve(cwd)
    return Note(trigger=trigger, agent="test", pane=os.environ.get("TMUX_PANE") or "%0",
                detail="notify-test", session=None, locator="test:0.0",
                title="tma notify-test", repo=repo or "", branch=branch or "",
                since_ms=0, context_pct=80 if trigger == "context_high" else None)


def rings(cfg, trigger: str) -> str:
    """`tma debug notify-test`'s last line: everything a real notification for this
    trigger does, sink (5) included, in words ("nothing" only when that is so)."""
    if not notify_gate.enabled(cfg, trigger):
        why = ("[notify.context_high] is absent" if trigger == "context_high" else
               f"{trigger} is not in [notify] on (default [\"blocked\"])")
        return f"rings nothing for {trigger}: {why}"
    parts = []
    if notify_gate.message_on(cfg):
        parts.append("the tmux message line on every attached client (this test shows none)")
    if notify_gate.flag(cfg, "bell"):
        parts.append("a bell in the pane")
    if notify_gate.flag(cfg, "osc"):
        parts.append("an OSC 9 notification in the pane")
    log = notify_gate.log_path(cfg)
    if log is not None:
        parts.append(f"a line in {log}")
    kind, what = sink(cfg, trigger, daemon=True)
    if kind != "none":
        parts.append("the command above" if kind == "command" else f"{what} (desktop)")
    parts.extend(f"{s.NAME} (its line above)" for s in notify_sinks.live(cfg))
    if not parts:
        return "rings nothing: message = false, and no bell, osc, log, command or desktop " \
               "notifier"
    return "rings " + "; ".join(parts)


def run_test(cfg, note: Note, now: int) -> tuple[list[str], int]:
    """Resolve sink (5) as the daemon does, run it and wait: (report lines, exit code).
    The outcome updates the failure record the way a real fire would."""
    from tma.runtime import notify_backends
    from tma.tmux import spawn

    out = ["payload " + dumps(payload(note))]
    kind, what = sink(cfg, note.trigger, daemon=True)
    if kind == "none":
        out.append(f"command none: {what}")
        # the registered sinks still answer: with only a webhook configured, its line
        # is the test's whole point (and its success the exit status)
        pushed = sink_tests(cfg, note, now)
        out.extend(pushed)
        return out, 0 if pushed and not any(" failed: " in x for x in pushed) else 1
    argv, shown = sink_argv(kind, what, note) or ([], what + " (desktop)")
    out.append(f"command {shown}")
    ok = False
    timeout = notify_backends.COMMAND_TIMEOUT
    try:
        code, _out, err = spawn.run(argv, stdin=stdin(note), env=child_env(note),
                                    timeout=timeout, new_group=True)
    except spawn.SpawnTimeout as exc:
        reason = f"timed out after {timeout:g}s (killed)"
        notify_log.record_failure(shown, reason, now)
        out.append(f"exit none: {reason}")
        err = exc.stderr
    except (OSError, IndexError) as exc:
        reason = f"spawn failed: {getattr(exc, 'strerror', None) or exc}"
        notify_log.record_failure(shown, reason, now)
        out.append(f"exit none: {reason}")
        return out, 1
    else:
        out.append(f"exit {code}")
        ok = code == 0
        notify_log.outcome(shown, ok, f"killed by signal {-code}" if code < 0
                           else f"exit status {code}", now)
    text = err.decode("utf-8", "replace").rstrip("\n")
    out.extend("stderr " + line for line in text.split("\n") if text)
    out.extend(sink_tests(cfg, note, now))
    return out, 0 if ok else 1


def sink_tests(cfg, note: Note, now: int) -> list[str]:
    """Every live registered sink tried for real, a line or more each."""
    ring = notify_sinks.Ring(server=None, cfg=cfg, now=now, daemon=True)
    out: list[str] = []
    for s in notify_sinks.live(cfg):
        try:
            out.extend(s.test(ring, note))
        except Exception as exc:  # a sink's bug is its own line, not the test's end
            out.append(f"{s.NAME} failed: {exc}")
    return out
