"""The poll cycle: every one-shot refreshes stale panes, then reports rows.

One cycle costs a constant number of tmux spawns whatever the number of agents:
one read (list-panes + server facts + clients, which also stamps @tma_last_poll),
one batched capture of every pane that needs reading, one batched write (each
pane's tuple on its own line, then the window and session rollups those writes
leave) that ends with a re-read, and a rollup write only when the re-read shows a
rollup other than the one predicted (a hook's stamp beat a guarded write). A
cycle that reads a permission dialog its blocked episode has not recorded yet (a new
prompt) in a window that drew in the last second captures those panes once more,
CONFIRM_MS later, in one more batch: a prompt still being drawn is believed when it
reads the same twice; one that sat still for a second, once.

Fresh settled stamps are consumed as they are. A stale pane whose window has been
quiet since its stamp is reused without a capture. Only the rest is identified,
captured, folded and stamped.
"""

from __future__ import annotations

import os

from tma.core import codec, options, states
from tma.core.record import Record
from tma.tmux import read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from tma.runtime.manifests import ManifestSet


class _LazyWrite:
    """tma.tmux.write (and the plan types it pulls in) loads on the first write built:
    a status line over fresh stamps never writes."""

    def __getattr__(self, name: str):
        from tma.tmux import write as module

        return getattr(module, name)


write = _LazyWrite()

REAP_MS = 30_000
_DUMMY = object()
#: The context format whose panes' named file is tailed (tma.runtime.rollout.FORMAT).
ROLLOUT_FORMAT = "codex-rollout-jsonl"


class Row(Record):
    """One agent pane as the surfaces see it."""

    pane: read.Pane
    stamp: codec.Stamp
    agent: str = ""
    foreign: bool = False
    muted: bool = False

    @property
    def state(self) -> str:
        return self.stamp.state

    @property
    def cls(self) -> str:
        return states.display_class(self.stamp.state, self.stamp.attention)

    def sort_key(self) -> tuple:
        return (states.STATE_ORDER.get(self.stamp.state, 9),) + self.pane.order_key


class Stats:
    def __init__(self) -> None:
        self.agents = self.produced = self.consumed = self.captures = 0
        self.skipped = self.removed = self.spawns = 0
        self.stampede = False
        self.ms = 0

    def line(self) -> str:
        extra = ", stampede-skipped" if self.stampede else ""
        return (f"tma: cycle {self.ms}ms — {self.agents} agents, {self.produced} produced, "
                f"{self.consumed} consumed, {self.captures} captures, {self.skipped} "
                f"capture-skipped, {self.removed} removed, {self.spawns} spawns{extra}")


class Result:
    def __init__(self, snapshot, rows, stats, issues, ignored, out_of_scope, mset,
                 identities, first_snapshot=None, captures=None, now: int = 0) -> None:
        self.now = now  # the cycle's clock (epoch ms) when it read the panes
        self.snapshot = snapshot  # after this cycle's writes (the re-read)
        self.first_snapshot = first_snapshot or snapshot  # the cycle's opening read
        self.rows: list[Row] = rows
        self.stats: Stats = stats
        self.stamp_issues: list[tuple] = issues  # (pane, problem)
        self.ignored: list = ignored  # panes carrying @agent_ignore
        self.out_of_scope: list[tuple] = out_of_scope  # (pane, kind)
        self.manifests = mset  # ManifestSet when the cycle needed it, else None
        self.identities: dict = identities  # pane_id -> Identification (producer panes)
        # pane id -> the screen this cycle read (its latest read): a caller that reads
        # the same screens after the cycle (ls --json's dialogs) captures none again
        self.captures: dict[str, read.Captured] = captures or {}


def _alive(pid: int) -> bool:
    """A fresh stamp whose walked agent pid is gone is re-read at once (removal on exit).
    procs.alive's signal-0 probe, inline: consuming fresh stamps imports no procs."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _still_since(pane, stamp: codec.Stamp) -> bool:
    """The pane's window has printed nothing since the stamp was written (whole-second
    activity: output in the stamp's own second counts as after it)."""
    return pane.window_activity > 0 and (pane.window_activity + 1) * 1000 <= stamp.stamped_at


def _muted(pane, now: int) -> bool:
    raw = pane.options.get("@agent_mute_until", "")
    return raw.isdigit() and codec.to_ms(int(raw)) > now


def _stamp_problem(pane) -> tuple[codec.Stamp | None, str | None]:
    try:
        stamp = codec.decode(pane.options)
    except codec.DecodeError as exc:
        return None, f"{exc.option}={exc.value!r}: {exc.reason}"
    if stamp is not None and "@agent_stamped_at" not in pane.options:
        return stamp, "@agent_state set with no @agent_stamped_at (not a tma write)"
    return stamp, None


def standing_rows(snap, now: int) -> list[Row]:
    """The rows a cycle that writes nothing reads from a listing: every decodable stamp
    of a pane not ignored, as it stands (`Cycle.run(produce=False)` without its spawn;
    the daemon's status-line segment counts these)."""
    rows = []
    for pane in snap.panes:
        if pane.options.get("@agent_ignore"):
            continue
        stamp, _problem = _stamp_problem(pane)
        if stamp is not None:
            rows.append(Row(pane, stamp, stamp.name, False, _muted(pane, now)))
    return sorted(rows, key=Row.sort_key)


class _LightIdentity:
    __slots__ = ("process_names", "title_patterns")

    def __init__(self, names: tuple[str, ...]):
        self.process_names = names
        self.title_patterns = ()

    def title_matches(self, title: str) -> bool:  # pragma: no cover - never called
        return False


class _LightManifest:
    """name + process names from the cached documents: identity without regexes."""

    __slots__ = ("name", "identity")

    def __init__(self, name: str, names: tuple[str, ...]):
        self.name = name
        self.identity = _LightIdentity(names)


class _TitledIdentity:
    __slots__ = ("process_names", "title_patterns", "_title", "_matches")

    def __init__(self, names: tuple[str, ...], titled: bool, title: str, matches: bool):
        self.process_names = names
        self.title_patterns = (True,) if titled else ()
        self._title, self._matches = title, matches

    def title_matches(self, title: str) -> bool:
        if title != self._title:  # built for one pane's title only
            raise ValueError("title view asked about another title")
        return self._matches


class _TitledManifest:
    """One manifest as identity sees it for one title, from the title cache: its name,
    process names, whether it narrows by title and whether this title matches it."""

    __slots__ = ("name", "identity")

    def __init__(self, name: str, names: tuple[str, ...], titled: bool, title: str,
                 matches: bool):
        self.name = name
        self.identity = _TitledIdentity(names, titled, title, matches)


def titled_view(order: list, matching: list[str], title: str) -> list[_TitledManifest]:
    """The title cache's answer for one title as the manifest list identify() reads."""
    return [_TitledManifest(name, tuple(names), titled, title, name in matching)
            for name, names, titled in order]


class _Pass:
    """One cycle's working set: what the read sorted out and what the write will carry."""

    def __init__(self, now: int, producing: bool, freshness_ms: int,
                 focus: frozenset | None = None) -> None:
        self.now = now
        self.producing = producing
        self.focus = focus  # only these panes are produced, each one read whatever its stamp
        self.everything = False  # every pane produced and read whatever its stamp
        self.current = False  # a person reads the rows: a fresh stamp only over a still screen
        self.freshness_ms = freshness_ms
        self.stats = Stats()
        self.rows: dict[str, Row] = {}
        self.issues: list[tuple] = []
        self.ignored: list = []
        self.out_of_scope: list[tuple] = []
        self.identities: dict = {}
        self.lines: list[str] = []
        self.to_capture: list[tuple] = []  # (pane, stamp, ident)
        self.pending: list[tuple] = []  # (pane, stamp, ident, captured-or-None)
        self.captured_at = 0.0  # time.monotonic() once the batched capture returned
        self.captures: dict[str, read.Captured] = {}  # pane id -> its latest read
        self.touched: set[str] = set()
        self.held: set[str] = set()  # read and held: stamped_at refreshed, nothing else
        self.demoted: frozenset = frozenset()
        self.decoded: dict[str, str | None] = {}  # pane id -> its stamp's state (None: none)
        # pane id -> the state this pass's write leaves (None: removed): the rollups
        # ride in the same batch as the stamps (see Cycle._commit)
        self.predicted: dict[str, str | None] = {}
        # the first half's writes of a many-pane fold, sent ahead (PendingSource, the
        # wait-for channel it signals at its end); _commit reads it
        self.first_batch: tuple | None = None

    def add_row(self, pane, stamp: codec.Stamp, agent: str, *, foreign: bool = False) -> None:
        self.rows[pane.pane_id] = Row(pane, stamp, agent, foreign, _muted(pane, self.now))

    def remove(self, pane) -> None:
        self.lines.append(write.remove(pane.pane_id))
        self.touched.add(pane.pane_id)
        self.predicted[pane.pane_id] = None
        self.stats.removed += 1


class Cycle:
    """One server's poll cycle. `clock` returns epoch ms (tests pass their own)."""

    def __init__(self, server, cfg, manifest_dir: str | None = None, clock=None,
                 warn=None, lean: bool = False) -> None:
        self.server = server
        # lean: read only what the cycle itself needs (read.CYCLE_OPTIONS, no pane path):
        # for a caller that shows no telemetry lane and no path (`tma status`)
        self.lean = lean
        self.cfg = cfg
        self.manifest_dir = manifest_dir
        if clock is None:
            import time

            def clock() -> int:
                return time.time_ns() // 1_000_000
        self.clock = clock
        self.warn = warn
        self._mset: ManifestSet | None = None
        self._index: dict[str, tuple[str, ...]] | None = None
        self._table = _DUMMY
        self._subtrees: bool | None = None
        self._guarded: bool | None = None
        self.skipped_manifests: list[tuple[str, str]] = []
        self._titles: dict | None = None  # the title cache's view (see _by_title)
        self._titles_key: tuple = ()
        self._titles_dirty = False
        self._enders: frozenset[str] | None = None  # see _decisive_past_blocked

    def fresh(self) -> Cycle:
        """The next pass for a resident caller (the daemon): the loaded manifests, the
        identity index and the -F answer carry over; the process table is re-read."""
        nxt = Cycle(self.server, self.cfg, self.manifest_dir, self.clock, self.warn, self.lean)
        nxt._mset, nxt._index, nxt._guarded = self._mset, self._index, self._guarded
        if hasattr(self, "_titled_names"):
            nxt._titled_names = self._titled_names
        nxt._enders = self._enders
        return nxt

    # -- lazily loaded inputs
    def use_manifests(self, mset: ManifestSet) -> None:
        """The set its caller loaded already (the run's Session): one load per run."""
        self._mset = mset
        self.skipped_manifests = list(mset.skipped)

    def manifests(self):
        if self._mset is None:
            from tma.runtime import manifests

            self._mset = manifests.load(self.manifest_dir, self.cfg.agents)
            self.skipped_manifests = list(self._mset.skipped)
            if self.warn is not None:
                manifests.report_skipped(self._mset, self.warn)
        return self._mset

    def index(self) -> dict[str, tuple[str, ...]]:
        if self._index is None:
            from tma.runtime import manifests

            self._index = manifests.identity_index(self.manifest_dir, self.cfg.agents)
        return self._index

    def table(self):
        """The whole process table (once per cycle)."""
        if self._table is _DUMMY:
            from tma.runtime import procs

            self._table = procs.read_proc_table()
        return self._table

    def table_for(self, pane_pid: int):
        """A table holding at least the pane's subtree: just that subtree where the
        kernel lists children (cheap), else the whole table."""
        if self._table is _DUMMY and self._subtrees is not False:
            from tma.runtime import procs

            sub = procs.read_subtree(pane_pid)
            if sub is not None:
                return sub
            self._subtrees = False
        return self.table()

    # -- identity
    def identify(self, pane, stamp: codec.Stamp | None):
        from tma.core import identity as ident_mod

        opts = pane.options
        anchor = opts.get("@tma_title_match_pid", "")
        registered = ""
        name = opts.get("@agent_name", "")
        if name and (opts.get("@agent_session") or (stamp is not None
                                                    and stamp.source == states.SOURCE_HOOK)):
            registered = name
        facts = ident_mod.PaneFacts(pane.pane_pid, pane.current_command, pane.title,
                                    int(anchor) if anchor.isdigit() else 0, registered)
        table = self.table_for(pane.pane_pid)
        if registered and registered not in self.index():
            facts = facts.replace(registered_agent="")
        # Light pass: process names only. Trusted unless a manifest with title patterns
        # has a process-name match here (then only the real patterns can decide).
        index = self.index()
        light = [_LightManifest(n, names) for n, names in index.items()]
        result = ident_mod.identify(facts, table, light)
        if table is not None and result.out_of_scope is None:
            titled = self._titled_from_index(index)
            if titled:
                comms = {ident_mod.normalize_comm(p.comm)
                         for p in table.subtree(pane.pane_pid)}
                if any(comms & set(index[n]) for n in titled):
                    result = ident_mod.identify(facts, table, self._by_title(pane.title))
        return result

    def _by_title(self, title: str) -> list:
        """The manifests in identity order, as far as identity reads them, for a pane
        with this title. Loaded already (a capture, the daemon): the set itself. Else
        from the title cache, which says which manifests' title_patterns match a title
        seen before under the same manifest files: a quiet node pane is then identified
        without loading and validating every manifest (re, the schema, 64 regexes).
        A title not seen before is matched by the full set, and remembered. The answer
        is the one the full set gives (identify reads only names, process names, whether
        a manifest narrows by title, and whether this title matches it)."""
        from tma.runtime import manifests

        if self._titles is None:
            if self._mset is not None:
                return self._mset.ordered()  # a resident caller's set: no cache file
            self._titles_key, view = manifests.title_cache(self.manifest_dir, self.cfg.agents)
            self._titles = view if view is not None else {"order": None, "titles": {}}
        view = self._titles
        if view["order"] is None or title not in view["titles"]:
            mset = self.manifests()
            if view["order"] is None:
                view["order"] = manifests.identity_order(mset)
            view["titles"][title] = manifests.title_matches(mset, title)
            self._titles_dirty = True
            return mset.ordered()
        return titled_view(view["order"], view["titles"][title], title)

    def _store_titles(self) -> None:
        if self._titles_dirty and self._titles is not None:
            from tma.runtime import manifests

            manifests.store_titles(self._titles_key, self._titles)
            self._titles_dirty = False

    def _titled_from_index(self, index) -> list[str]:
        # Which manifests narrow by title is known only from the full set; cache per cycle.
        if not hasattr(self, "_titled_names"):
            from tma.runtime import manifests

            self._titled_names = manifests.titled_names(self.manifest_dir, self.cfg.agents)
        return [n for n in self._titled_names if n in index]

    # -- the cycle
    def run(self, produce: bool = True, focus=None, demoted=frozenset(),
            everything: bool = False, current: bool = False, early=None,
            meanwhile: Callable[[], object] | None = None) -> Result:
        """One cycle. `focus` (pane ids): the daemon's one-pane read on a quiet edge —
        just those panes are produced and read even with a fresh stamp, every other
        pane is consumed as it stands, and nothing else (poll stamp, seen clear,
        rollout tail) is touched; the rollups are still reconciled. `demoted` (pane
        ids, the daemon's): their stored hook claim is folded as a screen read and
        the write is unconditional (tma.daemon.demotion). `everything`: read every
        agent pane whatever its stamp's age and whatever the stampede guard says (a
        daemon's first look: a stamp a killed daemon left may be a second old and
        already wrong, and no quiet edge will come for a screen that stopped moving).
        `current`: a person reads these rows (ls, the picker, watch, wait): no verdict
        older than its screen. The stampede guard does not apply, and a fresh stamp is
        consumed only when its window has printed nothing since it was written; the
        status line (many clients at once) keeps both shortcuts. `early`: this cycle's
        pane read, begun before (read.begin_listing, stamping the poll at its clock),
        which is then the cycle's clock. `meanwhile`: the caller's work that does not
        need this cycle's rows (loading what renders them), done while tmux runs the
        cycle's writes; not called when the cycle writes nothing."""
        import time

        t0 = time.perf_counter()
        spawns0 = self.server.spawns
        if (early is not None and produce and focus is None
                and early.listing.lean == self.lean and early.stamp_poll_ms is not None):
            now, spawns0 = early.stamp_poll_ms, spawns0 - 1
            snap = early.snapshot()
        else:
            now = self.clock()
            poll_ms = now if produce and focus is None else None
            snap = read.list_panes(self.server, stamp_poll_ms=poll_ms, lean=self.lean)
        work = self._begin(snap, now, produce, current)
        work.demoted = frozenset(demoted)
        if everything and produce:
            work.everything, work.producing, work.stats.stampede = True, True, False
        if focus is not None:
            work.focus = frozenset(focus)
            work.producing, work.stats.stampede = produce, False
        for pane in snap.panes:
            self._sort(work, pane)
        self._capture(work)
        self._fold_all(work)
        if work.producing and work.focus is None:
            # attention cleared by input (ordered against the raise; never for -CC clients)
            work.lines.extend(self._seen_clear(snap, work.rows, work.touched - work.held))
            work.lines.extend(self._rollout(snap, now))
        final = self._commit(work, snap, meanwhile)
        self._store_titles()
        if work.producing:
            # nothing written: the rollups count the states this read already decoded
            self._write_rollups(final, work.decoded if final is snap else None)
        rows = sorted(work.rows.values(), key=Row.sort_key)
        stats = work.stats
        stats.agents = len(rows)
        stats.spawns = self.server.spawns - spawns0
        stats.ms = int((time.perf_counter() - t0) * 1000)
        return Result(final, rows, stats, work.issues, work.ignored, work.out_of_scope,
                      self._mset, work.identities, first_snapshot=snap,
                      captures=work.captures, now=now)

    def _begin(self, snap, now: int, produce: bool, current: bool = False) -> _Pass:
        """The stampede guard and the cached -F probe answer, then an empty pass."""
        stampede = bool(produce and not current and snap.last_poll
                        and snap.last_poll // 1000 == now // 1000)
        if snap.setpf_ok in ("0", "1") and self._guarded is None:
            self._guarded = snap.setpf_ok == "1"
        work = _Pass(now, produce and not stampede, self.cfg.freshness_secs * 1000)
        work.stats.stampede = stampede
        work.current = current
        return work

    def _sort(self, work: _Pass, pane) -> None:
        """Ignored, unreadable, fresh (consumed as it is) or to be produced."""
        opts = pane.options
        if opts.get("@agent_ignore"):
            work.ignored.append(pane)
            # (a lean read tells only that some lane is held: read.LANES_HELD)
            if work.producing and (read.LANES_HELD in opts
                                   or any(k in opts for k in options.EPISODE_OPTIONS)):
                work.remove(pane)
            return
        stamp, problem = _stamp_problem(pane)
        work.decoded[pane.pane_id] = stamp.state if stamp is not None else None
        if problem is not None:
            work.issues.append((pane, problem))
            if stamp is None:
                return  # undecodable: invisible everywhere, never touched
        if work.focus is not None:
            if pane.pane_id in work.focus:
                self._produce_one(work, pane, stamp)
            elif stamp is not None:
                work.add_row(pane, stamp, stamp.name)
            return
        if stamp is not None and (not work.producing or (
                not work.everything and codec.is_fresh(stamp, work.now, work.freshness_ms)
                and _alive(stamp.pid) and (not work.current or _still_since(pane, stamp)))):
            work.add_row(pane, stamp, stamp.name)
            work.stats.consumed += 1
            return
        if work.producing:
            self._produce_one(work, pane, stamp)

    def _produce_one(self, work: _Pass, pane, stamp: codec.Stamp | None) -> None:
        ident = self.identify(pane, stamp)
        work.identities[pane.pane_id] = ident
        if ident.out_of_scope is not None:
            work.out_of_scope.append((pane, ident.out_of_scope))
            self._unclaimed(work, pane, stamp, clear_anchor=False)
            return
        if ident.agent is None:
            self._unclaimed(work, pane, stamp, clear_anchor=True)
            return
        anchor = pane.options.get("@tma_title_match_pid", "")
        if str(ident.anchor_pid or "") != anchor:
            work.lines.append(write.set_plain(pane.pane_id, "@tma_title_match_pid",
                                              str(ident.anchor_pid) if ident.anchor_pid else ""))
        if ident.pid == 0:
            self._registration(work, pane, stamp, ident)
        elif stamp is not None and work.focus is None and not work.everything \
                and self._quiet(pane, stamp, ident, work.now):
            work.add_row(pane, stamp, ident.agent)
            work.stats.skipped += 1
        elif not ident.foreground_is_agent or pane.scroll_position > 0:
            work.pending.append((pane, stamp, ident, None))  # the fold decides without a screen
        else:
            work.to_capture.append((pane, stamp, ident))

    def _unclaimed(self, work: _Pass, pane, stamp: codec.Stamp | None, *,
                   clear_anchor: bool) -> None:
        """No agent of ours in the pane. tma's own stamp (its name is a loaded manifest's:
        every tma write names one) is a leftover and goes; any other decodable stamp is
        a second writer's, read as a foreign row and never removed (the second-writer contract)."""
        if stamp is not None and stamp.name in self.index():
            work.remove(pane)
        elif stamp is not None:
            work.add_row(pane, stamp, stamp.name, foreign=True)
        elif clear_anchor and pane.options.get("@tma_title_match_pid", ""):
            work.lines.append(write.set_plain(pane.pane_id, "@tma_title_match_pid", ""))

    def _registration(self, work: _Pass, pane, stamp: codec.Stamp | None, ident) -> None:
        """A hook registration with no walkable process: never captured."""
        if stamp is not None and stamp.pid > 0 and not _alive(stamp.pid):
            # tma walked this agent's pid and it is gone: the agent exited (OpenCode
            # fires no end event). Remove now; the reaper is for pid-less registrations.
            work.remove(pane)
            return
        # reaped once its subtree has been shell-only for 30 s
        line = self._reap(pane, work.now)
        if line == "remove":
            work.remove(pane)
            return
        if line:
            work.lines.append(line)
        if stamp is not None:
            work.add_row(pane, stamp, ident.agent)

    def _capture(self, work: _Pass) -> None:
        """One batched capture of every pane that needs reading."""
        if not work.to_capture:
            return
        if self._mset is None:
            # the first read of this cycle's set (every cold refresh): the captures begin
            # on the cached documents' depths, and the set is validated while tmux captures
            from tma.core.manifest import scrollback
            from tma.runtime import manifests

            tails = manifests.tallest_tails(self.manifest_dir)
            captured = read.capture_many(self.server, [
                (p.pane_id, scrollback(tails[i.agent], p.height) if i.agent in tails else 50)
                for p, _, i in work.to_capture], meanwhile=self.manifests)
        else:
            mset = self._mset
            captured = read.capture_many(self.server, [
                (p.pane_id, mset.get(i.agent).scrollback_needed(p.height)
                 if mset.get(i.agent) is not None else 50)
                for p, _, i in work.to_capture])
        work.captured_at = _monotonic()
        work.captures.update(captured)
        work.stats.captures += len(captured)
        for pane, stamp, ident in work.to_capture:
            cap = captured.get(pane.pane_id)
            if cap is not None:
                work.pending.append((pane, stamp, ident, cap))

    def _fold_all(self, work: _Pass) -> None:
        if not work.pending:
            return  # (a status line over fresh stamps imports no plan)
        items = work.pending
        half = len(items) // 2 if len(items) >= PIPELINE_PANES and work.producing else 0
        if not half:
            self._fold(work, items)
            return
        # Many panes: the first half's writes go to tmux while the rules read the second
        # half's screens (tmux applies ~10 set-options a pane: ~0.4 ms, about what the
        # rules take). _commit's batch waits in tmux for this one (wait-for), so the
        # re-read still follows every write.
        self._fold(work, items[:half])
        if work.lines:
            channel = f"tma-cycle-{os.getpid()}-{os.urandom(4).hex()}"
            work.first_batch = (self.server.begin_source(
                [*work.lines, f"wait-for -S {channel}"]), channel)
            work.lines = []
        try:
            self._fold(work, items[half:])
        except BaseException:
            if work.first_batch is not None:  # read and reaped before the error goes on
                work.first_batch[0].result()
            raise

    def _fold(self, work: _Pass, items: list) -> None:
        """Read ITEMS' screens by their rules and add each verdict's write to the pass."""
        from tma.core import plan as P

        seen = [self._evaluate(pane, ident, cap) for pane, _stamp, ident, cap in items]
        verdicts = [self._verdict(pane, stamp, ident, cap, work.now,
                                  pane.pane_id in work.demoted, s)
                    for (pane, stamp, ident, cap), s in zip(items, seen, strict=True)]
        for i in self._confirm_prompts(work, items, seen, verdicts):
            pane, stamp, ident, cap = items[i]
            verdicts[i] = self._verdict(pane, stamp, ident, cap, work.now,
                                        pane.pane_id in work.demoted, seen[i])
        for (pane, stamp, ident, _cap), v in zip(items, verdicts, strict=True):
            if v is None:
                continue
            plan, guarded, body_hash = v
            if plan.action == P.HOLD and stamp is not None and pane.scroll_position > 0:
                # Frozen by tmux's scroll: nothing was read, so nothing is refreshed. A
                # stamped_at moved past output that arrived under the scroll would let
                # the quiet check reuse the old verdict once the scroll is gone (leaving
                # copy-mode prints nothing), and a dialog drawn meanwhile would never be
                # read. The stamp stands as it was; the row shows it.
                work.add_row(pane, stamp, ident.agent)
                continue
            work.lines.append(write.render(
                pane.pane_id, plan, work.now, name=ident.agent, pid=ident.pid, hash=body_hash,
                guarded=guarded, prev_state=stamp.state if stamp else None,
                prev_since=stamp.since if stamp else 0, stored=pane.options))
            work.touched.add(pane.pane_id)
            work.predicted[pane.pane_id] = plan.state if plan.action == P.PUBLISH else (
                None if plan.action == P.REMOVE else stamp.state if stamp is not None else None)
            work.stats.produced += 1
            if plan.action == P.HOLD and stamp is not None:
                # a hold moves only hash and stamped_at: the episode and its mark
                # stand, so the input clear may look at this pane in this cycle
                work.held.add(pane.pane_id)
                work.add_row(pane, stamp, ident.agent)

    def _evaluate(self, pane, ident, cap) -> _Seen | None:
        """One capture read by its agent's rules, and which prompt a blocked screen shows."""
        if cap is None:
            return None
        manifest = self.manifests().get(ident.agent)
        if manifest is None:
            return None
        from tma.core.rules import Screen, evaluate

        screen = Screen(cap.body, pane.title, cap.height or pane.height or None)
        result = evaluate(manifest, screen)
        return _Seen(result, _prompt_of(screen, result, manifest))

    def _confirm_prompts(self, work: _Pass, items: list, seen: list,
                         verdicts: list) -> list[int]:
        """A prompt about to be recorded for an episode, or to start one, is read twice.
        A repaint caught half-way (the agent redrawing after a resize, a row cut at the
        old width) reads as another prompt for a few milliseconds, and a new episode
        started on it would ring the person again for the prompt they already have: so
        the pane is captured again CONFIRM_MS later (all such panes in one capture), and
        a prompt that does not read the same twice is not recorded in this cycle (the
        next read decides). Only a write that would record a dialog's target its episode
        does not hold yet costs this: about once per prompt. The indexes to fold again."""
        from tma.core.prompt import names_target

        unsure = []
        for i, ((pane, stamp, _ident, _cap), v) in enumerate(zip(items, verdicts,
                                                                strict=True)):
            recorded = stamp.prompt if stamp is not None else ""
            # a detail alone comes from the rule that said blocked, trusted on one read
            # like the state itself; a dialog's target is what a half-drawn frame garbles
            if v is not None and names_target(v[0].prompt) and v[0].prompt != recorded \
                    and not _settled(pane, work.now):
                unsure.append(i)
        if not unsure:
            return []
        # CONFIRM_MS after the first read, not after the rules have read every capture:
        # the rules' time (tens of ms over many panes) is part of the wait, not added
        # to it (a cold refresh that meets a dialog pays the wait once)
        left = CONFIRM_MS - int((_monotonic() - work.captured_at) * 1000)
        settle(max(0, min(CONFIRM_MS, left)))
        mset = self.manifests()
        wanted = [items[i] for i in unsure]
        again = read.capture_many(self.server, [
            (p.pane_id, mset.get(ident.agent).scrollback_needed(p.height))
            for p, _stamp, ident, _cap in wanted])
        work.stats.captures += len(again)
        work.captures.update(again)
        refold = []
        for i, (pane, _stamp, ident, first) in zip(unsure, wanted, strict=True):
            cap = again.get(pane.pane_id)
            if cap is not None and first is not None \
                    and (cap.body, cap.height) == (first.body, first.height):
                continue  # the same screen twice reads the same (the rules are pure)
            later = self._evaluate(pane, ident, cap) if cap is not None else None
            if later is None or later.prompt != seen[i].prompt:
                seen[i].prompt = ""  # not settled: record nothing, start nothing
                refold.append(i)
        return refold

    def _commit(self, work: _Pass, snap, meanwhile: Callable[[], object] | None = None):
        """Send every line with a re-read behind it; rows then show what stuck.
        `meanwhile` runs while tmux writes and re-reads (run()'s)."""
        first = work.first_batch
        if not work.lines and first is None:
            return snap
        listing = read.Listing(self.lean, prior=snap)  # path and command: the first read's
        # The rollups these writes should leave go in the same batch (one spawn fewer on
        # every cold refresh). A guarded write a hook beat is refused, so the prediction
        # can be wrong: the re-read shows what stuck, and run() writes the rollups again
        # only where they differ from it (a second spawn, in that race only).
        rollups = []
        if work.producing:
            rollups = rollup_lines(snap, {**work.decoded, **work.predicted})
        # after the first half's writes, when they went ahead: tmux holds this batch
        # until that one signals its end
        head = [f"wait-for {first[1]}"] if first is not None else []
        pending = self.server.begin_source(head + work.lines + rollups + [listing.line()])
        try:
            if meanwhile is not None:
                meanwhile()
        finally:  # every spawn is read (and reaped) whatever the caller's work raised
            try:
                if first is not None:
                    first[0].result()
            finally:
                out, _err = pending.result()
        final = listing.parse(out)
        final_by_id = {p.pane_id: p for p in final.panes}
        # every row reads from the re-read: the writes (stamps, telemetry lanes,
        # cleared marks) are what the surfaces must show
        for pane_id in work.touched | set(work.rows):
            pane = final_by_id.get(pane_id)
            old = work.rows.pop(pane_id, None)
            if pane is None or pane.options.get("@agent_ignore"):
                continue
            stamp, _problem = _stamp_problem(pane)
            if stamp is None:
                continue
            ident = work.identities.get(pane_id)
            agent = stamp.name or (ident.agent if ident is not None else "")
            work.add_row(pane, stamp, agent, foreign=old.foreign if old else False)
        # keep clients from the first read (the re-read does not list them)
        return read.Snapshot(final.panes, snap.clients, final.last_poll, final.setpf_ok,
                             final.version, final.socket_path, final.server_pid)

    def _reap(self, pane, now: int) -> str:
        from tma.core import identity as ident_mod

        table = self.table_for(pane.pane_pid)
        raw = pane.options.get("@tma_reg_dead_since", "")
        marker = codec.to_ms(int(raw)) if raw.isdigit() else 0
        if table is None or not ident_mod.is_shell_only(table, pane.pane_pid):
            return write.set_plain(pane.pane_id, "@tma_reg_dead_since", "") if raw else ""
        if not marker or marker > now:
            return write.set_plain(pane.pane_id, "@tma_reg_dead_since", str(now))
        if now - marker >= REAP_MS:
            return "remove"
        return ""

    def _quiet(self, pane, stamp: codec.Stamp, ident, now: int) -> bool:
        """Reuse the stamp without a capture when the screen cannot have changed."""
        if self.cfg.freshness_secs == 0 or not stamp.hash or stamp.stamped_at > now:
            return False
        if stamp.state == states.WORKING:
            return False  # a working->idle dwell may be owed
        if stamp.pid and ident.pid and stamp.pid != ident.pid:
            return False  # a new episode
        if stamp.source == states.SOURCE_PROCESS and ident.foreground_is_agent:
            return False
        if stamp.source == states.SOURCE_CAPTURE and not ident.foreground_is_agent:
            return False
        if stamp.source == states.SOURCE_HOOK:
            if now - stamp.evidence_at > claim_window_ms(self.cfg, stamp):
                return False
            dwell = self.cfg.dwell_secs * 1000
            if (stamp.state == states.BLOCKED and now - stamp.evidence_at > dwell
                    and stamp.stamped_at - stamp.evidence_at <= dwell
                    and self._decisive_past_blocked(ident.agent)):
                # decisive chrome (Copilot's idle footer) ends a blocked claim only when
                # read more than the dwell after the claim's evidence: a claim no read
                # has met since then (the hook's own write, a hold inside the dwell, a
                # hook run late after an Esc-denied dialog had gone) is read once more;
                # a hold past the dwell moves stamped_at beyond it, and the skip is back.
                # Only for such agents: for the rest no read can end the claim, and an
                # agreeing dialog's corroboration would re-arm this every dwell.
                return False
        if pane.window_activity <= 0:
            return False
        return (pane.window_activity + 1) * 1000 <= stamp.stamped_at

    def _decisive_past_blocked(self, agent: str | None) -> bool:
        """Can this agent's decisive chrome end a blocked hook claim? From the cached
        documents, once per cycle (carried over by fresh()): the quiet skip asks it where
        the full set is not loaded."""
        if self._enders is None:
            from tma.runtime import manifests

            self._enders = manifests.blocked_enders(self.manifest_dir)
        return agent in self._enders

    def guarded(self) -> bool:
        """Whether this server expands `set-option -F` (probed once, cached on the server)."""
        if self._guarded is None:
            self._guarded = probe(self.server, warn=self.warn)
        return self._guarded

    def _verdict(self, pane, stamp, ident, cap, now: int, demoted: bool,
                 seen: _Seen | None):
        """(plan, guarded, viewport hash) for one pane, or None when its agent has no
        manifest. `seen`: the capture as `_evaluate` read it (None: no capture)."""
        from tma.core import plan as P
        from tma.core.fold import Facts, evidence_from, verdict

        manifest = self.manifests().get(ident.agent)
        if manifest is None:
            return None
        facts = Facts(agent_pid=ident.pid, foreground_is_agent=ident.foreground_is_agent,
                      scrolled=pane.scroll_position > 0)
        evidence = []
        body_hash = stamp.hash if stamp is not None else ""
        prompt = ""
        if cap is not None and seen is not None:
            result, prompt = seen.result, seen.prompt
            if result.history_view:
                facts = Facts(facts.agent_pid, facts.foreground_is_agent, facts.scrolled, True)
            evidence = evidence_from(result, now)
            import zlib

            body_hash = format(zlib.crc32(cap.body.encode("utf-8", "replace")), "08x")
        # demoted: a stale hook claim is not believed (a fresh one is new hook evidence)
        demoted = demoted and stamp is not None and stamp.source == states.SOURCE_HOOK \
            and now - stamp.evidence_at > claim_window_ms(self.cfg, stamp)
        prev = stamp.replace(source=states.SOURCE_CAPTURE) if demoted else stamp
        plan = verdict(prev, facts, evidence, manifest.visible, self.cfg.fold(), now, prompt,
                       manifest.decisive)
        guarded = self.guarded() and not demoted
        if (guarded and stamp is not None and plan.action == P.PUBLISH
                and write.would_hold(plan.guard, pane.options, now)):
            # The stored tuple already wins against this verdict (a hook claim the fold
            # does not protect, such as hook/unknown): the write would hold and leave
            # the stamp stale, so every cycle would capture again. Refresh it instead:
            # the pane was read, and the tuple that stands is current.
            plan = P.hold(f"{plan.reason}; held by the stored tuple ({plan.guard})")
        return plan, guarded, body_hash

    def _seen_clear(self, snap, rows: dict[str, Row], touched: set[str]) -> list[str]:
        marked = [r for r in rows.values() if r.stamp.attention and r.pane.pane_id not in touched]
        if not marked:
            return []
        showing: dict[str, int] = {}
        for c in snap.clients:
            if c.control_mode or not c.pane_id:
                continue  # a -CC client's activity clock is frozen at attach
            showing[c.pane_id] = max(showing.get(c.pane_id, 0), c.activity)
        out = []
        for r in marked:
            activity = showing.get(r.pane.pane_id)
            episode = r.stamp.episode_ms
            if activity is None or not episode:
                continue
            if activity * 1000 > episode:
                out.append(write.set_plain(r.pane.pane_id, "@agent_attention", ""))
                r.stamp = r.stamp.replace(attention=False)
        return out

    def _rollout(self, snap, now: int) -> list[str]:
        """Codex's rollout tail, for panes whose hooks named the file (every hooked agent
        names its transcript: only a rollout format's panes load the tail's modules)."""
        named = [p for p in snap.panes if p.options.get("@agent_transcript")]
        if not named:
            return []
        from tma.runtime import manifests

        formats = manifests.context_formats(self.manifest_dir, self.cfg.agents)
        named = [p for p in named
                 if formats.get(p.options.get("@agent_name", "")) == ROLLOUT_FORMAT]
        if not named:
            return []
        from tma.runtime import rollout

        return rollout.lines_for(named, formats, now)

    def _write_rollups(self, snap, decoded=None) -> None:
        lines = rollup_lines(snap, decoded)
        if lines:
            self.server.source(lines)


class _Seen:
    """One capture as the rules read it: the engine's result and the prompt identity
    (tma.core.prompt; "" when the screen shows none, or it did not read the same twice)."""

    __slots__ = ("result", "prompt")

    def __init__(self, result, prompt: str) -> None:
        self.result = result
        self.prompt = prompt


#: From this many panes to fold, the first half's writes go to tmux while the rules read
#: the second half (Cycle._fold_all): one spawn more, about half the fold's time less.
PIPELINE_PANES = 24

#: How long after a first read a new prompt is read again to be believed (agents repaint
#: within a few milliseconds of a resize; a half-drawn frame lasts no longer).
CONFIRM_MS = 100


def _settled(pane, now: int) -> bool:
    """Nothing was drawn in the pane's window for a whole second before this read (tmux
    keeps #{window_activity} in whole seconds: the second after the last output's
    second has passed too): no frame can be caught half-way, so its prompt is read once.
    A cold refresh of panes that sit on their prompts pays no confirmation wait."""
    return pane.window_activity > 0 and (pane.window_activity + 2) * 1000 <= now


def settle(ms: int) -> None:
    """Let a screen being repainted settle (a module function: the tests' seam for the
    time passing)."""
    import time

    time.sleep(ms / 1000)


def _monotonic() -> float:
    import time

    return time.monotonic()


def _prompt_of(screen, result, manifest) -> str:
    blocker = result.claim(states.BLOCKED)
    if blocker is None:
        return ""
    from tma.core.prompt import of_screen

    return of_screen(screen, blocker.detail, getattr(manifest, "dialog", None))


def claim_window_ms(cfg, stamp) -> int:
    """How long a hook claim stands against the screen: blocked_decay for blocked (a
    person may need minutes to decide), hook_decay for the rest."""
    secs = cfg.blocked_decay_secs if stamp is not None and stamp.state == states.BLOCKED \
        else cfg.hook_decay_secs
    return secs * 1000


def quiet_until(cfg, stamp) -> int | None:
    """The moment past which the clock alone may end the quiet skip's reuse of this stamp
    (`Cycle._quiet`: a hook claim's window; for a blocked claim no read has met past the
    dwell, the dwell, whether or not the agent's chrome is decisive); None when the clock
    never does. What else it reads (the screen, the pane's processes) aside: the status
    line's memo (tma.runtime.status_memo) stands no longer than this."""
    if stamp.source != states.SOURCE_HOOK:
        return None
    until = stamp.evidence_at + claim_window_ms(cfg, stamp)
    dwell = cfg.dwell_secs * 1000
    if stamp.state == states.BLOCKED and stamp.stamped_at - stamp.evidence_at <= dwell:
        until = min(until, stamp.evidence_at + dwell)
    return until


def rollup_lines(snap, decoded: dict[str, str | None] | None = None) -> list[str]:
    """Recompute both rollups from every decodable pane; write only where they changed.
    `decoded`: pane id -> the state of its stamp (None: no stamp, or unreadable) as
    decoded from these same options (the cycle's sort), so no pane is decoded twice."""
    from tma.core.rollup import summary

    windows: dict[str, list[str]] = {}
    sessions: dict[str, list[str]] = {}
    stored_w: dict[str, str] = {}
    stored_s: dict[str, str] = {}
    for pane in snap.panes:
        windows.setdefault(pane.window_id, [])
        sessions.setdefault(pane.session_id, [])
        stored_w[pane.window_id] = pane.options.get(options.ROLLUP_WINDOW, "")
        stored_s[pane.session_id] = pane.options.get(options.ROLLUP_SESSION, "")
        if pane.options.get("@agent_ignore"):
            continue
        if decoded is not None and pane.pane_id in decoded:
            state = decoded[pane.pane_id]
        else:
            try:
                stamp = codec.decode(pane.options)
            except codec.DecodeError:
                continue
            state = stamp.state if stamp is not None else None
        if state is not None:
            windows[pane.window_id].append(state)
            sessions[pane.session_id].append(state)
    lines = []
    for wid, sts in windows.items():
        value = summary(sts)
        if value != stored_w.get(wid, ""):
            lines.append(write.rollup("window", wid, value))
    for sid, sts in sessions.items():
        value = summary(sts)
        if value != stored_s.get(sid, ""):
            lines.append(write.rollup("session", sid, value))
    return lines


def probe(server, warn=None) -> bool:
    """The -F expansion probe; its answer is cached in the server option @tma_setpf_ok."""
    from tma.tmux.adapter import NoServer, TmuxError

    try:
        res, _err = server.source([write.probe_line()])
    except NoServer:
        raise
    except TmuxError:
        return True  # cannot tell: assume guarded, cache nothing
    ok = res.strip() == write.PROBE_EXPECT
    if not ok:
        server.source([write.server_option("@tma_setpf_ok", "0")])
        if warn is not None:
            warn("tma: this tmux does not expand set-option -F; writes are unguarded "
                 "(upgrade to tmux 3.2 or newer)\n")
    return ok
