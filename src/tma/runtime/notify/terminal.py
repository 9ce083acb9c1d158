"""The terminal sink: a notification shown by the terminal emulator of every attached client.

`[notify] osc = true` writes OSC 9 to the *pane's* tty, which tmux parses and drops
unless it happens to pass it on; this sink is for the person who ssh'd into a box and
runs tmux there: their own terminal (iTerm2, WezTerm, ghostty, kitty, foot, urxvt)
raises the desktop notification. For each attached client, the pane it shows gets
`ESC P tmux; <OSC…> ESC \\`, which tmux hands, unwrapped, to the clients showing that
pane (tma.tmux.passthrough says why a pane's tty and not the client's). Where that
pane's `allow-passthrough` is off (or the release has no such option, 3.2a) a BEL goes
there instead, and tmux rings the client's terminal per its bell-action / visual-bell.

Body: `<agent> <trigger>: <summary>` (never the pane title, which the agent or the
program in the pane sets), control bytes dropped, at most BODY_MAX bytes.

Off by default: `[notify.terminal] enabled = true` (tma.runtime.notify.gate.terminal).
"""

from __future__ import annotations

import threading

from tma.runtime.notify import gate as notify_gate
from tma.runtime.notify.note import Note, to_bytes
from tma.runtime.notify.tty import write as write_tty
from tma.tmux import passthrough
from tma.tmux.adapter import Server, resolve_bin
from tma.tmux.notify import strip_controls
from tma.tmux.passthrough import View

NAME = "terminal"
TITLE = "tma"
BODY_MAX = 200  # bytes; terminals show a line or two anyway
#: the hook path (`tma event`) leaves with os._exit: it waits this long for the thread,
#: so a slow tmux delays the hook by at most this much and a normal one (one spawn,
#: a few ms) is done well before
HOOK_WAIT = 0.1
SPAWN_TIMEOUT = 2.0


def live(cfg) -> bool:
    return notify_gate.terminal(cfg) is not None


def body(note: Note) -> str:
    """`<agent> <trigger>: <summary>` without control bytes, at most BODY_MAX bytes."""
    text = f"{note.agent or 'agent'} {note.trigger}"
    summary = strip_controls(note.summary or "").strip()
    if summary:
        text += f": {summary}"
    text = strip_controls(text)
    raw = to_bytes(text)
    if len(raw) > BODY_MAX:
        text = raw[:BODY_MAX].decode("utf-8", "ignore")
    return text


def sequences(note: Note, codes: tuple[int, ...]) -> bytes:
    """The OSC sequences for the terminal itself (before tmux's wrapping).
    9: iTerm2's `ESC ] 9 ; body BEL`; 777: urxvt's `ESC ] 777 ; notify ; title ; body BEL`;
    99: kitty's, title then body under one id, each ended by ST as kitty documents."""
    text = to_bytes(body(note))
    out = b""
    for code in codes:
        if code == 9:
            out += b"\x1b]9;" + text + b"\x07"
        elif code == 777:
            out += b"\x1b]777;notify;" + to_bytes(TITLE) + b";" + text + b"\x07"
        elif code == 99:
            out += (b"\x1b]99;i=tma:d=0;" + to_bytes(TITLE) + b"\x1b\\"
                    + b"\x1b]99;i=tma:d=1:p=body;" + text + b"\x1b\\")
    return out


def _server(ring) -> Server:
    """A Server of its own for the thread (the daemon's counts its spawns unlocked)."""
    s = ring.server
    if s is not None:
        return Server(s.bin, socket_name=s.socket_name, socket_path=s.socket_path,
                      timeout=SPAWN_TIMEOUT)
    return Server(resolve_bin(getattr(ring.cfg, "tmux_bin", None)), timeout=SPAWN_TIMEOUT)


def deliver(ring, note: Note) -> list[tuple[View, str]]:
    """Write to the pane every attached client shows: (view, "osc" | "bell" | "none")
    per client. One write per pane: tmux passes it to every client showing it."""
    got = notify_gate.terminal(ring.cfg)
    if got is None:
        return []
    codes, bell = got
    wrapped = passthrough.wrap(sequences(note, codes))
    done: dict[str, str] = {}
    out: list[tuple[View, str]] = []
    for view in passthrough.views(_server(ring)):
        key = view.pane_tty or view.pane
        if key not in done:
            if view.passthrough:
                write_tty(view.pane_tty, wrapped)
                done[key] = "osc"
            elif bell:
                write_tty(view.pane_tty, b"\x07")
                done[key] = "bell"
            else:
                done[key] = "none"
        out.append((view, done[key]))
    return out


def _run(ring, note: Note) -> None:
    try:
        deliver(ring, note)
    except Exception:
        pass


#: written before the message line when both ring (tma.runtime.notify.sinks.fire_early)
EARLY = True


def fire_now(ring, note: Note) -> None:
    """The write done here and now (before a message line freezes the client)."""
    _run(ring, note)


def fire(ring, note: Note) -> None:
    t = threading.Thread(target=_run, args=(ring, note), name="tma-notify-terminal",
                         daemon=True)
    t.start()
    if not ring.daemon:
        t.join(HOOK_WAIT)


def test(ring, note: Note) -> list[str]:
    """What a real fire does, done for real: one line per attached client."""
    got = notify_gate.terminal(ring.cfg)
    codes = ", ".join(str(c) for c in got[0]) if got else ""
    try:
        reached = deliver(ring, note)
    except Exception as exc:
        return [f"{NAME} failed: {exc}"]
    if not reached:
        return [f"{NAME} none: no attached client (OSC {codes} would carry {body(note)!r})"]
    lines = []
    for view, how in reached:
        tty = f" ({view.client_tty})" if view.client_tty not in ("", view.client) else ""
        where = f"client {view.client}{tty} on pane {view.pane}"
        setting = view.setting or "absent"
        if how == "osc":
            lines.append(f"{NAME} {where}: OSC {codes} through passthrough "
                         f"(allow-passthrough {setting})")
        elif how == "bell":
            lines.append(f"{NAME} {where}: a BEL, passthrough is off "
                         f"(allow-passthrough {setting}; set -g allow-passthrough on)")
        else:
            lines.append(f"{NAME} {where}: nothing, passthrough is off "
                         f"(allow-passthrough {setting}) and bell = false")
    return lines
