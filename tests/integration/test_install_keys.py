"""`tma install-keys` against real files and real tmux servers.

The user's tmux.conf (own bindings, comments, source-file lines, no final newline,
a symlink) comes back byte for byte on uninstall; a NEW server started from it after
a kill-server has the bindings and the attention hooks, and the hooks clear a done
mark on navigation there; re-runs change nothing; `--check` names each drift; the
prompts abort, decline and refuse a non-terminal cleanly; loading into a running
server leaves one copy of each hook; the hooks' one owner is the managed file.
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

from tests.helpers.ptyclient import PtyClient
from tma.install import tmux_hooks
from tma.tmux import attention as att
from tma.tmux.adapter import Server

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build

USER_CONF = ("# my own tmux.conf\n"
             "set -g prefix C-a\n"
             "bind h select-pane -L   # vim keys stay mine\n"
             "bind-key -T prefix r source-file ~/.tmux.conf \\; display 'reloaded'\n"
             "set-hook -g after-select-pane 'display-message mine'\n"
             "source-file -q ~/.tmux.local.conf\n"
             "\n"
             "set -g status-right '#(date)'")  # no final newline
INDEX = tmux_hooks.MANAGED_INDEX


@pytest.fixture
def home(srv):
    """The user's real conf lives in dotfiles/, ~/.tmux.conf is a symlink to it."""
    dots = srv.root / "dotfiles"
    dots.mkdir()
    target = dots / "tmux.conf"
    target.write_bytes(USER_CONF.encode())
    (srv.home / ".tmux.conf").symlink_to(target)
    return srv.home / ".tmux.conf", target


def keys(srv, *args: str, **kw) -> subprocess.CompletedProcess:
    return srv.tma("install-keys", *args, **kw)


def managed(srv) -> Path:
    return srv.root / "config" / "tma" / "tmux.conf"


def start_with(srv, conf: Path) -> None:
    """A fresh server reading `conf` (srv.tmux always passes -f /dev/null)."""
    subprocess.run([srv.tmux_bin, "-u", "-L", srv.name, "-f", str(conf), "new-session", "-d",
                    "-s", "s", "-x", "120", "-y", "40", f"exec {srv.fake('fakeagent')} 100000"],
                   check=True, env=srv.env, timeout=10, capture_output=True)
    srv.started = True


def daemon_attached(srv) -> None:
    """Wait until the daemon the conf's launcher started has its control client attached.
    tmux 3.2a to 3.6b crash when a notification (a split's window-pane-changed, a jump's
    session-window-changed) reaches a control client between its first identify message
    and its last: control-notify.c checks only CLIENT_CONTROL, set by the first, where
    3.7c and main also check the control state the last one creates. Keys typed while the
    daemon attached crashed the server on CI (3.3a, 3.4: control_write on a NULL state);
    that is tmux's race, not what these tests test (docs/reference/tmux-compatibility.md)."""
    srv.wait_for(lambda: "1" in srv.tmux("list-clients", "-F",
                                         "#{client_control_mode}").split(), timeout=30)


def kill_server(srv) -> None:
    subprocess.run([srv.tmux_bin, "-L", srv.name, "kill-server"], env=srv.env,
                   capture_output=True, timeout=10)
    srv.wait_for(srv.refuses)


def server_of(srv) -> Server:
    return Server(srv.tmux_bin, socket_name=srv.name)


def ours(srv, hook: str) -> dict[int, str]:
    return {i: c for h, i, c in att.read_hooks(server_of(srv)) if h == hook and "clear-attention"
            in c}


def test_round_trip_restores_the_users_bytes_through_the_symlink(srv, home):
    link, target = home
    r = keys(srv, "--yes")
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    text = target.read_text()
    assert text.startswith(USER_CONF + "\n")
    assert text.count("# tma keys") == 1 and text.endswith("# tma keys (newline added)\n")
    assert managed(srv).read_text().startswith("# tma keybindings")
    assert "created" not in managed(srv).read_text().split("hooks")[0] or \
        "# tma created: " + str(srv.root / "config" / "tma") in managed(srv).read_text()
    r = keys(srv, "--uninstall", "--yes")
    assert r.returncode == 0, r.stderr
    assert target.read_bytes() == USER_CONF.encode()
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert not managed(srv).exists()
    assert not (srv.root / "config" / "tma").exists()  # the folder tma created
    assert (srv.root / "config").is_dir()  # one it did not create stays


def test_a_conf_created_by_tma_goes_away_again(srv):
    conf = srv.home / ".tmux.conf"
    assert keys(srv, "--yes").returncode == 0
    assert conf.read_text().endswith("# tma keys\n") and len(conf.read_text().splitlines()) == 1
    assert keys(srv, "--uninstall", "--yes").returncode == 0
    assert not conf.exists() and not managed(srv).exists()
    assert sorted(os.listdir(srv.home)) == []


def test_a_new_server_from_the_conf_has_the_keys_and_the_hooks_and_they_clear(srv, home):
    link, _ = home
    assert keys(srv, "--yes").returncode == 0
    start_with(srv, link)
    kill_server(srv)  # what a reboot does to install-hooks' hooks
    start_with(srv, link)
    assert "jump --attention" in srv.binding("prefix", "j")
    assert "jump --blocked" in srv.binding("prefix", "g")
    assert "select-pane -L" in srv.binding("prefix", "h")  # the user's wins
    for hook in att.DEPARTURE_HOOKS:
        assert list(ours(srv, hook)) == [INDEX]
    states = tmux_hooks.inspect(server_of(srv), cdir=str(srv.root / "config" / "tma"))
    assert {s.hook: s.state for s in states}["after-select-pane"] == tmux_hooks.PRESENT
    assert tmux_hooks.persistence(states, str(srv.root / "config" / "tma")) == "managed_file"
    # the user's own after-select-pane entry survived beside ours
    assert "display-message mine" in srv.tmux("show-hooks", "-g", "after-select-pane")
    r = keys(srv, "--check")
    assert r.returncode == 0 and r.stdout == "tma: keybindings OK\n", r.stderr

    # a done mark clears on navigation, with no install-hooks ever run on this server
    first = srv.display("s:0", "#{pane_id}")
    second = srv.tmux("split-window", "-d", "-t", first, "-P", "-F", "#{pane_id}",
                      f"exec {srv.fake('fakeagent')} 100000").strip()
    srv.tmux("set-option", "-p", "-t", second, "@agent_attention", "1")
    srv.tmux("select-pane", "-t", second)
    srv.wait_for(lambda: srv.option(second, "@agent_attention") == "", timeout=5)
    srv.tmux("set-option", "-p", "-t", second, "@agent_attention", "1")
    srv.tmux("select-pane", "-t", first)  # leaving it clears it too
    srv.wait_for(lambda: srv.option(second, "@agent_attention") == "", timeout=5)


def test_re_runs_change_nothing_and_check_names_each_drift(srv, home):
    _, target = home
    assert keys(srv, "--yes").returncode == 0
    before = (target.read_bytes(), managed(srv).read_bytes(), managed(srv).stat().st_mtime_ns)
    r = keys(srv, "--yes")
    assert r.returncode == 0 and "nothing to change" in r.stdout
    assert (target.read_bytes(), managed(srv).read_bytes(),
            managed(srv).stat().st_mtime_ns) == before
    assert keys(srv, "--check").returncode == 0

    r = keys(srv, "--check", "--mouse")
    assert r.returncode == 1 and "is not what `tma install-keys --mouse` writes" in r.stderr
    text = target.read_text()
    target.write_text(text + text.splitlines()[-1] + "\n")
    r = keys(srv, "--check")
    assert r.returncode == 1 and "sources it 2 times" in r.stderr
    target.write_text(USER_CONF)
    r = keys(srv, "--check")
    assert r.returncode == 1 and "does not source it" in r.stderr
    managed(srv).unlink()
    r = keys(srv, "--check")
    assert r.returncode == 1 and "is missing" in r.stderr
    assert "run `tma install-keys` to repair" in r.stderr
    assert target.read_text() == USER_CONF  # --check writes nothing


def test_check_sees_a_running_server_without_the_hooks(srv, home):
    assert keys(srv, "--yes").returncode == 0
    srv.shell_pane()  # started with -f /dev/null: the managed file never loaded
    r = keys(srv, "--check")
    assert r.returncode == 1
    assert "the running tmux server: tmux hook after-select-pane: missing" in r.stderr
    # install-hooks repairs it the file's way: at the managed slot, so a later
    # source-file of the file replaces rather than duplicates
    cdir = str(srv.root / "config" / "tma")
    assert tmux_hooks.ensure(server_of(srv), config_dir=cdir, out=io.StringIO()) == []
    assert list(ours(srv, "after-select-pane")) == [INDEX]
    srv.tmux("source-file", str(managed(srv)))
    for hook in att.DEPARTURE_HOOKS:
        assert list(ours(srv, hook)) == [INDEX]
    assert keys(srv, "--check").returncode == 0


def test_a_non_terminal_declines_and_writes_nothing(srv, home):
    _, target = home
    r = keys(srv)
    assert r.returncode == 1
    assert "pass --yes" in r.stderr and "declined; would write" in r.stderr
    assert target.read_text() == USER_CONF and not managed(srv).exists()


def _on_a_pty(srv, answer: bytes | None, *args: str) -> tuple[int, str]:
    """install-keys with a terminal on stdin: type `answer`, or SIGINT it at the prompt."""
    master, slave = os.openpty()
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "install-keys", *args]
    proc = subprocess.Popen(argv, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=srv.env)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 20
    while b"[y/N]" not in out and time.monotonic() < deadline:
        out += os.read(proc.stdout.fileno(), 4096)
    assert b"[y/N]" in out
    if answer is None:
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
    else:
        os.write(master, answer)
    _, err = proc.communicate(timeout=20)
    os.close(master)
    return proc.returncode, err.decode()


@pytest.mark.parametrize("answer, message, status",
                         [(b"\x04", "aborted; no changes written", 1),
                          (None, "tma: interrupted", 130),  # Ctrl-C stops the command
                          (b"n\n", "declined; would write", 1),
                          (b"\n", "declined; would write", 1)])
def test_the_prompt_aborts_or_declines(srv, home, answer, message, status):
    _, target = home
    rc, err = _on_a_pty(srv, answer)
    assert rc == status and message in err, err
    assert target.read_text() == USER_CONF and not managed(srv).exists()


def test_yes_at_the_prompt_writes(srv, home):
    rc, err = _on_a_pty(srv, b"y\n")
    assert rc == 0, err
    assert managed(srv).exists()


def test_loading_into_a_running_server_leaves_one_copy_of_each_hook(srv, home):
    srv.shell_pane()
    cdir = str(srv.root / "config" / "tma")
    out = io.StringIO()
    # install-hooks first: its own entries (appended, with the socket flag)
    assert tmux_hooks.ensure(server_of(srv), config_dir=cdir, out=out) == []
    appended = ours(srv, "after-select-pane")
    assert list(appended) != [INDEX]
    r = keys(srv, "--yes")
    assert r.returncode == 0, r.stderr
    assert "loaded into the running tmux server" in r.stdout
    for hook in att.DEPARTURE_HOOKS:
        assert list(ours(srv, hook)) == [INDEX], hook
    assert "jump --attention" in srv.binding("prefix", "j")
    assert keys(srv, "--check").returncode == 0
    # install-hooks agrees, and its uninstall leaves the managed file's hooks alone
    assert tmux_hooks.ensure(server_of(srv), check=True, config_dir=cdir) == []
    out = io.StringIO()
    assert tmux_hooks.ensure(server_of(srv), uninstall=True, config_dir=cdir, out=out) == []
    assert "the attention hooks stay" in out.getvalue()
    assert list(ours(srv, "after-select-pane")) == [INDEX]
    # install-keys' uninstall unbinds its keys; the hooks go back to install-hooks
    r = keys(srv, "--uninstall", "--yes")
    assert r.returncode == 0, r.stderr
    assert srv.binding("prefix", "j").strip() == ""
    assert "select-pane -L" not in srv.binding("prefix", "g")
    out = io.StringIO()
    assert tmux_hooks.ensure(server_of(srv), uninstall=True, config_dir=cdir, out=out) == []
    assert ours(srv, "after-select-pane") == {}


def test_doctor_says_where_the_hooks_live(srv, home):
    link, _ = home
    assert keys(srv, "--yes").returncode == 0
    start_with(srv, link)
    r = srv.tma("doctor")
    assert "kept: in the managed key file" in r.stdout
    import json

    doc = json.loads(srv.tma("doctor", "--json").stdout)
    assert doc["tmux_hooks_persistence"] == "managed_file"


def test_the_mouse_group_loads_and_keeps_tmux_s_window_click(srv, home):
    assert keys(srv, "--yes", "--mouse").returncode == 0
    srv.shell_pane()
    srv.tmux("source-file", str(managed(srv)))  # raises on any line tmux refuses
    left = srv.binding("root", "MouseDown1Status")
    assert "tma:blocked" in left and "jump --blocked" in left and "switch-client" in left
    assert "jump --menu" in srv.binding("root", "MouseDown3StatusRight")
    assert keys(srv, "--check", "--mouse").returncode == 0
    r = keys(srv, "--check")
    assert r.returncode == 1 and "is not what `tma install-keys` writes" in r.stderr


def _blocked_elsewhere(srv, home, install_env: dict | None = None):
    """A server started from the conf (prefix C-a), a real client on s:0 and a blocked,
    marked fake agent in s:1; the user's manifests hold the fake agent, so the tma the
    bindings run (no --socket flag, no --manifest-dir) sees it. `install_env`: the
    environment install-keys runs with (the server keeps srv.env)."""
    link, _ = home
    agents = srv.root / "config" / "tma" / "agents"
    agents.mkdir(parents=True)
    (agents / "fake.toml").write_text((srv.manifests / "fake.toml").read_text())
    srv.config.write_text("[fold]\nfreshness_secs = 600\n")
    assert keys(srv, "--yes", env=install_env).returncode == 0
    start_with(srv, link)
    daemon_attached(srv)  # before any key is typed (tmux's race, above)
    here = srv.display("s:0", "#{pane_id}")
    there = srv.agent_pane()  # s:1, not shown
    client = PtyClient(srv, "s")
    assert client.pane() == here
    # blocked as every reader sees it: the screen asks, and a cycle stamped it so. A stamp
    # written by hand (another pid, no such screen) lost to the daemon the conf's launcher
    # starts, whenever its first cycle came after the write: then C-a g found nothing
    # blocked (1 run in 4 or so, on any build)
    srv.draw(there, "FAKE-BLOCKED\n")
    srv.wait_for(lambda: (srv.row(there) or {}).get("state") == "blocked", timeout=10)
    srv.tmux("set-option", "-p", "-t", there, "@agent_attention", "1")
    return client, there


def test_prefix_g_from_a_real_client_runs_the_tma_the_file_names(srv, home):
    """A real terminal client types C-a g and lands on the blocked pane, whose mark the
    jump clears."""
    client, there = _blocked_elsewhere(srv, home)
    try:
        client.type(b"\x01g")  # the user's prefix is C-a
        srv.wait_for(lambda: client.pane() == there, timeout=10)
        srv.wait_for(lambda: srv.option(there, "@agent_attention") == "", timeout=5)
    finally:
        client.close()


def test_a_server_whose_path_lacks_tma_still_runs_the_bindings_and_the_launcher(srv, home):
    """install-keys ran where `tma` is on PATH (~/.local/bin in a login shell); the
    server started later has a PATH without it. Every binding and the daemon launcher
    name tma by its absolute path, as the attention hooks do: C-a g still jumps, and
    sourcing the file started a daemon for the server."""
    from tma.install import binary

    tma_dir = os.path.dirname(binary.running_tma(executable=sys.executable) or sys.executable)
    lacking = os.pathsep.join(d for d in srv.env["PATH"].split(os.pathsep)
                              if d and os.path.realpath(d) != os.path.realpath(tma_dir))
    srv.env["PATH"] = lacking  # the server (and every later srv.tma) runs without it
    srv.env["XDG_RUNTIME_DIR"] = str(srv.root / "rt")
    client, there = _blocked_elsewhere(
        srv, home, install_env={"PATH": tma_dir + os.pathsep + lacking})
    try:
        assert srv.tmux("show-environment", "-g", "PATH").strip() == f"PATH={lacking}"
        tma = binary.running_tma(executable=sys.executable)
        lines = [ln for ln in managed(srv).read_text().splitlines()
                 if ln.startswith(("bind-key", "run-shell"))]
        assert len(lines) >= 6 and lines[-1].startswith("run-shell -b "), lines
        assert all(f"'{tma}" in ln for ln in lines), lines
        client.type(b"\x01g")
        srv.wait_for(lambda: client.pane() == there, timeout=10)
        # the launcher line ran while the server read the conf: a daemon serves it
        srv.wait_for(lambda: srv.tma("doctor", "--json").stdout.find('"running": true') >= 0,
                     timeout=10)
    finally:
        client.close()


def test_prefix_a_opens_the_picker_in_a_popup_and_enter_goes_there(srv, home):
    client, there = _blocked_elsewhere(srv, home)
    try:
        client.type(b"\x01a")
        srv.wait_for(lambda: "esc quit" in client.output(), timeout=10)
        client.type(b"\r")  # the blocked row comes first
        srv.wait_for(lambda: client.pane() == there, timeout=10)
    finally:
        client.close()


def test_prefix_a_on_an_80x24_client_sizes_the_popup_for_a_preview(srv, home):
    """80% x 60% of 80x24 is 64x14: no room for the preview (76 columns) nor the title.
    On a client that small the popup takes the whole client; on a large one 80% x 60%."""
    client, there = _blocked_elsewhere(srv, home)
    client.close()
    binding = srv.wait_for(lambda: srv.binding("prefix", "a"), timeout=20)  # loads at start
    assert "client_width" in binding and "80%" in binding and "100%" in binding, binding
    srv.tmux("select-pane", "-t", there, "-T", "codex on the parser")
    small = PtyClient(srv, "s", cols=80, rows=24)
    try:
        small.type(b"\x01a")
        # the picker is a Python start inside the popup: slow on a loaded machine
        srv.wait_for(lambda: "esc quit" in small.output() and "── s:1" in small.output(),
                     timeout=30)
        srv.wait_for(lambda: "codex on the" in small.output(), timeout=30)  # the title
        small.type(b"\x1b")
    finally:
        small.close()


def test_bytes_that_are_not_utf8_survive_and_an_unreadable_conf_is_named(srv):
    conf = srv.home / ".tmux.conf"
    raw = b"# caf\xe9 in latin-1\r\nset -g mouse on\r\n"
    conf.write_bytes(raw)
    r = keys(srv, "--yes")
    assert r.returncode == 0, r.stderr
    assert conf.read_bytes().startswith(raw) and "\ufffd" in r.stdout  # shown as �
    assert keys(srv, "--uninstall", "--yes").returncode == 0
    assert conf.read_bytes() == raw
    conf.unlink()
    conf.mkdir()
    r = keys(srv, "--yes")
    assert r.returncode == 1 and f"tma: cannot read {conf}: Is a directory" in r.stderr


def test_a_dangling_symlinked_conf_gets_its_target_and_keeps_the_link(srv):
    conf = srv.home / ".tmux.conf"
    target = srv.root / "dotfiles" / "tmux.conf"
    target.parent.mkdir()
    conf.symlink_to(target)
    assert keys(srv, "--yes").returncode == 0
    assert conf.is_symlink() and target.read_text().endswith("# tma keys\n")
    assert keys(srv, "--uninstall", "--yes").returncode == 0
    assert conf.is_symlink() and target.read_text() == ""


def test_focus_events_put_pane_focus_in_into_the_file_and_tmux_takes_it(srv):
    srv.config.write_text("[focus]\nevents = true\n")
    assert keys(srv, "--yes").returncode == 0
    assert f"set-hook -g pane-focus-in[{INDEX}] " in managed(srv).read_text()
    srv.shell_pane()
    srv.tmux("source-file", str(managed(srv)))
    assert list(ours(srv, "pane-focus-in")) == [INDEX]
    assert keys(srv, "--check").returncode == 0


def test_prefix_G_splits_the_window_with_tma_watch(srv, home):
    client, _ = _blocked_elsewhere(srv, home)
    # a watch that exits leaves its pane and what it printed (1 loaded run in 20 saw no
    # advertised pid within 10 s, with nothing to tell a lost key from a failed watch)
    srv.tmux("set-option", "-g", "remain-on-exit", "on")
    try:
        client.type(b"\x01G")
        try:
            panes = srv.wait_for(lambda: [p for p in srv.tmux(
                "list-panes", "-t", "s:0", "-F", "#{pane_id} #{@tma_watch_pid}").split("\n")
                if p.split(" ")[-1].isdigit()] or None, timeout=10)
        except AssertionError:
            shown = srv.tmux("list-panes", "-t", "s:0", "-F", "#{pane_id} dead=#{pane_dead} "
                             "status=#{pane_dead_status} cmd=#{pane_current_command} "
                             "pid=#{@tma_watch_pid}")
            screens = [srv.tmux("capture-pane", "-p", "-t", line.split()[0])
                       for line in shown.splitlines()[1:]]
            raise AssertionError(f"no watch advertised in s:0:\n{shown}\n"
                                 + "\n".join(screens)) from None
        assert len(panes) == 1  # the watcher advertises its pid on its own pane
    finally:
        client.close()

