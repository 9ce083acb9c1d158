"""`tma install-keys [--check|--uninstall] [--mouse] [--no-daemon] [--yes]`.

Writes tma's managed tmux file (tma.install.keys renders it) and the one marked line
in the user's tmux.conf that sources it; shows the diff, asks, writes; then, when a
tmux server is running, asks again and loads the file into it. `--uninstall` takes
both back (the user's file byte for byte) and removes what tma created. See
docs/reference/install-keys.md.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from tma.cli import common, spec


class Aborted(Exception):
    """Ctrl-C or Ctrl-D at a prompt."""


def _ask(question: str, yes: bool, show=None) -> bool:
    """y/N on a terminal; a non-terminal stdin declines; Ctrl-D aborts this command
    (Aborted); Ctrl-C aborts it and any command running it (init, uninstall): the
    KeyboardInterrupt goes on up to cli/main.py, exit 130."""
    if yes:
        return True
    if sys.stdin is None or not sys.stdin.isatty():
        common.err("tma: stdin is not a terminal: pass --yes to apply without asking")
        return False
    while True:
        sys.stdout.write(f"{question} [y/N{'/d=diff' if show else ''}] ")
        sys.stdout.flush()
        try:
            answer = sys.stdin.readline()
        except KeyboardInterrupt:
            sys.stdout.write("\n")
            sys.stdout.flush()
            raise
        if answer == "":
            sys.stdout.write("\n")
            raise Aborted
        if show is not None and answer.strip().lower() == "d":
            show()
            continue
        return answer.strip().lower() in ("y", "yes")


# ---------------------------------------------------------------- context


def _features():
    import importlib.util

    from tma.install.keys import Features

    act = spec.COMMANDS.get("act")
    return Features(
        picker=importlib.util.find_spec("tma.cli.picker") is not None,
        watch="watch" in spec.COMMANDS,
        act_menu=act is not None and any(f.long == "--menu" for f in act.flags),
        daemon="daemon" in spec.COMMANDS)


class Ctx:
    def __init__(self, args, cfg, server) -> None:
        from tma.core.paths import here
        from tma.install import keys, tmux_hooks

        paths = here()
        self.env = {k: v for k, v in os.environ.items() if v}
        self.home = paths.home
        explicit = args.config_dir or paths.get("TMA_CONFIG_DIR")
        self.pinned = bool(explicit)
        self.cdir = paths.config_dir(explicit)
        self.conf = keys.find_conf(args.conf, self.home, self.env)
        self.managed = keys.managed_path(self.cdir)
        self.old_managed = keys.read(self.managed)
        self.old_conf = keys.read(self.conf)
        self.line = keys.source_line(self.cdir, self.home, self.env, self.pinned)
        self.cfg = cfg
        self.server = server  # the running tmux server, or None
        self.tma_bin = tmux_hooks.resolve_tma()
        self.args = args

    def options(self, created: tuple[str, ...], tma: str | None = None):
        from tma.install import keys

        # every binding and the launcher name tma by the absolute path the attention hooks
        # use: a server started later with a PATH that lacks tma's directory (a login
        # without ~/.local/bin) still runs them; a bare `tma` would flash and do nothing
        return keys.Options(tma=tma or self.tma_bin, tma_bin=self.tma_bin,
                            mouse=self.args.mouse, daemon=not self.args.no_daemon,
                            focus_events=self.cfg.focus_events, features=_features(),
                            created=created,
                            user_keys=keys.user_prefix_keys(self.old_conf or ""))

    def rerun(self) -> str:
        flags = [f for f, on in (("--mouse", self.args.mouse),
                                 ("--no-daemon", self.args.no_daemon)) if on]
        return " ".join(["tma install-keys", *flags])


def _server(g, cfg):
    """The running tmux server, or None when none answers."""
    from tma.tmux import attention
    from tma.tmux.adapter import TmuxError

    server = common.server(g, cfg)
    try:
        attention.socket_path(server)
    except TmuxError:
        return None
    return server


# ---------------------------------------------------------------- writing


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _show(changes) -> None:
    from tma.install import common as ic

    colour = ic.use_colour(sys.stdout)
    for ch in changes:
        text = ic.diff(ch, colour)  # bytes of the user's that are not UTF-8 shown as �
        sys.stdout.write(_encode(text).decode("utf-8", "replace"))


def _apply(changes) -> None:
    from tma.install import common as ic

    for ch in changes:
        try:
            if ch.new is None:
                if os.path.lexists(ch.path):
                    os.unlink(ch.path)
            else:
                ic.write_atomic(ch.path, _encode(ch.new))
        except OSError as exc:
            raise ic.InstallError(f"cannot write {ch.path}: {exc.strerror or exc}") from None


def _confirm_and_write(changes, yes: bool, summary: bool = False) -> int | None:
    """Diff (`summary`: one line, the diff on request), ask, write. None when written;
    else the exit status."""
    from tma.install import common as ic

    if summary:
        sys.stdout.write(f"tma: keys: {'' if yes else 'would '}"
                         + "; ".join(ic.summarize(c) for c in changes) + "\n")
    else:
        _show(changes)
    try:
        ok = _ask("Apply this change?", yes, show=(lambda: _show(changes)) if summary else None)
    except Aborted:
        common.err("tma: aborted; no changes written")
        return common.FAIL
    if not ok:
        common.err("tma: declined; would write " + ", ".join(ic.tilde(c.path) for c in changes))
        return common.FAIL
    try:
        _apply(changes)
    except ic.InstallError as exc:
        common.err(f"tma: {exc}")
        return common.FAIL
    return None


# ---------------------------------------------------------------- install


def _install_plan(ctx: Ctx):
    from tma.install import keys
    from tma.install.common import Change

    created = keys.created_paths(ctx.old_managed)
    if ctx.old_managed is None:
        created += keys.missing_dirs(ctx.managed)
    if ctx.old_conf is None:
        created += keys.missing_dirs(ctx.conf)
        if not os.path.islink(ctx.conf):  # a dangling link's target is made, the link kept
            created.append(ctx.conf)
    created = tuple(dict.fromkeys(created))
    new_managed = keys.render(ctx.options(created))
    new_conf = keys.with_line(ctx.old_conf or "", ctx.line)
    changes = []
    if new_managed != ctx.old_managed:
        changes.append(Change(ctx.managed, ctx.old_managed, new_managed))
    if new_conf != ctx.old_conf:
        changes.append(Change(ctx.conf, ctx.old_conf, new_conf))
    return changes


def _load_into(server, ctx: Ctx, yes: bool) -> int:
    """Source the managed file into the running server (asked), then let the hook
    installer drop older copies of the hooks and record them."""
    from tma.install import tmux_hooks
    from tma.install.common import tilde
    from tma.tmux import keyfile
    from tma.tmux.adapter import TmuxError

    try:
        ok = _ask(f"Load it into the running tmux server now (tmux source-file "
                  f"{tilde(ctx.managed)})?", yes)
    except Aborted:
        common.err("tma: aborted; the running tmux server was not changed")
        return common.FAIL
    if not ok:
        sys.stdout.write(f"tma: not loaded; a new tmux server loads it (or run: "
                         f"tmux source-file {tilde(ctx.managed)})\n")
        return 0
    try:
        keyfile.load(server, ctx.managed)
    except TmuxError as exc:
        common.err(f"tma: tmux source-file {ctx.managed}: {exc}")
        return common.FAIL
    problems = tmux_hooks.ensure(server, out=sys.stdout, focus_events=ctx.cfg.focus_events,
                                 config_dir=ctx.cdir, tma_bin=ctx.tma_bin)
    for p in problems:
        common.err(f"tma: {p}")
    sys.stdout.write("tma: loaded into the running tmux server\n")
    return common.FAIL if problems else 0


def _server_has_hooks(server, ctx: Ctx) -> bool:
    from tma.install import tmux_hooks
    from tma.tmux.adapter import TmuxError

    try:
        states = tmux_hooks.inspect(server, focus_events=ctx.cfg.focus_events, cdir=ctx.cdir,
                                    tma_bin=ctx.tma_bin)
    except TmuxError:
        return True  # nothing to offer
    return all(tmux_hooks.problem(s) is None for s in states)


def _install(g, ctx: Ctx) -> int:
    from tma.install.common import tilde

    changes = _install_plan(ctx)
    if changes:
        rc = _confirm_and_write(changes, ctx.args.yes, ctx.args.summary)
        if rc is not None:
            return rc
        sys.stdout.write(f"tma: wrote {tilde(ctx.managed)}; {tilde(ctx.conf)} sources it "
                         f"(one line, marked `# tma keys`)\n")
    else:
        sys.stdout.write("tma: keybindings OK (nothing to change)\n")
    server = ctx.server
    rc = 0
    if server is not None and (changes or not _server_has_hooks(server, ctx)):
        rc = _load_into(server, ctx, ctx.args.yes)
    if ctx.args.reminder:  # `tma init` prints the status-line advice itself, once
        from tma.install import binary

        where = binary.running_tma() or binary.NAME
        sys.stdout.write(f"tma: the status line is yours to wire: add #({where} status) to "
                         "status-right (tma never edits it)\n")
    return rc


# ---------------------------------------------------------------- uninstall


def _uninstall_plan(ctx: Ctx) -> tuple[list, list[str]]:
    from tma.install import keys
    from tma.install.common import Change

    created = keys.created_paths(ctx.old_managed)
    changes = []
    if ctx.old_conf is not None and keys.marked(ctx.old_conf):
        back = keys.without_line(ctx.old_conf)
        gone = ctx.conf in created and back == ""
        changes.append(Change(ctx.conf, ctx.old_conf, None if gone else back))
    if ctx.old_managed is not None:
        changes.append(Change(ctx.managed, ctx.old_managed, None))
    dirs = [p for p in created if p != ctx.conf]
    return changes, dirs


def _remove_dirs(dirs: list[str]) -> None:
    """Folders tma created, deepest first, each only when empty."""
    for d in sorted(dirs, key=len, reverse=True):
        try:
            os.rmdir(d)
        except OSError:
            pass


def _uninstall(g, ctx: Ctx, hooks_follow: bool = False) -> int:
    changes, dirs = _uninstall_plan(ctx)
    if not changes:
        sys.stdout.write("tma: no tma keybindings installed (nothing to remove)\n")
        return 0
    rc = _confirm_and_write(changes, ctx.args.yes)
    if rc is not None:
        return rc
    _remove_dirs(dirs)
    sys.stdout.write("tma: removed the managed key file and its source line\n")
    server = ctx.server
    if server is None:
        return 0
    try:
        ok = _ask("Unbind tma's keys on the running tmux server too?", ctx.args.yes)
    except Aborted:
        common.err("tma: aborted; the running tmux server was not changed")
        return common.FAIL
    if ok:
        from tma.tmux import keyfile

        keyfile.unbind_ours(server, (ctx.old_managed or "").splitlines())
        sys.stdout.write("tma: unbound on the running server"
                         + ("\n" if hooks_follow else "; the attention hooks stay there "
                            "(`tma uninstall` removes them)\n"))
    return 0


# ---------------------------------------------------------------- check


def _check_problems(g, ctx: Ctx) -> list[str]:
    from tma.install import keys, tmux_hooks
    from tma.install.common import tilde
    from tma.tmux.adapter import TmuxError

    if ctx.old_managed is None:
        return [f"the managed file {tilde(ctx.managed)} is missing"]
    out = []
    created = tuple(keys.created_paths(ctx.old_managed))
    # a file from before naming tma bare is drift: a server without tma on PATH fails it
    if keys.render(ctx.options(created)) != ctx.old_managed:
        out.append(f"the managed file {tilde(ctx.managed)} is not what `{ctx.rerun()}` "
                   "writes")
    lines = (ctx.old_conf or "").splitlines()
    at = keys.marked(ctx.old_conf or "")
    if not at:
        out.append(f"{tilde(ctx.conf)} does not source it")
    elif len(at) > 1:
        out.append(f"{tilde(ctx.conf)} sources it {len(at)} times")
    elif lines[at[0]].replace(keys.MARKER_NL, keys.MARKER) != ctx.line:
        out.append(f"{tilde(ctx.conf)} line {at[0] + 1} sources another file: "
                   f"{lines[at[0]].strip()}")
    server = ctx.server
    if server is not None:
        try:
            states = tmux_hooks.inspect(server, focus_events=ctx.cfg.focus_events,
                                        cdir=ctx.cdir, tma_bin=ctx.tma_bin)
        except TmuxError as exc:
            return out + [f"the running tmux server: {exc}"]
        out += [f"the running tmux server: {p} (tmux source-file {tilde(ctx.managed)} "
                "loads it)" for p in map(tmux_hooks.problem, states) if p]
    return out


def _check(g, ctx: Ctx) -> int:
    problems = _check_problems(g, ctx)
    if problems:
        out = ["tma: keybindings incomplete:"] + [f"  - {p}" for p in problems]
        out.append(f"run `{ctx.rerun()}` to repair")
        sys.stderr.write("\n".join(out) + "\n")
        return common.FAIL
    sys.stdout.write("tma: keybindings OK\n")
    return 0


@dataclass
class Request:
    """One install-keys run (what its flags say; `tma init` builds one too)."""

    yes: bool = False
    check: bool = False
    uninstall: bool = False
    mouse: bool = False
    no_daemon: bool = False
    conf: str | None = None
    config_dir: str | None = None
    summary: bool = False  # one line for the change, the diff on request (`tma init`)
    reminder: bool = True  # end with the status-line reminder (init advises on its own)


def run(g, cfg, req: Request) -> int:
    from tma.install.common import InstallError

    try:
        ctx = Ctx(req, cfg, _server(g, cfg))
    except InstallError as exc:
        common.err(f"tma: {exc}")
        return common.FAIL
    if req.check:
        return _check(g, ctx)
    if req.uninstall:
        return _uninstall(g, ctx)
    return _install(g, ctx)


def uninstall_if_installed(g, cfg, *, yes: bool, config_dir: str | None,
                           hooks_follow: bool = False) -> int | None:
    """`tma uninstall`'s keys step: what `install-keys --uninstall` does, and nothing (None)
    when no key file and no source line are there. `hooks_follow`: the caller removes
    the attention hooks next (so nothing is said about them staying)."""
    from tma.install.common import InstallError

    req = Request(yes=yes, uninstall=True, config_dir=config_dir)
    try:
        ctx = Ctx(req, cfg, _server(g, cfg))
    except InstallError as exc:
        common.err(f"tma: {exc}")
        return common.FAIL
    if not _uninstall_plan(ctx)[0]:
        return None
    return _uninstall(g, ctx, hooks_follow=hooks_follow)


def main(argv: list[str]) -> int:
    g, _, args = spec.parse("install-keys", argv)
    if args.check and args.uninstall:
        raise common.UsageError("--check and --uninstall are exclusive")
    req = Request(yes=args.yes, check=args.check, uninstall=args.uninstall, mouse=args.mouse,
                  no_daemon=args.no_daemon, conf=args.conf, config_dir=args.config_dir)
    return run(g, common.load_config(g), req)
