"""The read path: one list-panes for every pane and its options, batched captures.

Spawns do not grow with the number of panes: the pane read is one invocation
(chained with the server facts and the client list), and every capture of a cycle
goes through one `source-file -` spawn, each capture preceded by a delimiter line
that carries the pane id and height.
"""

from __future__ import annotations

import os

from tma.core import options
from tma.core.record import Record
from tma.tmux.adapter import Server, quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

US = "\x1f"
PANE_FIELDS = (
    "pane_id", "pane_pid", "session_name", "window_index", "pane_index",
    "pane_current_command", "window_activity", "alternate_on", "scroll_position",
    "pane_height", "pane_current_path", "session_id", "window_id", "pane_width",
    "window_active", "pane_active", "pane_tty",
)
OPTION_FIELDS = options.PANE_READ_OPTIONS + (options.ROLLUP_WINDOW, options.ROLLUP_SESSION)
SERVER_FIELDS = ("@tma_last_poll", "@tma_setpf_ok", "version", "socket_path", "pid")
CLIENT_FIELDS = ("client_name", "pane_id", "client_activity", "client_control_mode",
                 "session_name", "window_id")

PANE_FORMAT = _PANE_FMT = US.join([f"#{{{f}}}" for f in PANE_FIELDS] + [f"#{{{o}}}" for o in OPTION_FIELDS]
                    + ["#{pane_title}"])

# What the cycle itself reads of a pane: the stamp and its identity, the cycle's own
# anchors, the rollout tail's two, mute, ignore and the rollups. A read for a caller
# that needs no more (`tma status`: counts) leaves out the telemetry and request lanes
# and the pane's path (tmux resolves it through /proc for every pane): less work for
# the server on every status line (0.5 ms on 38 panes, bench/RESULTS.md). The lanes
# are still read on an ignored pane, whose episode options the cycle clears.
CYCLE_OPTIONS = frozenset((
    "@agent_state", "@agent_detail", "@agent_source", "@agent_evidence_at", "@agent_since",
    "@agent_stamped_at", "@agent_attention", "@agent_notified_at", "@agent_turn_at",
    "@agent_hash", "@agent_pid", "@agent_name", "@agent_session", "@agent_subagents",
    "@agent_context_at", "@agent_transcript", "@tma_title_match_pid", "@tma_reg_dead_since",
    "@agent_mute_until", "@agent_ignore", options.ROLLUP_WINDOW, options.ROLLUP_SESSION))
_LEAN_KEPT = tuple(o for o in OPTION_FIELDS if o in CYCLE_OPTIONS)
_LEAN_LANES = tuple(o for o in OPTION_FIELDS if o not in CYCLE_OPTIONS)
LEAN_OPTION_FIELDS = _LEAN_KEPT + _LEAN_LANES  # the lanes last, read under one condition


def _lean_format(lanes_when: str) -> str:
    """The pane line with the same field count as PANE_FORMAT (options in
    LEAN_OPTION_FIELDS order): the lanes expand only where `lanes_when` is true,
    elsewhere they are empty fields, as is the pane's path."""
    fixed = ["" if f == "pane_current_path" else f"#{{{f}}}" for f in PANE_FIELDS]
    kept = [f"#{{{o}}}" for o in _LEAN_KEPT]
    lanes = US.join(f"#{{{o}}}" for o in _LEAN_LANES)
    cond = f"#{{?{lanes_when},{lanes},{US * (len(_LEAN_LANES) - 1)}}}"
    return US.join(fixed + kept + [cond, "#{pane_title}"])


_LEAN_FMT = _lean_format("#{!=:#{@agent_ignore},}")
_SERVER_FMT = "S" + US + US.join(f"#{{{f}}}" for f in SERVER_FIELDS)
_CLIENT_FMT = "C" + US + US.join(f"#{{{f}}}" for f in CLIENT_FIELDS)


def _int(value: str, default: int = 0) -> int:
    try:
        return int(value)
    except ValueError:
        return default


class Pane(Record):
    """One pane as list-panes reported it: every field is filled from the listing line."""

    pane_id: str
    pane_pid: int
    session_name: str
    window_index: str
    pane_index: str
    current_command: str
    window_activity: int  # epoch seconds of the window's last output (0 = unknown)
    alternate_on: bool
    scroll_position: int
    height: int
    current_path: str
    session_id: str
    window_id: str
    width: int
    window_active: bool
    pane_active: bool
    tty: str
    title: str
    options: dict[str, str]  # the pane's non-empty read options (OPTION_FIELDS)

    @property
    def locator(self) -> str:
        return f"{self.session_name}:{self.window_index}.{self.pane_index}"

    @property
    def order_key(self) -> tuple[str, int, int]:
        return (self.session_name, _int(self.window_index), _int(self.pane_index))


class Client(Record):
    name: str = ""
    pane_id: str = ""
    activity: int = 0  # epoch seconds of the client's last real input
    control_mode: bool = False
    session_name: str = ""
    window_id: str = ""


class Snapshot(Record):
    panes: list[Pane]
    clients: list[Client]
    last_poll: int = 0
    setpf_ok: str = ""
    version: str = ""
    socket_path: str = ""
    server_pid: str = ""


_N_PANE = len(PANE_FIELDS)
_N_FIXED = _N_PANE + len(OPTION_FIELDS)


def _parse_pane(line: str, option_fields: tuple[str, ...] = OPTION_FIELDS) -> Pane | None:
    parts = line.split(US, _N_FIXED)
    if len(parts) != _N_FIXED + 1 or not parts[0].startswith("%"):
        return None
    # PANE_FIELDS order; the title is last (it may hold the separator)
    (pane_id, pane_pid, session_name, window_index, pane_index, command, activity,
     alternate_on, scroll_position, height, path, session_id, window_id, width,
     window_active, pane_active, tty) = parts[:_N_PANE]
    opts = {k: v for k, v in zip(option_fields, parts[_N_PANE:_N_FIXED], strict=True)
            if v}
    return Pane(pane_id, _int(pane_pid), session_name, window_index, pane_index, command,
                _int(activity), alternate_on == "1", _int(scroll_position), _int(height),
                path, session_id, window_id, _int(width), window_active == "1",
                pane_active == "1", tty, parts[-1], opts)


def parse_listing(out: str, lean: bool = False) -> Snapshot:
    """`lean`: the output of a lean listing (its options in LEAN_OPTION_FIELDS order)."""
    fields = LEAN_OPTION_FIELDS if lean else OPTION_FIELDS
    panes: list[Pane] = []
    clients: list[Client] = []
    server = dict.fromkeys(SERVER_FIELDS, "")
    for line in out.split("\n"):
        if line.startswith("%"):
            pane = _parse_pane(line, fields)
            if pane is not None:
                panes.append(pane)
        elif line.startswith("S" + US):
            server = dict(zip(SERVER_FIELDS, line.split(US)[1:], strict=False))
        elif line.startswith("C" + US):
            p = line.split(US)
            if len(p) == len(CLIENT_FIELDS) + 1:
                clients.append(Client(p[1], p[2], _int(p[3]), p[4] == "1", p[5], p[6]))
    return Snapshot(panes, clients, _int(server.get("@tma_last_poll", "")),
                    server.get("@tma_setpf_ok", ""), server.get("version", ""),
                    server.get("socket_path", ""), server.get("pid", ""))


def listing_args(stamp_poll_ms: int | None = None, lean: bool = False) -> list[str]:
    """list-panes + server facts + clients (+ the @tma_last_poll stamp), one invocation.
    `lean`: the pane lines hold only what the cycle reads (see CYCLE_OPTIONS)."""
    args = ["list-panes", "-a", "-F", _LEAN_FMT if lean else _PANE_FMT, ";", "display-message",
            "-p", _SERVER_FMT, ";", "list-clients", "-F", _CLIENT_FMT]
    if stamp_poll_ms is not None:
        args += [";", "set-option", "-s", "@tma_last_poll", str(int(stamp_poll_ms))]
    return args


def list_panes(server: Server, stamp_poll_ms: int | None = None, lean: bool = False) -> Snapshot:
    return parse_listing(server.run(*listing_args(stamp_poll_ms, lean)), lean)


def listing_line(lean: bool = False) -> str:
    """The same read as a `source-file` line (to re-read after a write batch)."""
    return " ; ".join([
        f"list-panes -a -F {quote(_LEAN_FMT if lean else _PANE_FMT)}",
        f"display-message -p {quote(_SERVER_FMT)}",
    ])


# ---------------------------------------------------------------- captures


class Captured(Record):
    pane_id: str = ""
    height: int = 0
    body: str = ""


def capture_many(server: Server, panes: Sequence[str | tuple[str, int]],
                 scrollback: int = 50) -> dict[str, Captured]:
    """Capture every pane in one spawn. A pane that died in between is simply absent.

    `panes` holds pane ids, or (pane id, scrollback lines) pairs: the cycle asks only
    for the scrollback its rules can read, which halves the server's work.
    """
    if not panes:
        return {}
    nonce = "TMA" + os.urandom(6).hex()
    lines = []
    for entry in panes:
        pid, back = entry if isinstance(entry, tuple) else (entry, scrollback)
        lines.append(f"display-message -p -t {pid} {quote(nonce + ' #{pane_id} #{pane_height}')}")
        lines.append(f"capture-pane -p -e -t {pid}" + (f" -S -{int(back)}" if back > 0 else ""))
    out, _err = server.source(lines)
    return parse_captures(out, nonce)


def parse_captures(out: str, nonce: str) -> dict[str, Captured]:
    result: dict[str, Captured] = {}
    current: tuple[str, int] | None = None
    body: list[str] = []

    def flush() -> None:
        if current is not None and current[0] and body:
            result[current[0]] = Captured(current[0], current[1], "".join(body))

    for line in _lines_keepends(out):
        if line.startswith(nonce + " "):
            flush()
            fields = line[len(nonce) + 1:].rstrip("\n").split(" ")
            pane_id = fields[0] if fields and fields[0].startswith("%") else ""
            height = _int(fields[1]) if len(fields) > 1 else 0
            current = (pane_id, height)
            body = []
        elif current is not None:
            body.append(line)
    flush()
    return result


def _lines_keepends(text: str) -> list[str]:
    """Split on \\n only (a capture may hold \\x0b, \\x1c and friends), keeping the \\n."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def session_panes(server: Server, pane_id: str) -> list[Pane]:
    """Every pane of PANE's session, each in full."""
    return parse_listing(server.run("list-panes", "-s", "-t", pane_id, "-F", _PANE_FMT)).panes


# What the hook's rollups read of the session's other panes: the state, ignore, and the
# options whose bad value makes a tuple unreadable (an unreadable tuple is not counted).
ROLLUP_READ_OPTIONS = ("@agent_state", "@agent_source", "@agent_evidence_at", "@agent_since",
                       "@agent_stamped_at", "@agent_pid", "@agent_notified_at",
                       "@agent_turn_at", "@agent_ignore")
_ROLLUP_FMT = "R" + US + US.join(["#{pane_id}", "#{window_id}", "#{session_id}"]
                                 + [f"#{{{o}}}" for o in ROLLUP_READ_OPTIONS])


def hook_panes(server: Server, pane_id: str) -> list[Pane]:
    """The hook path's one read: PANE in full, and every other pane of its session with
    only what the rollups read (pane, window and session ids and ROLLUP_READ_OPTIONS;
    every other field empty). Raises TmuxError (PaneGone) when PANE is gone."""
    out = server.run("display-message", "-p", "-t", pane_id, _PANE_FMT, ";",
                     "list-panes", "-s", "-t", pane_id, "-F", _ROLLUP_FMT)
    panes: list[Pane] = []
    target = None
    for line in out.split("\n"):
        if line.startswith("%") and target is None:
            target = _parse_pane(line)
        elif line.startswith("R" + US):
            p = line.split(US)
            if len(p) != 4 + len(ROLLUP_READ_OPTIONS) or p[1] == pane_id:
                continue
            opts = {k: v for k, v in zip(ROLLUP_READ_OPTIONS, p[4:], strict=True) if v}
            panes.append(Pane(p[1], 0, "", "", "", "", 0, False, 0, 0, "", p[3], p[2], 0,
                              False, False, "", "", opts))
    if target is None or target.pane_id != pane_id:
        return panes
    return [target] + panes


def display(server: Server, pane_id: str, fmt: str) -> str:
    """One format expanded in a pane's context (trailing newline removed)."""
    return server.run("display-message", "-p", "-t", pane_id, fmt).rstrip("\n")


def display_line(pane_id: str, fmt: str) -> str:
    """The same as a `source-file` line, to read back at the end of a write batch."""
    return f"display-message -p -t {pane_id} {quote(fmt)}"
