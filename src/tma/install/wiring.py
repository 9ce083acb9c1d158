"""Wiring agents to tma: the orchestration behind `install-hooks`, `uninstall` and `init`.

The commands parse their flags into a `Request` and call the typed functions here;
each agent's edit is its adapter's (tma.install.registry). One run: `prepare` the
context (file paths, the wrapper and how configs name it, the running tma), then
`check`, or `wire` (install or uninstall, agent by agent: the diff, the prompt, the
write), then the tmux attention hooks. Output goes to the streams passed in; the
return values are exit statuses (0, or 1 = FAIL).
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field, replace

from tma.core import bundled, options
from tma.core.paths import here
from tma.install import binary, common, registry, statusline, tmux_hooks as th, tmux_status
from tma.install.binary import running_tma
from tma.install.created import Created
from tma.install.tmux_hooks import UNCHECKED
from tma.install.tmux_status import runs_tma_status
from tma.tmux import attention, setup, setup as tsetup
from tma.tmux.adapter import NoServer, TmuxError

FAIL = 1


@dataclass
class Request:
    """What the command line asked for (every field has the flagless default)."""

    agent: str | None = None
    all: bool = False
    uninstall: bool = False
    check: bool = False
    statusline: str = "keep"  # keep | on | off
    yes: bool = False
    files: dict[str, str | None] = field(default_factory=dict)  # FileOption.key -> path
    config_dir: str | None = None
    wrapper_path: str | None = None
    wrapper_ref: str | None = None  # absolute | bare | None ([install] wrapper_ref)
    summary: bool = False  # one line per agent, the diff on request (`tma init`)

    @classmethod
    def from_args(cls, args, **override) -> Request:
        """From an argparse namespace: the fields it has, the adapters' file flags."""
        values = {k: getattr(args, k) for k in ("agent", "all", "uninstall", "check",
                                                 "statusline", "yes", "config_dir",
                                                 "wrapper_path", "wrapper_ref")
                  if getattr(args, k, None) is not None}
        values["files"] = {f.key: getattr(args, f.dest, None) for f in registry.file_options()}
        values.update(override)
        return cls(**values)


@dataclass
class Setup:
    """The prepared context of one run."""

    ctx: common.Ctx
    bare: bool  # configs name tma-hook by bare name
    config_dir: str
    warnings: list[str]
    created: Created


class Output:
    """Where a run reports: `say` to stdout, `warn` to stderr."""

    def __init__(self, out=None, err=None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()  # before a prompt or a child's output, in order

    def warn(self, text: str) -> None:
        self.err.write(text + "\n")


# ---------------------------------------------------------------- the context


def prepare(req: Request, cfg, env=None) -> Setup:
    """The context every adapter reads. Raises InstallError when no wrapper place is known."""
    paths = here(env)
    tma = running_tma()
    explicit = req.wrapper_path or paths.get("TMA_WRAPPER_PATH")
    if explicit:
        wrapper = paths.expand(explicit)
    elif tma:
        wrapper = os.path.join(os.path.dirname(tma), common.WRAPPER_NAME)
    else:
        raise common.InstallError("cannot find the tma executable to put tma-hook beside it; "
                                  "pass --wrapper-path PATH (or set TMA_WRAPPER_PATH)")
    bare = (req.wrapper_ref or cfg.wrapper_ref) == "bare"
    ref, warnings = _wrapper_ref(wrapper, bare)
    cdir = paths.config_dir(req.config_dir)
    optout, _ = statusline.read_optout(cdir)
    ctx = common.Ctx(wrapper_path=wrapper, ref=ref, tma_bin=tma,
                     paths=registry.resolve_files(paths, req.files),
                     statusline=req.statusline, optout=optout)
    return Setup(ctx, bare, cdir, warnings, Created.load(cdir))


def _wrapper_ref(wrapper: str, bare: bool) -> tuple[str, list[str]]:
    """How the agent configs name the wrapper, and any warning about that name."""
    if bare:
        return common.WRAPPER_NAME, []
    if not wrapper.startswith(common.STORE_PREFIXES):
        return wrapper, []
    alias = common.store_alias(wrapper)
    if alias is not None:
        return alias, []
    return wrapper, [f"tma: {wrapper} is in a package store and nothing on $PATH outside it "
                     "names the same file: the hooks break when that store path is "
                     "garbage-collected"]


def manifest_for_removal(name: str, mset):
    """The agent's manifest; the bundled one when the loaded set lacks it or made it
    hookless (an uninstall must still find and remove what an earlier install wrote)."""
    m = mset.get(name)
    if m is not None and m.hook_capable:
        return m

    try:
        return bundled.load(name)
    except (KeyError, bundled.BundledManifestError):
        return m  # no bundled manifest: the loaded one is all there is


def status(name: str, setup: Setup, manifest) -> common.Status:
    return registry.adapter(name).status(setup.ctx, manifest)


def carries(name: str, setup: Setup, manifest) -> bool:
    """Does this agent's config carry any tma wiring?"""
    if manifest is None or not manifest.hook_capable:
        return False
    return status(name, setup, manifest).kind != common.ABSENT


def wired_agents(setup: Setup, manifest_of) -> list[str]:
    """The agents whose configs carry tma wiring; manifest_of(name) -> manifest or None."""
    return [n for n in registry.AGENTS if carries(n, setup, manifest_of(n))]


def validate_agent(name: str, mset) -> str | None:
    """Why `name` cannot be wired (None: it can)."""
    manifest = mset.get(name)
    if manifest is None:
        return (f'tma: unknown agent "{name}" (expected one of: '
                f"{', '.join(n for n in registry.AGENTS if mset.get(n) is not None)})")
    if not manifest.hook_capable:
        return (f'tma: agent "{name}" declares no [hooks] in its manifest; there is nothing '
                "to wire")
    if name not in registry.AGENTS:
        return (f'tma: no hook installer for agent "{name}" (installers: '
                f"{', '.join(registry.AGENTS)})")
    return None


# ---------------------------------------------------------------- the tmux side


def tmux_hooks_enabled() -> bool:
    """Whether runs touch the tmux attention hooks (tests of the file side turn it off)."""
    return True


def tmux_plan(server, cfg, setup: Setup) -> th.Plan | None:
    """What installing the tmux attention hooks would change on the running server (its
    `set-hook` commands), to show and ask with the files; None when nothing would (or no
    server runs: the install then says so)."""
    if not tmux_hooks_enabled():
        return None
    found = th.plan(server, focus_events=cfg.focus_events, config_dir=setup.config_dir,
                    tma_bin=setup.ctx.tma_bin)
    return found if found is not None and found.ops else None


def tmux_hooks(server, cfg, setup: Setup, io: Output, *, check: bool = False,
               uninstall: bool = False) -> list[str]:
    """Install, remove or (check) verify the tmux attention hooks; their problems."""
    if not tmux_hooks_enabled():
        return []

    try:
        return list(th.ensure(server, check=check, uninstall=uninstall, out=io.out,
                              focus_events=cfg.focus_events, config_dir=setup.config_dir,
                              tma_bin=setup.ctx.tma_bin) or [])
    except TmuxError as exc:
        return [f"tmux: {exc or 'no server reachable'}; tmux hooks not "
                f"{'verified' if check else 'updated'}"]


def sweep(server) -> dict:
    """Unset every option tma writes on the server (panes, rollups, @tma_*); the counts.
    Raises NoServer / TmuxError."""
    session = tuple(o.name for o in options.OPTIONS if o.scope == "session"
                    and o.removal == options.SERVER)
    return tsetup.sweep(server, options.UNINSTALL_PANE_OPTIONS, session)


# ---------------------------------------------------------------- check


def check(req: Request, setup: Setup, mset, server, cfg, io: Output) -> int:
    """`--check`: every wired agent's files, the wrapper, the tmux hooks. 0 when all hold."""
    names = [req.agent] if req.agent else list(registry.AGENTS)
    reasons: list[str] = []
    wired: list[str] = []
    for name in names:
        manifest = mset.get(name)
        if manifest is None or not manifest.hook_capable:
            continue
        st = status(name, setup, manifest)
        if st.kind == common.ABSENT:
            if req.agent:
                reasons.append(f"{name}: hooks not installed")
            continue
        wired.append(name)
        reasons += st.reasons
    if not wired and not reasons:
        io.warn("tma: no agent carries tma wiring, so there is nothing to check; wire one "
                "with `tma install-hooks AGENT` (or `tma init`)")
        return FAIL
    if wired:
        reasons += common.wrapper_problems(setup.ctx, setup.bare)
        reasons += tmux_hooks(server, cfg, setup, io, check=True)

    if reasons == [UNCHECKED]:  # the files hold; only the server side is unknown
        io.warn("tma: agent wiring OK, but the tmux hooks cannot be checked: no tmux server "
                "is running (start tmux first, then run the check again)")
        return FAIL
    if reasons:
        hint = f"tma install-hooks {req.agent}" if req.agent else "tma install-hooks --all"
        io.warn("\n".join(["tma: hook wiring incomplete:"] + [f"  - {r}" for r in reasons]
                          + [f"run `{hint}` to repair"]))
        return FAIL
    io.say("tma: hooks OK")
    return 0


# ---------------------------------------------------------------- one agent


class Pending:
    """Changes shared by every agent of one run, shown with the first agent that applies;
    `tmux`: the attention hooks' changes on the running server (made after the files,
    once they were shown and accepted)."""

    def __init__(self) -> None:
        self.wrapper: common.Change | None = None
        self.state: common.Change | None = None
        self.tmux: th.Plan | None = None


def _changes(name: str, plan: common.Plan, req: Request, pending: Pending,
             setup: Setup) -> tuple[list[tuple[str, common.Change]], list[common.Change]]:
    """(the shared changes this agent carries, its own) for one plan."""
    shared: list[tuple[str, common.Change]] = []
    if pending.wrapper is not None and not req.uninstall:
        shared.append(("wrapper", pending.wrapper))
    if pending.state is not None and registry.adapter(name).STATUSLINE:
        shared.append(("state", pending.state))
    own = list(plan.changes)
    if req.uninstall:
        own = [setup.created.removal(ch) for ch in own]
    return shared, own


def _replanner(name: str, manifest, setup: Setup, req: Request, path: str):
    """Plan one agent's change to one file again, from the file as it is now."""
    def replan() -> common.Change | None:
        plan = registry.adapter(name).plan(setup.ctx, manifest, req.uninstall)
        for ch in plan.changes:
            if ch.path == path:
                return setup.created.removal(ch) if req.uninstall else ch
        return None
    return replan


def _write(name: str, changes: list[common.Change], setup: Setup, io: Output,
           replan=None) -> bool:
    """Apply the changes in order, recording what they create; False on the first failure.
    replan(path): how to plan an agent file's change again when another program changed
    the file since it was read (None for tma's own files)."""
    for ch in changes:
        made = setup.created.missing(ch)
        try:
            common.apply(ch, replan(ch.path) if replan is not None else None)
        except common.InstallError as exc:
            io.warn(f"tma: {name}: {exc}")
            return False
        setup.created.note(made, ch)
    return True


def run_agent(name: str, manifest, setup: Setup, req: Request, pending: Pending,
              io: Output) -> tuple[bool, bool]:
    """Plan, show, ask, write one agent: (succeeded, wrote something)."""
    try:
        plan = registry.adapter(name).plan(setup.ctx, manifest, req.uninstall)
    except common.InstallError as exc:
        io.warn(f"tma: {name}: {exc}")
        return False, False
    for note in plan.notes:
        io.say(f"tma: {note}")
    shared, own = _changes(name, plan, req, pending, setup)
    everything = [c for _, c in shared] + own
    server = None if req.uninstall else pending.tmux  # the server's part, asked with these
    if not everything and server is None:
        io.say(f"tma: {name}: {'nothing to remove' if req.uninstall else 'already wired'}")
        return True, False
    colour = common.use_colour(io.out)

    def show() -> None:
        for ch in everything:
            io.out.write(common.diff(ch, colour, applying=req.yes))
        if server is not None:
            io.out.write("".join((common.paint(x) if colour else x) + "\n"
                                 for x in server.lines()))

    if req.summary:
        io.say(f"tma: {name}: {'' if req.yes else 'would '}"
               + "; ".join([common.summarize(ch) for ch in everything]
                           + ([server.summary()] if server is not None else [])))
    else:
        show()
    if not common.confirm(req.yes, out=io.out, show=show if req.summary else None):
        io.warn("tma: aborted; no changes written")
        return False, False
    own_paths = {c.path for c in own}
    ok = _write(name, everything, setup, io,
                lambda path: _replanner(name, manifest, setup, req, path)
                if path in own_paths else None)
    if not ok:
        return False, True
    for kind, _ in shared:
        setattr(pending, kind, None)
    if server is not None:
        pending.tmux = None  # accepted: `wire` makes it after the files
    if own:
        io.say(f"tma: {name}: {'unwired' if req.uninstall else 'wired'}")
    for caveat in plan.caveats:
        io.say(f"note: {caveat}")
    return True, True


# ---------------------------------------------------------------- a whole run


def targets(req: Request, setup: Setup, mset) -> list[str]:
    """The agents this run edits: the named one, or (--all) every one carrying wiring."""
    if req.agent:
        return [req.agent]
    return wired_agents(setup, mset.get)


def shared_changes(req: Request, setup: Setup, names: list[str],
                   modes: dict[str, str] | None = None) -> Pending:
    """The wrapper and the recorded statusline choices, written with the first agent.
    `modes`: each agent's statusline choice (keep | on | off), req.statusline's when
    not given."""
    pending = Pending()
    if req.uninstall:
        return pending
    pending.wrapper = common.wrapper_change(setup.ctx.wrapper_path)
    modes = modes or {n: req.statusline for n in names}
    chosen = {m: {n for n in names if modes.get(n) == m and registry.adapter(n).STATUSLINE}
              for m in ("on", "off")}
    if chosen["on"] or chosen["off"]:
        optout = (setup.ctx.optout | chosen["off"]) - chosen["on"]
        _, text = statusline.read_optout(setup.config_dir)
        pending.state = statusline.optout_change(setup.config_dir, optout, text)
    return pending


def bare_wrapper_problem(setup: Setup) -> tuple[str | None, bool]:
    """(a message about the bare-named wrapper on $PATH, whether it is fatal)."""
    found = shutil.which(common.WRAPPER_NAME)
    if found is None:
        return (f"tma: {common.WRAPPER_NAME} is wired by bare name but is not on $PATH; add "
                f"{os.path.dirname(setup.ctx.wrapper_path)} to PATH"), True
    if os.path.realpath(found) != os.path.realpath(setup.ctx.wrapper_path):
        return f"tma: warning: {found} shadows {setup.ctx.wrapper_path} on $PATH", False
    return None, False


def wire(req: Request, setup: Setup, mset, server, cfg, io: Output) -> int:
    """install-hooks without --check: wire (or unwire) the targets, then the tmux hooks."""
    names = targets(req, setup, mset)
    if not names:
        io.say("tma: no agent carries tma wiring (name one: tma install-hooks AGENT)")
        return 0
    modes = {n: req.statusline for n in names}
    if not req.uninstall and req.statusline == "keep":
        # the shim takes the agent's own status line: asked apart from the wiring, the
        # same question from install-hooks and init (--statusline / --no-statusline
        # answer it ahead, --yes says yes)
        modes = {n: statusline_choice(mset.get(n), setup, io, yes=req.yes) for n in names}
    pending = shared_changes(req, setup, names, modes)
    if not req.uninstall:
        pending.tmux = tmux_plan(server, cfg, setup)
    failed = wrote = False
    for name in names:
        manifest = manifest_for_removal(name, mset) if req.uninstall else mset.get(name)
        setup.ctx.statusline = modes[name]  # the adapter plans by this agent's answer
        ok, changed = run_agent(name, manifest, setup, req, pending, io)
        failed, wrote = failed or not ok, wrote or changed
    if setup.bare and not req.uninstall and not failed:
        message, fatal = bare_wrapper_problem(setup)
        if message:
            io.warn(message)
        failed = failed or fatal
    problems: list[str] = []
    if req.uninstall:
        if wrote and not wired_agents(setup, lambda n: manifest_for_removal(n, mset)):
            problems = tmux_hooks(server, cfg, setup, io, uninstall=True)
            _quiet_sweep(server)
            setup.created.prune(io)
            io.say("tma: no agent is wired any more; if you added #(tma status) to your tmux "
                   "status line by hand, remove it yourself")
    elif (not failed or wrote) and pending.tmux is None:
        # the server's changes were shown and accepted (or there are none): made now
        problems = tmux_hooks(server, cfg, setup, io)
    setup.created.save()
    for p in problems:
        io.warn(f"tma: {p}")
    return FAIL if failed or problems else 0


def run(req: Request, cfg, mset, server, io: Output) -> int:
    """One install-hooks run for a request whose agent (if any) is valid: --check, or
    wire / unwire. `server`: the tmux server (its hooks)."""
    try:
        setup = prepare(req, cfg)
        for w in setup.warnings:
            io.warn(w)
        if req.check:
            return check(req, setup, mset, server, cfg, io)
        return wire(req, setup, mset, server, cfg, io)
    except common.InstallError as exc:
        io.warn(f"tma: {exc}")
        return FAIL


def _quiet_sweep(server) -> None:
    try:
        sweep(server)
    except TmuxError:
        return


def unwire_all(req: Request, setup: Setup, mset, io: Output) -> list[str]:
    """Every agent's wiring removed (each through its own diff and prompt); the agents
    still wired afterwards (declined or failed)."""
    req.uninstall = True
    pending = Pending()
    for name in registry.AGENTS:
        manifest = manifest_for_removal(name, mset)
        if manifest is not None:
            run_agent(name, manifest, setup, req, pending, io)
    setup.created.save()
    return wired_agents(setup, lambda n: manifest_for_removal(n, mset))


# ---------------------------------------------------------------- init's steps

#: process names that name a runtime, not an agent: never evidence an agent is installed.
GENERIC = frozenset(("node", "bun", "deno", "python", "python3", "ruby", "perl", "sh", "bash",
                     "zsh", "fish", "agent"))

#: what the agents' own status line is called in init's question
STATUS_LINE = {"claude": "Claude Code's status line", "cursor": "Cursor CLI's status line"}


def detect(mset) -> list[tuple[str, str]]:
    """(agent, the executable found) for every loaded agent installed on $PATH: its
    manifest name, or a process name of it that is not a generic runtime's."""
    found = []
    for m in mset.ordered():
        names = [m.name] + [n for n in m.identity.process_names
                            if n not in GENERIC and n != m.name]
        for name in names:
            path = shutil.which(name)
            if path is not None:
                found.append((m.name, path))
                break
    return found


def statusline_choice(manifest, setup: Setup, io: Output, *, yes: bool) -> str:
    """Ask, apart from the agent's wiring, before tma's context shim takes the agent's
    own status line (Claude's footer hint `? for shortcuts` gives way to it; a
    statusLine command of the user's is wrapped). "keep" when nothing is at stake
    (the agent has none, the shim is there already, or it was declined before) or
    nobody can answer (stdin is no terminal: the wiring's own question declines), "on"
    or "off" (recorded: later runs keep to it) by the answer; `yes` says yes."""
    name = manifest.name if manifest is not None else ""
    if not name or not getattr(registry.adapter(name), "STATUSLINE", False):
        return "keep"
    if name in setup.ctx.optout:
        return "keep"  # declined before: kept to
    try:  # asked only where the flagless run would put it in (not into an absent
        # cli-config.json of Cursor's: that stays skipped, with its note)
        plan = registry.adapter(name).plan(replace(setup.ctx, statusline="keep"), manifest,
                                           False)
    except common.InstallError:
        return "keep"  # the wiring step says what is wrong
    marker = f"event --agent {name} --kind context"
    if not any(isinstance(c.new, str) and marker in c.new
               and marker not in (c.old if isinstance(c.old, str) else "")
               for c in plan.changes):
        return "keep"
    if not yes and not (sys.stdin is not None and sys.stdin.isatty()):
        return "keep"  # nobody to ask: the wiring's question declines, nothing is written
    what = STATUS_LINE.get(name, f"{name}'s status line")
    io.say(f"tma: {name}: tma's context gauge reads {what}: the shim takes its place "
           "(the built-in footer hint gives way to a model · context line; a statusLine "
           "command of yours keeps running inside it)")
    return "on" if common.confirm(yes, out=io.out,
                                  question=f"Put the shim into {what}?") else "off"


def status_right_runs_tma(server) -> bool:
    try:
        return runs_tma_status(setup.status_right(server))
    except TmuxError:
        return False


def status_line_advice(server, paths, conf: str | None, io: Output) -> None:
    """Does status-right run `tma status`? Read, never edited: the line to add, where.
    The line appends to the status-right the user has (their clock and theme stay), and
    when status-right-length would cut the segment off, the length that makes room."""
    try:
        value: str | None = setup.status_right(server)
    except TmuxError:
        value = None
    if tmux_status.runs_tma_status(value):
        io.say("tma: init: status-right already runs `tma status`")
        return
    path = common.tilde(tmux_status.tmux_conf(paths, conf))
    if value is None:
        io.say("tma: init: no tmux server to ask whether status-right runs `tma status`; if "
               f"it does not, add this line to {path}:")
    else:
        io.say(f"tma: init: status-right does not run `tma status`; add this line to {path}:")
    # by its absolute path, as the key file and the attention hooks name it: tmux runs
    # the line with its own PATH, which need not hold tma's directory
    command = binary.running_tma() or binary.NAME
    io.say(f"    {tmux_status.append_line(command)}")
    try:
        interval = setup.global_option(server, "status-interval") if value is not None \
            else ""
        room = None
        if value is not None:
            length = setup.global_option(server, "status-right-length")
            room = tmux_status.room_needed(setup.status_right_shown(server),
                                           int(length) if length.isdigit() else 0)
    except TmuxError:
        interval, room = "", None
    if room is not None:
        io.say(f"    set -g status-right-length {room}")
    if not interval.isdigit() or int(interval) > 5:
        # tmux's default redraws every 15 s: counts that lag that long read as wrong
        io.say("    set -g status-interval 2")
    io.say(f"  then reload it: tmux source-file {path}")


# ---------------------------------------------------------------- uninstall's steps


def stop_watches(server, io: Output) -> None:
    """SIGTERM every `tma watch` the panes advertise (@tma_watch_pid) and wait up to 2 s
    for each to leave; only a process whose command line is a tma watch (a running
    watch would stamp every pane again after the sweep)."""
    try:
        pids = attention.watcher_pids(server)
    except (NoServer, TmuxError):
        return
    stopped = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if pid == os.getpid() or b"watch" not in argv or not any(b"tma" in a for a in argv):
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            continue
        stopped.append(pid)
    deadline = time.monotonic() + 2.0
    while stopped and time.monotonic() < deadline and any(alive(p) for p in stopped):
        time.sleep(0.05)
    for pid in stopped:
        io.out.write(f"tma: stopped tma watch (pid {pid})\n")


def alive(pid: int) -> bool:
    """Running (a zombie waiting for tmux to reap it has stopped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except OSError:
        return False


def sweep_all(server, io: Output) -> dict | None:
    """`sweep`, said: the counts; None when it failed ({} when no server runs)."""
    try:
        counts = sweep(server)
    except NoServer:
        io.out.write("tmux: no server running; no pane options to remove\n")
        return {}
    except TmuxError as exc:
        io.warn(f"tma: tmux: {exc}; the pane options were not removed")
        return None
    io.out.write(f"tmux: removed tma's options from {counts['panes']} pane(s), "
                 f"{counts['windows']} window(s), {counts['sessions']} session(s) and "
                 f"{counts['server_options']} server option(s)\n")
    return counts


def forget(setup: Setup, io: Output) -> None:
    """The tma-hook wrapper tma wrote, tma's own files in its config dir (the statusline
    choices, the hooks-state-*.toml records, the record of what it created) and every
    now-empty folder it created."""
    setup.created.remove_wrapper(setup.ctx.wrapper_path, io)
    setup.created.prune(io)
    # the statusline choices, and the record of the tmux hooks of every server (the
    # hooks live in a server's memory: a server not running now has none to remove)
    states = glob.glob(os.path.join(glob.escape(setup.config_dir),
                                    f"{th.STATE_PREFIX}*.toml"))
    for path in [statusline.state_path(setup.config_dir), *states]:
        try:
            os.unlink(path)
        except OSError:
            pass
    setup.created.forget_config_dir(io)
