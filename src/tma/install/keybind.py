"""`tma install-keys` as typed steps: the plan, the diff, the write, the uninstall.

tma.install.keys renders the managed tmux file and edits the one marked line of the
user's tmux.conf as text; this module reads both files (`prepare`, a `Ctx`), plans
the change (`install_plan`, `uninstall_plan`, `check_problems`), shows it, asks,
writes (`confirm_and_write`), and loads or unbinds the keys on a running tmux server.
`run` is one install-keys run for a `Request`; `tma init` and `tma uninstall` call
it (and `uninstall_if_installed`) too. Output goes to an `Output`'s streams; the
return values are exit statuses (0, or 1 = FAIL).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from tma.install import common as ic, keys, tmux_hooks
from tma.install.common import Change, InstallError, tilde
from tma.tmux import attention, keyfile
from tma.tmux.adapter import TmuxError
from tma.tmux.keyfile import MARKER, MARKER_NL

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from tma.core.paths import Paths
    from tma.install.wiring import Output

FAIL = 1


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


class Aborted(Exception):
    """Ctrl-C or Ctrl-D at a prompt."""


def ask(question: str, yes: bool, io: Output, show=None) -> bool:
    """y/N on a terminal (tma.install.common.yes_no: an answer it does not show asks
    again); a non-terminal stdin declines; Ctrl-D aborts this command (Aborted); Ctrl-C
    aborts it and any command running it (init, uninstall): the KeyboardInterrupt goes
    on up to cli/main.py, exit 130."""
    if yes:
        return True
    if sys.stdin is None or not sys.stdin.isatty():
        io.warn("tma: stdin is not a terminal: pass --yes to apply without asking")
        return False
    answer = ic.yes_no(question, io.out, sys.stdin, show)
    if answer is None:
        raise Aborted
    return answer


# ---------------------------------------------------------------- context


def features(commands: Mapping) -> keys.Features:
    """What this tma has to bind, from the command table (tma.cli.spec.COMMANDS: name ->
    a command with its flags). The picker is bare `tma`: every tma has it."""
    act = commands.get("act")
    return keys.Features(picker=True, watch="watch" in commands,
                         act_menu=act is not None and any(f.long == "--menu"
                                                          for f in act.flags),
                         daemon="daemon" in commands)


class Ctx:
    """Both files as they are now, where they are, and what the run was asked for.
    `server`: the running tmux server, or None; `features`: what this tma has to bind
    (the command layer knows which commands exist)."""

    def __init__(self, req: Request, cfg, server, paths: Paths, env: Mapping[str, str],
                 features: keys.Features) -> None:
        self.env = {k: v for k, v in env.items() if v}
        self.home = paths.home
        explicit = req.config_dir or paths.get("TMA_CONFIG_DIR")
        self.pinned = bool(explicit)
        self.cdir = paths.config_dir(explicit)
        self.conf = keys.find_conf(req.conf, self.home, self.env)
        self.managed = keys.managed_path(self.cdir)
        self.old_managed = keys.read(self.managed)
        self.old_conf = keys.read(self.conf)
        self.line = keys.source_line(self.cdir, self.home, self.env, self.pinned)
        self.cfg = cfg
        self.server = server
        self.tma_bin = tmux_hooks.resolve_tma()
        self.req = req
        self.features = features

    def options(self, created: tuple[str, ...], tma: str | None = None) -> keys.Options:
        # every binding and the launcher name tma by the absolute path the attention hooks
        # use: a server started later with a PATH that lacks tma's directory (a login
        # without ~/.local/bin) still runs them; a bare `tma` would flash and do nothing
        return keys.Options(tma=tma or self.tma_bin, tma_bin=self.tma_bin,
                            mouse=self.req.mouse, daemon=not self.req.no_daemon,
                            focus_events=self.cfg.focus_events, features=self.features,
                            created=created,
                            user_keys=keys.user_prefix_keys(self.old_conf or ""))

    def rerun(self) -> str:
        flags = [f for f, on in (("--mouse", self.req.mouse),
                                 ("--no-daemon", self.req.no_daemon)) if on]
        return " ".join(["tma install-keys", *flags])


def live_server(server):
    """The server when one answers, else None."""
    try:
        attention.socket_path(server)
    except TmuxError:
        return None
    return server


# ---------------------------------------------------------------- plans


def install_plan(ctx: Ctx) -> list[Change]:
    """The managed file rendered anew and the source line added: the changes (none when
    both already hold)."""
    created = keys.created_paths(ctx.old_managed)
    if ctx.old_managed is None:
        created += keys.missing_dirs(ctx.managed)
    if ctx.old_conf is None:
        created += keys.missing_dirs(ctx.conf)
        if not os.path.islink(ctx.conf):  # a dangling link's target is made, the link kept
            created.append(ctx.conf)
    created = list(dict.fromkeys(created))
    new_managed = keys.render(ctx.options(tuple(created)))
    new_conf = keys.with_line(ctx.old_conf or "", ctx.line)
    changes = []
    if new_managed != ctx.old_managed:
        changes.append(Change(ctx.managed, ctx.old_managed, new_managed))
    if new_conf != ctx.old_conf:
        changes.append(Change(ctx.conf, ctx.old_conf, new_conf))
    return changes


def uninstall_plan(ctx: Ctx) -> tuple[list[Change], list[str]]:
    """(the changes that take the line and the managed file back, the folders tma
    created: removed afterwards, each when empty). A conf tma created and that holds
    nothing but its line goes."""
    created = keys.created_paths(ctx.old_managed)
    changes = []
    if ctx.old_conf is not None and keys.marked(ctx.old_conf):
        back = keys.without_line(ctx.old_conf)
        gone = ctx.conf in created and back == ""
        changes.append(Change(ctx.conf, ctx.old_conf, None if gone else back))
    if ctx.old_managed is not None:
        changes.append(Change(ctx.managed, ctx.old_managed, None))
    return changes, [p for p in created if p != ctx.conf]


def check_problems(ctx: Ctx) -> list[str]:
    """What `--check` finds wrong (empty: all holds)."""
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
    elif lines[at[0]].replace(MARKER_NL, MARKER) != ctx.line:
        out.append(f"{tilde(ctx.conf)} line {at[0] + 1} sources another file: "
                   f"{lines[at[0]].strip()}")
    if ctx.server is not None:
        try:
            states = tmux_hooks.inspect(ctx.server, focus_events=ctx.cfg.focus_events,
                                        cdir=ctx.cdir, tma_bin=ctx.tma_bin)
        except TmuxError as exc:
            return out + [f"the running tmux server: {exc}"]
        out += [f"the running tmux server: {p} (tmux source-file {tilde(ctx.managed)} "
                "loads it)" for p in map(tmux_hooks.problem, states) if p]
    return out


# ---------------------------------------------------------------- writing


def _encode(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")


def show(changes: list[Change], io: Output) -> None:
    colour = ic.use_colour(io.out)
    for ch in changes:
        text = ic.diff(ch, colour)  # bytes of the user's that are not UTF-8 shown as �
        io.out.write(_encode(text).decode("utf-8", "replace"))


def apply(changes: list[Change]) -> None:
    """Write each change (a None new text deletes the file). InstallError on failure."""
    for ch in changes:
        try:
            if ch.new is None:
                if os.path.lexists(ch.path):
                    os.unlink(ch.path)
            else:
                ic.write_atomic(ch.path, _encode(ch.new))
        except OSError as exc:
            raise InstallError(f"cannot write {ch.path}: {exc.strerror or exc}") from None


def remove_dirs(dirs: list[str]) -> None:
    """Folders tma created, deepest first, each only when empty."""
    for d in sorted(dirs, key=len, reverse=True):
        try:
            os.rmdir(d)
        except OSError:
            pass


def confirm_and_write(changes: list[Change], yes: bool, io: Output,
                      summary: bool = False) -> int | None:
    """Diff (`summary`: one line, the diff on request), ask, write. None when written;
    else the exit status."""
    if summary:
        io.out.write(f"tma: keys: {'' if yes else 'would '}"
                     + "; ".join(ic.summarize(c) for c in changes) + "\n")
    else:
        show(changes, io)
    try:
        ok = ask("Apply this change?", yes, io,
                 show=(lambda: show(changes, io)) if summary else None)
    except Aborted:
        io.warn("tma: aborted; no changes written")
        return FAIL
    if not ok:
        io.warn("tma: declined; would write " + ", ".join(tilde(c.path) for c in changes))
        return FAIL
    try:
        apply(changes)
    except InstallError as exc:
        io.warn(f"tma: {exc}")
        return FAIL
    return None


# ---------------------------------------------------------------- the running server


def load_into(ctx: Ctx, io: Output) -> int:
    """Source the managed file into the running server (asked), then let the hook
    installer drop older copies of the hooks and record them."""
    try:
        ok = ask(f"Load it into the running tmux server now (tmux source-file "
                 f"{tilde(ctx.managed)})?", ctx.req.yes, io)
    except Aborted:
        io.warn("tma: aborted; the running tmux server was not changed")
        return FAIL
    if not ok:
        io.out.write(f"tma: not loaded; a new tmux server loads it (or run: "
                     f"tmux source-file {tilde(ctx.managed)})\n")
        return 0
    try:
        keyfile.load(ctx.server, ctx.managed)
    except TmuxError as exc:
        io.warn(f"tma: tmux source-file {ctx.managed}: {exc}")
        return FAIL
    problems = tmux_hooks.ensure(ctx.server, out=io.out, focus_events=ctx.cfg.focus_events,
                                 config_dir=ctx.cdir, tma_bin=ctx.tma_bin)
    for p in problems:
        io.warn(f"tma: {p}")
    io.out.write("tma: loaded into the running tmux server\n")
    return FAIL if problems else 0


def server_has_hooks(ctx: Ctx) -> bool:
    try:
        states = tmux_hooks.inspect(ctx.server, focus_events=ctx.cfg.focus_events,
                                    cdir=ctx.cdir, tma_bin=ctx.tma_bin)
    except TmuxError:
        return True  # nothing to offer
    return all(tmux_hooks.problem(s) is None for s in states)


# ---------------------------------------------------------------- the runs


def install(ctx: Ctx, io: Output) -> int:
    changes = install_plan(ctx)
    if changes:
        rc = confirm_and_write(changes, ctx.req.yes, io, ctx.req.summary)
        if rc is not None:
            return rc
        io.out.write(f"tma: wrote {tilde(ctx.managed)}; {tilde(ctx.conf)} sources it "
                     f"(one line, marked `# tma keys`)\n")
    else:
        io.out.write("tma: keybindings OK (nothing to change)\n")
    rc = 0
    if ctx.server is not None and (changes or not server_has_hooks(ctx)):
        rc = load_into(ctx, io)
    if ctx.req.reminder:  # `tma init` prints the status-line advice itself, once
        from tma.install import binary

        where = binary.running_tma() or binary.NAME
        io.out.write(f"tma: the status line is yours to wire: add #({where} status) to "
                     "status-right (tma never edits it)\n")
    return rc


def uninstall(ctx: Ctx, io: Output, hooks_follow: bool = False) -> int:
    changes, dirs = uninstall_plan(ctx)
    if not changes:
        io.out.write("tma: no tma keybindings installed (nothing to remove)\n")
        return 0
    rc = confirm_and_write(changes, ctx.req.yes, io)
    if rc is not None:
        return rc
    remove_dirs(dirs)
    io.out.write("tma: removed the managed key file and its source line\n")
    if ctx.server is None:
        return 0
    try:
        ok = ask("Unbind tma's keys on the running tmux server too?", ctx.req.yes, io)
    except Aborted:
        io.warn("tma: aborted; the running tmux server was not changed")
        return FAIL
    if ok:
        from tma.tmux import keyfile

        keyfile.unbind_ours(ctx.server, (ctx.old_managed or "").splitlines())
        io.out.write("tma: unbound on the running server"
                     + ("\n" if hooks_follow else "; the attention hooks stay there "
                        "(`tma uninstall` removes them)\n"))
    return 0


def check(ctx: Ctx, io: Output) -> int:
    problems = check_problems(ctx)
    if problems:
        out = ["tma: keybindings incomplete:"] + [f"  - {p}" for p in problems]
        out.append(f"run `{ctx.rerun()}` to repair")
        io.err.write("\n".join(out) + "\n")
        return FAIL
    io.out.write("tma: keybindings OK\n")
    return 0


def run(req: Request, cfg, server, paths: Paths, env: Mapping[str, str],
        features: keys.Features, io: Output) -> int:
    """One install-keys run: check, uninstall or install. `server`: this run's tmux
    server (asked once whether it runs)."""
    try:
        ctx = Ctx(req, cfg, live_server(server), paths, env, features)
    except InstallError as exc:
        io.warn(f"tma: {exc}")
        return FAIL
    if req.check:
        return check(ctx, io)
    if req.uninstall:
        return uninstall(ctx, io)
    return install(ctx, io)


def uninstall_if_installed(cfg, server, paths: Paths, env: Mapping[str, str], io: Output, *,
                           yes: bool, config_dir: str | None,
                           hooks_follow: bool = False) -> int | None:
    """`tma uninstall`'s keys step: what `install-keys --uninstall` does, and nothing (None)
    when no key file and no source line are there. `hooks_follow`: the caller removes
    the attention hooks next (so nothing is said about them staying)."""
    req = Request(yes=yes, uninstall=True, config_dir=config_dir)
    try:
        ctx = Ctx(req, cfg, live_server(server), paths, env, keys.Features())
    except InstallError as exc:
        io.warn(f"tma: {exc}")
        return FAIL
    if not uninstall_plan(ctx)[0]:
        return None
    return uninstall(ctx, io, hooks_follow=hooks_follow)
