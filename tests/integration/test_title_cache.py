"""A quiet pane whose process is a shared name is identified from the title cache
(no manifest set loaded), and the cache is trusted only while the evidence it rests on
is unchanged: the pane's title, the manifest files, and the process tree, which is
walked on every run whatever the cache holds."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from tests.helpers.manifests import TEST_MANIFEST

PROBE = """
import sys
sys.argv = ["tma"] + %r
from tma.cli.main import main
rc = main(sys.argv[1:])
sys.stdout.write("\\n@@" + repr(sorted(sys.modules)))
raise SystemExit(rc)
"""


def _titled(pattern: str) -> str:
    return TEST_MANIFEST.replace('process_names = ["fakeagent"]',
                                 f'process_names = ["fakenode"]\ntitle_patterns = ["{pattern}"]')


def _setup(srv):
    (srv.manifests / "alpha.toml").write_text(_titled("^ALPHA"))
    (srv.manifests / "beta.toml").write_text(_titled("^BETA"))
    srv.config.write_text("[fold]\nfreshness_secs = 1\n")
    return srv.agent_pane("fakenode")


def _title(srv, pane: str, title: str, screen: str = "FAKE-IDLE") -> None:
    tty = srv.display(pane, "#{pane_tty}")
    with open(tty, "w", encoding="utf-8") as fh:
        fh.write(f"\x1b]2;{title}\x07\x1b[2J\x1b[H{screen}\r\n")
    srv.wait_for(lambda: srv.display(pane, "#{pane_title}") == title)
    srv.wait_for(lambda: screen in srv.tmux("capture-pane", "-p", "-t", pane))
    srv.next_second()  # a stamp from the next second on reads the screen as quiet


def _status(srv) -> tuple[str, set[str]]:
    """A producing `tma status` past the freshness window: (its cycle line, modules)."""
    time.sleep(1.2)
    srv.next_second()
    argv = ["--socket-name", srv.name, "--manifest-dir", str(srv.manifests),
            "--debug-timing", "status"]
    res = subprocess.run([sys.executable, "-c", PROBE % argv], capture_output=True,
                         text=True, env=srv.env, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stderr, set(eval(res.stdout.rpartition("\n@@")[2]))  # noqa: S307 - our repr


def _cache(srv) -> dict:
    out = subprocess.run([sys.executable, "-c", "import marshal, sys; "
                          "print(repr(marshal.loads(open(sys.argv[1], 'rb').read())[1]))",
                          str(srv.root / "cache" / "tma" / "titles.marshal")],
                         capture_output=True, text=True, check=True)
    return eval(out.stdout)  # noqa: S307 - marshal's own data, printed by us


def test_a_quiet_titled_pane_is_identified_from_the_cache(srv):
    pane = _setup(srv)
    _title(srv, pane, "ALPHA one")
    assert srv.option(pane, "@agent_name") == "" and srv.row(pane)["agent"] == "alpha"
    assert _cache(srv)["titles"]["ALPHA one"] == ["alpha"]
    err, mods = _status(srv)
    assert "1 capture-skipped" in err, err  # the quiet path: identified, not captured
    assert "tma.core.manifest" not in mods and "re" not in mods, err
    assert srv.option(pane, "@agent_name") == "alpha"


def test_a_new_title_is_matched_by_the_full_set(srv):
    pane = _setup(srv)
    _title(srv, pane, "ALPHA one")
    assert srv.row(pane)["agent"] == "alpha"
    _title(srv, pane, "BETA two")
    err, mods = _status(srv)
    assert "tma.core.manifest" in mods, err  # not in the cache: the full set decides
    assert srv.option(pane, "@agent_name") == "beta"
    assert _cache(srv)["titles"]["BETA two"] == ["beta"]
    # a title no pattern matches: the same pid is held by the anchor (the full set says
    # by which manifest); the cache remembers that nothing matches, and a run that
    # reads that answer from the cache names the same agent
    _title(srv, pane, "vim notes.txt", "FAKE-WORKING")
    err, mods = _status(srv)
    assert "tma.core.manifest" in mods, err
    by_full_set = srv.option(pane, "@agent_name")
    assert by_full_set in ("alpha", "beta")
    assert srv.option(pane, "@tma_title_match_pid") == srv.option(pane, "@agent_pid")
    assert _cache(srv)["titles"]["vim notes.txt"] == []
    _title(srv, pane, "vim notes.txt", "FAKE-BLOCKED")  # a new screen: stamped again
    srv.tmux("set-option", "-p", "-u", "-t", pane, "@agent_name")
    err, mods = _status(srv)
    assert srv.option(pane, "@agent_name") == by_full_set
    assert srv.option(pane, "@agent_state") == "blocked"


def test_an_edited_manifest_drops_every_cached_answer(srv):
    pane = _setup(srv)
    _title(srv, pane, "ALPHA one")
    assert srv.row(pane)["agent"] == "alpha"
    err, mods = _status(srv)
    assert "tma.core.manifest" not in mods, err  # the cached answer was used
    # alpha stops matching that title; beta starts to
    (srv.manifests / "alpha.toml").write_text(_titled("^GAMMA"))
    (srv.manifests / "beta.toml").write_text(_titled("^ALPHA"))
    _title(srv, pane, "ALPHA one", "FAKE-BLOCKED")  # same title, a screen to read
    err, mods = _status(srv)
    assert "tma.core.manifest" in mods, err
    assert srv.option(pane, "@agent_name") == "beta"
    assert _cache(srv)["titles"] == {"ALPHA one": ["beta"]}


def test_a_changed_process_is_walked_again_whatever_the_cache_says(srv):
    pane = _setup(srv)
    _title(srv, pane, "ALPHA one")
    row = srv.row(pane)
    assert row["agent"] == "alpha"
    pid = srv.option(pane, "@agent_pid")
    # the agent quits to a shell: same pane, same title, cached answer still there
    srv.tmux("respawn-pane", "-k", "-t", pane, "exec sh")
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "sh")
    srv.tmux("select-pane", "-t", pane, "-T", "ALPHA one")
    assert "ALPHA one" in _cache(srv)["titles"]
    _status(srv)
    assert srv.option(pane, "@agent_state") == "" and srv.ls() == []
    # a new agent process (a new pid) under the same title: identified anew
    srv.tmux("respawn-pane", "-k", "-t", pane, f"exec {srv.fake('fakenode')} 100000")
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "fakenode")
    _title(srv, pane, "ALPHA one")
    _status(srv)
    assert srv.option(pane, "@agent_name") == "alpha"
    assert srv.option(pane, "@agent_pid") not in ("", pid)
    assert json.loads(srv.tma("ls", "--json", check=True).stdout)["agents"][0]["agent"] == "alpha"
