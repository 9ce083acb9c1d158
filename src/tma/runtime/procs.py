"""The process-table reader: one snapshot of pid, ppid, pgid, tpgid and comm.

On Linux it reads `/proc/<pid>/stat` directly (one small read per process, no
subprocess). Elsewhere it runs a single `ps -eo pid=,ppid=,pgid=,tpgid=,comm=`.
`None` means neither worked; identity then only honours hook registrations.

Comm spellings differ by source: /proc gives the kernel's comm (cut at 15 bytes,
never a path); BSD/macOS ps gives the invoked path, untruncated, possibly with
spaces. `tma.core.identity.normalize_comm` reconciles both.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tma.core.identity import Proc, ProcTable

PS_ARGS = ("ps", "-eo", "pid=,ppid=,pgid=,tpgid=,comm=")
PS_TIMEOUT = 3.0


def parse_stat(data: bytes) -> Proc | None:
    """One `/proc/<pid>/stat` record, or None if it is not one.

    The comm sits between the first `(` and the LAST `)`: it may itself contain
    spaces and parentheses. After it come state, ppid, pgrp, session, tty_nr,
    tpgid and more."""
    from tma.core.identity import Proc  # not at module level: `alive` is on the consume path

    open_ = data.find(b"(")
    close = data.rfind(b")")
    if open_ < 0 or close < open_:
        return None
    fields = data[close + 1 :].split(None, 6)
    if len(fields) < 6 or fields[0] in (b"Z", b"X"):
        # A zombie (or dead) agent is gone: it must not hold its pane for a cycle.
        return None
    try:
        return Proc(
            pid=int(data[:open_]),
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            tpgid=int(fields[5]),
            comm=data[open_ + 1 : close].decode("utf-8", errors="replace"),
        )
    except ValueError:
        return None


def parse_ps(text: str) -> list[Proc]:
    """`ps -eo pid=,ppid=,pgid=,tpgid=,comm=` output; the comm keeps inner spaces.

    Lines that do not parse are skipped."""
    from tma.core.identity import Proc

    out: list[Proc] = []
    for line in text.splitlines():
        fields = line.split(None, 4)
        if len(fields) < 5:
            continue
        try:
            pid, ppid, pgid, tpgid = (int(f) for f in fields[:4])
        except ValueError:
            continue
        out.append(Proc(pid, ppid, pgid, tpgid, fields[4].rstrip()))
    return out


def read_proc_dir(root: str = "/proc") -> ProcTable:
    """Every process under a procfs mount. Processes that vanish mid-read are skipped;
    an unreadable `root` raises OSError."""
    from tma.core.identity import ProcTable

    procs: list[Proc] = []
    append = procs.append
    os_open, os_read, os_close, rdonly = os.open, os.read, os.close, os.O_RDONLY
    prefix = root.rstrip("/") + "/"
    for name in os.listdir(root):
        if not name.isdigit():
            continue
        try:
            fd = os_open(prefix + name + "/stat", rdonly)
        except OSError:
            continue  # exited between listdir and open
        try:
            data = os_read(fd, 4096)
        except OSError:
            continue  # exited between open and read (ESRCH)
        finally:
            os_close(fd)
        proc = parse_stat(data)
        if proc is not None:
            append(proc)
    return ProcTable.of(procs)


def read_ps() -> ProcTable | None:
    """One `ps` run; None when it is missing, fails or times out."""
    import subprocess  # lazy: the /proc path never needs it

    from tma.core.identity import ProcTable

    try:
        result = subprocess.run(
            PS_ARGS,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PS_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    procs = parse_ps(result.stdout.decode("utf-8", errors="replace"))
    return ProcTable.of(procs) if procs else None


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 65536)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_subtree(root_pid: int, root: str = "/proc") -> ProcTable | None:
    """Only one pane's process subtree, walked through /proc/<pid>/task/<tid>/children.

    A pane that holds a shell costs two small reads instead of a stat of every process
    on the machine. Every thread's children file is read (a multi-threaded agent such as
    node may fork from any thread). None when the kernel has no children files
    (CONFIG_PROC_CHILDREN): the caller falls back to the whole table.
    """
    from tma.core.identity import ProcTable
    if root_pid <= 0:
        return ProcTable.of(())
    prefix = root.rstrip("/") + "/"
    procs: list[Proc] = []
    queue = [root_pid]
    seen = {root_pid}
    while queue:
        pid = queue.pop()
        data = _read(f"{prefix}{pid}/stat")
        proc = parse_stat(data) if data else None
        if proc is None:
            continue
        procs.append(proc)
        try:
            tids = os.listdir(f"{prefix}{pid}/task")
        except OSError:
            continue
        for tid in tids:
            kids = _read(f"{prefix}{pid}/task/{tid}/children")
            if kids is None:
                if not os.path.exists(f"{prefix}{pid}/task/{tid}/children") and \
                        os.path.exists(f"{prefix}{pid}/task/{tid}"):
                    return None  # no children files on this kernel
                continue
            for part in kids.split():
                child = int(part)
                if child not in seen:
                    seen.add(child)
                    queue.append(child)
    return ProcTable.of(procs)


def read_proc_table() -> ProcTable | None:
    """The current process table: /proc when this is Linux, else one `ps`; None if
    both fail."""
    if os.path.exists("/proc/self/stat"):
        try:
            table = read_proc_dir("/proc")
        except OSError:
            table = None
        if table is not None and len(table):
            return table
    return read_ps()


def alive(pid: int) -> bool:
    """Whether a process exists (a signal-0 probe; another user's process counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running(pid: int) -> bool:
    """Whether a process exists and has not exited: `alive`, less a zombie (an exited
    process its parent has not reaped yet: a daemon's parent is often an init that
    reaps late, and a stopped daemon must not look like one still running)."""
    if not alive(pid):
        return False
    data = _read(f"/proc/{pid}/stat")
    if data is None:  # gone since the probe, or no /proc here (the probe must do)
        return not os.path.exists("/proc/self/stat")
    return data.rsplit(b") ", 1)[-1][:1] != b"Z"
