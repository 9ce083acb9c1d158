"""What each everyday command imports with no host configured: tma's modules, pinned.

Every module a command imports is start-up time on every run: `tma status` runs from
every status line, `tma event` from every hook, `tma ls`, `jump`, `act --list`, `wait`
and `card` from scripts and keys, the picker from a key. Issue 29 found the fleet (hosts,
link, proto, ...), tomlkit and the installers loaded by commands that never reach a host;
this pins the whole set, so a module that joins a path is a decision, made here.

Each command runs for real, in a subprocess, through tma's own entry
(tests/helpers/import_audit.py: PROBE, and FIRST_FRAME for the picker): on a private tmux
server of fake agent panes (one blocked, one idle, one working) whose stamps are fresh, as
a status line keeps them, each run past the stampede second, with an isolated HOME and no
hosts.toml, and an attached client for `jump`. A module added to a path fails its command
here until it is added to the command's pin below and given a line in WHY; a module that
leaves a path fails it too, so the pin stays the truth.

This lives with the architecture tests and, unlike them, needs tmux (it skips without
it): the import path of a command that reads panes only runs whole with panes to read.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.fleet import Here
from tests.helpers.import_audit import FIRST_FRAME, PROBE, tma_modules
from tests.helpers.manifests import TEST_MANIFEST
from tests.helpers.ptyclient import PtyClient, run_on_pty
from tests.helpers.tmux_sockets import require_tmux

SRC = Path(__file__).resolve().parents[2] / "src"

#: Why each module is on some command's path (a pinned module without a line fails).
WHY = {
    # every command
    "tma": "the package (its version)",
    "tma.cli": "the command shell's package",
    "tma.cli.main": "the entry: finds the command, the one error boundary",
    "tma.core": "the pure layer's package",
    "tma.core.errors": "the one table of exit statuses",
    "tma.core.paths": "where the config, cache and runtime dir are",
    "tma.core.record": "the slotted records every layer builds",
    "tma.core.states": "the state vocabulary",
    "tma.runtime": "the runtime layer's package",
    "tma.runtime.cache": "the decoded config and manifests, cached on disk",
    "tma.runtime.config": "config.toml (decoded once, then cached)",
    # the Session and the command table
    "tma.cli.common": "the global options and the Session every command but event gets",
    "tma.runtime.session": "the Session: config, server, manifests and rows on demand",
    "tma.cli.spec": "the command table: flags, help, exit statuses",
    "tma.core.cmdparse": "the table's argparse parsers",
    "tma.core.cmdspec": "the shapes of the table's declarations",
    "tma.runtime.selectors": "--session/--repo/--branch/--agent/--state and pane ids",
    "tma.core.untrusted": "pane-id checks (selectors, navigate); tiny and re-free",
    # reading panes
    "tma.tmux": "the tmux layer's package",
    "tma.tmux.adapter": "the server and its errors",
    "tma.tmux.spawn": "the one way tma starts a tmux client",
    "tma.tmux.read": "the pane read (one list-panes)",
    "tma.tmux.frame": "the read's framing, alike on every tmux release",
    "tma.core.codec": "stamps decoded from pane options",
    "tma.core.prompt": "the prompt identity bound to a blocked episode (@tma_prompt): part of "
                       "every stamp the codec decodes, and of the binder's check; states only",
    "tma.core.options": "the option registry the read asks for",
    "tma.runtime.cycle": "the poll cycle behind every surface's rows",
    # a producing cycle over fresh stamps (past the stampede second)
    "tma.runtime.manifests": "the manifests' cached process index",
    "tma.core.identity": "a stamp-less pane (a shell) identified by its processes",
    "tma.runtime.procs": "the process table for that identification",
    "tma.core.rollup": "the session and server rollups, reconciled by a producing cycle",
    # moving a client (jump, and the picker's acting client)
    "tma.runtime.navigate": "the acting client and the move",
    "tma.core.nav": "which client, which pane, the trail",
    "tma.tmux.nav": "the move and the trail in tmux",
    "tma.tmux.attention": "clearing attention on arrival",
    "tma.tmux.write": "the trail's and the clear's guarded writes",
    "tma.core.plan": "the write plans tma.tmux.write renders",
    # rendering rows
    "tma.ui": "the renderers' package",
    "tma.ui.rows": "the ls rows and JSON rows",
    "tma.ui.table": "the table a person sees; the picker's note on a stale row",
    "tma.ui.text": "JSON output (ls --json, card --json) and the writes that never raise",
    "tma.runtime.git": "repo and branch labels for the rows",
    # per command
    "tma.cli.ls": "ls",
    "tma.runtime.act.card_screen": "ls --json: what a blocked row asks, read off its screen",
    "tma.runtime.act": "the actions' package (a docstring: its __init__ imports nothing)",
    "tma.runtime.notify": "the notifications' package (a docstring)",
    "tma.core.actions": "the actions' pure package (a docstring)",
    "tma.core.card": "that reading (the dialog rules)",
    "tma.core.rules": "the screen rules it evaluates",
    "tma.core.manifest": "the manifest schema (the dialog rules; an action file's checks)",
    "tma.core.hookmap": "an agent's hook table (event), imported by the manifest schema",
    "tma.cli.status": "status",
    "tma.runtime.handoff": "a daemon's socket: status and event ask one first, the feed "
                           "checks one (rundir)",
    "tma.ui.status": "the status segment",
    "tma.ui.contrast": "the segment's chip colours",
    "tma.cli.event": "event (parses its own flags: no command table)",
    "tma.runtime.hook": "the hook intake",
    "tma.core.intake": "the hook decision",
    "tma.core.jsonlite": "the payload's top-level strings without json",
    "tma.core.manifests": "the bundled manifests' generated tables",
    "tma.core.manifests._lanes": "each bundled agent's reply lane",
    "tma.core.notice": "whether the change is due a notification",
    "tma.runtime.notify.gate": "the [notify] config the hook path reads",
    "tma.cli.jump": "jump",
    "tma.cli.act": "act",
    "tma.runtime.act.registry": "the action set (bundled and user actions)",
    "tma.core.actions.schema": "an action file's schema",
    "tma.core.actions.gate": "the gate's vocabulary and the worst exit",
    "tma.core.actions.answers": "--answer's parser (checked before any pane is read)",
    "tma.cli.wait": "wait",
    "tma.runtime.waiting": "the wait's decision",
    "tma.runtime.feed": "the row feed of the long-running surfaces (wait, the picker)",
    "tma.runtime.rundir": "the feed's daemon socket checks; the status memo's runtime dir",
    "tma.runtime.status_memo": "the status line's last answer (no tmux spawn while it stands)",
    "tma.cli.card": "card",
    "tma.runtime.act.card": "the card of a pane",
    "tma.core.proto": "the card's records are the protocol's (cheap: slotted records)",
    "tma.core.inbound": "an OpenCode question's texts made safe as a host's card is",
    "tma.core.event_kinds": "the protocol's table of transcript event kinds (one dict)",
    "tma.ui.cards": "the card for a person",
    "tma.cli.picker": "the picker",
    "tma.runtime.screen": "the picker's feed",
    "tma.ui.app": "the screens' key loop",
    "tma.ui.picker": "the picker's renderer",
    "tma.ui.term": "the terminal",
    "tma.ui.width": "text measured in terminal cells (a wide character takes two)",
}

BASE = {"tma", "tma.cli", "tma.cli.main", "tma.core", "tma.core.errors", "tma.core.paths",
        "tma.core.record", "tma.core.states", "tma.runtime", "tma.runtime.cache",
        "tma.runtime.config"}
SESSION = {"tma.cli.common", "tma.runtime.session"}
TABLE = {"tma.cli.spec", "tma.core.cmdparse", "tma.core.cmdspec", "tma.runtime.selectors",
         "tma.core.untrusted"}
READ = {"tma.tmux", "tma.tmux.adapter", "tma.tmux.spawn", "tma.tmux.read", "tma.tmux.frame",
        "tma.core.codec", "tma.core.options", "tma.core.prompt"}
CYCLE = READ | {"tma.runtime.cycle"}
PRODUCING = {"tma.runtime.manifests", "tma.core.identity", "tma.runtime.procs",
             "tma.core.rollup"}
NAV = {"tma.runtime.navigate", "tma.core.nav", "tma.tmux.nav", "tma.tmux.attention",
       "tma.tmux.write", "tma.core.plan"}
ROWS = {"tma.ui", "tma.ui.rows", "tma.ui.table", "tma.ui.width"}
SCREEN_CARD = {"tma.runtime.act", "tma.runtime.act.card_screen", "tma.core.card", "tma.core.rules",
               "tma.core.manifest", "tma.core.hookmap"}
SURFACE = BASE | SESSION | TABLE | CYCLE | PRODUCING  # a table command that reads rows

PINS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    "ls": SURFACE | ROWS | {"tma.cli.ls", "tma.runtime.git"},
    "ls --json": SURFACE | ROWS | SCREEN_CARD | {"tma.cli.ls", "tma.runtime.git", "tma.ui.text"},
    "status": BASE | SESSION | CYCLE | PRODUCING | {
        "tma.cli.status", "tma.runtime.handoff", "tma.ui", "tma.ui.status", "tma.ui.contrast",
        "tma.runtime.status_memo", "tma.runtime.rundir"},
    "event": BASE | READ | {
        "tma.cli.event", "tma.runtime.hook", "tma.runtime.handoff", "tma.core.intake",
        "tma.core.jsonlite", "tma.core.hookmap", "tma.core.manifests",
        "tma.core.manifests._lanes", "tma.core.notice", "tma.runtime.notify", "tma.runtime.notify.gate",
        "tma.runtime.manifests", "tma.core.identity", "tma.runtime.procs", "tma.core.rollup",
        "tma.core.plan", "tma.tmux.write"},
    "jump --attention": SURFACE | NAV | {"tma.cli.jump"},
    "act --list": BASE | SESSION | TABLE | {
        "tma.cli.act", "tma.runtime.act", "tma.runtime.act.registry", "tma.core.actions",
        "tma.core.actions.schema",
        "tma.core.actions.gate", "tma.core.actions.answers", "tma.core.manifest", "tma.core.hookmap",
        "tma.core.prompt"},
    "wait": SURFACE | ROWS | {
        "tma.cli.wait", "tma.runtime.waiting", "tma.runtime.feed", "tma.runtime.rundir",
        "tma.runtime.handoff", "tma.runtime.git", "tma.ui.text"},
    "card": SURFACE | SCREEN_CARD | {
        "tma.cli.card", "tma.runtime.act.card", "tma.core.proto", "tma.core.event_kinds",
        "tma.core.inbound", "tma.ui", "tma.ui.cards",
        "tma.ui.text"},
    # the first frame is drawn from the stamps as they are: no producing cycle, no git
    "picker": BASE | SESSION | {"tma.runtime.selectors", "tma.core.untrusted"} | CYCLE | NAV
    | ROWS | {"tma.cli.picker", "tma.runtime.screen", "tma.runtime.feed", "tma.runtime.rundir",
              "tma.runtime.handoff", "tma.ui.app", "tma.ui.picker", "tma.ui.term"},
}.items()}

#: The command lines, by the pin's name (PANE_* are filled in from the panes).
COMMANDS = {
    "ls": ["ls"],
    "ls --json": ["ls", "--json"],
    "status": ["status"],
    "event": ["event", "--agent", "fake", "--kind", "Work", "--pane", "PANE_EVENT"],
    "jump --attention": ["jump", "--attention"],
    "act --list": ["act", "--list"],
    "wait": ["wait", "--pane", "PANE_IDLE", "--until", "idle"],
    "card": ["card", "--pane", "PANE_BLOCKED"],
}


class Scene:
    """A private tmux server (tests/helpers/fleet.Here: HOME and XDG dirs of its own, no
    hosts.toml) with fake agent panes stamped fresh, and a client attached to it."""

    def __init__(self, root: Path) -> None:
        self.here = Here(root, require_tmux(), prefix="imports",
                         config="[fold]\nfreshness_secs = 300\n")  # fresh for the whole run
        self.client = None
        try:
            self._start(root)
        except BaseException:
            self.close()
            raise

    def _start(self, root: Path) -> None:
        self.agents = root / "agents"
        self.agents.mkdir()
        (self.agents / "fake.toml").write_text(TEST_MANIFEST)
        fake = root / "bin" / "fakeagent"
        fake.parent.mkdir()
        fake.symlink_to(shutil.which("sleep") or "/bin/sleep")
        self.panes = {}
        for name, screen in (("PANE_BLOCKED", "FAKE-BLOCKED"), ("PANE_IDLE", "FAKE-IDLE"),
                             ("PANE_WORKING", "FAKE-WORKING"), ("PANE_EVENT", "FAKE-IDLE")):
            pane = self.here.tmux("new-window", "-d", "-t", "here:", "-P", "-F", "#{pane_id}",
                                  f"exec {fake} 100000").strip()
            self.here.wait_for(lambda p=pane: self.here.tmux(
                "display-message", "-p", "-t", p, "#{pane_current_command}").strip()
                == "fakeagent")
            tty = self.here.tmux("display-message", "-p", "-t", pane, "#{pane_tty}").strip()
            with open(tty, "w", encoding="utf-8") as fh:
                fh.write(f"\x1b[2J\x1b[H{screen}\r\n")
            self.panes[name] = pane
        self.here.wait_for(lambda: all(
            s in self.here.tmux("capture-pane", "-p", "-t", p) for p, s in (
                (self.panes["PANE_BLOCKED"], "FAKE-BLOCKED"),
                (self.panes["PANE_WORKING"], "FAKE-WORKING"))))
        # every hooked agent's pane names its transcript: reading panes must not load
        # the transcript room, nor the Codex rollout tail for an agent that is not Codex
        self.here.tmux("set-option", "-p", "-t", self.panes["PANE_IDLE"], "@agent_transcript",
                       str(root / "transcript.jsonl"))
        self.client = PtyClient(self.here, "here")
        self.stamp()

    def stamp(self) -> None:
        """Every agent pane read and stamped, a second after anything was drawn
        (window_activity counts seconds: a stamp in the drawing's second reads stale)."""
        _next_second()
        res = self.here.tma("--manifest-dir", str(self.agents), "ls", "--json")
        assert res.returncode == 0, res.stderr

    def argv(self, command: str) -> list[str]:
        words = [self.panes.get(w, w) for w in COMMANDS[command]]
        return ["--socket-name", self.here.name, "--manifest-dir", str(self.agents),
                "--debug-timing", *words]

    def modules(self, command: str, pythonpath: str | None = None) -> set[str]:
        """The tma modules `command` imported, run past the stampede second."""
        env = dict(self.here.env)
        if pythonpath is not None:
            env["PYTHONPATH"] = pythonpath
        _next_second()
        if command == "picker":
            return self._first_frame(env)
        stdin = '{"session_id":"s1"}' if command == "event" else None
        runs = 2 if command == "event" else 1  # the first event builds the hook table's cache
        for _ in range(runs):
            res = subprocess.run([sys.executable, "-c", PROBE % self.argv(command)],
                                 capture_output=True, text=True, env=env, input=stdin,
                                 timeout=60)
        assert res.returncode == 0, f"tma {command}: {res.stderr}"
        if command in ("event", "jump --attention"):
            # the event's stamp names the probe as the agent (gone: the next cycle reads
            # the pane anew), the jump shows the client another window: read them now
            self.stamp()
        if "tma: cycle" in res.stderr:  # the scenario held: every stamp consumed as it was
            assert " 0 produced" in res.stderr and " 0 captures" in res.stderr, res.stderr
        return tma_modules(eval(res.stdout.rpartition("\n@@")[2]))  # noqa: S307 - our repr

    def _first_frame(self, env: dict) -> set[str]:
        out = self.here.root / "first-frame.txt"
        out.unlink(missing_ok=True)
        argv = [sys.executable, "-c", FIRST_FRAME, str(out), "--socket-name", self.here.name,
                "--manifest-dir", str(self.agents)]
        status, printed = run_on_pty(argv, env)
        assert status == 0 and out.exists(), f"the picker drew no frame ({status}): {printed}"
        return tma_modules(eval(out.read_text()))  # noqa: S307 - our own repr

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        self.here.close()


def _next_second() -> None:
    now = time.time()
    time.sleep(int(now) + 1.05 - now)


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    s = Scene(tmp_path_factory.mktemp("imports"))
    try:
        yield s
    finally:
        s.close()


def difference(command: str, got: set[str]) -> str:
    """'' when `got` is the pin, else what differs, worded for the person who changed it."""
    pinned = PINS[command]
    added, gone = sorted(got - pinned), sorted(pinned - got)
    if not added and not gone:
        return ""
    out = [f"tma {command}:"]
    if added:
        out.append(f"  imports {', '.join(added)}: load it where it is used (an import "
                   "inside the function, or behind the flag that needs it), or add it to "
                   "the pin with a line in WHY saying why this command pays for it")
    if gone:
        out.append(f"  no longer imports {', '.join(gone)}: take it out of the pin")
    return "\n".join(out)


@pytest.mark.parametrize("command", [*COMMANDS, "picker"])
def test_a_command_imports_its_pinned_modules(scene, command):
    assert difference(command, scene.modules(command)) == ""


def test_every_pinned_module_says_why():
    unexplained = sorted(set().union(*PINS.values()) - set(WHY))
    assert unexplained == [], f"pinned without a line in WHY: {unexplained}"
    assert sorted(set(WHY) - set().union(*PINS.values())) == [], "WHY names an unpinned module"


def test_the_pin_fails_on_an_added_import(scene, tmp_path):
    """The same run of `tma ls` from a copy of the source whose ls imports hosts.toml's
    reader at the top again (what issue 29 found): the pin names it."""
    copy = tmp_path / "src"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    ls = copy / "tma" / "cli" / "ls.py"
    ls.write_text(ls.read_text().replace("\nimport sys\n", "\nimport sys\n\nimport "
                                         "tma.runtime.fleet.hosts\n", 1))
    got = scene.modules("ls", pythonpath=str(copy))
    assert "tma.runtime.fleet.hosts" in got  # the copy ran, not the tree
    said = difference("ls", got)
    assert "tma.runtime.fleet.hosts" in said and "no longer imports" not in said, said
