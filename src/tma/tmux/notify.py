"""The tmux side of a notification: who is attached, which tty a pane has, and the message.

Two spawns at most per fire: one `source-file -` that lists the attached clients
(and, when a tty sink wants it, the pane's `#{pane_tty}`), and one that sends a
`display-message -c <client>` line to every client. The runtime never builds these
command lines itself (tma.runtime.notify decides what to send, this module says it).

The message text mixes tma's words with agent-controlled text (the pane title), so
it is escaped before tmux sees it. display-message treats its argument as a format
and then runs it through strftime, so `#` becomes `##` (no `#{…}`, `#(…)` or `#[…]`
can form, so no shell job can start) and `%` becomes `%%`. Control bytes are dropped;
the line goes through `source-file` inside double quotes, which also keeps a trailing
`;` literal (an argv argument ending in `;` would end the command).
"""

from __future__ import annotations

from tma.tmux.adapter import Server, quote

US = "\x1f"
MESSAGE_MAX = 512  # characters; tmux truncates to the client width anyway


def strip_controls(text: str) -> str:
    """Drop C0 controls, DEL and C1 controls (by code point)."""
    return "".join(c for c in text if not (c < " " or "\x7f" <= c <= "\x9f"))


def escape(text: str) -> str:
    """Make text display literally in `display-message`: no format, job or strftime expansion."""
    clean = strip_controls(text)[:MESSAGE_MAX]
    return clean.replace("#", "##").replace("%", "%%")


def targets_lines(pane: str, want_tty: bool) -> list[str]:
    lines = [f"list-clients -F {quote('C' + US + '#{client_name}')}"]
    if want_tty and pane:
        lines.append(f"display-message -p -t {quote(pane)} {quote('T' + US + '#{pane_tty}')}")
    return lines


def parse_targets(out: str) -> tuple[list[str], str]:
    clients: list[str] = []
    tty = ""
    for line in out.split("\n"):
        if line.startswith("C" + US):
            name = line[2:]
            if name:
                clients.append(name)
        elif line.startswith("T" + US):
            tty = line[2:]
    return clients, tty


def targets(server: Server, pane: str, want_tty: bool = False) -> tuple[list[str], str]:
    """(attached client names, the pane's tty or "") in one spawn. Raises TmuxError only
    when the server is unreachable; a vanished pane just yields no tty."""
    out, _err = server.source(targets_lines(pane, want_tty))
    return parse_targets(out)


def display_lines(clients: list[str], text: str) -> list[str]:
    """One `display-message -c` line per client; text is escaped here."""
    msg = quote(escape(text))
    return [f"display-message -c {quote(c)} {msg}" for c in clients if c]


def display(server: Server, clients: list[str], text: str) -> None:
    """Show text on every listed client's status line (one spawn). A client that left
    in between fails only its own line."""
    lines = display_lines(clients, text)
    if lines:
        server.source(lines)
