"""`tma event` (internal): the hook bridge. Never prints (but for Claude's reply-lane
decision), never exits non-zero, never blocks the agent beyond the reply-lane hold,
and tolerates any bytes on stdin.

TMA_HOOK_STRICT=1 (tests only) turns a swallowed exception into a failure, so no
blanket handler can hide a bug.
"""

from __future__ import annotations

import os
import sys

PAYLOAD_CAP = 16 * 1024 * 1024
STDIN_DEADLINE_S = 2.0


def _args(argv: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        if name.startswith("--") and name[2:] in ("agent", "kind", "pane", "payload",
                                                   "socket-name", "socket-path", "config",
                                                   "manifest-dir"):
            if not eq:
                if i + 1 >= len(argv):
                    break
                value = argv[i + 1]
                i += 1
            out[name[2:]] = value
        i += 1
    return out


def _read_stdin() -> bytes:
    """Whatever the agent wrote, until EOF, a size cap or a short deadline."""
    import select
    import time

    fd = 0
    try:
        if os.isatty(fd):
            return b""
    except OSError:
        return b""
    chunks = []
    size = 0
    deadline = time.monotonic() + STDIN_DEADLINE_S
    while size < PAYLOAD_CAP:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except (OSError, ValueError):
            break
        if not ready:
            break
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
        size += len(data)
    return b"".join(chunks)


def _payload(spec: str | None) -> str:
    if spec is None or spec == "-":
        raw = _read_stdin()
    else:
        try:
            with open(spec, "rb") as fh:
                raw = fh.read(PAYLOAD_CAP)
        except OSError:
            raw = b""
    return raw.decode("utf-8", "replace")


def _server(a: dict[str, str], cfg):
    """The server the handoff keyed the daemon by (tma.runtime.handoff.socket_choice)."""
    from tma.runtime.handoff import socket_choice
    from tma.tmux.adapter import Server, resolve_bin

    kind, value = socket_choice(a)
    bin_ = resolve_bin(cfg.tmux_bin)
    if kind == "name":
        return Server(bin_, socket_name=value)
    if kind == "path":
        return Server(bin_, socket_path=value)
    return Server(bin_)


def _config(path: str | None):
    from tma.runtime.config import Config, ConfigError, load

    try:
        return load(path)
    except ConfigError as exc:
        sys.stderr.write(f"{exc}; using default config for this hook event\n")
        return Config()


def _handed_off(a: dict[str, str], agent: str, kind: str, pane: str, payload: str,
                now: int) -> bool:
    """The daemon took the event (ACK); False on any doubt. A bundled agent's reply lane
    (its manifest's `[hooks] reply_lane`) is never offered: it holds in this process.
    The generated index spares this path the manifests; the daemon refuses the lane by
    its own table too (HookTable.holds_reply), whatever manifest set it loaded."""
    from tma.core.manifests._lanes import REPLY_LANES

    if REPLY_LANES.get(agent) == kind:
        return False
    from tma.runtime import handoff

    return handoff.offer(a, agent, kind, pane, payload, now)


def run(argv: list[str]) -> int:
    a = _args(argv)
    agent, kind = a.get("agent", ""), a.get("kind", "")
    pane = a.get("pane") or os.environ.get("TMUX_PANE") or ""
    payload = _payload(a.get("payload"))
    if not agent or not kind or not pane.startswith("%"):
        return 0
    import time

    now = time.time_ns() // 1_000_000  # one time: offered, or stamped here on any doubt
    if _handed_off(a, agent, kind, pane, payload, now):
        return 0  # the daemon stamps it (tma.daemon.server), with this event's time
    cfg = _config(a.get("config"))
    from tma.runtime import manifests

    try:
        tables = manifests.hook_tables(a.get("manifest-dir"), cfg.agents)
    except manifests.BundledManifestError:
        return 0
    table = tables.get(agent)
    if table is None:
        return 0  # an unknown agent is a silent success
    from tma.runtime import hook
    from tma.tmux.adapter import TmuxError

    server = _server(a, cfg)
    woke: list[bool] = []

    def wake() -> None:
        """A running daemon hears of a stamp made here (its subscribers, notifier,
        status segment); once, and before the reply lane starts holding."""
        if not woke:
            woke.append(True)
            from tma.runtime import handoff

            handoff.woken(a)

    try:
        outcome = hook.handle(server, cfg, table, kind, pane, payload, now,
                              before_hold=wake)
    except TmuxError:
        return 0  # no server, a vanished pane, a slow server: the agent must not notice
    if outcome.reply:
        sys.stdout.write(outcome.reply + "\n")
        sys.stdout.flush()
    if outcome.wrote:
        wake()
    return 0


def main(argv: list[str]) -> int:
    try:
        return run(argv)
    except Exception:
        if os.environ.get("TMA_HOOK_STRICT") == "1":
            raise
        return 0
