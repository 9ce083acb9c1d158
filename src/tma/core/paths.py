"""Every directory and file tma resolves, from one environment mapping.

Pure: the caller passes the environment (`os.environ`, or a test's dict) and nothing
here touches the file system, so the installers (below the runtime) and the hot
paths (`tma status`, `tma event`: only `os` is imported) share it. An empty value
counts as unset, as everywhere in tma.

    config_home   $XDG_CONFIG_HOME, else ~/.config
    cache_home    $XDG_CACHE_HOME, else ~/.cache
    state_home    $XDG_STATE_HOME, else ~/.local/state
    config_file   --config > $TMA_CONFIG > <config_home>/tma/config.toml
    manifest_dir  <config_home>/tma/agents (user manifests)
    config_dir    --config-dir > $TMA_CONFIG_DIR > <config_home>/tma (install records)
    hosts_file    <config_dir>/hosts.toml (the fleet's hosts: tma host add)
    cache_dir     <cache_home>/tma
    state_dir     <state_home>/tma
    runtime_dir   $XDG_RUNTIME_DIR/tma, else <$TMPDIR or /tmp>/tma-<uid> (whoever creates
                  it makes it 0700, and every user of it checks it is a directory of
                  the user's alone, never a symlink: tma.runtime.rundir)
    status_memo   <runtime_dir>/<socket key>.status (the status line's last answer)
    status_gen    <runtime_dir>/<socket key>.gen (touched after every tma write to tmux)
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


class Paths:
    """The resolved places for one environment (cheap: plain attribute reads)."""

    def __init__(self, env: Mapping[str, str], *, uid: int | None = None) -> None:
        self.env = env
        self.uid = os.getuid() if uid is None else uid
        self.home = self.get("HOME") or "/"

    def get(self, name: str) -> str | None:
        """An environment value; an empty one counts as unset."""
        return self.env.get(name) or None

    def expand(self, path: str) -> str:
        """`~` and `~/…` against this HOME, made absolute."""
        if path == "~" or path.startswith("~/"):
            path = self.home + path[1:]
        return os.path.abspath(path)

    def tilde(self, path: str) -> str:
        """path with this HOME shown as `~` (for messages)."""
        h = self.home
        if h and h != "/" and (path == h or path.startswith(h + os.sep)):
            path = "~" + path[len(h):]
        return shown(path)

    # ---------------------------------------------------------------- XDG bases

    @property
    def config_home(self) -> str:
        return self.get("XDG_CONFIG_HOME") or os.path.join(self.home, ".config")

    @property
    def cache_home(self) -> str:
        return self.get("XDG_CACHE_HOME") or os.path.join(self.home, ".cache")

    @property
    def state_home(self) -> str:
        return self.get("XDG_STATE_HOME") or os.path.join(self.home, ".local", "state")

    # ---------------------------------------------------------------- tma's own

    def config_file(self, explicit: str | None = None) -> str:
        return explicit or self.get("TMA_CONFIG") or os.path.join(self.config_home, "tma",
                                                                   "config.toml")

    @property
    def manifest_dir(self) -> str:
        return os.path.join(self.config_home, "tma", "agents")

    @property
    def action_dir(self) -> str:
        return os.path.join(self.config_home, "tma", "actions")

    def config_dir(self, explicit: str | None = None) -> str:
        if explicit:
            return self.expand(explicit)
        env = self.get("TMA_CONFIG_DIR")
        return self.expand(env) if env else os.path.join(self.config_home, "tma")

    def hosts_file(self) -> str:
        return os.path.join(self.config_dir(), "hosts.toml")

    @property
    def cache_dir(self) -> str:
        return os.path.join(self.cache_home, "tma")

    @property
    def state_dir(self) -> str:
        return os.path.join(self.state_home, "tma")

    @property
    def runtime_dir(self) -> str:
        xdg = self.get("XDG_RUNTIME_DIR")
        if xdg:
            return os.path.join(xdg, "tma")
        return os.path.join(self.get("TMPDIR") or "/tmp", f"tma-{self.uid}")

    def status_memo(self, socket_path: str) -> str:
        return os.path.join(self.runtime_dir, socket_key(socket_path) + ".status")

    def status_gen(self, socket_path: str) -> str:
        return os.path.join(self.runtime_dir, socket_key(socket_path) + ".gen")

    # ---------------------------------------------------------------- other tools'

    def tmux_confs(self) -> list[str]:
        """Where tmux reads its config, in the order it looks."""
        return [os.path.join(self.home, ".tmux.conf"),
                os.path.join(self.config_home, "tmux", "tmux.conf"),
                os.path.join(self.home, ".config", "tmux", "tmux.conf")]


def private_dir_ok(st_mode: int, st_uid: int, uid: int) -> bool:
    """A runtime directory tma may write into: the user's own, no group/other access."""
    return st_uid == uid and (st_mode & 0o077) == 0


_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3


def socket_key(socket_path: str) -> str:
    """16 hex digits of FNV-1a-64 over a tmux socket path: the name every per-server file
    in the runtime dir starts with (the daemon's, the status line's)."""
    h = _FNV_OFFSET
    for byte in socket_path.encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return format(h, "016x")


def socket_file(name: str | None, path: str | None, env: Mapping[str, str],
                resolve: Callable[[str], str]) -> str:
    """A tmux server's socket path, known without asking tmux: an explicit path; else,
    with no name, the server this process runs inside ($TMUX); else where tmux puts a
    named socket (`default` when none is named) in its directory as `resolve` (the
    caller's os.path.realpath: tmux resolves it) spells it. One answer for `tma status`
    (Session.known_socket) and for every tma write (tma.tmux.adapter), which must name
    a server alike: the status line's memo is keyed by it."""
    if path:
        return path
    if not name:
        inside = (env.get("TMUX") or "").split(",")[0]
        if inside:
            return inside
    base = env.get("TMUX_TMPDIR") or "/tmp"
    return os.path.join(resolve(f"{base}/tmux-{os.getuid()}"), name or "default")


def here(env: Mapping[str, str] | None = None) -> Paths:
    """The places of this process (its environment, or `env`): the one place a Paths is
    built, so every caller resolves the same environment the same way."""
    return Paths(os.environ if env is None else env)


def shown(path: str) -> str:
    """A path as a message prints it: its control characters as `\\xNN` (a folder named
    with an escape sequence would otherwise reach the terminal as one)."""
    if path.isprintable():
        return path
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 0x100
                   else f"\\u{ord(c):04x}" for c in path)
