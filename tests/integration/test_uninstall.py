"""`tma uninstall`: every agent's wiring out (byte for byte), the tmux hooks out, and
every tma option swept off the server — the survivors too — but never @agent_ignore."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.doctor import INSTALL_ENV
from tma.core import options

CLAUDE = {
    "model": "opus",
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
    "env": {"FOO": "bär"},
}
CODEX_TOML = """# my codex config
model = "gpt-5-codex"   # keep this comment

[tui]
notifications = true
"""
CODEX_HOOKS = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "audit"}]}]}}


def isolate_installers(srv) -> dict[str, Path]:
    paths = {k: srv.root / "cfgs" / v for k, v in INSTALL_ENV.items()}
    srv.env.update({k: str(v) for k, v in paths.items()})
    return paths


def originals(paths: dict[str, Path]) -> dict[Path, bytes]:
    """The user's own configs, written before tma touches them."""
    files = {
        paths["TMA_CLAUDE_SETTINGS"]: (json.dumps(CLAUDE, indent=2, ensure_ascii=False)
                                       + "\n").encode(),
        paths["TMA_CODEX_CONFIG"]: CODEX_TOML.encode(),
        paths["TMA_CODEX_HOOKS"]: json.dumps(CODEX_HOOKS, indent=4).encode(),
        # aider's flat YAML, its last line with no newline: tma's two lines go on top
        paths["TMA_AIDER_CONFIG"]: b"---\nmodel: gpt-4o  # mine\nedit-format: diff",
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def wire(srv, agent: str) -> None:
    res = srv.tma("install-hooks", agent, "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr


def hook_lines(srv) -> list[str]:
    out = srv.tmux("show-hooks", "-g")
    return [line for line in out.splitlines() if "clear-attention" in line]


def server_options(srv) -> dict[str, str]:
    out = {}
    for line in srv.tmux("show-options", "-s").splitlines():
        key, _, value = line.partition(" ")
        out[key] = value
    return out


def stamp_everything(srv, pane: str, *, ignore: str | None = None) -> None:
    """Every option `tma uninstall` sweeps off a pane (the full tuple, the telemetry and
    request lanes, the anchors and the three survivors), plus optionally @agent_ignore."""
    for name in options.UNINSTALL_PANE_OPTIONS:
        value = {"@agent_state": "blocked", "@agent_source": "hook",
                 "@agent_name": "claude"}.get(name, "1")
        srv.tmux("set-option", "-p", "-t", pane, name, value)
    if ignore is not None:
        srv.tmux("set-option", "-p", "-t", pane, "@agent_ignore", ignore)


@pytest.mark.tmux_contract
def test_uninstall_restores_configs_and_sweeps_every_option(srv):
    paths = isolate_installers(srv)
    files = originals(paths)
    a = srv.agent_pane("claude")
    b = srv.agent_pane("codex", session="t")
    c = srv.shell_pane()
    wire(srv, "claude")
    wire(srv, "codex")
    wire(srv, "aider")
    for path, data in files.items():
        assert path.read_bytes() != data  # wired
    assert len(hook_lines(srv)) == 2
    survivors = {"@agent_action", "@agent_mute_until", "@tma_watch_pid"}
    assert survivors <= set(options.UNINSTALL_PANE_OPTIONS)
    assert "@agent_ignore" not in options.UNINSTALL_PANE_OPTIONS

    stamp_everything(srv, a)
    stamp_everything(srv, b, ignore="keep-me")
    srv.tmux("set-option", "-p", "-t", c, "@agent_ignore", "1")
    srv.tmux("set-option", "-p", "-t", c, "@tma_watch_pid", "12345")
    for pane in (a, b):
        window = srv.display(pane, "#{window_id}")
        session = srv.display(pane, "#{session_id}")
        srv.tmux("set-option", "-w", "-t", window, "@agent_summary", "blocked:1")
        srv.tmux("set-option", "-t", session, "@agent_session_summary", "blocked:1")
    srv.tmux("set-option", "-s", "@tma_origin_dev_pts_3_0badf00d", f"{a} {b}")
    srv.tmux("set-option", "-s", "@tma_keep_attention", a)
    srv.tmux("set-option", "-s", "@tma_last_poll", "1700000000000")
    srv.tmux("set-option", "-s", "@tma_setpf_ok", "1")
    srv.tmux("set-option", "-s", "@user_own", "mine")  # not tma's: stays

    res = srv.tma("uninstall", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "tma: claude: unwired" in out and "tma: codex: unwired" in out
    assert "tma: aider: unwired" in out
    assert "tma: gemini: nothing to remove" in out
    assert "--- " in out and "+++ " in out  # the diff comes first
    assert "yourself (tma never edits status-right); the running server keeps it until " \
        "you set it anew or run: tmux set -gu status-right" in out

    # every config restored byte for byte
    for path, data in files.items():
        assert path.read_bytes() == data, path
    # the tmux attention hooks and their record are gone
    assert hook_lines(srv) == []
    assert not list((srv.root / "cfgs" / "tma-config").glob("hooks-state-*.toml"))
    # every tma option gone; @agent_ignore untouched
    assert srv.options(a) == {}
    assert srv.options(b) == {"@agent_ignore": "keep-me"}
    assert srv.options(c) == {"@agent_ignore": "1"}
    for pane in (a, b, c):
        window = srv.display(pane, "#{window_id}")
        session = srv.display(pane, "#{session_id}")
        assert "@agent_summary" not in srv.tmux("show-options", "-w", "-t", window)
        assert "@agent_session_summary" not in srv.tmux("show-options", "-t", session)
    left = server_options(srv)
    assert [k for k in left if k.startswith("@tma_")] == []
    assert left["@user_own"] == "mine"

    # a second run has nothing left to remove and still succeeds
    again = srv.tma("uninstall", "--yes", manifests=False)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("nothing to remove") == 9  # one line per agent
    for path, data in files.items():
        assert path.read_bytes() == data


def test_declined_prompt_keeps_everything(srv):
    paths = isolate_installers(srv)
    files = originals(paths)
    a = srv.agent_pane("claude")
    wire(srv, "claude")
    wired = paths["TMA_CLAUDE_SETTINGS"].read_bytes()
    stamp_everything(srv, a)
    before = srv.options(a)
    res = srv.tma("uninstall", manifests=False, input="")  # stdin is not a terminal
    assert res.returncode == 1
    assert "tma: aborted; no changes written" in res.stderr
    assert "tma: uninstall: still wired: claude" in res.stderr
    assert paths["TMA_CLAUDE_SETTINGS"].read_bytes() == wired
    assert paths["TMA_CODEX_CONFIG"].read_bytes() == files[paths["TMA_CODEX_CONFIG"]]
    assert len(hook_lines(srv)) == 2  # the wired agent still needs them
    assert srv.options(a) == before


def test_ctrl_c_at_the_first_prompt_stops_uninstall_at_once(srv):
    """One Ctrl-C (\\x03 on the controlling terminal) ends uninstall: exit 130, no second
    question, no agent unwired, nothing swept."""
    import sys

    from tests.helpers.ptyclient import type_on_pty

    paths = isolate_installers(srv)
    originals(paths)
    a = srv.agent_pane("claude")
    wire(srv, "claude")
    wire(srv, "codex")
    wired = {k: paths[k].read_bytes() for k in ("TMA_CLAUDE_SETTINGS", "TMA_CODEX_HOOKS")}
    stamp_everything(srv, a)
    before = srv.options(a)
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "uninstall"]
    rc, out, prompts = type_on_pty(argv, srv.env, b"[y/N]", b"\x03")
    assert rc == 130, out
    assert prompts == 1, out
    assert "tma: interrupted" in out and "Traceback" not in out
    assert {k: paths[k].read_bytes() for k in wired} == wired
    assert len(hook_lines(srv)) == 2 and srv.options(a) == before


def test_uninstall_without_a_server(srv):
    paths = isolate_installers(srv)
    files = originals(paths)
    srv.shell_pane()
    wire(srv, "claude")
    srv.kill()
    res = srv.tma("uninstall", "--yes", manifests=False)
    assert res.returncode == 0, res.stderr
    assert "tmux: no server running" in res.stdout
    assert paths["TMA_CLAUDE_SETTINGS"].read_bytes() == files[paths["TMA_CLAUDE_SETTINGS"]]


def test_uninstall_removes_what_tma_created_and_nothing_else(srv):
    """No config existed: after install + uninstall nothing tma made is left (no `{}`
    settings.json, no empty plugin or extension folder, no empty tma config folder),
    and every folder that was there before stays."""
    paths = isolate_installers(srv)
    mine = srv.root / "cfgs" / "gemini"
    mine.mkdir(parents=True)  # the user's own (empty) folder
    srv.shell_pane()
    for agent in ("claude", "cursor", "opencode", "pi", "gemini", "copilot", "qwen", "aider"):
        wire(srv, agent)
    assert paths["TMA_CLAUDE_SETTINGS"].is_file()
    assert (paths["TMA_CONFIG_DIR"] / "created.json").is_file()
    res = srv.tma("uninstall", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    for key in ("TMA_CLAUDE_SETTINGS", "TMA_CURSOR_HOOKS", "TMA_OPENCODE_PLUGIN",
                "TMA_PI_EXTENSION", "TMA_GEMINI_SETTINGS", "TMA_COPILOT_HOOKS",
                "TMA_QWEN_SETTINGS", "TMA_AIDER_CONFIG"):
        assert not paths[key].exists(), key
    for folder in ("claude", "cursor", "opencode", "pi", "copilot", "qwen"):
        assert not (srv.root / "cfgs" / folder).exists(), folder
    assert not paths["TMA_CONFIG_DIR"].exists()  # tma's own config folder, made by tma
    assert mine.is_dir()  # the user's folder stays, empty as it was
    assert not paths["TMA_WRAPPER_PATH"].exists()  # the wrapper tma wrote, its folder too
    assert not paths["TMA_WRAPPER_PATH"].parent.exists()
    assert (srv.root / "cfgs").is_dir() and mine.is_dir()
    assert "removed the empty folder" in res.stdout


def test_uninstall_removes_tmas_cache_and_only_its_entries(srv):
    """The manifest/config cache tma wrote under $XDG_CACHE_HOME/tma goes; a file tma did
    not write there stays, and so does the folder then."""
    isolate_installers(srv)
    srv.shell_pane()
    wire(srv, "claude")
    srv.tma("ls")  # a producing cycle fills the cache
    cache = srv.root / "cache" / "tma"
    assert any(p.suffix == ".marshal" for p in cache.iterdir()), list(cache.iterdir())
    res = srv.tma("uninstall", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not cache.exists()
    assert "removed tma's cache" in res.stdout
    cache.mkdir(parents=True)
    (cache / "notes.txt").write_text("mine")
    (cache / "config.marshal").write_bytes(b"x")
    res = srv.tma("uninstall", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert sorted(p.name for p in cache.iterdir()) == ["notes.txt"]


def test_uninstall_keeps_a_tma_config_folder_the_user_had(srv):
    paths = isolate_installers(srv)
    cdir = paths["TMA_CONFIG_DIR"]
    cdir.mkdir(parents=True)
    srv.shell_pane()
    wire(srv, "claude")
    res = srv.tma("uninstall", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert cdir.is_dir() and list(cdir.iterdir()) == []


def test_check_without_a_server_says_start_tmux_first(srv):
    isolate_installers(srv)
    srv.shell_pane()
    wire(srv, "claude")
    srv.kill()
    res = srv.tma("install-hooks", "--check", manifests=False)
    assert res.returncode == 1
    assert "start tmux first" in res.stderr and "hooks OK" not in res.stdout
    # nothing is broken, so nothing to repair: the files hold, the server side is unknown
    assert res.stderr.startswith("tma: agent wiring OK, but the tmux hooks cannot be checked"), \
        res.stderr
    assert "to repair" not in res.stderr and "incomplete" not in res.stderr


@pytest.mark.tmux_contract
def test_uninstall_takes_the_keys_back_too(srv):
    """`tma uninstall` removes every wiring, the key file and its tmux.conf line included:
    the user's tmux.conf comes back byte for byte."""
    isolate_installers(srv)
    srv.shell_pane()
    conf = Path(srv.env["HOME"]) / ".tmux.conf"
    mine = b"# my tmux.conf\nset -g mouse on\n"
    conf.write_bytes(mine)
    res = srv.tma("install-keys", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert b"# tma keys" in conf.read_bytes()
    res = srv.tma("uninstall", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert conf.read_bytes() == mine
    assert "removed the managed key file" in res.stdout
    res = srv.tma("uninstall", "--yes", manifests=False)  # nothing left: says nothing of keys
    assert res.returncode == 0 and "key file" not in res.stdout, res.stdout


@pytest.mark.tmux_contract
def test_after_uninstall_nothing_of_tma_is_left(srv, tmp_path):
    """A day's install (init: hooks, keys, the attention hooks, a real daemon, stamped
    panes), then `tma uninstall --yes`: no tma process, no tma hook (a foreign one on
    the same hook stays), no @agent_* / @tma_* option anywhere, no file of tma's."""
    import os
    import re
    import sys
    import time

    from tests.helpers.daemon import Daemon
    from tests.helpers.machine import setup_machine
    from tma.install import wiring

    setup_machine(srv)
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    srv.env["XDG_RUNTIME_DIR"] = str(runtime)
    daemon = Daemon(srv, runtime)
    try:
        a = srv.agent_pane("claude")
        srv.tmux("set-hook", "-g", "after-select-pane[3]", "display-message mine")
        res = srv.tma("init", "--yes", manifests=False)
        assert res.returncode == 0, res.stdout + res.stderr
        # the key file's launcher and init may both have started one: the second leaves
        # at once (the lock is held), so exactly one stays
        srv.wait_for(lambda: len(daemon.pids()) == 1, timeout=10)
        assert any("clear-attention" in h for h in hook_lines(srv))
        stamp_everything(srv, a)
        srv.tmux("set-option", "-s", "@tma_last_poll", "1")
        # a watch left running in a split re-stamps every pane a second after the sweep
        w = srv.new_pane(f"exec {sys.executable} -m tma --socket-name {srv.name} watch")
        srv.wait_for(lambda: srv.option(w, "@tma_watch_pid").isdigit(), timeout=15)
        watch_pid = int(srv.option(w, "@tma_watch_pid"))

        res = srv.tma("uninstall", "--yes", manifests=False)
        assert res.returncode == 0, res.stdout + res.stderr
        out = res.stdout + res.stderr
        # one command names every removal (no `install-keys --uninstall` /
        # `install-hooks --uninstall` wording beside it)
        assert "install-keys --uninstall" not in out and "install-hooks --uninstall" not in out
        assert daemon.pids() == []
        assert f"tma: stopped tma watch (pid {watch_pid})" in res.stdout
        assert not wiring.alive(watch_pid)  # stopped (a zombie, at most, for tmux)
        time.sleep(1.5)  # what a watch still running would have stamped by now
        hooks = srv.tmux("show-hooks", "-g")
        assert "tma" not in hooks and "clear-attention" not in hooks, hooks
        assert "display-message mine" in hooks  # the user's own stays
        left = []
        for args in (("show-options", "-s"), ("show-options", "-g"),
                     ("show-options", "-t", "s"), ("show-options", "-w", "-t", a),
                     ("show-options", "-p", "-t", a)):
            left += [ln for ln in srv.tmux(*args).splitlines()
                     if re.match(r"@(agent_|tma_)", ln)]
        assert left == [], left
        files = []
        for top in (srv.home, srv.root / "config", srv.root / "cache", srv.root / "cfgs",
                    runtime):
            for dirpath, dirnames, filenames in os.walk(top):
                for name in dirnames + filenames:
                    path = os.path.join(dirpath, name)
                    if "tma" in name or "hooks-state" in name:
                        files.append(path)
                    elif os.path.isfile(path) and b"tma" in open(path, "rb").read():
                        files.append(path)
        assert files == [], files
    finally:
        daemon.stop()


def test_uninstall_takes_the_fleets_records_keeps_the_hosts_file_and_other_servers_logs(
        srv, tmp_path):
    """The dispatch outbox, the rung record and a host's serve ledger are tma's own and
    go; hosts.toml is the person's configuration and is asked about (`--yes` keeps it);
    the runtime dir is shared by the user's tmux servers: another server's daemon log
    stays, this server's stopped daemon's goes."""
    from tma.runtime import daemon_files

    paths = isolate_installers(srv)
    srv.shell_pane()
    wire(srv, "claude")
    state = Path(srv.env["XDG_STATE_HOME"]) / "tma"
    for rel in ("fleet/dispatch.jsonl", "fleet/rung.json", "serve/ledger.jsonl"):
        (state / rel).parent.mkdir(parents=True, exist_ok=True)
        (state / rel).write_text("{}\n")
    hosts = paths["TMA_CONFIG_DIR"] / "hosts.toml"
    hosts.parent.mkdir(parents=True, exist_ok=True)
    hosts.write_text('[hosts.box]\ntarget = "me@box"\n')
    runtime = Path(srv.env["XDG_RUNTIME_DIR"]) / "tma"
    runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
    sock = srv.tmux("display-message", "-p", "#{socket_path}").strip()
    mine = daemon_files.key(sock)
    other = daemon_files.key("/tmp/tmux-elsewhere/work")
    (runtime / f"{mine}.log").write_text("this server's stopped daemon\n")
    (runtime / f"{other}.log").write_text("another server's daemon\n")
    res = srv.tma("uninstall", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not (state / "fleet").exists() and not (state / "serve").exists()
    assert hosts.read_text() == '[hosts.box]\ntarget = "me@box"\n'
    assert "kept your hosts file" in res.stdout
    assert not (runtime / f"{mine}.log").exists()
    assert (runtime / f"{other}.log").read_text() == "another server's daemon\n"
    assert "kept 1 file of other tmux servers' daemons" in res.stdout
