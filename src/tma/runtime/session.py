"""One Session per run: what every surface asks for, built once in cli/main.py.

A command receives the Session and asks it; none builds its own config, server,
manifests or paths. Everything here is lazy and cached: `tma status` under `#()`
builds a Session and touches nothing but `known_socket` (the daemon's segment), so
this module imports only `os` and `sys` at the top and the rest where it is needed.

A test builds one from a `Globals` and an environment of its own (`Session(g, env)`),
or subclasses it to hand a command a fake server or fixed rows.

Where rows come from (`cycle`): one poll cycle on this server. The daemon serves the
status segment (`segment`); the row sources that come later (the daemon's stream,
other hosts) answer here, so no command has to know which one it got.
"""

from __future__ import annotations

import os
import sys

from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from tma.core.paths import Paths
    from tma.runtime.config import Config
    from tma.runtime.cycle import Result, Row
    from tma.runtime.git import GitInfo
    from tma.runtime.manifests import ManifestSet
    from tma.runtime.selectors import Selector
    from tma.runtime.status_memo import Memo
    from tma.tmux.adapter import Server
    from tma.tmux.read import PendingListing

AUTOSTART_BACKOFF_S = 60


def _stderr(text: str) -> None:
    sys.stderr.write(text)  # looked up at each call: a test may swap sys.stderr


class Globals(Record):
    """The global options, wherever they stood on the command line."""

    socket_name: str | None = None
    socket_path: str | None = None
    config: str | None = None
    manifest_dir: str | None = None
    debug_timing: bool = False
    client: str | None = None


class Session:
    """The run's context. `env`: the environment tma resolves its places from (a test's
    dict; the process's by default). `warn`: where one-line complaints go (stderr)."""

    def __init__(self, g: Globals | None = None, env: Mapping[str, str] | None = None,
                 warn: Callable[[str], object] | None = None) -> None:
        self.g = g if g is not None else Globals()
        self.env = os.environ if env is None else env
        self.warn = warn if warn is not None else _stderr
        self._cfg: Config | None = None
        self._server: Server | None = None
        self._manifests: ManifestSet | None = None
        self._paths: Paths | None = None
        self._memo: Memo | None = None  # the status line's last answer, once asked
        self._early: PendingListing | None = None  # the next cycle's read, begun early

    # ------------------------------------------------------------------ places

    @property
    def paths(self) -> Paths:
        if self._paths is None:
            from tma.core.paths import here

            self._paths = here(self.env)
        return self._paths

    def known_socket(self) -> str | None:
        """The server's socket path when it is known without asking tmux: --socket-path,
        TMA_SOCKET_PATH, $TMUX inside tmux, else where tmux puts a --socket-name socket
        (the `default` one when none is named, as a tmux client outside tmux would)."""
        from tma.core.paths import socket_file  # the adapter's own answer (its writes)

        g = self.g
        path = g.socket_path or (None if g.socket_name else self.env.get("TMA_SOCKET_PATH"))
        return socket_file(g.socket_name, path, self.env, os.path.realpath)

    # ------------------------------------------------------------------ config

    @property
    def config(self) -> Config:
        """The config; a file named by --config or TMA_CONFIG, and a --manifest-dir, must
        exist (a typo would otherwise load nothing in silence). ConfigError: exit 1."""
        if self._cfg is None:
            self._cfg = self._load_config()
        return self._cfg

    def _load_config(self) -> Config:
        from tma.runtime.config import ConfigError, load

        g = self.g
        named = g.config or self.env.get("TMA_CONFIG")
        if named and not os.path.exists(named):
            how = "--config" if g.config else "TMA_CONFIG"
            raise ConfigError(f"tma: config {named}: no such file (named by {how})")
        if g.manifest_dir and not os.path.isdir(g.manifest_dir):
            raise ConfigError(f"tma: manifest dir {g.manifest_dir}: no such directory "
                              "(named by --manifest-dir)")
        return load(g.config)

    def reload_config(self) -> str | None:
        """Read the config again (the long-running surfaces, each tick). A broken file
        keeps the last good config; its error is returned (None when it loaded)."""
        from tma.runtime.config import ConfigError, load

        try:
            self._cfg = load(self.g.config)
        except ConfigError as exc:
            return str(exc)
        return None

    def surface_config(self) -> Config:
        """The config for a one-shot surface (ls, status, jump, the picker, watch, wait,
        subscribe; never `event`): under `[daemon] autostart = true` the daemon is
        started first."""
        cfg = self.config
        if cfg.daemon.get("autostart"):
            self.autostart()
        return cfg

    # ------------------------------------------------------------------ tmux

    @property
    def server(self) -> Server:
        """The tmux server the global options name (its binary from the config when one
        is loaded: a command that never read the config uses $TMA_TMUX or `tmux`)."""
        if self._server is None:
            from tma.tmux.adapter import Server, resolve_bin

            cfg = self._cfg
            self._server = Server(resolve_bin(cfg.tmux_bin if cfg is not None else None),
                                  socket_name=self.g.socket_name,
                                  socket_path=self.g.socket_path)
        return self._server

    # ------------------------------------------------------------------ manifests

    @property
    def manifests(self) -> ManifestSet:
        """The manifest set; a broken bundled manifest raises BundledManifestError (exit
        1) and each skipped user manifest is named with one line, once."""
        if self._manifests is None:
            from tma.runtime import manifests

            self._manifests = manifests.load(self.g.manifest_dir, self.config.agents)
            manifests.report_skipped(self._manifests, self.warn)
        return self._manifests

    def report_manifests(self) -> None:
        """Name each broken user manifest (the surfaces that did not need the full set
        still say it)."""
        from tma.runtime import manifests

        manifests.report_skipped(manifests.skipped(self.g.manifest_dir, self.config.agents),
                                 self.warn)

    def agent_names(self) -> list[str]:
        from tma.runtime import manifests

        return sorted(manifests.identity_index(self.g.manifest_dir, self.config.agents))

    # ------------------------------------------------------------------ rows

    def cycle(self, *, produce: bool = True, report: bool = True, lean: bool = False,
              current: bool = True,
              warn: Callable[[str], object] | None | bool = True,
              meanwhile: Callable[[], object] | None = None) -> Result:
        """One poll cycle on this server: its CycleResult (rows, snapshot, stats).
        NoServer, TmuxError and BundledManifestError reach the error boundary (exit 1).
        `report`: name broken user manifests even when the cycle did not need the full
        set. `lean`: rows without telemetry, request lane or pane path (the status
        line's counts). `current`: no verdict older than its screen; only the status
        line, polled by every client at once, passes False. `warn`: the cycle's own
        complaints (True: this session's; None: dropped, and no --debug-timing line).
        `meanwhile`: the caller's work done while tmux runs the cycle's writes
        (Cycle.run's)."""
        from tma.runtime.cycle import Cycle

        sink = self.warn if warn is True else (warn or None)
        cycle = Cycle(self.server, self.config, self.g.manifest_dir, warn=sink, lean=lean)
        # one manifest set per run: a second load validates every manifest and compiles
        # its regexes again (ls --json reads the blocked panes' dialogs after its cycle)
        if self._manifests is not None:
            cycle.use_manifests(self._manifests)
        early, self._early = self._early, None
        result = cycle.run(produce=produce, current=current, early=early,
                           meanwhile=meanwhile)
        if self._manifests is None and result.manifests is not None:
            from tma.runtime import manifests

            self._manifests = result.manifests
            manifests.report_skipped(self._manifests, self.warn)  # as `manifests` would
        if report:
            self.report_manifests()
        if self.g.debug_timing and sink is not None:  # a quiet surface owns the terminal
            self.warn(result.stats.line() + "\n")
        return result

    def begin_cycle_read(self) -> None:
        """Begin the pane read of the next `cycle()` (a producing one), so tmux answers
        while the command's modules load. On any doubt (the config, the binary) nothing
        is begun: the cycle reads, and raises, as it would have."""
        import time

        try:
            self.config  # noqa: B018 - [tmux] bin names the binary the server runs
            from tma.tmux import read

            self._early = read.begin_listing(self.server, time.time_ns() // 1_000_000)
        except Exception:
            self._early = None

    @staticmethod
    def select(rows: Iterable[Row], sel: Selector | None,
               git: GitInfo | None = None) -> list[Row]:
        """The rows a selector keeps (all of them for an empty one)."""
        if sel is None or sel.empty:
            return list(rows)
        return [r for r in rows if sel.matches(r, git)]

    def segment(self) -> str | None:
        """The status segment with no tmux spawn and no cycle: the one a running daemon
        keeps (tma.daemon.segment), asked over its socket, else the last status run's
        while it stands (tma.runtime.status_memo); None on any doubt."""
        socket_path = self.known_socket()
        if not socket_path:
            return None
        from tma.runtime import handoff

        args = {k: v for k, v in (("config", self.g.config),
                                  ("manifest-dir", self.g.manifest_dir)) if v}
        shown = handoff.ask_segment(args, socket_path)
        if shown is None:
            # no daemon: the last status run's answer, while all it rests on stands
            from tma.runtime.status_memo import Memo

            self._memo = Memo(self.paths, socket_path, self.g.config, self.g.manifest_dir)
            shown = self._memo.answer()
            if shown is not None and self.g.debug_timing:
                self.warn("tma: status: the last answer stands (no tmux spawn)\n")
        return shown

    def keep_segment(self, result: Result, segment: str) -> None:
        """Keep the segment this status run printed for the next one (tma.runtime.
        status_memo), when `segment()` found none standing."""
        if self._memo is not None:
            self._memo.keep(result, segment, self.config)

    def daemon_fleet(self) -> dict[str, Any] | None:
        """The fleet document of this server's running daemon (its hosts' states and
        rows, kept by one long-lived link per host): no SSH, no tmux spawn. None when no
        daemon answers."""
        socket_path = self.known_socket()
        if not socket_path:
            return None
        from tma.runtime import daemon_files

        files = daemon_files.Files(socket_path, self.paths.runtime_dir)
        if not daemon_files.held(files.lock):
            return None
        return daemon_files.read_fleet(files.sock, timeout=2.0)

    # ------------------------------------------------------------------ the daemon

    def daemon_argv(self) -> list[str]:
        """The foreground daemon's command line, with the same server, config, manifests."""
        argv = [sys.executable, "-m", "tma"]
        g = self.g
        for flag, value in (("--socket-name", g.socket_name), ("--socket-path", g.socket_path),
                            ("--config", g.config), ("--manifest-dir", g.manifest_dir)):
            if value:
                argv += [flag, value]
        return argv + ["daemon"]

    def ensure_daemon(self) -> int:
        """`tma daemon --ensure`: start one unless this tma's daemon serves this server."""
        from tma.runtime import daemon_control

        return daemon_control.ensure(self.server, self.daemon_argv())

    def stop_daemon(self) -> int:
        from tma.runtime import daemon_control

        return daemon_control.stop(self.server)

    def restart_daemon(self) -> int:
        from tma.runtime import daemon_control

        return daemon_control.restart(self.server, self.daemon_argv())

    def reload_daemon(self) -> int:
        from tma.runtime import daemon_control

        return daemon_control.reload(self.server)

    def daemon_running(self) -> str | None:
        """This server's daemon, described, when one runs or is starting."""
        from tma.runtime import daemon_control

        return daemon_control.running(self.server)

    def autostart(self) -> None:
        """`ensure_daemon`, result ignored. Cheap when a daemon runs: its lock is probed
        where the socket path is known without a spawn; only a free (or unknown) lock
        costs the full ensure. A start that failed is not retried for
        AUTOSTART_BACKOFF_S (a status line runs this every few seconds), and says
        nothing: the surface's answer is what counts."""
        from tma.runtime import daemon_files, rundir

        known = self.known_socket()
        files = daemon_files.Files(known) if known else None
        if files is not None and daemon_files.held(files.lock) \
                and daemon_files.is_current(*daemon_files.read_identity(files.lock)[1:]):
            return  # this tma's daemon runs; another tma's is replaced by the ensure below
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

        try:
            with contextlib.redirect_stderr(io.StringIO()):
                rc = self.ensure_daemon()
        except Exception:  # noqa: BLE001 - autostart must never cost the surface its answer
            rc = 1
        if rc != 0 and failed is not None:
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
