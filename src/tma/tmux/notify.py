"""The tmux side of a notification: who is attached, which tty a pane has, and the message.

Two spawns at most per fire: one `source-file -` that lists the attached clients
(and, when a tty sink wants it, the pane's `#{pane_tty}`), and one that sends a
`display-message -c <client>` line to every client. The runtime never builds these
command lines itself (tma.runtime.notify.dispatch decides what to send, this module says it).

The message text mixes tma's words with agent-controlled text (the pane title), so
it is escaped before tmux sees it. display-message treats its argument as a format
and then runs it through strftime, so `#` becomes `##` (no `#{…}`, `#(…)` or `#[…]`
can form, so no shell job can start) and `%` becomes `%%`. Control bytes are dropped;
the line goes through `source-file` inside double quotes, which also keeps a trailing
`;` literal (an argv argument ending in `;` would end the command).
"""

from __future__ import annotations

from tma.tmux import frame
from tma.tmux.adapter import Server, quote
from tma.tmux.write import already_notified

#: The records this module reads back (clients, a tty, the daemon's markers) are framed
#: by this process's frame: the daemon decides its lines in one place and parses the
#: batch's output in another.
FRAME = frame.Frame()
MESSAGE_MAX = 512  # characters; tmux truncates to the client width anyway


def strip_controls(text: str) -> str:
    """Drop C0 controls, DEL and C1 controls (by code point)."""
    return "".join(c for c in text if not (c < " " or "\x7f" <= c <= "\x9f"))


def escape(text: str) -> str:
    """Make text display literally in `display-message`: no format, job or strftime expansion."""
    clean = strip_controls(text)[:MESSAGE_MAX]
    return clean.replace("#", "##").replace("%", "%%")


def targets_lines(pane: str, want_tty: bool) -> list[str]:
    fmt = FRAME.record("A", [frame.text("client_name"), "#{client_control_mode}"])
    lines = [f"list-clients -F {quote(fmt)}"]
    if want_tty and pane:
        lines.append(f"display-message -p -t {quote(pane)} "
                     f"{quote(FRAME.record('T', ['#{pane_id}', '#{pane_tty}']))}")
    return lines


def parse_targets(out: str, pane: str = "") -> tuple[list[str], str]:
    """(attached client names, PANE's tty). A control-mode client (the daemon's own, an
    editor's -CC) is no person's terminal and draws no status line: left out, as
    parse_clients does. A tty read in another pane (tmux falls back to one when the
    target is gone) is not PANE's."""
    clients = [frame.untext(name) for name, control in FRAME.records(out, "A", 2)
               if name and control != "1"]
    ttys = [t[1] for t in FRAME.records(out, "T", 2) if not pane or t[0] == pane]
    return clients, ttys[0] if ttys else ""


def targets(server: Server, pane: str, want_tty: bool = False) -> tuple[list[str], str]:
    """(attached client names, the pane's tty or "") in one spawn. Raises TmuxError only
    when the server is unreachable; a vanished pane just yields no tty."""
    out, _err = server.source(targets_lines(pane, want_tty))
    return parse_targets(out, pane)


def display_lines(clients: list[str], text: str) -> list[str]:
    """One `display-message -c` line per client; text is escaped here."""
    msg = quote(escape(text))
    return [f"display-message -c {quote(c)} {msg}" for c in clients if c]


#: tmux 3.2a declares display-message's -c without its argument: `-c CLIENT` is a usage
#: error there (and a usage error stops the whole `source-file`), so no form names a
#: client. The refusal is the probe (nothing parses a version): the message then goes to
#: the client tmux picks itself, the one most recently used, and the answer is kept for
#: the process's life (the daemon asks once).
_REFUSED = "usage: display-message"
NAMES_CLIENT = "display-message -c"


def display(server: Server, clients: list[str], text: str) -> None:
    """Show text on every listed client's status line (one spawn). A client that left
    in between fails only its own line. On a tmux whose display-message cannot name a
    client (3.2a), the most recently used client shows it instead (two spawns the first
    time)."""
    lines = display_lines(clients, text)
    if not lines:
        return
    if server.behaves.get(NAMES_CLIENT, True):
        out, err = server.source(lines)
        if _REFUSED not in err and _REFUSED not in out:  # source-file reports on stdout
            return
        server.behaves[NAMES_CLIENT] = False
    server.source([f"display-message {quote(escape(text))}"])


def say(server: Server, client: str | None, text: str, delay_ms: int) -> None:
    """Show text on one client's message line for delay_ms (-d, tmux 3.2a on): a
    sentence a person must read (why an action was refused), not a passing note. No
    client named, or a tmux that cannot name one (3.2a, see display): the client tmux
    picks, the one most recently used."""
    head = f"display-message -d {int(delay_ms)}"
    line = f"{head} {quote(escape(text))}"
    if client and server.behaves.get(NAMES_CLIENT, True):
        out, err = server.source([f"{head} -c {quote(client)} {quote(escape(text))}"])
        if _REFUSED not in err and _REFUSED not in out:
            return
        server.behaves[NAMES_CLIENT] = False
    server.source([line])


# ------------------------------------------------------------------ the daemon's batch
#
# The daemon commits every marker of a read in one `source-file -` spawn: for each
# candidate, a guarded set (it commits only while the pane still stands in the state
# decided and the marker still predates the episode), then a read-back of the marker
# and the mute deadline. A pane that vanished in between fails its own lines only;
# the read-back carries #{pane_id} because tmux falls back to another pane when a
# target is gone.

_MARK = "@agent_notified_at"
_CTX = "@agent_context_notified_at"


def _stale(trigger: str) -> str:
    """True when the marker must not commit: the pane left the decided state (blocked;
    idle with attention), or the episode is already rung."""
    if trigger == "blocked":
        moved = "#{!=:#{@agent_state},blocked}"
    else:
        moved = "#{||:#{!=:#{@agent_state},idle},#{!=:#{@agent_attention},1}}"
    return "#{||:" + moved + "," + already_notified() + "}"


def marker_lines(pane: str, trigger: str, value: int) -> list[str]:
    """Commit @agent_notified_at = value unless stale, then read it back (tag N)."""
    cond = "#{?" + _stale(trigger) + ",0,1}"
    return [f"if-shell -F -t {pane} {quote(cond)} "
            f"{{ set-option -p -t {pane} {_MARK} {int(value)} }}",
            _readback("N", pane, _MARK)]


def context_fire_lines(pane: str, value: int) -> list[str]:
    """Set @agent_context_notified_at from absent only, then read it back (tag X)."""
    cond = "#{?" + _CTX + ",0,1}"
    return [f"if-shell -F -t {pane} {quote(cond)} "
            f"{{ set-option -p -t {pane} {_CTX} {int(value)} }}",
            _readback("X", pane, _CTX)]


def context_rearm_line(pane: str) -> str:
    return f"set-option -p -u -t {pane} {_CTX}"


def _readback(tag: str, pane: str, key: str) -> str:
    fmt = FRAME.record(tag, ["#{pane_id}", "#{" + key + "}", "#{@agent_mute_until}"])
    return f"display-message -p -t {pane} {quote(fmt)}"


def clients_line() -> str:
    """Every attached client: its name, whether it is a control client, the pane it
    shows (list-clients expands #{pane_id} in the client's session's current window:
    its active pane, on every tmux from 3.2a) and #{client_activity}, the epoch second
    of its last input (a key or mouse event, or a resume; the attach itself at first)."""
    fmt = FRAME.record("C", [frame.text("client_name"), "#{client_control_mode}",
                             "#{pane_id}", "#{client_activity}"])
    return f"list-clients -F {quote(fmt)}"


def parse_clients(out: str) -> tuple[list[str], list[tuple[str, int]]]:
    """(attached non-control client names, (pane shown, last input epoch s) per such
    client). A control client (iTerm2's -CC) is left out of both: its activity clock
    does not move with the person's input, so it can say nothing about who looks."""
    clients: list[str] = []
    watchers: list[tuple[str, int]] = []
    for name, control, pane, activity in FRAME.records(out, "C", 4):
        if not name or control == "1":
            continue
        clients.append(frame.untext(name))
        if pane and activity.isdigit():
            watchers.append((pane, int(activity)))
    return clients, watchers


def parse_batch(out: str) -> tuple[list[str], dict[tuple[str, str], tuple[str, str]]]:
    """(attached non-control clients, {(tag, pane): (marker read back, mute_until)})."""
    clients, _watchers = parse_clients(out)
    marks: dict[tuple[str, str], tuple[str, str]] = {}
    for tag in ("N", "X"):
        for pane, marker, mute in FRAME.records(out, tag, 3):
            marks[(tag, pane)] = (marker, mute)
    return clients, marks


def commit(server: Server, lines: list[str]) -> str:
    """Run the batch (one spawn); its stdout for parse_batch."""
    out, _err = server.source(lines)
    return out


def mute_lines(panes: list[str], until: int | None) -> list[str]:
    """`tma mute`: set (or, with None, unset) @agent_mute_until on each pane, one line
    each (a pane that vanished fails its own line only)."""
    if until is None:
        return [f"set-option -p -u -t {p} @agent_mute_until" for p in panes]
    return [f"set-option -p -t {p} @agent_mute_until {int(until)}" for p in panes]
