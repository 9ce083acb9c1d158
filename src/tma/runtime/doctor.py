"""`tma doctor`: gather every fact it reports into one dict (the `--json` document).

Read-only. One list-panes read that stamps nothing (not a poll cycle: no
@tma_last_poll, no capture, no write), one process-table read for identity, and
the config and manifest loads. The one write it may cause is the `set-option -F`
probe, and only when no earlier cycle cached the answer in @tma_setpf_ok.

The document is built section by section (`SECTIONS`, each `fn(ctx) -> {key: value}`);
what counts toward `doctor --exit-code` is decided from the finished document alone
(`warning_items`), so a later tier (the daemon, the hook installers, the wrapper)
extends doctor by adding a section function, its keys in the schema, and its lines
in `warning_items` and the renderer.
"""

from __future__ import annotations

import re

from tma.core import codec, identity, manifest, states

SCHEMA = 1
COMM_MAX = manifest.COMM_WIDTH

#: The tmux below which `set-option -F` stores its format literally (guarded writes fail).
MIN_TMUX = (3, 2)
#: The tmux the project is tested against (older is mentioned, never counted).
TESTED_TMUX = (3, 6)

HOOK_WIRED = "wired"
HOOK_NOT_INSTALLED = "not_installed"
HOOK_HOOKLESS = "hookless"

FOREIGN_WRITER = "another tool may be writing @agent_* options on this pane"


class Context:
    """What the sections share: the server, config, the one snapshot, the clock."""

    def __init__(self, server, cfg, manifest_dir: str | None, now: int, snapshot,
                 cycle) -> None:
        self.server = server
        self.cfg = cfg
        self.manifest_dir = manifest_dir
        self.now = now
        self.snapshot = snapshot
        self.cycle = cycle  # tma.runtime.cycle.Cycle: manifests, process table, identify
        self._panes: list[dict] | None = None

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


def parse_tmux_version(text: str) -> tuple[int, int] | None:
    """`3.3a`, `next-3.6`, `openbsd-7.4` ... -> (major, minor); None when unparseable."""
    m = re.search(r"(\d+)\.(\d+)", text or "")
    # OpenBSD's base tmux reports the OS release, which says nothing about tmux.
    if m is None or text.startswith("openbsd-"):
        return None
    return int(m.group(1)), int(m.group(2))


def below_expected_tier(agents: list[dict]) -> int:
    """Panes below the tier their manifest supports (the second `--exit-code` gate).

    Always 0 for now: the hook installers do not exist yet, so a hook-capable agent
    sitting at tier 1 is not something the user can fix. The hook issue makes this
    count panes whose manifest is hook-capable (expected tier 2) but whose hooks are
    not wired, incomplete or demoted; a missing daemon (tier 3) never counts.
    """
    return 0


# ---------------------------------------------------------------- sections


def section_tmux(ctx: Context) -> dict:
    snap = ctx.snapshot
    raw = snap.setpf_ok
    if raw in ("0", "1"):
        setpf: bool | None = raw == "1"
    else:
        from tma.runtime.cycle import probe

        setpf = probe(ctx.server)  # caches its answer in @tma_setpf_ok
    return {"tmux": {"version": snap.version or None, "setpf_ok": setpf}}


def section_ambient(ctx: Context) -> dict:
    last = ctx.snapshot.last_poll
    age = max(0, ctx.now - codec.to_ms(last)) if last else None
    return {"ambient_driver": {"polling": bool(last), "last_poll_age_ms": age}}


def section_clients(ctx: Context) -> dict:
    return {"clients": {"attached": len(ctx.snapshot.clients)}}


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
        elif stamp is not None and stamp.name and stamp.name not in known:
            foreign.append(dict(base, agent=stamp.name))
    return {"stamp_issues": stamp_issues, "foreign_panes": foreign, "ignored_panes": ignored,
            "nested_multiplexers": nested, "remote_panes": remote, "agents": agents}


def _agent(ctx: Context, pane, stamp, ident) -> dict:
    m = ctx.mset.get(ident.agent)
    hook_source = stamp is not None and stamp.source == states.SOURCE_HOOK
    if hook_source:
        # A hook reached the pane: something is wired. The hook issue checks the wiring.
        tier, hook_status = 2, HOOK_WIRED
        reason = "no daemon (the daemon tier is not implemented yet)"
    elif m is not None and not m.hook_capable:
        tier, hook_status = 1, HOOK_HOOKLESS
        reason = f"{ident.agent} has no hooks (its manifest maps no events): screen reads only"
    else:
        tier, hook_status = 1, HOOK_NOT_INSTALLED
        reason = "hooks not installed (hook tier not wired yet)"
    opts = pane.options
    evidence_age = None
    if stamp is not None and stamp.evidence_at:
        evidence_age = max(0, ctx.now - stamp.evidence_at)
    return {
        "pane": pane.pane_id,
        "agent": ident.agent,
        "locator": pane.locator,
        "state": stamp.state if stamp is not None else None,
        "source": stamp.source if stamp is not None else None,
        "evidence_age_ms": evidence_age,
        "hook_status": hook_status,
        "hooks_wired": hook_status == HOOK_WIRED,
        "model": opts.get("@agent_model") or None,
        "window_covered": None,
        "endpoint_ok": None,
        # The pane registered by hook (@agent_session) but its state is screen-read.
        "hook_demoted": bool(stamp is not None and stamp.session
                             and stamp.source == states.SOURCE_CAPTURE),
        "tier": tier,
        "tier_reason": reason,
    }


SECTIONS = (section_tmux, section_ambient, section_clients, section_manifests,
            section_panes, section_process_walk)


# ---------------------------------------------------------------- what counts


def warning_items(doc: dict) -> list[str]:
    """One short label per warning `--exit-code` counts, decided from the document.

    Listed but never counted: ambient polling, clients (0 attached is a note while no
    daemon exists), foreign, ignored, nested and remote panes, the tested-tmux note,
    `model:`. Not counted yet: `hook_demoted` (with the hook installers). Later tiers
    add theirs here: 0 clients with no daemon, tmux hooks, wrapper, notify, actions.
    """
    out: list[str] = []
    tmux = doc["tmux"]
    version = parse_tmux_version(tmux["version"] or "")
    if (version is not None and version < MIN_TMUX) or tmux["setpf_ok"] is False:
        out.append("tmux")
    out += [f"manifest {i['file']}" for i in doc["manifests"]["issues"]]
    out += [f"process name {i['agent']}:{i['name']}" for i in doc["process_name_issues"]]
    out += [f"stamp {i['pane']}" for i in doc["stamp_issues"]]
    if not doc["process_walk"]["ok"]:
        out.append("procs")
    return out


# ---------------------------------------------------------------- entry point


def gather(server, cfg, manifest_dir: str | None, now: int) -> dict:
    """The whole document. Raises NoServer / TmuxError / BundledManifestError."""
    from tma.runtime.cycle import Cycle
    from tma.tmux import read

    snapshot = read.list_panes(server)  # no stamp_poll_ms: doctor is not a poll cycle
    ctx = Context(server, cfg, manifest_dir, now, snapshot,
                  Cycle(server, cfg, manifest_dir, clock=lambda: now))
    doc: dict = {"schema": SCHEMA}
    for section in SECTIONS:
        doc.update(section(ctx))
    doc["below_expected_tier"] = below_expected_tier(doc["agents"])
    doc["warnings"] = len(warning_items(doc))
    return doc
