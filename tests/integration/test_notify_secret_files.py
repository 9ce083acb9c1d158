"""A push sink's secret file (`[notify.webhook] secret_file`, `[notify.ntfy] token_file`)
that group or others may read or write is refused, its mode named, as OpenSSH refuses
such a private key; the sink then sends nothing. Each place says so in its own way:
`tma debug notify-test` and `tma doctor` in words with the mode and the chmod, the
daemon in one log line (and no request), the hook path not at all (it exits 0 and
prints nothing; the failure record holds the reason). 0600 and 0400 are used.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers.daemon import _claude, _draw, _until, watched
from tests.helpers.doctor import doctor
from tests.helpers.http_sink import Sink

SECRET = "s3cret-for-tests"
OPEN = [0o644, 0o666, 0o640]  # others read it; others write it; the group reads it
PRIVATE = [0o600, 0o400]
KEY = {"webhook": ("secret_file", "secret file"), "ntfy": ("token_file", "token file")}


def secret_at(tmp_path, mode: int) -> str:
    path = tmp_path / f"secret-{mode:04o}"
    path.write_text(SECRET + "\n")
    os.chmod(path, mode)  # the umask never decides the mode under test
    return str(path)


def refusal(sink: str, path: str, mode: int) -> str:
    key, what = KEY[sink]
    return (f"notify.{sink}.{key}: Permissions {mode:04o} for '{path}' are too open: the "
            f"{what} must be readable by you alone (chmod 600 {path})")


@pytest.fixture
def receiver():
    srv = Sink()
    yield srv
    srv.close()


def notify_test(tmp_path, config: str) -> subprocess.CompletedProcess:
    cfg = tmp_path / "config.toml"
    cfg.write_text(config)
    run = tmp_path / "run"
    run.mkdir(exist_ok=True, mode=0o700)
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMA_NOTIFY_CMD", "DBUS_SESSION_BUS_ADDRESS", "TMUX", "TMUX_PANE",
                        "TMA_WEBHOOK_SECRET", "TMA_NTFY_TOKEN")}
    env.update(TMA_CONFIG=str(cfg), XDG_RUNTIME_DIR=str(run))
    return subprocess.run([sys.executable, "-m", "tma", "--socket-name", "tma-no-such-server",
                           "debug", "notify-test"], capture_output=True, text=True, env=env,
                          timeout=30, cwd=tmp_path)


def sink_config(sink: str, url: str, path: str, head: str = "[notify]\ndesktop = false\n") -> str:
    return f'{head}[notify.{sink}]\nurl = "{url}"\n{KEY[sink][0]} = "{path}"\nretries = 0\n'


@pytest.mark.parametrize("mode", OPEN, ids=[f"{m:04o}" for m in OPEN])
@pytest.mark.parametrize("sink", ["webhook", "ntfy"])
def test_notify_test_refuses_a_secret_file_others_can_reach(tmp_path, receiver, sink, mode):
    path = secret_at(tmp_path, mode)
    res = notify_test(tmp_path, sink_config(sink, receiver.url(), path))
    assert res.returncode == 1, res.stdout
    line = next(x for x in res.stdout.splitlines() if x.startswith(f"{sink} http://"))
    assert line == (f"{sink} http://127.0.0.1:{receiver.port}/… failed: "
                    + refusal(sink, path, mode)), line
    assert SECRET not in res.stdout + res.stderr
    time.sleep(0.2)
    assert receiver.count() == 0  # neither unsigned nor signed with a secret others hold


@pytest.mark.parametrize("mode", PRIVATE, ids=[f"{m:04o}" for m in PRIVATE])
@pytest.mark.parametrize("sink", ["webhook", "ntfy"])
def test_a_secret_file_only_you_can_read_is_used(tmp_path, receiver, sink, mode):
    path = secret_at(tmp_path, mode)
    res = notify_test(tmp_path, sink_config(sink, receiver.url(), path))
    assert res.returncode == 0, res.stdout
    got = receiver.wait(1)[0]
    if sink == "ntfy":
        assert got.headers["authorization"] == f"Bearer {SECRET}"
    else:
        want = "sha256=" + hmac.new(SECRET.encode(), got.body, hashlib.sha256).hexdigest()
        assert got.headers["x-tma-signature"] == want


def test_doctor_names_the_mode_and_counts_it(srv, tmp_path, receiver):
    srv.env["XDG_RUNTIME_DIR"] = str(srv.root / "run")
    srv.shell_pane()
    path = secret_at(tmp_path, 0o644)
    srv.config.write_text(sink_config("webhook", receiver.url(), path))
    r = doctor(srv)
    assert r.doc["notify"]["push_problems"] == [
        {"sink": "webhook", "problem": refusal("webhook", path, 0o644)}]
    assert r.section("push") == (f"push:    ✗ {refusal('webhook', path, 0o644)}; webhook "
                                 "sends nothing until then")
    assert r.doc["warnings"] == 1 and r.rc == 1
    os.chmod(path, 0o600)
    r = doctor(srv)
    assert r.doc["notify"]["push_problems"] == [] and r.section("push") == ""
    assert r.doc["warnings"] == 0 and r.rc == 0


def _record(runtime, srv, timeout: float = 10.0) -> dict:
    """The failure record of srv's server (keyed as its daemon's files)."""
    from tma.runtime import daemon_files

    sock = srv.tmux("display-message", "-p", "#{socket_path}").strip()
    path = runtime / "tma" / f"{daemon_files.key(sock)}.notify-error"
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, "no failure was recorded"
        time.sleep(0.02)
    return json.loads(path.read_text())


def test_the_daemon_rings_nothing_and_says_so_once(srv, tmp_path, receiver):
    path = secret_at(tmp_path, 0o644)
    srv.config.write_text(sink_config("webhook", receiver.url(), path,
                                      "[daemon]\nsweep_secs = 1\n[notify]\ndesktop = false\n"))
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    with watched(srv, tmp_path) as daemon:
        daemon.env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        daemon.start()
        _until(srv, pane, "@agent_state", "idle", timeout=10)
        _draw(srv, pane, "blocked")
        assert _record(daemon.runtime, srv)["reason"] == refusal("webhook", path, 0o644)
        start = daemon.status()["sweeps"]
        srv.wait_for(lambda: (daemon.status() or {}).get("sweeps", 0) >= start + 2,
                     timeout=15)
        assert daemon.status()["notify"]["fired"]["blocked"] == 1  # it rang: the sink refused
        assert daemon.proc is not None
        os.kill(daemon.proc.pid, signal.SIGTERM)
        _out, err = daemon.proc.communicate(timeout=15)
    assert daemon.proc.returncode == 0, err
    said = [x for x in err.decode().splitlines() if "too open" in x]
    assert len(said) == 1 and said[0].endswith(
        f"tma daemon: {refusal('webhook', path, 0o644)}; webhook sends nothing until then"), err
    assert receiver.count() == 0


def test_the_hook_path_stays_silent_and_exits_0(srv, tmp_path, receiver):
    run = srv.root / "run"
    run.mkdir(mode=0o700)
    srv.env["XDG_RUNTIME_DIR"] = str(run)
    path = secret_at(tmp_path, 0o666)
    srv.config.write_text(sink_config("ntfy", receiver.url(), path,
                                      "[notify]\nfrom_event = true\nmessage = false\n"
                                      "desktop = false\n"))
    pane = srv.agent_pane()
    res = srv.tma("event", "--agent", "fake", "--kind", "Ask", "--pane", pane, input="{}",
                  env={"TMA_HOOK_STRICT": "1"})
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert srv.option(pane, "@agent_state") == "blocked"
    assert _record(run, srv)["reason"] == refusal("ntfy", path, 0o666)  # the detached child's
    assert receiver.count() == 0
