"""Which agent, if any, owns a pane: the process walk, title narrowing and carve-outs.

Pure: the caller hands in what tmux said about the pane (`PaneFacts`), a snapshot
of the process table (`ProcTable`, read by `tma.runtime.procs`) and the loaded
manifests; the answer is an `Identification`. Nothing here reads /proc, runs ps
or looks at a clock.

A pane becomes an agent pane in one of two ways:

* observation: a process somewhere under the pane's root has a normalized comm
  listed in a manifest's `[identity].process_names` (and, for a manifest with
  `title_patterns`, the pane title agrees or the flicker anchor holds);
* registration: a hook stamped `@agent_session`/`@agent_name` on the pane.

Remote shells and nested multiplexer clients in the foreground are carved out
before the walk, unless a registration vouches for the pane.
"""

from __future__ import annotations

from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # the poll cycle's fast path imports neither collections nor manifests
    from collections.abc import Iterable, Iterator, Sequence
    from typing import Protocol

    class AgentIdentity(Protocol):
        """What identification reads of a manifest's [identity] table."""

        @property
        def process_names(self) -> tuple[str, ...]: ...
        @property
        def title_patterns(self) -> Sequence[object]: ...
        def title_matches(self, title: str) -> bool: ...

    class AgentManifest(Protocol):
        """A tma.core.manifest.Manifest, or the poll cycle's stand-in built from cached
        documents (names and process names only)."""

        @property
        def name(self) -> str: ...
        @property
        def identity(self) -> AgentIdentity: ...

REMOTE = ("ssh", "mosh", "mosh-client", "docker", "podman", "kubectl")
NESTED = ("tmux", "zellij", "screen", "dvtm", "abduco")
SHELLS = ("sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "tcsh", "csh", "ash", "login")

OBSERVED = "observed"
REGISTERED = "registered"
KIND_REMOTE = "remote"
KIND_NESTED = "nested"


# ---------------------------------------------------------------- the process table


class Proc(Record):
    """One process as the table reader saw it. `tpgid` is the foreground process
    group of the process's controlling tty (<= 0 when it has none or it is unknown)."""

    pid: int = 0
    ppid: int = 0
    pgid: int = 0
    tpgid: int = 0
    comm: str = ""

    def __init__(self, pid: int = 0, ppid: int = 0, pgid: int = 0, tpgid: int = 0,
                 comm: str = "") -> None:
        # explicit (not Record's generic init): a table build makes one per process
        self.pid = pid
        self.ppid = ppid
        self.pgid = pgid
        self.tpgid = tpgid
        self.comm = comm


class ProcTable:
    """A snapshot of the system's processes, indexed by pid and by parent."""

    __slots__ = ("_by_pid", "_children")

    def __init__(self, by_pid: dict[int, Proc], children: dict[int, list[int]]) -> None:
        self._by_pid = by_pid
        self._children = children

    @classmethod
    def of(cls, procs: Iterable[Proc]) -> ProcTable:
        by_pid: dict[int, Proc] = {}
        for p in procs:
            by_pid[p.pid] = p  # a duplicate pid: the later row wins
        children: dict[int, list[int]] = {}
        for p in by_pid.values():
            if p.ppid != p.pid:
                children.setdefault(p.ppid, []).append(p.pid)
        for kids in children.values():
            kids.sort()
        return cls(by_pid, children)

    def get(self, pid: int) -> Proc | None:
        return self._by_pid.get(pid)

    def __len__(self) -> int:
        return len(self._by_pid)

    def __iter__(self) -> Iterator[Proc]:
        return iter(self._by_pid.values())

    def __contains__(self, pid: object) -> bool:
        return pid in self._by_pid

    def children(self, pid: int) -> list[Proc]:
        return [self._by_pid[c] for c in self._children.get(pid, ())]

    def subtree(self, root_pid: int) -> list[Proc]:
        """The root (when present) and every descendant, breadth first, children by pid.

        Cycle-safe. A non-positive root yields nothing: pid 0 is the kernel's parent of
        init and kthreadd, so walking it would claim the whole machine."""
        if root_pid <= 0:
            return []
        out: list[Proc] = []
        seen = {root_pid}
        queue = [root_pid]
        by_pid, children = self._by_pid, self._children
        i = 0
        while i < len(queue):
            pid = queue[i]
            i += 1
            proc = by_pid.get(pid)
            if proc is not None:
                out.append(proc)
            for child in children.get(pid, ()):
                if child not in seen:
                    seen.add(child)
                    queue.append(child)
        return out


# ---------------------------------------------------------------- comm normalization

# "-wrapped" and its truncated prefixes down to "-w", longest first. The kernel cuts
# comm at 15 bytes, so `.opencode-wrapped` is seen as `.opencode-wrapp`.
_WRAPPED_SUFFIXES = tuple("-wrapped"[:n] for n in range(len("-wrapped"), 1, -1))


def normalize_comm(comm: str) -> str:
    """The name a process answers to: first whitespace token, basename, nix wrapper undone.

    `/usr/bin/claude --resume` -> `claude`; `.claude-wrapped` -> `claude`;
    `.opencode-wrapp` (15-char cut) -> `opencode`. A login shell's leading `-` is kept
    here (only the shell-only check strips it)."""
    parts = comm.split(None, 1)
    if not parts:
        return ""
    name = parts[0].rsplit("/", 1)[-1]
    if name.startswith("."):
        for suffix in _WRAPPED_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix) + 1:
                return name[1 : -len(suffix)]
    return name


def is_shell_only(table: ProcTable, pane_pid: int) -> bool:
    """True when nothing in the pane's subtree could be a live agent: every process is a
    shell (login shells' leading `-` stripped), or the subtree is empty."""
    for proc in table.subtree(pane_pid):
        if normalize_comm(proc.comm).lstrip("-") not in SHELLS:
            return False
    return True


def out_of_scope_kind(current_command: str) -> str | None:
    """`remote`/`nested` when the foreground command is a carve-out, else None."""
    name = normalize_comm(current_command)
    if name in REMOTE:
        return KIND_REMOTE
    if name in NESTED:
        return KIND_NESTED
    return None


# ---------------------------------------------------------------- identification


class PaneFacts(Record):
    """What tmux reports about one pane, plus the two stored identity options:
    the pane pid, #{pane_current_command}, #{pane_title}, the stored
    @tma_title_match_pid (0 = unset) and the registered agent name ("" = none)."""

    pane_pid: int = 0
    current_command: str = ""
    title: str = ""
    anchor_pid: int = 0
    registered_agent: str = ""


class Identification(Record):
    """agent: manifest name (None = not an agent pane); pid: agent pid (0 = a
    registration with no walkable process); via: observed | registered | None;
    out_of_scope: remote | nested when carved out (no registration);
    registered_behind: a registered pane whose foreground is a carve-out;
    anchor_pid: value for @tma_title_match_pid (0 = unset it); reason: one
    sentence for `tma debug explain`."""

    agent: str | None = None
    pid: int = 0
    foreground_is_agent: bool = False
    via: str | None = None
    out_of_scope: str | None = None
    out_of_scope_command: str = ""
    registered_behind: str | None = None
    anchor_pid: int = 0
    reason: str = ""

    @property
    def is_agent(self) -> bool:
        return self.agent is not None


def _registered_manifest(pane: PaneFacts, manifests: Sequence[AgentManifest]) -> AgentManifest | None:
    if not pane.registered_agent:
        return None
    for m in manifests:
        if m.name == pane.registered_agent:
            return m
    return None


def pick_pid(matches: list[Proc]) -> int:
    """Prefer a process-group leader among the matches, else the lowest pid."""
    leaders = [p.pid for p in matches if p.pid == p.pgid]
    return min(leaders) if leaders else min(p.pid for p in matches)


def _foreground(
    pane: PaneFacts, table: ProcTable | None, pid: int, manifest: AgentManifest
) -> tuple[bool, str]:
    """Is the agent in the pane's foreground? Decided by process group when known:
    the pane root's tty foreground group (tpgid) against the agent's pgid. Only when
    those facts are missing does the foreground command name decide."""
    root = table.get(pane.pane_pid) if table is not None else None
    agent = table.get(pid) if table is not None else None
    if root is not None and agent is not None and root.tpgid > 0 and agent.pgid > 0:
        if root.tpgid == agent.pgid:
            return True, "in the foreground process group"
        return False, (
            f"not in the foreground (tty foreground group {root.tpgid}, "
            f"agent group {agent.pgid})"
        )
    name = normalize_comm(pane.current_command)
    if name in manifest.identity.process_names:
        return True, f"foreground command {name!r} is the agent (process groups unknown)"
    return False, f"foreground command {name!r} is not the agent (process groups unknown)"


def identify(
    pane: PaneFacts, table: ProcTable | None, manifests: Sequence[AgentManifest]
) -> Identification:
    """Resolve the pane's agent. See the module docstring for the rules."""
    registered = _registered_manifest(pane, manifests)

    kind = out_of_scope_kind(pane.current_command)
    if kind is not None:
        command = normalize_comm(pane.current_command)
        what = "remote shell" if kind == KIND_REMOTE else "nested multiplexer"
        if registered is not None:
            return Identification(
                agent=registered.name,
                via=REGISTERED,
                registered_behind=kind,
                reason=(
                    f"{registered.name} registered by hook behind a {what} ({command}); "
                    "held from hooks only, never captured"
                ),
            )
        return Identification(
            agent=None,
            out_of_scope=kind,
            out_of_scope_command=command,
            reason=f"foreground is a {what} ({command}): out of scope, not walked",
        )

    subtree = table.subtree(pane.pane_pid) if table is not None else []
    narrowed_out: list[str] = []
    # A title match anywhere beats an anchor hold: several manifests share a process name
    # (node), and the anchor only says the same pid was claimed before, not by whom.
    title_owner = any(
        m.identity.title_patterns and m.identity.title_matches(pane.title)
        and any(normalize_comm(p.comm) in m.identity.process_names for p in subtree)
        for m in manifests
    )
    for manifest in manifests:
        names = manifest.identity.process_names
        matches = [p for p in subtree if normalize_comm(p.comm) in names]
        if not matches:
            continue
        pid = pick_pid(matches)
        comm = normalize_comm(next(p.comm for p in matches if p.pid == pid))
        registered_here = pane.registered_agent == manifest.name
        anchor = 0
        how = ""
        if manifest.identity.title_patterns:
            if manifest.identity.title_matches(pane.title):
                anchor, how = pid, "; title matches"
            elif pane.anchor_pid == pid and not title_owner:
                anchor, how = pid, "; title does not match, held by the anchor (same pid)"
            elif registered_here:
                how = "; title does not match, hook registration bypasses the gate"
            else:
                narrowed_out.append(manifest.name)
                continue
        foreground, fg_why = _foreground(pane, table, pid, manifest)
        via = REGISTERED if registered_here else OBSERVED
        return Identification(
            agent=manifest.name,
            pid=pid,
            foreground_is_agent=foreground,
            via=via,
            anchor_pid=anchor,
            reason=(
                f"{manifest.name} {via}: process {comm!r} pid {pid} under pane pid "
                f"{pane.pane_pid}{how}; {fg_why}"
            ),
        )

    if registered is not None:
        return Identification(
            agent=registered.name,
            via=REGISTERED,
            reason=(
                f"{registered.name} registered by hook; no {registered.name} process "
                f"under pane pid {pane.pane_pid}"
            ),
        )

    if table is None:
        reason = "no process table (ps failed) and no hook registration"
    elif narrowed_out:
        reason = (
            f"process matches {', '.join(narrowed_out)} but the title "
            f"{pane.title.strip()[:60]!r} does not match its title_patterns"
        )
    else:
        reason = f"no known agent process under pane pid {pane.pane_pid}"
    return Identification(agent=None, reason=reason)
