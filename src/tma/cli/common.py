"""What every command shares: global options, config, the server handle, errors.

Kept import-light: `tma status` and `tma event` run through here on every status
line and every agent hook.
"""

from __future__ import annotations

import os
import sys

from tma.core.record import Record

USAGE = 2
FAIL = 1


class UsageError(Exception):
    """A bad command line: exit 2 (cli/main.py reports it)."""


class NoPane(Exception):
    """The pane a command was told to use does not exist: exit 3, "tma: no pane %N"."""

    def __init__(self, pane_id: str) -> None:
        super().__init__(f"no pane {pane_id}")
        self.pane_id = pane_id


class Globals(Record):
    socket_name: str | None = None
    socket_path: str | None = None
    config: str | None = None
    manifest_dir: str | None = None
    debug_timing: bool = False
    client: str | None = None


_VALUED = {"--socket-name": "socket_name", "--socket-path": "socket_path", "--config": "config",
           "--manifest-dir": "manifest_dir", "-c": "client", "--client": "client"}


def split_globals(argv: list[str]) -> tuple[Globals, list[str]]:
    """Take the global options out of argv, wherever they stand."""
    g = Globals()
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        name, eq, value = arg.partition("=")
        if name in _VALUED and (eq or i + 1 < len(argv)):
            if not eq:
                value = argv[i + 1]
                i += 1
            setattr(g, _VALUED[name], value)
        elif name in _VALUED:
            raise UsageError(f"{name} needs a value")
        elif arg == "--debug-timing":
            g.debug_timing = True
        else:
            rest.append(arg)
        i += 1
    if g.socket_name and g.socket_path:
        raise UsageError("--socket-name and --socket-path are mutually exclusive")
    if g.client is not None and (g.client == "" or "#{" in g.client):
        g.client = None  # an unexpanded #{client_name}: treat as absent
    return g, rest


def err(msg: str) -> None:
    sys.stderr.write(msg if msg.endswith("\n") else msg + "\n")


def load_config(g: Globals, surface: bool = False):
    """The config; a file named by --config or TMA_CONFIG, and a --manifest-dir, must
    exist (a typo would otherwise load nothing in silence). Raises ConfigError
    (reported by cli/main.py, exit 1). `surface`: the caller is one of the one-shot
    surfaces (ls, status, jump, the picker, watch, wait, subscribe; never `event`),
    which start the daemon first under `[daemon] autostart = true`."""
    cfg = _load_config(g)
    if surface and cfg.daemon.get("autostart"):
        autostart(g, cfg)
    return cfg


def _load_config(g: Globals):
    from tma.runtime.config import ConfigError, load

    named = g.config or os.environ.get("TMA_CONFIG")
    if named and not os.path.exists(named):
        how = "--config" if g.config else "TMA_CONFIG"
        raise ConfigError(f"tma: config {named}: no such file (named by {how})")
    if g.manifest_dir and not os.path.isdir(g.manifest_dir):
        raise ConfigError(f"tma: manifest dir {g.manifest_dir}: no such directory "
                          "(named by --manifest-dir)")
    return load(g.config)


def known_socket(g: Globals) -> str | None:
    """The server's socket path when it is known without asking tmux: --socket-path,
    TMA_SOCKET_PATH, $TMUX inside tmux, else where tmux puts a --socket-name socket (the
    `default` one when none is named, as a tmux client outside tmux would)."""
    if g.socket_path:
        return g.socket_path
    if not g.socket_name:
        named = os.environ.get("TMA_SOCKET_PATH") or (os.environ.get("TMUX") or "").split(",")[0]
        if named:
            return named
    base = os.environ.get("TMUX_TMPDIR") or "/tmp"
    return os.path.join(os.path.realpath(f"{base}/tmux-{os.getuid()}"),
                        g.socket_name or "default")


def quiet_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the interpreter's final flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


AUTOSTART_BACKOFF_S = 60


def autostart(g: Globals, cfg) -> None:
    """`tma daemon --ensure`, result ignored. Cheap when a daemon runs: its lock is
    probed where the socket path is known without a spawn; only a free (or unknown)
    lock costs the full ensure, which asks tmux for the socket path and starts one.
    A start that failed is not retried for AUTOSTART_BACKOFF_S (a status line runs
    this every few seconds), and says nothing: the surface's answer is what counts."""
    from tma.runtime import daemon_files

    known = known_socket(g)
    files = daemon_files.Files(known) if known else None
    if files is not None and daemon_files.held(files.lock) \
            and daemon_files.is_current(*daemon_files.read_identity(files.lock)[1:]):
        return  # this tma's daemon runs; another tma's is replaced by the ensure below
    from tma.runtime import rundir

    if files is not None and rundir.refused(files.dir):
        return  # no daemon can start there (it would refuse): not worth an ensure a run
    failed = files.failed if files is not None else None
    if failed is not None:
        import time

        try:
            if time.time() - os.stat(failed).st_mtime < AUTOSTART_BACKOFF_S:
                return
        except OSError:
            pass
    import contextlib
    import io

    from tma.cli import daemon

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            rc = daemon.ensure(g, cfg)
    except Exception:  # noqa: BLE001 - autostart must never cost the surface its answer
        rc = 1
    if rc != 0 and failed is not None:
        from tma.runtime import rundir

        try:  # only into a runtime dir of the user's alone, never through a symlink
            rundir.make(os.path.dirname(failed))
            fd = os.open(failed, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, b"tma daemon --ensure failed; see the .log beside this file\n")
            finally:
                os.close(fd)
        except (OSError, rundir.RuntimeDirError):
            pass


def check_agent(g: Globals, name: str) -> None:
    """An --agent selector must name a loaded manifest; the error lists the known ones."""
    from tma.runtime import manifests

    cfg = load_config(g)
    known = sorted(manifests.identity_index(g.manifest_dir, cfg.agents))
    if name not in known:
        raise UsageError(f"unknown agent {name!r} (expected one of: {', '.join(known)})")


def server(g: Globals, cfg=None):
    from tma.tmux.adapter import Server, resolve_bin

    return Server(resolve_bin(cfg.tmux_bin if cfg is not None else None),
                  socket_name=g.socket_name, socket_path=g.socket_path)


def now_ms() -> int:
    import time

    return time.time_ns() // 1_000_000


def on_terminal(fd: int = 1) -> bool:
    """Is a person reading (a TTY), or a script / `#()` (anything else)?"""
    try:
        return os.isatty(fd)
    except OSError:
        return False


def terminal_width(fd: int = 1, default: int = 100) -> int:
    try:
        return os.get_terminal_size(fd).columns or default
    except OSError:
        return default


def env_pane() -> str | None:
    return os.environ.get("TMUX_PANE") or None


def take_selectors(rest: list[str]):
    """Pull the selector flags out of argv; a bad one is a usage error (exit 2)."""
    from tma.runtime import selectors

    try:
        return selectors.take(rest)
    except selectors.SelectorError as exc:
        raise UsageError(str(exc)) from None


def report_manifests(g: Globals, cfg) -> None:
    """Name each broken user manifest on stderr (the surfaces that did not need the full
    set still say it; a broken bundled manifest raises BundledManifestError, exit 1 at
    cli/main.py)."""
    from tma.runtime import manifests

    manifests.report_skipped(manifests.skipped(g.manifest_dir, cfg.agents), sys.stderr.write)


def load_manifests(g: Globals, cfg):
    """The manifest set for a surface; a broken bundled manifest raises
    BundledManifestError (exit 1 at cli/main.py) and each skipped user manifest is
    reported with one line."""
    from tma.runtime import manifests

    mset = manifests.load(g.manifest_dir, cfg.agents)
    manifests.report_skipped(mset, sys.stderr.write)
    return mset
