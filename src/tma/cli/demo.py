"""`tma demo`: scripted fake agents on a private tmux server, watched through the real CLI.

The demo starts its own server (`tmux -L tma-demo-<pid> -f /dev/null`), never the
user's. Each fake agent is a real process named like the agent (a symlink called
`claude`, `codex`, … pointing at this Python, running `tma/demo_agent.py`) that draws
that agent's chrome and walks idle → working → blocked → idle. The demo polls with
`tma ls` (a child process, like a status line would) and prints the listing and
`tma status --format plain` whenever the set of verdicts changes. Every verdict it
prints was read back from the stamps the poll cycle wrote into the panes.

Afterwards it kills the server and every process it started and removes its temp dir;
`--keep` leaves the server running (agents looping their scripts) and prints the stop
command instead.
"""

from __future__ import annotations

import shlex
import shutil
import signal
import sys
import time

from tma.cli import common, spec
from tma.runtime.demo import AGENTS, Demo, Stop
from tma.tmux import demo_server
from tma.tmux.adapter import resolve_bin
from tma.ui import table


def _raise_stop(signum, frame):
    raise Stop()


def _width() -> int:
    return shutil.get_terminal_size((120, 40)).columns


def _out(text: str = "") -> None:
    """One line, folded at spaces to the terminal's width (the indent kept on each
    piece), so nothing wraps mid-word at 80 or 40 columns."""
    width = _width()
    if len(text) > width:
        import textwrap

        indent = " " * (len(text) - len(text.lstrip(" ")))
        text = textwrap.fill(text.strip(), width, initial_indent=indent,
                             subsequent_indent=indent + "  ", break_on_hyphens=False)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(session: common.Session, argv: list[str]) -> int:
    _, args = spec.parse("demo", argv, session)
    g = session.g
    if g.socket_name or g.socket_path:
        raise common.UsageError("the demo runs its own private server; "
                                "--socket-name/--socket-path do not apply")
    if args.seconds <= 0:
        raise common.UsageError("--seconds must be positive")

    if shutil.which(resolve_bin()) is None:
        common.err("tma: the demo needs tmux (3.2 or newer) on PATH")
        return common.FAIL
    demo = Demo(session, args.seconds, args.keep, _out, _width)
    old = {s: signal.signal(s, _raise_stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    interrupted = False
    try:
        try:
            demo.setup()
        except Exception as exc:  # tmux refused: report it and clean up what exists
            common.err(f"tma demo: could not start the demo server: {exc}")
            demo.keep = False
            return common.FAIL
        attach = demo_server.attach_command(demo.server)
        _out(f"tma demo: {len(AGENTS)} scripted fake agents "
             f"({', '.join(label for label, _program, _launcher in AGENTS)}) on a private "
             "tmux server")
        _out(f"  watch them:  {attach}   (a key in a blocked pane answers its dialog)")
        _out(f"  stop:        Ctrl-C, or wait {args.seconds:g} s")
        _out("  every verdict below is read back from the stamps tma writes into the panes")
        _out()
        for line in table.legend(demo.palette):
            _out(line)
        _out()
        demo.t0 = time.monotonic()
        demo.watch()
    except (KeyboardInterrupt, Stop):
        interrupted = True
        _out()
        _out("interrupted")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second ^C must not skip the cleanup
        try:
            if demo.keep and not interrupted:
                _out(f"left running (--keep): {demo_server.attach_command(demo.server)}")
                _out("  the agents loop their scripts; while you are attached the status line "
                     "runs `tma status` every second")
                _out(f"stop it with: {demo_server.stop_command(demo.server)}; rm -rf "
                     f"{shlex.quote(demo.tmp)}")
            else:
                demo.teardown()
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            for s, h in old.items():
                signal.signal(s, h)
    seen = [s for s in ("blocked", "working", "done", "idle", "unknown") if s in demo.seen]
    if seen:
        _out("verdicts seen: " + ", ".join(seen))
    else:
        _out("no agent pane was recognised: are the bundled manifests installed? "
             "(`tma doctor` lists what loaded)")
    _out()
    _out("next: run `tma init` inside your own tmux to wire your agents and the status line,")
    _out("      then `tma ls` lists them (see README.md, \"Daily use\")")
    return 0
