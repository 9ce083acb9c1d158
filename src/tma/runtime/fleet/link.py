"""The link to one host: an argv that yields stdio (ssh, docker exec, ...) with
`tma serve --stdio` at its far end, and a bounded conversation over it.

Whatever the far end does, the answer is a named state, never a traceback or a hang:
every read has a deadline and the child is killed when it passes. What can go wrong,
and the state each gives (`Probe.state`; `ok` is the one good one):

- `unreachable`   ssh exited 255 before any frame (its own stderr line is the error)
- `tma-missing`   the remote shell found no tma (exit 127, "command not found")
- `tma-too-old`   the remote tma has no `serve` command
- `tmux-down`     the remote tma found no tmux server (serve exits 1 before any frame,
                  or a frame's error says so)
- `banner`        more non-JSON output before the hello answer than a banner could be
                  (a few lines of motd are skipped and counted; `Probe.banner` says how many)
- `frame-too-large`, `bad-frame`, `unsupported-schema`, `refused`: the remote spoke,
                  but not in a way this tma reads
- `timeout`       no answer within the deadline (the child is killed)
- `closed`        the link ended before an answer for another reason (its stderr line)
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from tma import __version__
from tma.core import inbound, proto
from tma.core.untrusted import clean, lines

#: A hello answer after more than this much other output is not a banner any more.
BANNER_LINES = 64
BANNER_BYTES = 16 * 1024
#: The longest line a device reads from a host (a snapshot of many panes is one line).
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
DEFAULT_TIMEOUT_S = 5.0
#: A unix socket's path limit (sun_path, less its NUL) on Linux.
MAX_SOCKET_PATH = 107

STATES = ("ok", "unreachable", "tma-missing", "tma-too-old", "tmux-down", "banner",
          "frame-too-large", "bad-frame", "unsupported-schema", "refused", "timeout",
          "closed", "spawn-failed")


def ssh_argv(target: str, control_dir: str, *, config: str | None = None) -> list[str]:
    """The default transport: one multiplexed ssh connection per host (ControlMaster), so
    polls reuse it instead of opening a session each (sshd's MaxSessions), bounded by
    ConnectTimeout and ServerAlive so a dead host is noticed in seconds. No remote
    command: the host's authorized_keys forced command runs `tma serve --stdio`."""
    argv = ["ssh"]
    if config:
        argv += ["-F", config]
    argv += ["-T", "-o", "BatchMode=yes"]
    control = os.path.join(control_dir, "ssh-%C")
    if len(control) + 40 < MAX_SOCKET_PATH:  # %C is 40 hex digits; a longer path ssh refuses
        argv += ["-o", "ControlMaster=auto", "-o", f"ControlPath={control}",
                 "-o", "ControlPersist=60"]
    # `--` ends ssh's options: a target is never read as one (hosts.py refuses a leading
    # `-` too, but the argv does not rely on it)
    return argv + ["-o", "ConnectTimeout=5", "-o", "ServerAliveInterval=5",
                   "-o", "ServerAliveCountMax=2", "--", target]


def argv_for(host, runtime_dir: str) -> list[str]:
    return list(host.via) if host.via else ssh_argv(host.target, runtime_dir)


@dataclass
class Probe:
    """What one conversation with a host found."""

    name: str
    state: str = "closed"
    error: str | None = None
    hello: proto.HelloResponse | None = None
    rows: tuple[proto.FleetRow, ...] = ()
    banner: int = 0  # non-JSON lines skipped before the hello answer
    stderr: str = ""
    exit_code: int | None = None
    took_ms: int = 0
    at_ms: int = 0  # when the snapshot arrived (epoch ms)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    def banner_note(self) -> str | None:
        if not self.banner:
            return None
        return (f"the remote shell printed {self.banner} line{'s' if self.banner != 1 else ''}"
                " before tma: a banner or motd; use a forced command or `ssh -T` with a "
                "quiet shell")


class LinkFailed(Exception):
    def __init__(self, state: str, error: str) -> None:
        super().__init__(error)
        self.state, self.error = state, error


class Throttle:
    """A token bucket on the bytes read from one host: at most `rate` bytes a second after
    a first `burst`. When a host sends more, its reader sleeps before reading on, so the
    far end blocks on a full pipe instead of this machine parsing whatever it sends:
    parsing a snapshot costs about 25 ms a MiB here, so a host that streams without a
    pause costs at most a few percent of a core, and the daemon's own loop (another
    thread) never waits on a host's volume."""

    def __init__(self, rate: int, burst: int, clock=time.monotonic, sleep=time.sleep) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.clock, self.sleep = clock, sleep
        self.at = clock()
        self.slept = 0.0  # seconds spent waiting (the daemon's status says it)

    def spend(self, n: int) -> None:
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.at) * self.rate)
        self.at = now
        self.tokens -= n
        if self.tokens < 0:
            wait = -self.tokens / self.rate
            self.slept += wait
            self.sleep(wait)


class Link:
    """One child process speaking the protocol on its stdio."""

    def __init__(self, argv: list[str], *, env: dict[str, str] | None = None,
                 throttle: Throttle | None = None) -> None:
        self.argv = argv
        self.throttle = throttle
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=env,
                                         start_new_session=True)
        except OSError as exc:
            raise LinkFailed("spawn-failed", f"cannot run {argv[0]!r}: {exc.strerror}") from None
        self.out = b""
        self.err = b""
        self.splitter = proto.LineSplitter(MAX_RESPONSE_BYTES)
        self.lines: list[bytes | proto.ProtoError] = []
        self.eof = False
        self.n = 0
        #: what the host sent that was refused or cut (tma.core.inbound), newest last
        self.problems: list[str] = []
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr  # all three piped
        self.stdin, self.stdout, self.stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        for fd in (self.stdout.fileno(), self.stderr.fileno()):
            os.set_blocking(fd, False)

    # -- writing
    def send(self, frame: proto.Frame) -> None:
        try:
            self.stdin.write(proto.encode(frame))
            self.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the read that follows names why the far end went away

    def next_id(self) -> str:
        self.n += 1
        return str(self.n)

    # -- reading
    def line(self, deadline: float) -> bytes | proto.ProtoError | None:
        """The next line from the far end; None when its stdout closed. LinkFailed
        `timeout` when the deadline passes first."""
        out_fd, err_fd = self.stdout.fileno(), self.stderr.fileno()
        while not self.lines:
            if self.eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise LinkFailed("timeout", "no answer in time")
            ready, _, _ = select.select([out_fd, err_fd], [], [], left)
            if err_fd in ready:
                self._drain_err()
            if out_fd in ready:
                try:
                    chunk = os.read(out_fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    self.eof = True
                else:
                    if self.throttle is not None:
                        self.throttle.spend(len(chunk))
                    self.lines.extend(self.splitter.feed(chunk))
        return self.lines.pop(0)

    def _drain_err(self) -> None:
        try:
            chunk = os.read(self.stderr.fileno(), 65536)
        except (BlockingIOError, OSError):
            return
        if len(self.err) < 64 * 1024:
            self.err += chunk

    def stderr_text(self) -> str:
        """The far end's stderr as text a terminal may show: the transport's own words
        and whatever the host's side wrote there, each line cleaned (tma.core.untrusted)."""
        return lines(self.err.decode("utf-8", "replace"), 4096)

    def problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems = [*self.problems[-7:], text]

    def finish(self, grace: float = 1.0) -> int | None:
        """Close stdin, wait a moment for the far end to leave, else kill it."""
        try:
            self.stdin.close()
        except OSError:
            pass
        try:
            code = self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.wait()
        self._drain_err()
        for stream in (self.stdout, self.stderr):
            try:
                stream.close()
            except OSError:
                pass
        return code

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            try:
                self.proc.kill()
            except OSError:
                pass


def _is_frame(line: bytes) -> bool:
    try:
        doc = json.loads(line)
    except ValueError:
        return False
    return isinstance(doc, dict)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def classify_exit(argv: list[str], code: int | None, stderr: str) -> tuple[str, str]:
    """The state of a link that ended before answering, from its exit and its stderr."""
    low = stderr.lower()
    last = _last_line(stderr)
    tool = os.path.basename(argv[0]) if argv else ""
    if "unknown command 'serve'" in low or "unknown command \"serve\"" in low or (
            "invalid choice" in low and "serve" in low):
        return "tma-too-old", f"remote tma too old: it has no `serve` command ({last})"
    if code == 127 or "command not found" in low or ": not found" in low:
        return "tma-missing", f"remote tma not found: {last or f'exit {code}'}"
    if "no tmux server" in low:
        return "tmux-down", "the remote tma found no tmux server running"
    if tool == "ssh" and code == 255:
        return "unreachable", last or "ssh failed (exit 255)"
    if tool == "docker" and ("no such container" in low or "is not running" in low):
        return "unreachable", last
    return "closed", last or f"the link closed (exit {code}) before tma answered"


def converse(name: str, argv: list[str], *, timeout: float = DEFAULT_TIMEOUT_S,
             env: dict[str, str] | None = None, snapshot: bool = True,
             clock=time.time) -> Probe:
    """hello, then (with `snapshot`) one snapshot, then close: the probe `tma ls --hosts`
    and `tma host check` make. Never raises; bounded by `timeout` overall."""
    return exchange(name, argv, lambda _probe, _rid: None, timeout=timeout, env=env,
                    snapshot=snapshot, clock=clock).probe


def _answer(link: Link, probe: Probe, rid: str, deadline: float, *,
            before_hello: bool) -> proto.Frame:
    skipped_bytes = 0
    while True:
        item = link.line(deadline)
        if item is None:
            link.proc.poll()
            # the far end left: wait a moment for its exit status (it names why)
            try:
                link.proc.wait(timeout=max(0.05, min(1.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                pass
            raise LinkFailed("closed", "")
        if isinstance(item, proto.ProtoError):
            raise LinkFailed("frame-too-large",
                             f"the remote sent a line longer than {MAX_RESPONSE_BYTES} bytes")
        if before_hello and not _is_frame(item):
            probe.banner += 1
            skipped_bytes += len(item) + 1
            if probe.banner > BANNER_LINES or skipped_bytes > BANNER_BYTES:
                raise LinkFailed("banner", f"the remote printed more than {BANNER_LINES} "
                                 f"lines ({skipped_bytes} bytes) before tma answered: not "
                                 "tma serve, or a shell that talks; use a forced command")
            continue
        frame = _parse(item, link)
        if frame.id != rid:
            continue  # a stream frame or a late answer: not ours
        if isinstance(frame, proto.Error):
            if frame.code == proto.INTERNAL and "no tmux server" in frame.message:
                raise LinkFailed("tmux-down", f"remote: {frame.message}")
            if frame.code == proto.UNSUPPORTED_SCHEMA:
                raise LinkFailed("unsupported-schema", f"remote: {frame.message}")
            raise LinkFailed("refused", f"remote said {frame.code}: {frame.message}")
        return frame


def _talk(link: Link, probe: Probe, deadline: float, snapshot: bool, clock) -> None:
    rid = link.next_id()
    link.send(proto.HelloRequest(rid, "tma", __version__, _device()))
    hello = _answer(link, probe, rid, deadline, before_hello=True)
    if not isinstance(hello, proto.HelloResponse):
        raise LinkFailed("bad-frame", f"the remote answered hello with {hello.T!r}")
    probe.hello = hello
    if snapshot:
        rid = link.next_id()
        link.send(proto.SnapshotRequest(rid, None))
        snap = _answer(link, probe, rid, deadline, before_hello=False)
        if not isinstance(snap, proto.Snapshot):
            raise LinkFailed("bad-frame", f"the remote answered snapshot with {snap.T!r}")
        probe.rows = snap.agents
        probe.at_ms = int(clock() * 1000)
    probe.state = "ok"


def _device() -> str:
    return os.uname().nodename


def probe_all(named: list[tuple[str, list[str]]], *, timeout: float = DEFAULT_TIMEOUT_S,
              env: dict[str, str] | None = None) -> list[Probe]:
    """One probe per host, all at once (threads): a slow host costs its own timeout, never
    the others'. Results in the order given."""
    results: list[Probe | None] = [None] * len(named)

    def one(i: int, name: str, argv: list[str]) -> None:
        try:
            results[i] = converse(name, argv, timeout=timeout, env=env)
        except Exception as exc:  # a bug here still names the host rather than vanish
            results[i] = Probe(name, state="closed", error=f"tma failed: {exc!r}")

    threads = [threading.Thread(target=one, args=(i, n, a), daemon=True)
               for i, (n, a) in enumerate(named)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 3)
    return [r if r is not None else Probe(n, state="timeout", error="no answer in time")
            for r, (n, _a) in zip(results, named, strict=True)]


@dataclass
class Exchange:
    """What one acting conversation found: the probe (its state names a failure), the
    answer to the one request, and whether that request was written before the link
    went (a request written and not answered may have landed at the far end)."""

    probe: Probe
    answer: proto.Frame | None = None
    sent: bool = False


def exchange(name: str, argv: list[str], make, *, timeout: float = DEFAULT_TIMEOUT_S,
             env: dict[str, str] | None = None, snapshot: bool = False,
             clock=time.time, follow=None) -> Exchange:
    """hello, (with `snapshot`) one snapshot, then the one request `make(probe, id)` builds
    from what they said (None: send nothing) and its answer; then close. Never raises
    LinkFailed; bounded by `timeout` overall. `make` runs after the far end has greeted
    and before anything is written, so a caller can record the request first. `follow`:
    `follow(answer, id)` builds a next request from an answer (None: done), one after
    the other on the same link (`answer` is then the last one's)."""
    start = time.monotonic()
    deadline = start + timeout
    probe = Probe(name)
    result = Exchange(probe)
    try:
        link = Link(argv, env=env)
    except LinkFailed as exc:
        probe.state, probe.error = exc.state, exc.error
        return result
    try:
        _talk(link, probe, deadline, snapshot, clock)
        rid = link.next_id()
        frame = make(probe, rid)
        while frame is not None:
            link.send(frame)
            result.sent = True
            result.answer = _answer(link, probe, rid, deadline, before_hello=False)
            if follow is None:
                break
            rid = link.next_id()
            frame = follow(result.answer, rid)
    except LinkFailed as exc:
        probe.state, probe.error = exc.state, exc.error
        link.kill()
    finally:
        probe.exit_code = link.finish(grace=0.5 if probe.state == "ok" else 0.2)
        probe.stderr = link.stderr_text()
        probe.notes.extend(p for p in link.problems if p not in probe.notes)
        probe.took_ms = int((time.monotonic() - start) * 1000)
    if probe.state == "closed":
        probe.state, probe.error = classify_exit(argv, probe.exit_code, probe.stderr)
    return result


# -- a long-lived stream (the daemon's one link per host, tma.daemon.fleet)


def greet(link: Link, probe: Probe, deadline: float) -> proto.HelloResponse:
    """hello on an open link, a banner skipped and counted as a probe does; LinkFailed
    with the named state otherwise."""
    rid = link.next_id()
    link.send(proto.HelloRequest(rid, "tma", __version__, _device()))
    hello = _answer(link, probe, rid, deadline, before_hello=True)
    if not isinstance(hello, proto.HelloResponse):
        raise LinkFailed("bad-frame", f"the remote answered hello with {hello.T!r}")
    probe.hello = hello
    return hello


def next_frame(link: Link, deadline: float) -> proto.Frame:
    """The next frame of any id after the hello (a stream's snapshot or error, an
    answer). LinkFailed `timeout` at the deadline, `closed` at the end of the stream,
    and the states a probe names for a bad line."""
    item = link.line(deadline)
    if item is None:
        raise LinkFailed("closed", "")
    if isinstance(item, proto.ProtoError):
        raise LinkFailed("frame-too-large",
                         f"the remote sent a line longer than {MAX_RESPONSE_BYTES} bytes")
    return _parse(item, link)


def _parse(item: bytes, link: Link | None = None) -> proto.Frame:
    """One response line as a frame, made data (tma.core.inbound: pane ids checked,
    strings cleaned and bounded, rows capped; what was refused goes to `link.problems`);
    LinkFailed naming an unknown schema or a bad frame."""
    try:
        frame = proto.parse_line(item, proto.RESPONSE, limit=MAX_RESPONSE_BYTES)
    except proto.ProtoError as exc:
        if exc.code == proto.UNSUPPORTED_SCHEMA:
            raise LinkFailed("unsupported-schema", "the remote speaks another protocol "
                             f"schema: {clean(str(exc), 256)}") from None
        raise LinkFailed("bad-frame", f"the remote sent a frame tma cannot read: "
                         f"{clean(str(exc), 256)}") from None
    try:
        frame, problems = inbound.response(frame)
    except inbound.Refused as exc:
        raise LinkFailed("bad-frame", f"the remote sent a frame tma refuses: {exc}") from None
    for text in problems:
        if link is not None:
            link.problem(text)
    return frame


def ended(link: Link, state: str, error: str) -> tuple[str, str]:
    """The named state of a stream that ended (`closed`): from the child's exit and stderr,
    as a probe's (the child is reaped, killed after a short grace)."""
    code = link.finish(grace=0.3)
    if state != "closed":
        return state, error
    return classify_exit(link.argv, code, link.stderr_text())
