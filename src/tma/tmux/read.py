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
from tma.tmux import frame
from tma.tmux.adapter import Pending, PendingSource, Server, quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

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

#: Registry formats whose values tma validates into a closed alphabet (digits, tokens):
#: read as printed. Every other option may hold free text (an agent's summary, a path,
#: another writer's value) and is read through frame.text, as are these fields:
CLOSED_FORMATS = frozenset((
    "idle|working|blocked|unknown", "[a-z0-9_-] token or empty", "hook|capture|process",
    "epoch ms", "epoch s", "1 or absent", "pid", "pid or 0", "int 0-100", "int", "decimal",
    "1|0", "token", "blocked:N working:N idle:N unknown:N",
))
TEXT_FIELDS = frozenset((
    "session_name", "pane_current_command", "pane_current_path", "pane_title", "client_name",
    "socket_path", "version",
)) | frozenset(o.name for o in options.OPTIONS if o.fmt not in CLOSED_FORMATS)


def _expr(name: str) -> str:
    """The format of one field: free text through frame.text, the rest as is."""
    return frame.text(name) if name in TEXT_FIELDS else f"#{{{name}}}"


def _unescape(names: Sequence[str], values: list[str]) -> list[str]:
    return [frame.untext(v) if n in TEXT_FIELDS else v for n, v in zip(names, values, strict=True)]


def _text_at(names: Sequence[str]) -> tuple[int, ...]:
    return tuple(i for i, n in enumerate(names) if n in TEXT_FIELDS)


# What the cycle itself reads of a pane: the stamp and its identity, the cycle's own
# anchors, the rollout tail's two, mute, ignore and the rollups. A read for a caller
# that needs no more (`tma status`: counts) leaves out the telemetry and request lanes
# and the pane's path (tmux resolves it through /proc for every pane): less work for
# the server on every status line (bench/RESULTS.md).
CYCLE_OPTIONS = frozenset((
    "@agent_state", "@agent_detail", "@agent_source", "@agent_evidence_at", "@agent_since",
    "@agent_stamped_at", "@agent_attention", "@agent_notified_at", "@agent_turn_at",
    "@agent_hash", "@agent_pid", "@agent_name", "@agent_session", "@agent_subagents",
    "@agent_context_at", "@agent_transcript", "@tma_title_match_pid", "@tma_reg_dead_since",
    options.PROMPT, "@agent_mute_until", "@agent_ignore", options.ROLLUP_WINDOW,
    options.ROLLUP_SESSION))
#: The options a lean pane record holds.
LEAN_OPTION_FIELDS = tuple(o for o in OPTION_FIELDS if o in CYCLE_OPTIONS)
#: The key a lean read puts in an ignored pane's options when it still holds some lane
#: (the cycle clears every episode option of such a pane; it need not know which).
#: Not an option name: no tmux option can be spelled with a space.
LANES_HELD = "lanes held"
_LANES = tuple(o.name for o in options.OPTIONS if o.scope == "pane"
               and o.name in options.EPISODE_OPTIONS and o.name not in CYCLE_OPTIONS)
#: The free text a lean read decodes: the title (title_patterns match it exactly) and the
#: rollout's path (it is opened). The rest is compared for emptiness or against tma's own
#: tokens and never shown: each decode is a regex in tmux for every pane holding a value.
_LEAN_TEXT = frozenset(("pane_title", "@agent_transcript"))

#: Every field of a pane record, in order (the title last).
PANE_RECORD = PANE_FIELDS + OPTION_FIELDS + ("pane_title",)
LEAN_RECORD = PANE_FIELDS + LEAN_OPTION_FIELDS + (LANES_HELD, "pane_title")
_TEXT_AT = {PANE_RECORD: _text_at(PANE_RECORD),
            LEAN_RECORD: tuple(i for i, n in enumerate(LEAN_RECORD) if n in _LEAN_TEXT)}
_FULL_EXPRS = tuple(_expr(f) for f in PANE_RECORD)


def _lean_expr(name: str) -> str:
    if name == "pane_current_path":
        return ""  # never asked for
    if name == LANES_HELD:  # on an ignored pane: every lane's value, run together
        return ("#{?#{!=:#{@agent_ignore},}," + "".join(f"#{{{o}}}" for o in _LANES) + ",}")
    return frame.text(name) if name in _LEAN_TEXT else f"#{{{name}}}"


_LEAN_EXPRS = tuple(_lean_expr(f) for f in LEAN_RECORD)

#: What a re-read after a write batch leaves to the read before it: the pane's command
#: and path, which tmux finds through /proc for every pane (~17 us a pane) and no write
#: of tma's changes.
_CARRIED = ("pane_current_command", "pane_current_path")
_CARRIED_AT = tuple(PANE_FIELDS.index(f) for f in _CARRIED)


def _reread(exprs: tuple[str, ...]) -> tuple[str, ...]:
    return tuple("" if i in _CARRIED_AT else e for i, e in enumerate(exprs))


_FULL_REREAD, _LEAN_REREAD = _reread(_FULL_EXPRS), _reread(_LEAN_EXPRS)


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


def _pane(values: list[str], names: tuple[str, ...]) -> Pane | None:
    """A pane from one record's raw fields (NAMES: the record's field names in order)."""
    if len(values) != len(names) or not values[0].startswith("%"):
        return None
    for i in _TEXT_AT[names]:  # a pane line is parsed for every pane on every status line
        values[i] = frame.untext(values[i])
    (pane_id, pane_pid, session_name, window_index, pane_index, command, activity,
     alternate_on, scroll_position, height, path, session_id, window_id, width,
     window_active, pane_active, tty) = values[:_N_PANE]
    opts = {k: v for k, v in zip(names[_N_PANE:-1], values[_N_PANE:-1], strict=True) if v}
    return Pane(pane_id, _int(pane_pid), session_name, window_index, pane_index, command,
                _int(activity), alternate_on == "1", _int(scroll_position), _int(height),
                path, session_id, window_id, _int(width), window_active == "1",
                pane_active == "1", tty, values[-1], opts)


class Listing:
    """One read of every pane, the server's facts and the clients: the formats to send
    and the parser of what came back, sharing one frame. `lean`: the pane records
    hold only what the cycle reads (see CYCLE_OPTIONS). `prior`: this is a re-read
    after writes, and each pane's command and path are PRIOR's (empty for a pane
    PRIOR does not hold)."""

    __slots__ = ("lean", "frame", "prior")

    def __init__(self, lean: bool = False, fr: frame.Frame | None = None,
                 prior: Snapshot | None = None) -> None:
        self.lean = lean
        self.frame = fr or frame.Frame()
        self.prior = prior

    def pane_format(self) -> str:
        if self.prior is not None:
            exprs = _LEAN_REREAD if self.lean else _FULL_REREAD
        else:
            exprs = _LEAN_EXPRS if self.lean else _FULL_EXPRS
        return self.frame.record("L" if self.lean else "P", exprs)

    def server_format(self) -> str:
        return self.frame.record("S", [_expr(f) for f in SERVER_FIELDS])

    def client_format(self) -> str:
        return self.frame.record("C", [_expr(f) for f in CLIENT_FIELDS])

    def args(self, stamp_poll_ms: int | None = None) -> list[str]:
        """list-panes + server facts + clients (+ the @tma_last_poll stamp), one
        invocation."""
        args = ["list-panes", "-a", "-F", self.pane_format(), ";", "display-message", "-p",
                self.server_format(), ";", "list-clients", "-F", self.client_format()]
        if stamp_poll_ms is not None:
            args += [";", "set-option", "-s", "@tma_last_poll", str(int(stamp_poll_ms))]
        return args

    def pane_args(self) -> list[str]:
        """Every pane's record alone (no server facts), as an argv."""
        return ["list-panes", "-a", "-F", self.pane_format()]

    def line(self) -> str:
        """The panes and the server facts as a `source-file` line (to re-read after a
        write batch)."""
        return (f"list-panes -a -F {quote(self.pane_format())} ; "
                f"display-message -p {quote(self.server_format())}")

    def parse(self, out: str) -> Snapshot:
        fr = self.frame
        kind, names = ("L", LEAN_RECORD) if self.lean else ("P", PANE_RECORD)
        records = fr.records(out, kind, len(names))
        if self.prior is not None:
            before = {p.pane_id: p for p in self.prior.panes}
            decoded = _TEXT_AT[names]
            for values in records:
                was = before.get(values[0])
                for i, value in zip(_CARRIED_AT, (was.current_command, was.current_path)
                                    if was is not None else ("", ""), strict=True):
                    # as tmux would print it: _pane decodes a free-text field
                    values[i] = value.replace("\\", "\\\\") if i in decoded else value
        panes = [p for p in (_pane(v, names) for v in records) if p is not None]
        clients = [Client(c[0], c[1], _int(c[2]), c[3] == "1", c[4], c[5])
                   for c in (_unescape(CLIENT_FIELDS, v)
                             for v in fr.records(out, "C", len(CLIENT_FIELDS)))]
        raw = fr.first(out, "S", len(SERVER_FIELDS))
        server = dict(zip(SERVER_FIELDS, _unescape(SERVER_FIELDS, raw), strict=True)) \
            if raw is not None else dict.fromkeys(SERVER_FIELDS, "")
        return Snapshot(panes, clients, _int(server["@tma_last_poll"]),
                        server["@tma_setpf_ok"], server["version"], server["socket_path"],
                        server["pid"])


def list_clients(server: Server) -> list[Client]:
    """The attached clients as they are now, alone (a choice of client made long after
    the listing, as the picker's Enter is)."""
    listing = Listing()
    return listing.parse(server.run("list-clients", "-F", listing.client_format())).clients


def list_panes(server: Server, stamp_poll_ms: int | None = None, lean: bool = False) -> Snapshot:
    return begin_listing(server, stamp_poll_ms, lean).snapshot()


class PendingListing:
    """A pane read started and not yet parsed (begin_listing)."""

    def __init__(self, listing: Listing, pending: Pending, stamp_poll_ms: int | None) -> None:
        self.listing, self.pending, self.stamp_poll_ms = listing, pending, stamp_poll_ms

    def snapshot(self) -> Snapshot:
        return self.listing.parse(self.pending.result())


def begin_listing(server: Server, stamp_poll_ms: int | None = None,
                  lean: bool = False) -> PendingListing:
    """list_panes in two halves: tmux reads the panes while the caller goes on."""
    listing = Listing(lean)
    # a read: the poll stamp it may set is the stampede guard's, which no row shows
    return PendingListing(listing, server.begin(*listing.args(stamp_poll_ms), writes=False),
                          stamp_poll_ms)


# ---------------------------------------------------------------- captures


class Captured(Record):
    pane_id: str = ""
    height: int = 0
    body: str = ""


def capture_many(server: Server, panes: Sequence[str | tuple[str, int]],
                 scrollback: int = 50, meanwhile: Callable[[], object] | None = None,
                 ) -> dict[str, Captured]:
    """Capture every pane in one spawn. A pane that died in between is simply absent.

    `panes` holds pane ids, or (pane id, scrollback lines) pairs: the cycle asks only
    for the scrollback its rules can read, which halves the server's work.
    """
    pending = begin_captures(server, panes, scrollback)
    if meanwhile is not None:
        meanwhile()  # while tmux captures
    return pending.result()


class PendingCaptures:
    """Captures sent and not yet read (begin_captures)."""

    def __init__(self, pending: PendingSource, nonce: str) -> None:
        self.pending, self.nonce = pending, nonce

    def result(self) -> dict[str, Captured]:
        out, _err = self.pending.result()
        return parse_captures(out, self.nonce) if out else {}


def begin_captures(server: Server, panes: Sequence[str | tuple[str, int]],
                   scrollback: int = 50) -> PendingCaptures:
    """capture_many in two halves: tmux captures while the caller goes on."""
    nonce = "TMA" + os.urandom(6).hex()
    lines = []
    for entry in panes:
        pid, back = entry if isinstance(entry, tuple) else (entry, scrollback)
        lines.append(f"display-message -p -t {pid} {quote(nonce + ' #{pane_id} #{pane_height}')}")
        lines.append(f"capture-pane -p -e -t {pid}" + (f" -S -{int(back)}" if back > 0 else ""))
    return PendingCaptures(server.begin_source(lines), nonce)


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
    listing = Listing()
    return listing.parse(server.run("list-panes", "-s", "-t", pane_id, "-F",
                                    listing.pane_format())).panes


# What the hook's rollups read of the session's other panes: the state, ignore, and the
# options whose bad value makes a tuple unreadable (an unreadable tuple is not counted).
ROLLUP_READ_OPTIONS = ("@agent_state", "@agent_source", "@agent_evidence_at", "@agent_since",
                       "@agent_stamped_at", "@agent_pid", "@agent_notified_at",
                       "@agent_turn_at", "@agent_ignore")
_ROLLUP_RECORD = ("pane_id", "window_id", "session_id") + ROLLUP_READ_OPTIONS


def hook_panes(server: Server, pane_id: str) -> list[Pane]:
    """The hook path's one read: PANE in full, and every other pane of its session with
    only what the rollups read (pane, window and session ids and ROLLUP_READ_OPTIONS;
    every other field empty). Raises TmuxError (PaneGone) when PANE is gone."""
    listing = Listing()
    fr = listing.frame
    out = server.run("display-message", "-p", "-t", pane_id, listing.pane_format(), ";",
                     "list-panes", "-s", "-t", pane_id, "-F",
                     fr.record("R", [_expr(f) for f in _ROLLUP_RECORD]))
    panes: list[Pane] = []
    for p in fr.records(out, "R", len(_ROLLUP_RECORD)):
        if p[0] == pane_id:
            continue
        opts = {k: v for k, v in zip(ROLLUP_READ_OPTIONS, p[3:], strict=True) if v}
        panes.append(Pane(p[0], 0, "", "", "", "", 0, False, 0, 0, "", p[2], p[1], 0,
                          False, False, "", "", opts))
    found = fr.records(out, "P", len(PANE_RECORD))
    target = _pane(found[0], PANE_RECORD) if found else None
    if target is None or target.pane_id != pane_id:
        return panes
    return [target] + panes


def every_pane(server: Server) -> list[Pane]:
    """Every pane of the server in full, in one spawn: the daemon's read for a round of
    handed-off events on several panes (each event takes its pane and its session's)."""
    listing = Listing()
    out = server.run("list-panes", "-a", "-F", listing.pane_format())
    found = (_pane(rec, PANE_RECORD) for rec in listing.frame.records(out, "P", len(PANE_RECORD)))
    return [p for p in found if p is not None]


def session_of(panes: list[Pane], pane_id: str) -> list[Pane]:
    """PANE first, then the other panes of its session, as hook_panes answers; [] when
    PANE is not among them."""
    target = next((p for p in panes if p.pane_id == pane_id), None)
    if target is None:
        return []
    return [target] + [p for p in panes
                       if p.session_id == target.session_id and p.pane_id != pane_id]


# ---------------------------------------------------------------- a few values


class Values:
    """Some values expanded in one pane's context (variables or option names, free text
    read through frame.text): a `source-file` line to append to a batch, or one spawn.
    The record carries #{pane_id}: tmux expands a gone target in another pane."""

    __slots__ = ("pane_id", "names", "frame")

    def __init__(self, pane_id: str, names: Sequence[str], fr: frame.Frame | None = None):
        self.pane_id = pane_id
        self.names = ("pane_id",) + tuple(names)
        self.frame = fr or frame.Frame()

    def format(self) -> str:
        return self.frame.record("V", [_expr(n) for n in self.names])

    def line(self) -> str:
        return f"display-message -p -t {self.pane_id} {quote(self.format())}"

    def parse(self, out: str) -> list[str] | None:
        """The values in the order named, or None when the pane did not answer."""
        for got in self.frame.records(out, "V", len(self.names)):
            if got[0] == self.pane_id:
                return _unescape(self.names, got)[1:]
        return None

    def read(self, server: Server) -> list[str] | None:
        return self.parse(server.run("display-message", "-p", "-t", self.pane_id,
                                     self.format()))


def server_values(server: Server, names: Sequence[str]) -> list[str]:
    """Server-wide values (#{pid}, #{socket_path}, ...) in one spawn."""
    fr = frame.Frame()
    names = tuple(names)
    got = fr.first(server.run("display-message", "-p", fr.record("V", [_expr(n) for n in names])),
                   "V", len(names))
    return _unescape(names, got) if got is not None else [""] * len(names)
