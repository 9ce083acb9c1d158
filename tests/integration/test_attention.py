"""The done mark's clears, against a private server with the attention hooks installed.

Navigation (pane or window, by a real attached client or a jump) clears the pane
arrived at and the pane left; nothing else does, except input: the next keystroke
a non-control client sends at a pane it displays, when it lands after the raise.
`ensure` (the hook installer) is tested for its states and edits.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tma.install import tmux_hooks
from tma.tmux import attention as att
from tma.tmux.adapter import Server

FRESH_FOREVER = "[fold]\nfreshness_secs = 600\n"
TMA_BIN = str(Path(sys.executable).with_name("tma"))
SLEEPER = "exec sleep 100000"


# ---------------------------------------------------------------- helpers


def server_of(srv) -> Server:
    return Server(srv.tmux_bin, socket_name=srv.name)


def cfg_dir(srv) -> str:
    return str(srv.root / "tma-config")


def install(srv, **kw) -> list[str]:
    if not os.access(TMA_BIN, os.X_OK):
        pytest.skip(f"no tma console script beside {sys.executable}")
    out = io.StringIO()
    problems = tmux_hooks.ensure(server_of(srv), config_dir=cfg_dir(srv), tma_bin=TMA_BIN,
                                 out=out, **kw)
    assert problems == []
    return out.getvalue().splitlines()


def check(srv, **kw) -> list[str]:
    return tmux_hooks.ensure(server_of(srv), check=True, config_dir=cfg_dir(srv),
                             tma_bin=TMA_BIN, **kw)


def states(srv, **kw) -> dict[str, str]:
    return {s.hook: s.state for s in tmux_hooks.inspect(server_of(srv), cdir=cfg_dir(srv),
                                                        tma_bin=TMA_BIN, **kw)}


def hooks(srv, name: str) -> dict[int, str]:
    return {i: c for h, i, c in att.read_hooks(server_of(srv)) if h == name}


def ours(srv, name: str) -> dict[int, str]:
    return {i: c for i, c in hooks(srv, name).items() if "clear-attention" in c}


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def stamp(srv, pane: str, state: str = "idle", since: int | None = None,
          attention: bool = True) -> int:
    """A settled tma stamp written straight onto a pane (the cycle reads it as fresh)."""
    since = now_ms() if since is None else since
    pairs = [("@agent_since", str(since)), ("@agent_state", state), ("@agent_detail", ""),
             ("@agent_source", "capture"), ("@agent_evidence_at", str(since)),
             ("@agent_name", "fake"), ("@agent_pid", "0"),
             ("@agent_stamped_at", str(max(now_ms(), since)))]
    args: list[str] = []
    for key, value in pairs:
        args += ["set-option", "-p", "-t", pane, key, value, ";"]
    if attention:
        args += ["set-option", "-p", "-t", pane, "@agent_attention", "1"]
    else:
        args += ["set-option", "-p", "-u", "-t", pane, "@agent_attention"]
    srv.tmux(*args)
    return since


def mark(srv, pane: str) -> str:
    return srv.option(pane, "@agent_attention")


def marks(srv, *panes: str) -> list[str]:
    return [mark(srv, p) for p in panes]


def split(srv, target: str, command: str | None = None) -> str:
    """A second pane in target's window (the split does not take focus)."""
    cmd = command or f"exec {srv.fake('fakeagent')} 100000"
    return srv.tmux("split-window", "-d", "-t", target, "-P", "-F", "#{pane_id}", cmd).strip()


class Probe:
    """Proof that every queued window hook has run: tmux runs notification hooks one
    at a time on one queue, so once a window change in a private probe session has
    cleared its arrival, every hook queued before it has finished."""

    def __init__(self, srv) -> None:
        self.srv = srv
        srv.new_pane(SLEEPER, session="probe")
        srv.tmux("new-window", "-d", "-t", "probe:", SLEEPER)

    def settle(self) -> None:
        out = self.srv.tmux("list-panes", "-s", "-t", "probe", "-F",
                            "#{window_active} #{window_id} #{pane_id}")
        _, window, pane = next(line.split() for line in out.splitlines()
                               if line.startswith("0"))
        self.srv.tmux("set-option", "-p", "-t", pane, "@agent_attention", "1")
        self.srv.tmux("select-window", "-t", window)
        self.srv.wait_for(lambda: mark(self.srv, pane) == "")


def wait_cleared(srv, *panes: str) -> None:
    srv.wait_for(lambda: all(mark(srv, p) == "" for p in panes))


# ---------------------------------------------------------------- navigation


@pytest.mark.tmux_contract
def test_select_pane_clears_the_pane_arrived_at_and_the_pane_left(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    here = srv.agent_pane()
    beside = split(srv, here)
    third = split(srv, here)
    away = srv.agent_pane()  # another window
    c = attach("s")
    assert c.pane() == here
    install(srv)
    for p in (here, beside, third, away):
        stamp(srv, p)

    srv.tmux("select-pane", "-t", beside)  # returns once the hook has run
    assert c.pane() == beside
    assert marks(srv, here, beside, third, away) == ["", "", "1", "1"]

    # by the client's own keys: prefix + o, the next pane
    for p in (here, beside, third):
        stamp(srv, p)
    c.type(b"\x02o")
    arrived = srv.wait_for(lambda: c.pane() if c.pane() != beside else None)
    wait_cleared(srv, beside, arrived)
    (untouched,) = {here, third} - {arrived}
    assert marks(srv, untouched, away) == ["1", "1"]


@pytest.mark.tmux_contract
def test_window_change_clears_both_active_panes_and_nothing_else(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    one = srv.agent_pane()
    one_side = split(srv, one)
    two = srv.agent_pane()
    two_side = split(srv, two)
    c = attach("s")
    probe = Probe(srv)
    install(srv)
    for p in (one, one_side, two, two_side):
        stamp(srv, p)

    c.type(b"\x02n")  # next-window
    srv.wait_for(lambda: c.pane() == two)
    wait_cleared(srv, one, two)
    probe.settle()
    assert marks(srv, one_side, two_side) == ["1", "1"]


def test_walking_away_clears_nothing(srv, attach):
    pane = srv.agent_pane()
    c = attach("s")
    install(srv)
    srv.draw(pane, "FAKE-WORKING")
    assert srv.row(pane)["state"] == "working"
    srv.draw(pane, "FAKE-IDLE")
    # past the 3 s dwell the fold publishes idle and raises the mark
    srv.wait_for(lambda: (srv.row(pane) or {}).get("state") == "idle", timeout=15,
                 interval=0.5)
    assert mark(srv, pane) == "1"
    assert srv.options(pane)["@agent_since"]
    # nobody types: however many cycles run, the mark stands
    for _ in range(3):
        srv.next_second()
        assert srv.row(pane)["attention"] is True
    assert c.pane() == pane and mark(srv, pane) == "1"


@pytest.mark.tmux_contract
def test_selecting_what_is_already_shown_clears_nothing(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    here = srv.agent_pane()
    beside = split(srv, here)
    other = srv.agent_pane()
    c = attach("s")
    probe = Probe(srv)
    install(srv)
    for p in (here, beside, other):
        stamp(srv, p)

    window = srv.display(here, "#{window_id}")
    srv.tmux("select-pane", "-t", here)
    srv.tmux("select-window", "-t", window)
    # the same from the client's own keys (F5, F6), then F7 proves the client's queue,
    # where a select-pane hook would run, got past them
    srv.tmux("bind-key", "-n", "F5", "select-pane", "-t", here)
    srv.tmux("bind-key", "-n", "F6", "select-window", "-t", window)
    srv.tmux("bind-key", "-n", "F7", "set-option", "-s", "@typed", "1")
    for key, seq in (("F5", b"\x1b[15~"), ("F6", b"\x1b[17~"), ("F7", b"\x1b[18~")):
        c.type(seq)  # one at a time: tmux may drop a key queued behind a command
        srv.wait_for(lambda key=key: f"key {key}:" in srv.tmux("show-messages"))
    srv.wait_for(lambda: srv.tmux("show-options", "-s", "-q", "-v", "@typed").strip() == "1")
    probe.settle()
    assert c.pane() == here
    assert marks(srv, here, beside, other) == ["1", "1", "1"]


@pytest.mark.tmux_contract
def test_session_switch_clears_nothing_until_the_first_keystroke(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    mine = srv.agent_pane()
    other = srv.agent_pane(session="t")
    c = attach("s")
    probe = Probe(srv)
    install(srv)
    srv.next_second()  # the raise lands after the attach's activity second
    since = stamp(srv, mine)
    stamp(srv, other, since=since)

    srv.tmux("switch-client", "-c", c.name, "-t", "t")
    srv.wait_for(lambda: c.pane() == other)
    srv.tmux("switch-client", "-c", c.name, "-t", "s")
    srv.wait_for(lambda: c.pane() == mine)
    probe.settle()
    assert marks(srv, mine, other) == ["1", "1"]
    srv.ls()  # no input since the raise: the poll cycle's input clear holds too
    assert marks(srv, mine, other) == ["1", "1"]

    srv.next_second()
    c.type(b"x")  # the first keystroke back inside it
    srv.wait_for(lambda: c.activity() * 1000 > since)
    srv.ls()
    assert marks(srv, mine, other) == ["", "1"]


@pytest.mark.tmux_contract
def test_a_keystroke_before_the_raise_clears_nothing(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    pane = srv.agent_pane()
    c = attach("s")
    install(srv)
    srv.next_second()
    c.type(b"x")
    typed = srv.wait_for(lambda: c.activity() if c.activity() * 1000 >= now_ms() - 1000
                         else None)
    srv.next_second()
    since = stamp(srv, pane)
    assert typed * 1000 < since
    srv.ls()
    assert mark(srv, pane) == "1"
    assert srv.row(pane)["attention"] is True


@pytest.mark.tmux_contract
def test_a_control_mode_clients_frozen_activity_is_ignored(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    pane = srv.agent_pane()
    since = stamp(srv, pane)
    srv.next_second()
    cc = attach("s", control=True)
    assert srv.tmux("list-clients", "-F", "#{client_control_mode}").split() == ["1"]
    assert cc.pane() == pane
    assert cc.activity() * 1000 > since  # it would clear, were it a terminal
    srv.ls()
    assert mark(srv, pane) == "1"
    # the same ordering from a terminal client does clear (the probe is sound)
    c = attach("s")
    srv.next_second()
    c.type(b"x")
    srv.wait_for(lambda: c.activity() * 1000 > since)
    srv.ls()
    assert mark(srv, pane) == ""


@pytest.mark.tmux_contract
def test_a_focus_report_counts_as_input(srv, attach):
    """The seed's input half: with focus-events on, the focus report a terminal sends when
    you switch to another application (ESC [ O) moves #{client_activity} like a keystroke,
    so a mark raised before you alt-tabbed away comes down; nothing is typed into the pane."""
    srv.config.write_text(FRESH_FOREVER)
    pane = srv.agent_pane()
    srv.tmux("set-option", "-s", "focus-events", "on")
    c = attach("s")
    # tmux asked the terminal for focus reports: this client is one that would send them
    srv.wait_for(lambda: "\x1b[?1004h" in c.output())
    install(srv)
    srv.next_second()  # the raise lands after the attach's activity second
    since = stamp(srv, pane)
    srv.ls()
    assert mark(srv, pane) == "1"  # no input since the raise: the mark stands

    srv.next_second()
    c.type(b"\x1b[O")  # focus out: the person switched to another application
    srv.wait_for(lambda: c.activity() * 1000 > since)
    srv.ls()
    assert mark(srv, pane) == ""
    assert c.pane() == pane  # no navigation: the report alone took it down


# ---------------------------------------------------------------- jump with the hooks


def jump(srv, client, *args: str):
    res = srv.tma("jump", *args, "--client", client.name)
    assert res.returncode == 0, res.stderr
    return res


@pytest.mark.tmux_contract
def test_a_jump_to_another_window_clears_only_the_destination_and_the_pane_left(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    origin = srv.agent_pane()  # s:0, shown
    old_active = srv.agent_pane()  # s:1, its window's active pane
    dest = split(srv, old_active)  # s:1, not active
    bystander = srv.agent_pane()  # s:2
    c = attach("s")
    probe = Probe(srv)
    install(srv)
    for p in (origin, old_active, dest, bystander):
        stamp(srv, p)

    # --next clears nothing by itself: every clear below is the hooks'
    jump(srv, c, "--pane", dest)
    assert c.pane() == dest
    wait_cleared(srv, dest, origin)
    probe.settle()
    assert marks(srv, old_active, bystander) == ["1", "1"]
    assert srv.tmux("show-options", "-s", "-q", "-v", att.KEEP).strip() == ""


@pytest.mark.tmux_contract
def test_a_jump_within_the_window_clears_the_destination_and_the_pane_left(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    origin = srv.agent_pane()
    bystander = split(srv, origin)
    dest = split(srv, origin)  # lands between the two: the next by position
    c = attach("s")
    install(srv)
    for p in (origin, dest, bystander):
        stamp(srv, p)
    jump(srv, c, "--next")  # --next never clears directly: these are the hook's
    assert c.pane() == dest
    wait_cleared(srv, dest, origin)
    assert mark(srv, bystander) == "1"


@pytest.mark.tmux_contract
def test_a_jump_into_another_session_clears_only_the_destination(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    origin = srv.agent_pane()  # s, shown
    current = srv.agent_pane(session="t")  # t:0, t's current window
    old_active = srv.agent_pane(session="t")  # t:1 active
    dest = split(srv, old_active)  # t:1, not active
    c = attach("s")
    probe = Probe(srv)
    install(srv)
    for p in (origin, current, old_active, dest):
        stamp(srv, p)

    jump(srv, c, "--pane", dest)
    assert c.pane() == dest
    wait_cleared(srv, dest)
    probe.settle()
    # a session switch clears nothing; t's window change left its old pane alone
    assert marks(srv, origin, current, old_active) == ["1", "1", "1"]
    assert srv.tmux("show-options", "-s", "-q", "-v", att.KEEP).strip() == ""

    # back: t -> s, s's window unchanged: the jump clears nothing but where it lands
    # (--back never clears directly, and no window hook fires)
    jump(srv, c, "--back")
    assert c.pane() == origin
    probe.settle()
    assert marks(srv, origin, current, old_active) == ["1", "1", "1"]


@pytest.mark.tmux_contract
def test_the_hooks_fire_exactly_the_clears_a_hand_navigation_would(srv, attach):
    """A jump to a pane in another window of the same session, compared with the
    window hook's view: the arrival is the destination, never the window's old pane."""
    srv.config.write_text(FRESH_FOREVER)
    srv.agent_pane()
    old_active = srv.agent_pane()
    dest = split(srv, old_active)
    c = attach("s")
    probe = Probe(srv)
    install(srv)
    log = srv.root / "hooks.log"
    for hook in att.DEPARTURE_HOOKS:
        srv.tmux("set-hook", "-ga", hook,
                 f"run-shell \"echo {hook} '#{{pane_id}}' >> '{log}'\"")
    jump(srv, c, "--pane", dest)
    probe.settle()
    lines = [x for x in log.read_text().splitlines() if not x.endswith(probe_panes(srv))]
    assert lines == [f"session-window-changed {dest}"]


def probe_panes(srv) -> tuple[str, ...]:
    return tuple(srv.tmux("list-panes", "-s", "-t", "probe", "-F", "#{pane_id}").split())


# ---------------------------------------------------------------- clear-attention itself


@pytest.mark.tmux_contract
def test_clear_attention_is_silent_and_always_exits_0(srv):
    srv.config.write_text(FRESH_FOREVER)
    a = srv.agent_pane()
    b = split(srv, a)
    stamp(srv, a)
    stamp(srv, b)
    srv.tmux("select-pane", "-t", b)
    srv.tmux("select-pane", "-t", a)  # no hooks installed: a is active, b the last pane
    stamp(srv, a)
    stamp(srv, b)

    res = srv.tma("clear-attention", a, manifests=False)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert marks(srv, a, b) == ["", "1"]  # no kind: the arrival only

    stamp(srv, a)
    res = srv.tma("clear-attention", a, manifests=False,
                  env={"TMA_HOOK_KIND": "after-select-pane"})
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert marks(srv, a, b) == ["", ""]

    stamp(srv, a)
    stamp(srv, b)
    res = srv.tma("clear-attention", a, manifests=False, env={"TMA_HOOK_KIND": "bogus"})
    assert marks(srv, a, b) == ["", "1"]
    for argv, env in ((["%999"], {"TMA_HOOK_KIND": "after-select-pane"}),
                      (["#{pane_id}"], {}), ([], {}), (["--bogus", "x"], {})):
        res = srv.tma("clear-attention", *argv, manifests=False, env=env)
        assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert mark(srv, b) == "1"  # a dead arrival resolves no departure anywhere
    res = subprocess.run([sys.executable, "-m", "tma", "--socket-name", srv.name + "-none",
                          "clear-attention", a], capture_output=True, text=True, env=srv.env,
                         timeout=30)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")


@pytest.mark.tmux_contract
def test_watchers_get_sigusr1(srv, tmp_path):
    pane = srv.agent_pane()
    other = srv.shell_pane()
    record = tmp_path / "usr1"
    ready = tmp_path / "ready"
    code = (
        "import signal, sys, time, pathlib\n"
        "rec = pathlib.Path(sys.argv[1])\n"
        "def on(sig, frame):\n"
        "    with rec.open('a') as fh: fh.write('USR1\\n')\n"
        "signal.signal(signal.SIGUSR1, on)\n"
        "pathlib.Path(sys.argv[2]).write_text('ok')\n"
        "time.sleep(60)\n"
    )
    watcher = subprocess.Popen([sys.executable, "-c", code, str(record), str(ready)])
    try:
        srv.wait_for(ready.exists)
        srv.tmux("set-option", "-p", "-t", pane, "@tma_watch_pid", str(watcher.pid))
        srv.tmux("set-option", "-p", "-t", other, "@tma_watch_pid", "0")
        res = srv.tma("clear-attention", other, manifests=False)
        assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
        srv.wait_for(lambda: record.exists() and record.read_text() == "USR1\n")
        assert watcher.poll() is None

        # through the hook, on a real navigation
        install(srv)
        srv.tmux("select-window", "-t", srv.display(other, "#{window_id}"))
        srv.wait_for(lambda: record.read_text() == "USR1\nUSR1\n")
    finally:
        watcher.send_signal(signal.SIGKILL)
        watcher.wait(timeout=5)


@pytest.mark.tmux_contract
def test_the_departure_resolution_and_its_lines():
    assert att.departure_format("after-select-pane") == "#{P:#{?pane_last,#{pane_id},}}"
    assert att.departure_format("session-window-changed") == (
        "#{W:#{?window_last_flag,#{P:#{?pane_active,#{pane_id},}},}}")
    out = "D%3 %2=1 \nW\nW123\nW0\nW-4\nW123\nWx\n"
    assert att.parse_clear(out, "%3") == ("%2", True, "", [123])
    assert att.parse_clear("D%3 %2= %2\n", "%3") == ("%2", False, "%2", [])
    assert att.parse_clear("D %2=1 \n", "%3")[:2] == ("", False)  # target never resolved
    assert att.clear_lines("%3", None)[0] == "set-option -p -u -t %3 @agent_attention"
    assert len(att.clear_lines("%3", None)) == 2


# ---------------------------------------------------------------- ensure: states and edits


@pytest.mark.tmux_contract
def test_install_is_present_and_a_reinstall_changes_nothing(srv):
    srv.shell_pane()
    assert states(srv)["after-select-pane"] == tmux_hooks.MISSING
    assert sorted(check(srv)) == ["tmux hook after-select-pane: missing",
                                  "tmux hook session-window-changed: missing"]
    lines = install(srv)
    assert lines == ["tmux: installed the after-select-pane hook [0]",
                     "tmux: installed the session-window-changed hook [0]"]
    st = states(srv)
    assert st["after-select-pane"] == st["session-window-changed"] == tmux_hooks.PRESENT
    assert st["pane-focus-in"] == st["after-select-window"] == tmux_hooks.ABSENT
    assert check(srv) == []
    cmd = ours(srv, "after-select-pane")[0]
    assert "TMA_HOOK_KIND=after-select-pane" in cmd and f"'{TMA_BIN}'" in cmd
    assert f"--socket-name {srv.name} clear-attention '#{{pane_id}}'" in cmd
    assert "else TMA_HOOK_KIND=after-select-pane tma --socket-name" in cmd

    record = Path(tmux_hooks.state_path(cfg_dir(srv), srv.display(
        srv.tmux("list-panes", "-a", "-F", "#{pane_id}").split()[0], "#{socket_path}")))
    import tomllib
    assert tomllib.loads(record.read_text())["tmux_hooks"] == [
        {"hook": "after-select-pane", "index": 0}, {"hook": "session-window-changed", "index": 0}]

    assert install(srv) == []  # idempotent
    assert len(ours(srv, "after-select-pane")) == len(ours(srv, "session-window-changed")) == 1


@pytest.mark.tmux_contract
def test_a_users_unindexed_set_hook_wipes_and_a_reinstall_appends_after_it(srv):
    srv.shell_pane()
    install(srv)
    srv.tmux("set-hook", "-g", "after-select-pane", "display hi")  # as in a tmux.conf
    st = states(srv)
    assert st["after-select-pane"] == tmux_hooks.WIPED
    assert st["session-window-changed"] == tmux_hooks.PRESENT
    problems = check(srv)
    assert len(problems) == 1 and "after-select-pane: wiped" in problems[0]
    # with no record (another config dir) the same server reads as missing
    assert tmux_hooks.ensure(server_of(srv), check=True, config_dir=cfg_dir(srv) + "-other",
                             tma_bin=TMA_BIN) == ["tmux hook after-select-pane: missing"]

    assert install(srv) == ["tmux: installed the after-select-pane hook [1]"]
    entries = hooks(srv, "after-select-pane")
    assert entries[0] == "display-message hi" and "clear-attention" in entries[1]
    assert check(srv) == []


@pytest.mark.tmux_contract
def test_a_drifted_entry_is_rewritten_at_its_own_index(srv):
    srv.shell_pane()
    srv.tmux("set-hook", "-g", "session-window-changed[0]", "display user")
    install(srv)
    (index,) = ours(srv, "session-window-changed")
    assert index == 1
    srv.tmux("set-hook", "-g", f"session-window-changed[{index}]",
             "run-shell \"tma clear-attention '#{pane_id}'\"")  # an older tma's entry
    assert states(srv)["session-window-changed"] == tmux_hooks.DRIFTED
    assert "drifted" in check(srv)[0]
    assert install(srv) == [f"tmux: updated the session-window-changed hook [{index}]"]
    assert list(ours(srv, "session-window-changed")) == [index]
    assert states(srv)["session-window-changed"] == tmux_hooks.PRESENT
    assert hooks(srv, "session-window-changed")[0] == "display-message user"


@pytest.mark.tmux_contract
def test_duplicates_collapse_and_a_retired_hook_is_removed(srv):
    srv.shell_pane()
    install(srv)
    cmd = ours(srv, "after-select-pane")[0]
    srv.tmux("set-hook", "-ga", "after-select-pane", cmd)
    srv.tmux("set-hook", "-ga", "after-select-window",
             "run-shell \"tma clear-attention '#{pane_id}'\"")
    srv.tmux("set-hook", "-ga", "after-select-window", "display mine")
    st = states(srv)
    assert st["after-select-window"] == tmux_hooks.STALE
    assert any("after-select-window: retired" in p for p in check(srv))
    assert any("duplicates" in p for p in check(srv))
    lines = install(srv)
    assert lines == ["tmux: removed the after-select-window hook"]
    assert list(ours(srv, "after-select-pane")) == [0]
    assert list(hooks(srv, "after-select-window").values()) == ["display-message mine"]
    assert check(srv) == []


@pytest.mark.tmux_contract
def test_focus_events_add_an_arrival_only_pane_focus_in(srv):
    srv.shell_pane()
    install(srv, focus_events=True)
    (cmd,) = ours(srv, "pane-focus-in").values()
    assert "TMA_HOOK_KIND" not in cmd and "clear-attention '#{pane_id}'" in cmd
    assert check(srv, focus_events=True) == []
    assert check(srv) == ["tmux hook pane-focus-in: installed but [focus] events is off"]
    assert install(srv) == ["tmux: removed the pane-focus-in hook"]
    assert ours(srv, "pane-focus-in") == {}


@pytest.mark.tmux_contract
def test_uninstall_removes_ours_and_leaves_foreign_hooks(srv):
    srv.shell_pane()
    srv.tmux("set-hook", "-g", "after-select-pane", "display before")
    install(srv, focus_events=True)
    srv.tmux("set-hook", "-ga", "session-window-changed", "display after")
    srv.tmux("set-option", "-s", att.KEEP, "%1")
    record = Path(tmux_hooks.state_path(cfg_dir(srv), srv.display(
        srv.tmux("list-panes", "-a", "-F", "#{pane_id}").split()[0], "#{socket_path}")))
    assert record.exists()
    out = io.StringIO()
    assert tmux_hooks.ensure(server_of(srv), uninstall=True, config_dir=cfg_dir(srv),
                             tma_bin=TMA_BIN, out=out) == []
    assert sorted(out.getvalue().splitlines()) == [
        "tmux: removed the after-select-pane hook", "tmux: removed the pane-focus-in hook",
        "tmux: removed the session-window-changed hook"]
    for name in tmux_hooks.managed_hooks():
        assert ours(srv, name) == {}
    assert list(hooks(srv, "after-select-pane").values()) == ["display-message before"]
    assert list(hooks(srv, "session-window-changed").values()) == ["display-message after"]
    assert not record.exists()
    assert srv.tmux("show-options", "-s", "-q", "-v", att.KEEP).strip() == ""
    assert tmux_hooks.ensure(server_of(srv), uninstall=True, check=True,
                             config_dir=cfg_dir(srv), tma_bin=TMA_BIN) == []
    # a second uninstall, and one without a record, find nothing to do
    assert tmux_hooks.ensure(server_of(srv), uninstall=True, config_dir=cfg_dir(srv),
                             tma_bin=TMA_BIN, out=io.StringIO()) == []


@pytest.mark.tmux_contract
def test_uninstall_without_a_record_removes_by_content(srv):
    srv.shell_pane()
    install(srv)
    for f in Path(cfg_dir(srv)).iterdir():
        f.unlink()
    out = io.StringIO()
    assert tmux_hooks.ensure(server_of(srv), uninstall=True, config_dir=cfg_dir(srv),
                             tma_bin=TMA_BIN, out=out) == []
    assert ours(srv, "after-select-pane") == ours(srv, "session-window-changed") == {}


@pytest.mark.tmux_contract
def test_no_server_fails_a_check_and_skips_an_install(tmp_path):
    none = Server(socket_name=f"tma-none-{os.getpid()}")
    problems = tmux_hooks.ensure(none, check=True, config_dir=str(tmp_path), tma_bin=TMA_BIN)
    assert len(problems) == 1 and "start tmux first" in problems[0]
    for uninstall in (False, True):
        out = io.StringIO()
        assert tmux_hooks.ensure(none, uninstall=uninstall, config_dir=str(tmp_path),
                                 tma_bin=TMA_BIN, out=out) == []
        assert out.getvalue().startswith("tmux: no server running;")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.tmux_contract
def test_keys_and_places(monkeypatch, tmp_path):
    assert tmux_hooks.socket_key("") == "cbf29ce484222325"  # the FNV-1a-64 offset basis
    assert len(tmux_hooks.socket_key("/tmp/tmux-1000/default")) == 16
    assert tmux_hooks.socket_key("/a") != tmux_hooks.socket_key("/b")
    monkeypatch.setenv("TMA_CONFIG_DIR", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert tmux_hooks.config_dir() == str(tmp_path / "xdg" / "tma")
    monkeypatch.setenv("TMA_CONFIG_DIR", str(tmp_path / "env"))
    assert tmux_hooks.config_dir() == str(tmp_path / "env")
    assert tmux_hooks.config_dir(str(tmp_path / "flag")) == str(tmp_path / "flag")
    monkeypatch.setenv("TMA_CONFIG_DIR", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert tmux_hooks.config_dir() == str(tmp_path / "home" / ".config" / "tma")
    # currency ignores what tmux re-renders
    cmd = att.hook_command("after-select-pane", "/x/tma", ["--socket-name", "a b"])
    assert att.normalize(cmd) == att.normalize(cmd.replace('"', "'").replace(" ", "  "))
