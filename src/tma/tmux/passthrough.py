"""The tmux side of the terminal sink: what each attached client shows, and the wrapping.

A notification meant for the terminal emulator a person looks at (OSC 9/777/99) has
to cross tmux, which parses every pane's output and would swallow it. tmux forwards
a DCS passthrough sequence, `ESC P tmux; <payload, every ESC doubled> ESC \\`, that a
pane writes, unwrapped, to the clients on which that pane is visible, when the pane's
`allow-passthrough` option allows it (3.3 and later; 3.2a has no such option).

So tma writes the wrapped sequence to the tty of the pane each attached client shows:
tmux serializes it with its own drawing (a write straight to the client's tty could
land inside one of tmux's escape sequences), and every client gets it whichever pane
it is on. (The one risk is the program in that pane: bytes written while it is in the
middle of an escape sequence of its own would cut it; the write is one `write(2)` of a
few hundred bytes, as the `[notify] osc` sink's.) The option is probed per pane through the format `#{allow-passthrough}`,
which expands to the value in effect there (pane, window or global) and to nothing on
a release without the option: no version is parsed. 3.3a prints a flag as 1/0, later
releases print on/off/all.

One spawn: `list-clients`, whose format runs in each client's current pane.
"""

from __future__ import annotations

from typing import NamedTuple

from tma.tmux import frame
from tma.tmux.adapter import Server, quote

FRAME = frame.Frame()
_ON = ("1", "on", "all")


class View(NamedTuple):
    """One attached client and the pane it shows."""

    client: str
    client_tty: str
    pane: str
    pane_tty: str
    passthrough: bool  # does that pane's allow-passthrough let a DCS through?
    setting: str       # the option as tmux printed it ("" where the release has none)


def views_line() -> str:
    fmt = FRAME.record("P", [frame.text("client_name"), "#{client_control_mode}",
                             "#{client_tty}", "#{pane_id}", "#{pane_tty}",
                             "#{allow-passthrough}"])
    return f"list-clients -F {quote(fmt)}"


def parse_views(out: str) -> list[View]:
    """The attached terminal clients (control-mode clients have no terminal to notify)."""
    found = []
    for name, control, ctty, pane, ptty, setting in FRAME.records(out, "P", 6):
        if not name or control == "1" or not pane:
            continue
        found.append(View(frame.untext(name), ctty, pane, ptty, setting in _ON, setting))
    return found


def views(server: Server) -> list[View]:
    """Every attached terminal client with the pane it shows (one spawn)."""
    out, _err = server.source([views_line()])
    return parse_views(out)


def wrap(payload: bytes) -> bytes:
    """`ESC P tmux; payload ESC \\` with every ESC inside doubled, as tmux expects."""
    return b"\x1bPtmux;" + payload.replace(b"\x1b", b"\x1b\x1b") + b"\x1b\\"
