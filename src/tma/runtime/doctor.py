"""`tma doctor`: gather every fact it reports into one dict (the `--json` document).

Read-only. One list-panes read that stamps nothing (not a poll cycle: no
@tma_last_poll, no capture, no write), one process-table read for identity, the
config and manifest loads, the hook installers' own checks (agent config files, the
tma-hook wrapper, the tmux attention hooks) and the notify failure record. The one
write it may cause is the `set-option -F` probe, and only when no earlier cycle
cached the answer in @tma_setpf_ok.

The document is built section by section (`SECTIONS`, each `fn(ctx) -> {key: value}`);
what counts toward `doctor --exit-code` is decided from the finished document alone
(`judge`: `warning_items`, the `verdict` key), so a later tier (the daemon, the
actions) extends doctor by adding a section function, its keys in the schema, its
lines in `warning_items` and in the renderer (tma.ui.doctor, which renders the
verdicts and judges nothing).
"""

from __future__ import annotations

import os
import shutil

from tma.core import codec, identity, manifest, states
from tma.core.errors import FAIL, OK
from tma.core.paths import here
from tma.install import binary, common as ic, registry, tmux_hooks, tmux_status, wiring
from tma.runtime import daemon_files, manifests
from tma.runtime.act import opencode_api
from tma.runtime.config import Config, ConfigError, resolve_path
from tma.runtime.cycle import Cycle
from tma.runtime.notify import (
    backends as notify_backends,
    dispatch as notify_dispatch,
    gate as notify_gate,
    log as notify_log,
)
from tma.runtime.transcript import locate, read as transcript, stores
from tma.tmux import read, releases, setup
from tma.tmux.adapter import TmuxError

SCHEMA = 1
COMM_MAX = manifest.COMM_WIDTH

#: The tmux below which `set-option -F` stores its format literally (guarded writes fail).
MIN_TMUX = (3, 2)

HOOK_WIRED = "wired"
HOOK_INCOMPLETE = "incomplete"
HOOK_NOT_INSTALLED = "not_installed"
HOOK_HOOKLESS = "hookless"
HOOK_NO_ADAPTER = "no_adapter"
#: hook_status values of an installable agent that is not (fully) wired: below tier 2.
BELOW_TIER = (HOOK_INCOMPLETE, HOOK_NOT_INSTALLED)
#: Agent wiring that makes the tmux hooks and the wrapper matter (and count).
CARRIES_WIRING = (HOOK_WIRED, HOOK_INCOMPLETE)

#: The agent whose permission prompts are answered over its server API ([api.<agent>]).
API_AGENT = "opencode"
#: Does `tma act` send that agent's approve/deny over the API lane (tma.runtime.act.opencode_api)?
#: Yes: the bundled approve/deny/question_reject/question_reply carry an [api].opencode arm.
ACT_USES_API = True
#: doctor's probe of that API: one short GET per distinct endpoint.
#: A busy OpenCode (starting, or on a loaded machine) has answered it after more than 2 s,
#: and `tma act` waits far longer (an action's timeout_ms, 30 s by default): a shorter
#: probe would call a slow server one act cannot reply over.
API_PROBE_TIMEOUT_S = 5.0

FOREIGN_WRITER = "another tool may be writing @agent_* options on this pane"


class Context:
    """What the sections share: the server, config, the one snapshot, the clock."""

    def __init__(self, server, cfg, manifest_dir: str | None, now: int, snapshot,
                 cycle, env=None) -> None:
        self.env = os.environ if env is None else env  # where the agents' stores are
        self.server = server
        self.cfg = cfg
        self.manifest_dir = manifest_dir
        self.now = now
        self.snapshot = snapshot
        self.cycle = cycle  # tma.runtime.cycle.Cycle: manifests, process table, identify
        self._panes: list[dict] | None = None
        self._installers: Installers | None = None
        self._daemon: dict | None = None

    @property
    def daemon(self) -> dict | None:
        """The daemon of this server (tma.runtime.daemon_files.describe), read once."""
        if self._daemon is None and self.snapshot.socket_path:
            from tma.runtime import daemon_files

            self._daemon = daemon_files.describe(self.snapshot.socket_path, self.now)
        return self._daemon

    @property
    def installers(self) -> Installers:
        if self._installers is None:
            self._installers = Installers(self.cfg, self.mset)
        return self._installers

    @property
    def mset(self):
        return self.cycle.manifests()

    @property
    def table(self):
        return self.cycle.table()

    def panes(self) -> list[dict]:
        """Every pane classified once: stamp, decode problem, identification."""
        if self._panes is None:
            self._panes = [self._classify(p) for p in self.snapshot.panes]
        return self._panes

    def _classify(self, pane) -> dict:
        opts = pane.options
        info = {"pane": pane, "ignored": opts.get("@agent_ignore", ""), "stamp": None,
                "problem": None, "ident": None}
        if info["ignored"]:
            return info
        stamp, problem = stamp_problem(opts)
        info["stamp"], info["problem"] = stamp, problem
        info["ident"] = self.cycle.identify(pane, stamp)
        return info


# ---------------------------------------------------------------- helpers


def stamp_problem(opts: dict) -> tuple[codec.Stamp | None, str | None]:
    """The decoded stamp and what is wrong with it (None = nothing)."""
    try:
        stamp = codec.decode(opts)
    except codec.DecodeError as exc:
        return None, (f"{exc.option}={exc.value!r} cannot be decoded ({exc.reason}): the pane "
                      f"reads as never stamped; {FOREIGN_WRITER}")
    if stamp is not None and not opts.get("@agent_stamped_at"):
        return stamp, (f"@agent_state={opts.get('@agent_state')!r} is set with no "
                       f"@agent_stamped_at, which no tma write produces; {FOREIGN_WRITER}")
    return stamp, None


def tmux_too_old(version: str) -> bool:
    """A tmux before 3.2: `set-option -F` stores its format literally. (A version text
    that names no release says nothing; the -F probe still does.)"""
    key = releases.parse(version)
    return key is not None and key[:2] < MIN_TMUX


def process_started_at(pid: int, proc: str = "/proc") -> float | None:
    """A process's start (epoch seconds) from /proc: its starttime ticks after boot."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        with open(f"{proc}/stat", "rb") as fh:
            btime = next(int(line.split()[1]) for line in fh if line.startswith(b"btime "))
        return btime + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, StopIteration):
        return None


#: Seconds of slack between a process start and a file mtime (btime is whole seconds).
RESTART_SLACK = 1.5


def hooks_pending_restart(started_at: float | None, wired_at: float | None) -> bool | None:
    """Was the agent already running when its wiring was written? (None: unknown.)"""
    if started_at is None or wired_at is None:
        return None
    return started_at + RESTART_SLACK < wired_at


def below_expected_tier(agents: list[dict]) -> int:
    """Panes below the tier their manifest supports (the second `--exit-code` gate).

    An agent tma has a hook installer for is expected at tier 2, so its pane counts
    when the agent is not wired or only partly (`hook_status` incomplete or
    not_installed). Hookless and installer-less agents expect tier 1 and never count;
    neither does a missing daemon (tier 3 is not expected of anything yet).
    """
    return sum(1 for a in agents if a["hook_status"] in BELOW_TIER)


class Installers:
    """The hook installers' own view of the wiring, computed once per doctor run.

    Everything is read through the installers' public check code (each adapter's
    `status()` through tma.install.wiring, tma.install.common.wrapper_problems,
    tma.install.tmux_hooks.inspect) with the context `tma install-hooks` prepares
    without flags (`wiring.prepare(Request())`), so doctor and `tma install-hooks
    --check` never disagree.
    """

    def __init__(self, cfg, mset) -> None:
        self.agents: tuple[str, ...] = registry.AGENTS
        self.config_dir: str = here().config_dir()
        self.error: str | None = None
        self.setup = None
        self.ctx = None
        self.bare = (cfg.wrapper_ref == "bare")
        try:
            self.setup = wiring.prepare(wiring.Request(), cfg)
            self.ctx, self.bare = self.setup.ctx, self.setup.bare
        except ic.InstallError as exc:
            self.error = str(exc)
        self.status: dict[str, tuple[str, list[str]]] = {}
        for name in self.agents:
            m = mset.get(name)
            if m is None:
                continue  # not loaded (disabled, or a closed --manifest-dir)
            self.status[name] = self._status(name, m)

    def _status(self, name: str, m) -> tuple[str, list[str]]:
        if not m.hook_capable:
            return HOOK_HOOKLESS, []
        if self.setup is None:
            return HOOK_NOT_INSTALLED, [f"{name}: {self.error}"]
        try:
            st = wiring.status(name, self.setup, m)
        except ic.InstallError as exc:
            return HOOK_INCOMPLETE, [f"{name}: {exc}"]
        if st.kind == ic.WIRED:
            return HOOK_WIRED, []
        if st.kind == ic.INCOMPLETE:
            return HOOK_INCOMPLETE, list(st.reasons)
        return HOOK_NOT_INSTALLED, []  # its reasons only list every event as not wired

    def wired_at(self, agent: str) -> float | None:
        """When the agent's wiring files last changed (their newest mtime, epoch s)."""
        if self.ctx is None or agent not in self.agents:
            return None
        times = []
        for f in registry.adapter(agent).FILES:
            try:
                times.append(os.stat(self.ctx.paths[f.key]).st_mtime)
            except (OSError, KeyError):
                continue
        return max(times) if times else None

    def of(self, agent: str, m) -> tuple[str, list[str]]:
        """(hook_status, reasons) of one agent."""
        if agent in self.status:
            return self.status[agent]
        if m is not None and not m.hook_capable:
            return HOOK_HOOKLESS, []
        return HOOK_NO_ADAPTER, []



# ---------------------------------------------------------------- sections


def section_tmux(ctx: Context) -> dict:
    snap = ctx.snapshot
    raw = snap.setpf_ok
    if raw in ("0", "1"):
        setpf: bool | None = raw == "1"
    else:
        from tma.runtime.cycle import probe

        setpf = probe(ctx.server)  # caches its answer in @tma_setpf_ok
    return {"tmux": tmux_facts(snap.version, setpf)}


def tmux_facts(version: str | None, setpf: bool | None) -> dict:
    """The tmux section: the version, where it stands against the tested releases, and
    whether it is too old for guarded writes (decided here, so text and JSON agree)."""
    return {"version": version or None, "setpf_ok": setpf,
            "standing": releases.standing(version or "").standing,
            "tested": list(releases.TESTED), "range": releases.RANGE,
            "oldest": releases.OLDEST, "newest": releases.NEWEST,
            "too_old": tmux_too_old(version or "")}


def section_ambient(ctx: Context) -> dict:
    """Does the server's status-right run `tma status` (a hand-run tma is not polling),
    and does the program it names run with tmux's PATH?"""
    last = ctx.snapshot.last_poll
    age = max(0, ctx.now - codec.to_ms(last)) if last else None
    try:
        value: str | None = setup.status_right(ctx.server)
    except TmuxError:
        value = None
    runs = tmux_status.runs_tma_status(value)
    command = status_command(ctx.server, tmux_status.status_program(value)) if runs else None
    fix = None
    if not runs:  # the status-right entry to add, naming this tma by its absolute path
        from tma.install import binary

        fix = f"#({binary.running_tma() or binary.NAME} status)"
    return {"ambient_driver": {"polling": runs, "last_poll_age_ms": age,
                               "status_right": value, "status_command": command,
                               "fix": fix, "daemon_segment": daemon_segment(ctx, value)}}


def daemon_segment(ctx: Context, status_right: str | None) -> dict:
    """The daemon form of the status line: does status-right read the daemon's segment,
    and is the segment live now (its deadline ahead of the clock: the status line shows
    it and runs no `tma status`)?"""
    reads = tmux_status.reads_daemon_segment(status_right)
    try:
        raw = setup.server_option(ctx.server, tmux_status.SEGMENT_UNTIL).strip()
    except TmuxError:
        raw = ""
    until = int(raw) * 1000 if raw.isdigit() else None
    return {"reads": reads, "live": until is not None and until > ctx.now,
            "until_ms": until}


def status_command(server, program: str | None) -> dict:
    """The tma status-right names: does it resolve on tmux's PATH, and does it run?"""
    try:
        path = setup.global_path(server)
    except TmuxError:
        path = None
    path = path if path is not None else os.environ.get("PATH", os.defpath)
    out = {"program": program, "path": path, "resolved": None, "runs": False, "problem": None,
           "fix": None}
    resolved = binary.resolves(program, path) if program else None
    out["resolved"] = resolved
    if not program:
        out["problem"] = "status-right names no program before `status`"
    elif resolved is None:
        out["problem"] = f"{program} is not found on the PATH tmux runs status-right with"
    else:
        env = dict(os.environ, PATH=path)
        ok, reason = notify_backends.run_command([resolved, "version"], b"", env, timeout=5.0)
        out["runs"] = ok
        if not ok:
            out["problem"] = f"{resolved} version: {reason}"
    if not out["runs"]:  # the line that names tma as tmux can run it
        out["fix"] = tmux_status.status_line(binary.tma_command(path))
    return out


def section_clients(ctx: Context) -> dict:
    # control-mode clients (the daemon's, an editor's -CC) draw no status line
    return {"clients": {"attached": sum(not c.control_mode for c in ctx.snapshot.clients)}}


def section_manifests(ctx: Context) -> dict:
    mset = ctx.mset
    issues = [{"file": path, "problem": err} for path, err in mset.skipped]
    names = []
    for m in mset.ordered():
        for name in manifest.long_process_names(m):
            names.append({"agent": m.name, "name": name, "comm_max": COMM_MAX})
    return {"manifests": {"ok": not issues, "loaded": len(mset.manifests), "issues": issues},
            "process_name_issues": names}


def section_process_walk(ctx: Context) -> dict:
    if ctx.table is None:
        error = "neither /proc nor `ps` gave a process table"
        return {"process_walk": {"ok": False, "error": error}}
    return {"process_walk": {"ok": True, "error": None}}


def section_notify(ctx: Context) -> dict:
    # this server's record only: the user's other tmux servers share the runtime dir
    failure = notify_log.last_failure(ctx.snapshot.socket_path or "")
    age = max(0, ctx.now - failure["at"]) if failure is not None and failure["at"] else None
    return {"notify": {"last_failure": failure, "last_failure_age_ms": age,
                       "push_problems": notify_gate.push_problems(ctx.cfg),
                       **live_sinks(ctx)}}


OFF = {"kind": "off", "what": "not enabled in [notify]", "rings": []}


def live_sinks(ctx: Context) -> dict:
    """Who rings (the daemon, the hook path or nobody) and, for each trigger there, what
    sink (5) does ({"kind": command|desktop|none|off, "what": ...}) and every sink that
    rings (`rings`: tma.runtime.notify.dispatch.reaches, what notify-test names)."""
    cfg = ctx.cfg
    files = daemon_files.Files(ctx.snapshot.socket_path) if ctx.snapshot.socket_path else None
    daemon = files is not None and daemon_files.held(files.lock)
    by = "daemon" if daemon else ("hook" if notify_gate.from_event(cfg) else None)
    # the running daemon says what it reaches (its environment, its config)
    told = (daemon_files.read_status(files.sock) or {}).get("notify") if daemon else None
    told = told.get("sink") if isinstance(told, dict) else None
    sinks: dict[str, dict] = {}
    for trigger in notify_gate.TRIGGERS:
        if isinstance(told, dict):
            entry = told.get(trigger)
            if not isinstance(entry, dict):
                sinks[trigger] = dict(OFF)
                continue
            if not isinstance(entry.get("rings"), list):  # a daemon of an older tma
                sink5 = (str(entry.get("kind")), str(entry.get("what")))
                entry = dict(entry, rings=notify_dispatch.reaches(cfg, trigger, sink5=sink5))
            sinks[trigger] = entry
        elif not notify_gate.enabled(cfg, trigger):
            sinks[trigger] = dict(OFF)
        else:
            kind, what = notify_backends.sink(cfg, trigger, daemon=by == "daemon")
            sinks[trigger] = {"kind": kind, "what": what,
                              "rings": notify_dispatch.reaches(cfg, trigger,
                                                               sink5=(kind, what))}
    return {"dispatcher": by, "message_line": notify_gate.message_on(cfg), "sink": sinks}


def section_config(ctx: Context) -> dict:
    """The config file: loaded, or why not (the rest of the report then runs on the
    defaults); and whether it changed after the running daemon loaded it."""
    path = here().config_file(getattr(ctx.cfg, "path", None))
    try:
        mtime: int | None = os.stat(path).st_mtime_ns // 1_000_000
    except OSError:
        mtime = None
    daemon = ctx.daemon or {}
    loaded = daemon.get("config_loaded_at") if daemon.get("running") else None
    stale = isinstance(loaded, int) and mtime is not None and mtime > loaded
    return {"config": {"path": path, "error": getattr(ctx.cfg, "load_error", None),
                       "changed_at": mtime, "daemon_loaded_at": loaded,
                       "daemon_stale": stale}}


def section_daemon(ctx: Context) -> dict:
    """The daemon tier for this server: running or not, and what a dead one left."""
    return {"daemon": ctx.daemon}


def section_wiring(ctx: Context) -> dict:
    """Per agent with an installer: wired / incomplete (reasons) / not_installed / hookless."""
    inst = ctx.installers
    return {"hook_wiring": [{"agent": name, "status": kind, "reasons": reasons}
                            for name, (kind, reasons) in inst.status.items()]}


def section_tmux_hooks(ctx: Context) -> dict:
    """Each tmux attention hook tma manages here (absent ones it does not install: left out)."""
    inst = ctx.installers
    try:
        states = tmux_hooks.inspect(ctx.server, focus_events=ctx.cfg.focus_events,
                                    cdir=inst.config_dir,
                                    tma_bin=inst.ctx.tma_bin if inst.ctx is not None else None)
    except TmuxError as exc:
        return {"tmux_hooks": [], "tmux_hooks_error": str(exc) or "tmux failed",
                "tmux_hooks_persistence": None}
    out = []
    for st in states:
        if st.state == tmux_hooks.ABSENT:
            continue
        out.append({"hook": st.hook, "present": st.state == tmux_hooks.PRESENT,
                    "hook_state": st.state, "problem": tmux_hooks.problem(st)})
    # where they live: install-keys' managed file (every new server) or this server only
    return {"tmux_hooks": out, "tmux_hooks_error": None,
            "tmux_hooks_persistence": tmux_hooks.persistence(states, inst.config_dir)}


def section_wrapper(ctx: Context) -> dict:
    """The tma-hook the agent configs name: does it resolve to an executable file?"""
    inst = ctx.installers
    if inst.ctx is None:
        return {"wrapper": {"path": None, "reference": None, "present": False,
                            "exists": False, "bare": inst.bare, "problem": inst.error}}
    ref = inst.ctx.ref
    if inst.bare:
        path = shutil.which(ic.WRAPPER_NAME)
        present = path is not None
    else:
        path = ref
        present = os.path.isfile(ref) and os.access(ref, os.X_OK)
    problems = ic.wrapper_problems(inst.ctx, inst.bare)
    problem = problems[0].removeprefix("wrapper: ") if problems else None
    exists = path is not None and os.path.lexists(path)
    return {"wrapper": {"path": path, "reference": ref, "present": present, "exists": exists,
                        "bare": inst.bare, "problem": problem}}


def section_panes(ctx: Context) -> dict:
    known = set(ctx.mset.manifests)
    stamp_issues, foreign, ignored, nested, remote, agents = [], [], [], [], [], []
    for info in ctx.panes():
        pane = info["pane"]
        base = {"pane": pane.pane_id, "locator": pane.locator}
        if info["ignored"]:
            ignored.append(dict(base, value=info["ignored"]))
            continue
        stamp, ident = info["stamp"], info["ident"]
        if info["problem"] is not None:
            stamp_issues.append(dict(base, problem=info["problem"]))
        kind = ident.out_of_scope or ident.registered_behind
        if kind is not None:
            command = ident.out_of_scope_command or identity.normalize_comm(pane.current_command)
            if kind == identity.KIND_NESTED:
                nested.append(dict(base, command=command))
            else:
                remote.append(dict(base, command=command, stamped=stamp is not None))
        if ident.agent is not None:
            agents.append(_agent(ctx, pane, stamp, ident))
        elif stamp is not None and stamp.name not in known:
            foreign.append(dict(base, agent=stamp.name))
    return {"stamp_issues": stamp_issues, "foreign_panes": foreign, "ignored_panes": ignored,
            "nested_multiplexers": nested, "remote_panes": remote, "agents": agents}


def _agent(ctx: Context, pane, stamp, ident) -> dict:
    agent = ident.agent
    m = ctx.mset.get(agent)
    hook_status, reasons = ctx.installers.of(agent, m)
    covered, uncovered = daemon_covers(ctx.daemon, pane.session_id)
    pending = None
    if hook_status in CARRIES_WIRING and ident.pid:
        pending = hooks_pending_restart(process_started_at(ident.pid),
                                        ctx.installers.wired_at(agent))
    if hook_status == HOOK_WIRED and pending:
        tier, reason = 1, (f"its hooks were installed after this {agent} started (pid "
                           f"{ident.pid}): they take effect at its next start")
    elif hook_status == HOOK_WIRED and covered:
        tier, reason = 3, None
    elif hook_status == HOOK_WIRED:
        tier, reason = 2, uncovered
    elif hook_status == HOOK_INCOMPLETE:
        tier = 1
        reason = (f"hook wiring incomplete: {'; '.join(reasons) or 'see tma install-hooks --check'}"
                  f"; run tma install-hooks {agent}")
    elif hook_status == HOOK_NOT_INSTALLED:
        tier, reason = 1, f"hooks not installed: run tma install-hooks {agent}"
    elif hook_status == HOOK_HOOKLESS:
        tier, reason = 1, "hookless agent (its manifest maps no hook events): screen reads only"
    else:
        tier, reason = 1, f"no hook installer for {agent}: screen reads only"
        if stamp is not None and stamp.source == states.SOURCE_HOOK:
            reason = f"no hook installer for {agent} (its hook claims arrive: wired by hand)"
    if tier == 1 and covered:
        reason += "; the daemon reads its screen on quiet edges"
    opts = pane.options
    evidence_age = None
    if stamp is not None and stamp.evidence_at:
        evidence_age = max(0, ctx.now - stamp.evidence_at)
    model = opts.get("@agent_model") or None
    api = api_lane(opts, ctx.cfg, ctx.__dict__.setdefault("_api_probes", {})) \
        if agent == API_AGENT else None
    return {
        "pane": pane.pane_id,
        "agent": agent,
        "locator": pane.locator,
        "state": stamp.state if stamp is not None else None,
        "source": stamp.source if stamp is not None else None,
        "evidence_age_ms": evidence_age,
        "hook_status": hook_status,
        "hooks_wired": hook_status == HOOK_WIRED,
        "hooks_pending_restart": pending,
        "model": model,
        "window_covered": None if model is None else model in ctx.cfg.telemetry_windows,
        "endpoint_ok": None if api is None else api["answers"],
        "api": api,
        "act_uses_api": None if api is None else ACT_USES_API,
        "permission_request": opts.get("@agent_permission_request") or None,
        # The pane registered by hook (@agent_session) but its state is screen-read.
        "hook_demoted": bool(stamp is not None and stamp.session
                             and stamp.source == states.SOURCE_CAPTURE),
        "tier": tier,
        "tier_reason": reason,
        "transcript": transcript_facts(ctx, pane, stamp, agent),
    }


def transcript_facts(ctx: Context, pane, stamp, agent: str) -> dict:
    """Which transcript tma reads for the pane (the file, how it was found, or why none),
    and how many records of its newest page the agent's reader did not know (a format
    that drifted)."""
    opts = pane.options
    t = locate.Target(pane.pane_id, agent,
                      (stamp.session if stamp is not None else "") or opts.get("@agent_session", ""),
                      pane.current_path, opts.get("@agent_transcript", ""))
    out: dict = {"path": None, "how": None, "store": None, "unknown": None, "events": None,
                 "why": None}
    try:
        loc = transcript.path_of(t, ctx.env)
        out["store"] = getattr(loc.store, "__name__", None) if loc.store is not None else None
        if loc.path is None:
            out["why"] = loc.why
            return out
        out["path"], out["how"] = loc.path, loc.how
        window = transcript.window(t, ctx.env)
    except stores.TranscriptError as exc:
        out["why"] = str(exc)
        return out
    out["unknown"], out["events"] = window.unknown, len(window.events)
    return out


def daemon_covers(daemon: dict | None, session_id: str) -> tuple[bool, str]:
    """Tier 3 needs a daemon watching the pane's session: (covered, why not)."""
    if daemon is None or not daemon["running"]:
        return False, "no daemon: start it with tma daemon --ensure"
    if daemon["version_skew"]:
        return False, "the daemon runs another tma: restart it with tma daemon --restart"
    watched = daemon.get("watched_sessions")
    if watched is None:
        return False, "the daemon does not answer on its socket"
    if session_id not in watched:
        return False, "the daemon does not watch this session (yet)"
    return True, ""


def api_lane(opts: dict, cfg, probes: dict) -> dict:
    """What `tma act` can do over the pane's API: the endpoint it would use (the pane's
    @agent_api_endpoint, else [api.opencode] api_base), and whether that endpoint answers
    now (a short GET /global/health, once per endpoint per run)."""
    endpoint = opencode_api.resolve_endpoint(opts, cfg)
    stamped = opts.get("@agent_api_endpoint") or None
    if endpoint is None:
        return {"endpoint": None, "source": None, "stamped": stamped, "answers": False,
                "version": None, "reason": None}
    if endpoint not in probes:
        probes[endpoint] = opencode_api.probe(endpoint, API_PROBE_TIMEOUT_S)
    res = probes[endpoint]
    answers = res.outcome == opencode_api.REPLIED
    version = opencode_api.server_version(res.body) if answers else None
    return {"endpoint": str(endpoint), "source": endpoint.source, "stamped": stamped,
            "answers": answers, "version": version,
            "reason": None if answers else res.message}


SECTIONS = (section_config, section_tmux, section_ambient, section_clients, section_notify,
            section_daemon,
            section_wiring,
            section_tmux_hooks, section_wrapper, section_manifests, section_panes,
            section_process_walk)


# ---------------------------------------------------------------- what counts


def wired_any(doc: dict) -> bool:
    """Does some agent carry tma wiring (wired or incomplete)? Then the tmux hooks and
    the wrapper matter; with no wiring at all their absence is a note, not a warning."""
    return any(w["status"] in CARRIES_WIRING for w in doc.get("hook_wiring", ()))


def warning_items(doc: dict) -> list[str]:
    """One short label per warning `--exit-code` counts, decided from the document.

    Counted: a status-right that runs `tma status` through a program that does not
    resolve or run with tmux's PATH (the status line silently shows nothing).
    Listed but never counted: ambient polling, clients (0 attached is a note while no
    daemon exists), foreign, ignored, nested and remote panes, the tested-tmux note,
    `model:`, `demoted:`, the per-agent wiring lines (an unwired installable agent's
    panes count in the second gate, `below_expected_tier`, instead), and the tmux
    hooks and the wrapper while no agent is wired. Later tiers add theirs here: 0
    clients with no daemon, actions.
    """
    out: list[str] = []
    config = doc.get("config") or {}
    if config.get("error"):
        out.append("config")
    if config.get("daemon_stale"):
        out.append("daemon config")
    tmux = doc["tmux"]
    if tmux_too_old(tmux["version"] or "") or tmux["setpf_ok"] is False:
        out.append("tmux")
    command = (doc.get("ambient_driver") or {}).get("status_command")
    if command is not None and not command["runs"]:
        out.append("status line")
    notify = doc.get("notify") or {}
    if notify.get("last_failure"):
        out.append("notify")
    out += [f"push {p['sink']}" for p in notify.get("push_problems", ())]
    if wired_any(doc):
        out += [f"tmux hook {h['hook']}" for h in doc.get("tmux_hooks", ()) if not h["present"]]
        if doc.get("tmux_hooks_error"):
            out.append("tmux hooks unreadable")
        wrapper = doc.get("wrapper")
        if wrapper is not None and not wrapper["present"]:
            out.append("wrapper")
    out += [f"manifest {i['file']}" for i in doc["manifests"]["issues"]]
    out += [f"process name {i['agent']}:{i['name']}" for i in doc["process_name_issues"]]
    out += [f"stamp {i['pane']}" for i in doc["stamp_issues"]]
    if not doc["process_walk"]["ok"]:
        out.append("procs")
    out += [f"api {a['pane']}" for a in doc.get("agents", ())
            if a.get("endpoint_ok") is False and a.get("permission_request")]
    return out


# ---------------------------------------------------------------- entry point


def gather(server, cfg, manifest_dir: str | None, now: int, env=None) -> dict:
    """The whole document. Raises NoServer / TmuxError / BundledManifestError. `env`: where
    the agents' transcripts are (HOME, CODEX_HOME, ...; the process's by default)."""
    snapshot = read.list_panes(server)  # no stamp_poll_ms: doctor is not a poll cycle
    ctx = Context(server, cfg, manifest_dir, now, snapshot,
                  Cycle(server, cfg, manifest_dir, clock=lambda: now), env)
    doc: dict = {"schema": SCHEMA}
    for section in SECTIONS:
        doc.update(section(ctx))
    return judge(doc)


def judge(doc: dict) -> dict:
    """Add the verdicts to a gathered document: the warnings `--exit-code` counts, the
    panes below their tier, whether the tmux hooks and the wrapper matter, and the exit
    status and summary line `--exit-code` gives. The text report renders these; it
    decides nothing of its own."""
    doc["below_expected_tier"] = below_expected_tier(doc["agents"])
    counted = warning_items(doc)
    doc["warnings"] = len(counted)
    below = doc["below_expected_tier"]
    doc["verdict"] = {
        "counted": counted, "wiring_matters": wired_any(doc),
        "exit_code": FAIL if counted or below else OK,
        "summary": f"{len(counted)} warning(s), {below} pane(s) below the tier their "
                   "manifest supports"}
    return doc


def check(session, now: int | None = None) -> dict:
    """`tma doctor`'s document for a Session's server, judged. A config that does not
    load is reported in the document (`config.error`) and the rest runs on the
    defaults; a mistyped --manifest-dir still raises. Each skipped user manifest is
    named through the session's warn. Raises NoServer / TmuxError /
    BundledManifestError (exit 1 at the boundary)."""
    try:
        cfg = session.config
    except ConfigError as exc:  # one ✗ line; the rest is diagnosed on the defaults
        if "manifest dir" in str(exc):  # a mistyped --manifest-dir: nothing to diagnose
            raise
        cfg = Config(path=session.g.config or resolve_path(session.g.config))
        text = str(exc).removeprefix("tma: ")
        cfg.load_error = text[7:] if text.startswith("config ") else text
    if now is None:
        import time

        now = time.time_ns() // 1_000_000
    doc = gather(session.server, cfg, session.g.manifest_dir, now, session.env)
    manifests.report_skipped([(i["file"], i["problem"]) for i in doc["manifests"]["issues"]],
                             session.warn)
    return doc
