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
   The daemon's notify-send offers a "jump" action that runs `tma jump --pane`, and
   Approve / Deny buttons that run `tma act` bound to the episode (`desktop_actions`).

A command that cannot start, exits non-zero, dies of a signal or outlives its timeout
leaves one record, `<runtime dir>/<key>.notify-error` (the server's: tma.runtime.notify.log);
its next clean exit removes it.

The jobs live apart: `[notify]` is read by tma.runtime.notify.gate, the Note and its
payload are tma.runtime.notify.note, the log line and the failure record
tma.runtime.notify.log, sink (5)'s detection and processes tma.runtime.notify.backends;
this module dispatches (and answers `tma debug notify-test`).

Import-light on purpose (os and tma only at module level): the hook path imports it
when a notification fires.
"""

from __future__ import annotations

import os

from tma.runtime.notify import gate as notify_gate, log as notify_log, sinks as notify_sinks
from tma.runtime.notify.backends import (
    Child,
    notify_send_actions,
    refusal_env,
    run_sink,
    sink,
    sink_argv,
)
from tma.runtime.notify.note import Note, child_env, dumps, message, osc9, payload, stdin
from tma.runtime.notify.tty import write as write_tty, write_checked
from tma.tmux import notify as tnotify

TRIGGERS = notify_gate.TRIGGERS


def dispatch(server, cfg, note: Note, *, wait: bool = True, now: int | None = None,
             clients: list[str] | None = None, daemon: bool = False,
             jump: dict[str, str] | None = None,
             answers: tuple[tuple[str, str], ...] = (), episode_ms: int = 0) -> list[Child]:
    """Fire one notification through every configured sink, in order. Never raises,
    never writes to stdout. `clients` (attached client names) and `note.tty` skip the
    tmux read when the caller already has them; `now` is the log line's `at`.
    `daemon`: the daemon's resolution of sink (5) (a desktop notifier by default);
    `jump`: jump_env() when the desktop notification may offer a jump action;
    `answers`: its Approve / Deny buttons (tma.daemon.notifier.answer_buttons), bound to the
    episode that began at `episode_ms` (the stamp's episode_ms).
    Returns the children started with wait=False (the caller reaps them)."""
    if now is None:
        now = notify_log.now_ms()
    bell = notify_gate.flag(cfg, "bell")
    osc = notify_gate.flag(cfg, "osc")
    show = notify_gate.message_on(cfg)
    tty = note.tty or ""
    ring = notify_sinks.Ring(server=server, cfg=cfg, now=now, daemon=daemon, clients=clients)
    # (0) the sinks that pass through tmux to a terminal: before the message line freezes
    # the client's output (they ring in (6) with the others when no message shows)
    _registered(ring, note, early=True, show=show)
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
        child = _sink5(cfg, note, wait, now, daemon, jump, answers, episode_ms)
        if child is not None:
            out.append(child)
    except Exception:
        pass
    # (6) the registered sinks (tma.runtime.notify.sinks): each returns at once
    _registered(notify_sinks.Ring(server=server, cfg=cfg, now=now, daemon=daemon,
                                  clients=clients), note, early=False, show=show)
    return out


def _registered(ring, note: Note, *, early: bool, show: bool) -> None:
    """The registered sinks: with a message line, the EARLY ones first and now, the rest
    last; without one, all of them last."""
    try:
        if early and show:
            notify_sinks.fire_early(ring, note)
        elif not early:
            notify_sinks.fire_all(ring, note, early=False if show else None)
    except Exception:
        pass


def _sink5(cfg, note: Note, wait: bool, now: int, daemon: bool, jump, answers,
           episode_ms: int) -> Child | None:
    """Run the command or the desktop notifier; with the daemon's notify-send, the
    actions `[notify] desktop_actions` offers (a started Child, or None)."""
    kind, what = sink(cfg, note.trigger, daemon)
    offer = notify_gate.desktop_actions(cfg)
    actions = kind == "desktop" and jump is not None and not wait and offer != "none" \
        and what == "notify-send" and notify_send_actions()
    answers = answers if actions and offer == "answer" and episode_ms > 0 else ()
    run = sink_argv(kind, what, note, actions=actions, answers=answers)
    if run is None:
        return None
    env = None
    if actions:
        env = dict(jump or {})
        if answers:
            env["TMA_EPISODE_MS"] = str(episode_ms)
            env.update(refusal_env())
    return run_sink(run[0], run[1], note, wait, now, env)


# ------------------------------------------------------------------ tma debug notify-test


#: What `tma debug notify-test` says the agent said, where `[notify] last_sentence` is on.
TEST_SENTENCE = "This is where the agent's last sentence goes."


def test_note(trigger: str, cwd: str, said: bool = False) -> Note:
    """A made-up note for `tma debug notify-test` (repo and branch from cwd); `said`: with
    a made-up last sentence (`[notify] last_sentence`)."""
    from tma.runtime.git import resolve

    repo, branch, _wt = resolve(cwd)
    return Note(trigger=trigger, agent="test", pane=os.environ.get("TMUX_PANE") or "%0",
                detail="notify-test", session=None, locator="test:0.0",
                title="tma notify-test", repo=repo or "", branch=branch or "",
                since_ms=0, context_pct=80 if trigger == "context_high" else None,
                last_sentence=TEST_SENTENCE if said else "")


def reaches(cfg, trigger: str, daemon: bool = True,
            sink5: tuple[str, str] | None = None) -> list[dict[str, str]]:
    """Every sink a notification for this trigger rings, as [{sink, what}]: `message`,
    `bell`, `osc`, `log` (what: its path), `command` or `desktop` (sink (5): what runs),
    then each registered sink by its name (terminal, ntfy, webhook) that rings for this
    trigger. [] when the trigger is off. The one answer to "which sinks are live":
    notify-test's last line, doctor's `sink:` and the daemon's status all read it.
    `sink5`: sink (5) as another process resolved it (the daemon's environment)."""
    if not notify_gate.enabled(cfg, trigger):
        return []
    out = [{"sink": name, "what": ""} for name, on in (
        ("message", notify_gate.message_on(cfg)), ("bell", notify_gate.flag(cfg, "bell")),
        ("osc", notify_gate.flag(cfg, "osc"))) if on]
    log = notify_gate.log_path(cfg)
    if log is not None:
        out.append({"sink": "log", "what": log})
    kind, what = sink5 or sink(cfg, trigger, daemon)
    if kind in ("command", "desktop"):
        out.append({"sink": kind, "what": what})
    for s in notify_sinks.live(cfg):
        try:
            rings_for = getattr(s, "rings_for", None)
            if rings_for is None or rings_for(cfg, trigger):
                out.append({"sink": s.NAME, "what": ""})
        except Exception:
            continue
    return out


_RING_WORDS = {"message": "the tmux message line on every attached client",
               "bell": "a bell in the pane", "osc": "an OSC 9 notification in the pane",
               "command": "the command above"}


def rings(cfg, trigger: str) -> str:
    """`tma debug notify-test`'s last line: everything a real notification for this
    trigger does, sink (5) included, in words ("nothing" only when that is so)."""
    if not notify_gate.enabled(cfg, trigger):
        why = ("[notify.context_high] is absent" if trigger == "context_high" else
               f"{trigger} is not in [notify] on (default [\"blocked\"])")
        return f"rings nothing for {trigger}: {why}"
    parts = []
    for r in reaches(cfg, trigger):
        name, what = r["sink"], r["what"]
        parts.append(f"a line in {what}" if name == "log" else
                     f"{what} (desktop)" if name == "desktop" else
                     _RING_WORDS.get(name, f"{name} (its line above)"))
    if not parts:
        return "rings nothing: message = false, and no bell, osc, log, command or desktop " \
               "notifier"
    return "rings " + "; ".join(parts)


def desktop_words(cfg, what: str) -> str:
    """What the daemon's desktop notification offers a click, in words."""
    offer = notify_gate.desktop_actions(cfg)
    if what != "notify-send":
        return "no actions (only notify-send offers them; a click shows the notification)"
    if offer == "none":
        return "no actions (desktop_actions = false)"
    if not notify_send_actions():
        return "no actions (this notify-send takes no --action/--wait: libnotify 0.7.10+ does)"
    jump = "a click on the body jumps to the pane"
    if offer == "jump":
        return jump + " (desktop_actions = \"jump\": no Approve / Deny)"
    return (jump + "; Approve / Deny buttons on a permission prompt the agent's actions can "
            "answer, fired through tma act bound to the episode (this test shows none)")


def run_test(cfg, note: Note, now: int, server=None) -> tuple[list[str], int]:
    """Ring every live sink for real with a made-up note, each reported in its own
    line(s): (report lines, exit code). The code is 0 when at least one sink reached
    somewhere and none failed; a sink with nothing to reach (no server, no attached
    client, not run in a pane) is reported as skipped, not failed. Sink (5) is resolved
    as the daemon does and waited for; its outcome updates the failure record the way
    a real fire would. `server` is the tmux server (None: none to reach)."""
    out = ["payload " + dumps(payload(note))]
    worked: list[bool] = []
    early = notify_gate.message_on(cfg)  # as dispatch: terminal sinks before the message
    if early:
        lines, oks = sink_results(cfg, note, now, server, None, early=True)
        out.extend(lines)
        worked.extend(oks)
    clients, tty = _test_targets(cfg, server, note, out, worked)
    _test_tty(cfg, tty, note, out, worked)
    log = notify_gate.log_path(cfg)
    if log is not None:
        where, err = notify_log.append_log_checked(log, note, now)
        out.append(f"log failed: {where}: {err}" if err else f"log appended a line to {where}")
        worked.append(not err)
    _test_command(cfg, note, now, out, worked)
    lines, oks = sink_results(cfg, note, now, server, clients,
                              early=False if early else None)
    out.extend(lines)
    worked.extend(oks)
    return out, 0 if worked and all(worked) else 1


def _test_targets(cfg, server, note: Note, out: list[str], worked: list[bool]
                  ) -> tuple[list[str] | None, str]:
    """The message line, shown for real on every attached client; (the clients, the
    tty of the pane notify-test runs in, "" outside one)."""
    show = notify_gate.message_on(cfg)
    here = os.environ.get("TMUX_PANE", "")
    want_tty = bool(here) and (notify_gate.flag(cfg, "bell") or notify_gate.flag(cfg, "osc"))
    if server is None or not (show or want_tty):
        if show:
            out.append("message skipped: no tmux server to show it on")
        return None, ""
    try:
        clients, tty = tnotify.targets(server, here, want_tty)
    except Exception as exc:
        if show:
            out.append(f"message skipped: no tmux server reachable ({_why(exc)})")
        return None, ""
    if not show:
        return clients, tty
    if not clients:
        out.append("message skipped: no client attached to the tmux server")
        return clients, tty
    try:
        tnotify.display(server, clients, message(note))
    except Exception as exc:
        out.append(f"message failed: {_why(exc)}")
        worked.append(False)
        return clients, tty
    n = len(clients)
    out.append(f"message shown on {n} attached client{'s' if n != 1 else ''}: "
               f"{message(note)}")
    worked.append(True)
    return clients, tty


def _test_tty(cfg, tty: str, note: Note, out: list[str], worked: list[bool]) -> None:
    """bell and osc, written for real to the tty of the pane notify-test runs in."""
    for key, data in (("bell", b"\x07"), ("osc", osc9(note))):
        if not notify_gate.flag(cfg, key):
            continue
        if not tty:
            out.append(f"{key} skipped: not run in a pane of a reachable tmux server")
            continue
        err = write_checked(tty, data)
        out.append(f"{key} failed: {tty}: {err}" if err else f"{key} written to {tty}")
        worked.append(not err)


def _why(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _test_command(cfg, note: Note, now: int, out: list[str], worked: list[bool]) -> None:
    """Sink (5): the command or desktop notifier, run and waited for."""
    from tma.runtime.notify import backends as notify_backends
    from tma.tmux import spawn

    kind, what = sink(cfg, note.trigger, daemon=True)
    if kind == "none":
        out.append(f"command none: {what}")
        return
    argv, shown = sink_argv(kind, what, note) or ([], what + " (desktop)")
    out.append(f"command {shown}")
    if kind == "desktop":
        out.append(f"desktop {what}: " + desktop_words(cfg, what))
    timeout = notify_backends.COMMAND_TIMEOUT
    try:
        code, _out, err = spawn.run(argv, stdin=stdin(note), env=child_env(note),
                                    timeout=timeout, new_group=True)
    except spawn.SpawnTimeout as exc:
        reason = f"timed out after {timeout:g}s (killed)"
        notify_log.record_failure(shown, reason, now)
        out.append(f"exit none: {reason}")
        err = exc.stderr
        worked.append(False)
    except (OSError, IndexError) as exc:
        reason = f"spawn failed: {getattr(exc, 'strerror', None) or exc}"
        notify_log.record_failure(shown, reason, now)
        out.append(f"exit none: {reason}")
        worked.append(False)
        return
    else:
        out.append(f"exit {code}")
        worked.append(code == 0)
        notify_log.outcome(shown, code == 0, f"killed by signal {-code}" if code < 0
                           else f"exit status {code}", now)
    text = err.decode("utf-8", "replace").rstrip("\n")
    out.extend("stderr " + line for line in text.split("\n") if text)


def sink_tests(cfg, note: Note, now: int, server=None,
               clients: list[str] | None = None) -> list[str]:
    """Every live registered sink tried for real, a line or more each."""
    return sink_results(cfg, note, now, server, clients)[0]


def sink_results(cfg, note: Note, now: int, server=None, clients: list[str] | None = None,
                 early: bool | None = None) -> tuple[list[str], list[bool]]:
    """Every live registered sink tried for real: (its lines, whether each worked). A
    sink failed when its test raised, returned (lines, False), or wrote a line that
    starts with "<NAME> failed" (tma.runtime.notify.sinks)."""
    ring = notify_sinks.Ring(server=server, cfg=cfg, now=now, daemon=True, clients=clients)
    out: list[str] = []
    oks: list[bool] = []
    for s in notify_sinks.live(cfg, early):
        try:
            got: object = s.test(ring, note)
        except Exception as exc:  # a sink's bug is its own line, not the test's end
            out.append(f"{s.NAME} failed: {exc}")
            oks.append(False)
            continue
        ok = True
        if isinstance(got, tuple) and len(got) == 2:
            pair: tuple = got
            got, ok = pair[0], bool(pair[1])
        lines = [str(line) for line in got] if isinstance(got, list) else []
        lines = lines or [f"{s.NAME} tried (it said nothing)"]
        out.extend(lines)
        oks.append(ok and not any(line.startswith(f"{s.NAME} failed") for line in lines))
    return out, oks
