"""A real ISO-8859-1 locale (generated here with localedef): output degrades, never crashes.

`LANG=C` is not enough to find the bug, Python then runs in UTF-8 mode. An 8-bit locale
makes stdout latin-1, where neither the status glyphs nor an agent's title encode.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.helpers.tmux_sockets import require_tmux

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build

LOCALE = "en_US.ISO-8859-1"
TITLE = "✳ fix — the parser 日本"  # nothing here but the spaces and letters is latin-1


@pytest.fixture(scope="module")
def latin1_env(tmp_path_factory):
    """LOCPATH + LC_ALL for a generated ISO-8859-1 locale, or a skip saying what is missing."""
    localedef = shutil.which("localedef")
    source = "/usr/share/i18n/locales/en_US"
    missing = None
    if localedef is None:
        missing = "localedef is not installed (Debian: libc-bin)"
    elif not os.path.exists(source):
        missing = f"{source} is missing (Debian: apt-get install locales)"
    if missing:
        if os.environ.get("TMA_REQUIRE_LOCALE"):
            pytest.fail(f"TMA_REQUIRE_LOCALE is set but {missing}")
        pytest.skip(f"cannot generate an ISO-8859-1 locale: {missing}")
    root = tmp_path_factory.mktemp("locales")
    res = subprocess.run([localedef, "-i", "en_US", "-f", "ISO-8859-1", str(root / LOCALE)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    env = {"LOCPATH": str(root), "LC_ALL": LOCALE, "PYTHONIOENCODING": ""}
    probe = subprocess.run([sys.executable, "-c", "import sys; print(sys.stdout.encoding)"],
                           capture_output=True, text=True, env=dict(os.environ, **env))
    assert probe.stdout.strip().lower() in ("iso8859-1", "latin-1"), probe.stdout
    return env


def _run(srv, env, *args):
    full = {k: v for k, v in srv.env.items() if k not in ("LANG", "LC_ALL", "LC_CTYPE")}
    full.update(env)
    full.pop("PYTHONIOENCODING")
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), *args]
    res = subprocess.run(argv, capture_output=True, env=full, timeout=60)
    err = res.stderr.decode("latin-1")
    assert "Traceback" not in err and "UnicodeEncodeError" not in err, err
    return res.returncode, res.stdout.decode("latin-1"), err


def test_every_surface_degrades_in_an_iso_8859_1_locale(srv, latin1_env):
    pane = srv.agent_pane()
    srv.tmux("select-pane", "-t", pane, "-T", TITLE)
    srv.draw(pane, "FAKE-BLOCKED\n")
    rc, out, _ = _run(srv, latin1_env, "ls")
    assert rc == 0 and out.startswith(f"{pane}\tfake\tblocked\tpermission\t"), out
    assert "\t* fix - the parser ??\t" in out  # glyphs to ASCII, the rest to "?"
    rc, out, _ = _run(srv, latin1_env, "ls", "--json")
    assert rc == 0
    assert json.loads(out)["agents"][0]["title"] == TITLE  # escaped, not lost
    assert out.isascii()
    rc, out, _ = _run(srv, latin1_env, "status")
    assert rc == 0 and out == "#[range=user|tma:blocked]#[fg=colour231,bg=red]!1#[fg=default,bg=default]#[norange]"
    rc, out, _ = _run(srv, latin1_env, "status", "--format", "plain")
    assert rc == 0 and out == "!1\n"
    rc, out, _ = _run(srv, latin1_env, "doctor")
    assert rc == 0 and "panes (1):" in out, out
    rc, out, _ = _run(srv, latin1_env, "doctor", "--json")
    assert rc == 0 and json.loads(out)["schema"] == 1
    rc, _, err = _run(srv, latin1_env, "wait", "--pane", pane, "--until", "idle",
                      "--timeout", "0")
    assert rc == 124 and err.startswith("tma: timed out"), err


def test_the_demo_runs_in_an_iso_8859_1_locale(tmp_path, latin1_env):
    require_tmux()
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMUX", "TMUX_PANE", "TMA_SOCKET_PATH", "TMA_CONFIG", "LANG",
                        "LC_CTYPE", "PYTHONIOENCODING")}
    for d in ("home", "config", "cache", "tmp"):
        (tmp_path / d).mkdir()
    (tmp_path / "config.toml").touch()  # named by TMA_CONFIG: it must exist
    env.update(latin1_env, HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), TMPDIR=str(tmp_path / "tmp"),
               TMA_CONFIG=str(tmp_path / "config.toml"))
    env.pop("PYTHONIOENCODING")
    res = subprocess.run([sys.executable, "-m", "tma", "demo", "--seconds", "5"],
                         capture_output=True, env=env, timeout=120, cwd=tmp_path / "tmp")
    out, err = res.stdout.decode("latin-1"), res.stderr.decode("latin-1")
    assert res.returncode == 0, out + err
    assert "Traceback" not in out + err
    assert "verdicts seen:" in out and "temp dir removed" in out
