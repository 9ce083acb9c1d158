"""The status line's last answer: `tma status` under `#()` without a tmux spawn, while
nothing it rests on can have changed.

A status line runs `tma status` every few seconds on every client; most runs read the
same stamps and print the same segment. After a run that read no screen and wrote
nothing (one spawn: the listing), the segment is kept in the runtime dir
(Paths.status_memo) with what it rests on, and the next run prints it again without
asking tmux if, and only if, all of these still hold:

* the same scope (config file, manifests, tma version), config file and manifest dir
  (stat), and the generation file untouched since the answer's listing was read: every
  tma process touches it after it writes to tmux (tma.tmux.adapter.Server), so a hook's
  stamp, a cycle's, a mute or a clear ends the answer;
* the clock: before the first moment a stamp it consumed stops being fresh (`[fold]
  freshness_secs`, 3 s by default), before a hook claim it reused reaches its decay or
  dwell (tma.runtime.cycle.quiet_until), and never past the freshness window from the
  run that kept it;
* the tmux server is the same process and its children are the panes it counted, no
  fewer (a pane closed, or its process gone) and no new session leader (a new pane);
  tmux's `#()` and `run-shell` jobs are children too, but never session leaders;
* every agent pid a consumed stamp names is alive (the full run re-reads a pane whose
  agent exited);
* each pane the full run would identify (no stamp, or a stamp reused because its
  window printed nothing since) has the same processes (pid and name, its whole
  subtree): a new process is how an agent started in a shell shows; and for a reused
  stamp, not one write syscall by any of them (/proc/<pid>/io): a screen is redrawn by
  a write to the pane's terminal.

What none of these sees waits at most the freshness window, as a fresh stamp's screen
does: an option set by hand with `tmux set-option` (an `@agent_ignore`), a write by a
tma that predates this file, a pane's title, output written to a pane's terminal by a
process outside the pane, input echoed by the terminal. `freshness_secs = 0` turns the
memo off with the stamps' own window.

Lean on purpose (the status line's hot path): `os` and `time`, no tmux, no json. The
file is plain lines, the segment last; anything unreadable is a miss, never an error,
and nothing is read from a runtime dir that is not the user's alone (what it holds
reaches tmux's status line).
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tma.core.paths import Paths
    from tma.runtime.cycle import Result

MAGIC = "tma-status-memo 1"
_FIELDS = 10  # lines before the segment


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _stat_sig(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"


def _children(pid: int) -> list[int] | None:
    """Every child of `pid`, from each of its threads' children file; None when the
    kernel keeps no such files (then there is no memo) or the process is gone."""
    base = f"/proc/{pid}/task"
    try:
        tids = os.listdir(base)
    except OSError:
        return None
    out: list[int] = []
    for tid in tids:
        raw = _read(f"{base}/{tid}/children")
        if raw is None:
            if tid == str(pid):
                return None
            continue  # a thread that ended between the listing and the read
        out.extend(int(w) for w in raw.split())
    return out


def _stat_fields(pid: int) -> tuple[bytes, list[bytes]] | None:
    """(comm, the fields after it) of /proc/<pid>/stat."""
    raw = _read(f"/proc/{pid}/stat")
    if raw is None:
        return None
    close = raw.rfind(b")")
    return raw[raw.find(b"(") + 1:close], raw[close + 2:].split()


def _writes(pid: int) -> str | None:
    """The write syscalls the process has made (/proc/<pid>/io's syscw, all its threads)."""
    raw = _read(f"/proc/{pid}/io")
    if raw is None or (at := raw.find(b"syscw:")) < 0:
        return None
    return raw[at + 6:raw.find(b"\n", at)].strip().decode("ascii", "replace")


def subtree(root: int, writes: bool = False) -> str | None:
    """A pane's processes as `pid/comm-hex`, sorted and comma-joined (an exec in place
    changes the name), with `writes` each one's write syscalls (`/syscw`): a screen is
    drawn by a write to the pane's terminal, so a subtree that made none since has not
    redrawn its pane. None when any of it cannot be read."""
    out = []
    queue, seen = [root], {root}
    while queue:
        pid = queue.pop()
        stat = _stat_fields(pid)
        kids = _children(pid)
        count = _writes(pid) if writes else ""
        if stat is None or kids is None or count is None:
            return None
        out.append(f"{pid}/{stat[0].hex()}/{count}" if writes else f"{pid}/{stat[0].hex()}")
        for kid in kids:
            if kid not in seen:
                seen.add(kid)
                queue.append(kid)
    return ",".join(sorted(out))


def _new_pane(pid: int) -> bool:
    """A child of the server that leads its own session: a pane (or a popup), where a
    `#()` or `run-shell` job never calls setsid. Gone already: a job that ended."""
    stat = _stat_fields(pid)
    if stat is None:
        return False  # gone already: it was a job that ended
    fields = stat[1]
    return len(fields) < 4 or fields[3] == str(pid).encode()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class Memo:
    """One status run's view of its memo: built before the run's listing (the generation
    it rests on is read then), asked first (`answer`), fed the run's result (`keep`)."""

    def __init__(self, places: Paths, socket_path: str, config: str | None,
                 manifest_dir: str | None) -> None:
        """`config`, `manifest_dir`: the run's --config and --manifest-dir (None: the
        defaults), which the daemon's scope spells too."""
        from tma.runtime import handoff

        self.socket = socket_path
        self.runtime_dir = places.runtime_dir
        self.path = places.status_memo(socket_path)
        self.gen_path = places.status_gen(socket_path)
        args = {k: v for k, v in (("config", config), ("manifest-dir", manifest_dir)) if v}
        # one line: the scope's own line breaks escaped
        self.scope = handoff.scope(args, places).replace("\\", "\\\\").replace("\n", "\\n")
        self.config_sig = _stat_sig(places.config_file(config))
        self.manifest_sig = _stat_sig(manifest_dir or places.manifest_dir)
        self.gen_sig = _stat_sig(self.gen_path)
        self.started_ms = _now_ms()

    # ---------------------------------------------------------------- the answer

    def answer(self) -> str | None:
        """The kept segment when everything it rests on still holds; None otherwise."""
        from tma.runtime.handoff import problem

        # what is read here reaches tmux's status line: only from a dir of ours alone
        if self.gen_sig == "-" or problem(self.runtime_dir) is not None:
            return None
        raw = _read(self.path)
        if raw is None:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        parts = text.split("\n", _FIELDS)
        if len(parts) != _FIELDS + 1 or parts[0] != MAGIC:
            return None
        (_magic, scope, config_sig, manifest_sig, gen_sig, span, server, panes, pids,
         trees) = parts[:_FIELDS]
        if (scope, config_sig, manifest_sig, gen_sig) != (
                self.scope, self.config_sig, self.manifest_sig, self.gen_sig):
            return None
        try:
            made, until = (int(w) for w in span.split())
            server_pid = int(server)
            pane_pids = {int(w) for w in panes.split()}
            agent_pids = [int(w) for w in pids.split()]
        except ValueError:
            return None
        if not made <= _now_ms() < until:
            return None
        children = _children(server_pid)
        if children is None or not pane_pids.issubset(children):
            return None
        if any(_new_pane(c) for c in children if c not in pane_pids):
            return None
        if not all(_alive(p) for p in agent_pids):
            return None
        for tree in trees.split(";") if trees else ():
            root, _, sig = tree.partition("=")
            quiet = root.startswith("w")  # a reused stamp: its screen must be unwritten
            root = root[1:] if quiet else root
            if not root.isdigit() or subtree(int(root), quiet) != sig:
                return None
        return parts[_FIELDS]

    # ---------------------------------------------------------------- keeping one

    def keep(self, result: Result, segment: str, cfg) -> bool:
        """Keep `segment` when the run that printed it read no screen and wrote nothing
        (no capture, one spawn), and every row is a fresh stamp consumed or a quiet one
        reused: what a full run would print again while nothing it reads changes.
        True when kept."""
        freshness_ms = cfg.freshness_secs * 1000
        if freshness_ms <= 0:
            return False
        if self.gen_sig == "-":
            self._generation()  # the next run can keep one
            return False
        stats = result.stats
        snap = result.first_snapshot
        if (stats.captures or stats.spawns != 1 or snap is None
                or snap.socket_path != self.socket or not snap.server_pid.isdigit()
                or not self._whole(result, freshness_ms)):
            return False
        rests = self._rests_on(result, cfg, freshness_ms)
        if rests is None:
            return False
        until, alive, trees = rests
        lines = [MAGIC, self.scope, self.config_sig, self.manifest_sig, self.gen_sig,
                 f"{self.started_ms} {until}", snap.server_pid,
                 " ".join(str(p.pane_pid) for p in snap.panes), " ".join(alive),
                 ";".join(trees)]
        if any("\n" in line for line in lines):
            return False
        return self._write("\n".join(lines) + "\n" + segment)

    @staticmethod
    def _whole(result: Result, freshness_ms: int) -> bool:
        """Every row is what a full run would count again unread."""
        from tma.core.codec import is_fresh

        stats, rows = result.stats, result.rows
        if not stats.stampede:
            return stats.consumed + stats.skipped == len(rows)
        # the guard consumed every stamp as it stood and identified no pane: a full
        # run's answer only when every stamp was fresh (and, _rests_on, every pane has one)
        return all(is_fresh(r.stamp, result.now, freshness_ms) for r in rows)

    def _rests_on(self, result: Result, cfg, freshness_ms: int
                  ) -> tuple[int, list[str], list[str]] | None:
        """(until when, the agent pids that must live, each unread pane's processes):
        a full run consumes a fresh stamp unread while its agent lives, and reuses a
        quiet one, or finds no agent, after reading the pane's processes."""
        from tma.core.codec import is_fresh
        from tma.runtime.cycle import quiet_until

        until = self.started_ms + freshness_ms
        alive, unread, quiet = [], set(), set()
        for r in result.rows:
            if is_fresh(r.stamp, result.now, freshness_ms):
                until = min(until, r.stamp.stamped_at + freshness_ms)
                unread.add(r.pane.pane_id)
                if r.stamp.pid > 0:
                    alive.append(str(r.stamp.pid))
            else:
                # reused because its window printed nothing since the stamp: it stands
                # while no process of the pane writes (the screen), and the clock allows
                quiet.add(r.pane.pane_id)
                clock = quiet_until(cfg, r.stamp)
                until = until if clock is None else min(until, clock)
        trees = []
        for pane in result.first_snapshot.panes:
            if pane.pane_pid <= 0:
                return None
            if pane.pane_id in unread or pane.options.get("@agent_ignore"):
                continue
            writes = pane.pane_id in quiet
            sig = None if result.stats.stampede else subtree(pane.pane_pid, writes)
            if sig is None:
                return None  # unreadable, or a pane the stampede guard did not identify
            trees.append(f"{'w' if writes else ''}{pane.pane_pid}={sig}")
        return (until, alive, trees) if until > self.started_ms else None

    def _generation(self) -> None:
        """Create the generation file (the first run on this server keeps nothing: an
        answer needs a listing read after the file existed)."""
        from tma.runtime.rundir import RuntimeDirError, make

        try:
            make(self.runtime_dir)
            fd = os.open(self.gen_path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600)
            os.close(fd)
        except (OSError, RuntimeDirError):
            pass

    def _write(self, text: str) -> bool:
        from tma.runtime.handoff import problem

        if problem(self.runtime_dir) is not None:
            return False
        tmp = f"{self.path}.{os.getpid()}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, text.encode("utf-8"))
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False
        return True
