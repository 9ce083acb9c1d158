"""The phone-reaching sinks, ntfy and the JSON webhook, against real HTTP servers on
127.0.0.1 (tests/helpers/http_sink): what is sent, the signature, retries, timeouts,
privacy, the daemon's worker, the hook path's detached child, hang isolation and the
daemon end to end.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
import time

import pytest

from tests.helpers.daemon import _claude, _draw, _until, watched
from tests.helpers.http_sink import Sink
from tma.runtime import config
from tma.runtime.notify import (
    dispatch as notify,
    http as notify_http,
    log as notify_log,
    push as notify_push,
    sinks as notify_sinks,
)
from tma.runtime.notify.note import Note
from tma.tmux import adapter

SECRET = "s3cret-for-tests"


@pytest.fixture
def rt(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    for key in ("TMA_NOTIFY_CMD", "TMA_NOTIFY_FROM_EVENT", "TMA_WEBHOOK_SECRET",
                "TMA_NTFY_TOKEN", "http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(key, raising=False)
    return tmp_path / "run" / "tma"


@pytest.fixture
def sinks():
    made: list[Sink] = []

    def make(script=None) -> Sink:
        s = Sink(script)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def cfg_of(tmp_path, text: str) -> config.Config:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return config.load(str(path))


def note(**kw) -> Note:
    values = dict(trigger="blocked", agent="claude", pane="%7", detail="permission",
                  session="sess-1", locator="work:1.0", title="SECRET TITLE: payroll fix",
                  repo="tma", branch="main", since_ms=1500, tool="Bash",
                  summary="Bash: rm -rf build/")
    values.update(kw)
    return Note(**values)


def ring(cfg, daemon: bool = False) -> notify_sinks.Ring:
    return notify_sinks.Ring(server=None, cfg=cfg, now=notify_log.now_ms(), daemon=daemon)


def _lines(sink, *args) -> list[str]:
    lines, ok = sink.test(*args)
    assert ok == (len(lines) == 1 and " failed: " not in lines[0]), lines
    return lines


def verify(secret: str, headers: dict[str, str], body: bytes, now: float) -> dict:
    """The receiver's side, as docs/how-to/notifications.md prints it."""
    want = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(want, headers["x-tma-signature"])
    doc = json.loads(body)
    assert abs(now - doc["sent_at"]) <= 300
    assert headers["x-tma-timestamp"] == str(doc["sent_at"])
    return doc


# ------------------------------------------------------------------ webhook


def test_webhook_payload_is_signed_and_keeps_the_title_out(rt, tmp_path, sinks):
    srv = sinks()
    cfg = cfg_of(tmp_path, f'[notify.webhook]\nurl = "{srv.url("/in/tok123")}"\n'
                           f'secret = "{SECRET}"\n')
    lines = _lines(notify_push.WEBHOOK, ring(cfg), note())
    assert len(lines) == 1 and lines[0].startswith(
        f"webhook http://127.0.0.1:{srv.port}/… 200 in "), lines
    assert "tok123" not in lines[0]
    got = srv.wait(1)
    assert len(got) == 1 and got[0].path == "/in/tok123"
    assert got[0].headers["content-type"] == "application/json"
    doc = verify(SECRET, got[0].headers, got[0].body, time.time())
    assert set(doc) == {"schema", "id", "sent_at", "host", "agent", "state", "detail", "tool",
                        "summary", "pane", "locator", "session", "repo", "branch", "age_ms",
                        "context_pct", "message"}
    assert (doc["agent"], doc["state"], doc["detail"], doc["tool"], doc["summary"]) == (
        "claude", "blocked", "permission", "Bash", "Bash: rm -rf build/")
    assert (doc["pane"], doc["repo"], doc["branch"], doc["age_ms"]) == ("%7", "tma", "main", 1500)
    assert doc["host"] == os.uname().nodename
    assert "SECRET TITLE" not in got[0].body.decode()
    assert "title" not in doc and "screen" not in doc
    assert got[0].headers["x-tma-delivery"] == doc["id"]
    # a body signed with another secret does not verify
    other = "sha256=" + hmac.new(b"other", got[0].body, hashlib.sha256).hexdigest()
    assert not hmac.compare_digest(other, got[0].headers["x-tma-signature"])
    assert notify_log.last_failure() is None


def test_webhook_title_only_when_opted_in(rt, tmp_path, sinks):
    srv = sinks()
    cfg = cfg_of(tmp_path, f'[notify.webhook]\nurl = "{srv.url()}"\ninclude_title = true\n')
    _lines(notify_push.WEBHOOK, ring(cfg), note())
    doc = json.loads(srv.wait(1)[0].body)
    assert doc["title"] == "SECRET TITLE: payroll fix"
    assert "x-tma-signature" not in srv.got[0].headers  # no secret, no signature


def test_retry_on_500_then_success_resends_the_same_bytes(rt, tmp_path, sinks):
    srv = sinks([500, 200])
    cfg = cfg_of(tmp_path, f'[notify.webhook]\nurl = "{srv.url()}"\nsecret = "{SECRET}"\n')
    notify_log.record_failure("webhook " + notify_push.shown(srv.url()), "old", 1)
    lines = _lines(notify_push.WEBHOOK, ring(cfg), note())
    assert " 200 in " in lines[0]
    got = srv.wait(2)
    assert len(got) == 2 and got[0].body == got[1].body
    verify(SECRET, got[1].headers, got[1].body, time.time())
    assert notify_log.last_failure() is None  # this sink's own standing record cleared


def test_no_retry_on_400_and_the_record_holds_no_secret(rt, tmp_path, sinks, monkeypatch):
    srv = sinks([400])
    monkeypatch.setenv("TMA_WEBHOOK_SECRET", "env-secret-wins")
    url = f"http://user:pw-in-url@127.0.0.1:{srv.port}/path-token"
    cfg = cfg_of(tmp_path, f'[notify.webhook]\nurl = "{url}"\nretries = 3\n')
    lines = _lines(notify_push.WEBHOOK, ring(cfg), note())
    assert lines == [f"webhook http://127.0.0.1:{srv.port}/… failed: HTTP 400"]
    time.sleep(0.5)
    assert srv.count() == 1
    got = srv.got[0]
    verify("env-secret-wins", got.headers, got.body, time.time())
    assert got.headers["authorization"].startswith("Basic ")  # userinfo became a header
    rec = notify_log.last_failure()
    assert rec["reason"] == "HTTP 400"
    text = (rt / "notify-error").read_text()
    for secret in ("env-secret-wins", "pw-in-url", "path-token"):
        assert secret not in text


def test_timeout_is_retried_then_reported(rt, tmp_path, sinks):
    srv = sinks(["hang"])
    cfg = cfg_of(tmp_path, f'[notify.webhook]\nurl = "{srv.url()}"\ntimeout_s = 0.3\n'
                           'retries = 1\n')
    t0 = time.monotonic()
    lines = _lines(notify_push.WEBHOOK, ring(cfg), note())
    took = time.monotonic() - t0
    assert lines == [f"webhook http://127.0.0.1:{srv.port}/… failed: timed out after 0.3s "
                     "(1 retry)"]
    assert 0.8 <= took < 3, took  # two attempts of 0.3 s and one pause of 0.25 s
    assert srv.count() == 2
    assert notify_log.last_failure()["reason"] == "timed out after 0.3s (1 retry)"


def test_refused_connection_is_a_clear_failure(rt, tmp_path, sinks):
    srv = sinks()
    url = srv.url()
    srv.close()
    cfg = cfg_of(tmp_path, f'[notify.webhook]\nurl = "{url}"\nretries = 0\n')
    (line,) = _lines(notify_push.WEBHOOK, ring(cfg), note())
    assert line.startswith("webhook http://127.0.0.1:") and "failed: connection failed" in line


def test_an_unreadable_secret_file_names_the_key(rt, tmp_path, sinks):
    srv = sinks()
    cfg = cfg_of(tmp_path, f'[notify.webhook]\nurl = "{srv.url()}"\n'
                           f'secret_file = "{tmp_path / "missing"}"\n')
    (line,) = _lines(notify_push.WEBHOOK, ring(cfg), note())
    assert "failed: notify.webhook.secret_file: cannot read" in line
    assert srv.count() == 0  # an unsigned body never goes out in place of a signed one
    (tmp_path / "secret").write_text(SECRET + "\n")
    (tmp_path / "secret").chmod(0o600)  # yours alone: one others can read is refused
    cfg = cfg_of(tmp_path, f'[notify.webhook]\nurl = "{srv.url()}"\n'
                           f'secret_file = "{tmp_path / "secret"}"\n')
    _lines(notify_push.WEBHOOK, ring(cfg), note())
    got = srv.wait(1)[0]
    verify(SECRET, got.headers, got.body, time.time())


# ------------------------------------------------------------------ ntfy


def test_ntfy_headers_and_one_line_body(rt, tmp_path, sinks):
    srv = sinks()
    (tmp_path / "tok").write_text("tk_abc\n")
    (tmp_path / "tok").chmod(0o600)
    cfg = cfg_of(tmp_path, f'[notify.ntfy]\nurl = "{srv.url("/my-topic")}"\n'
                           f'token_file = "{tmp_path / "tok"}"\ntags = ["robot"]\n')
    (line,) = _lines(notify_push.NTFY, ring(cfg), note())
    assert line.startswith(f"ntfy http://127.0.0.1:{srv.port}/… 200 in ")
    got = srv.wait(1)[0]
    assert got.path == "/my-topic"
    assert got.headers["title"] == "tma: claude blocked"
    assert got.headers["priority"] == "4"
    assert got.headers["tags"] == "warning,robot"
    assert got.headers["authorization"] == "Bearer tk_abc"
    body = got.body.decode()
    assert "\n" not in body and body.startswith("claude Bash: rm -rf build/ — tma@main work:1.0")
    assert "SECRET" not in body
    # opted in: the title goes in the Title header (RFC 2047 when not ASCII)
    cfg = cfg_of(tmp_path, f'[notify.ntfy]\nurl = "{srv.url("/t")}"\ninclude_title = true\n'
                           'priority = "min"\non = ["done"]\n')
    assert _lines(notify_push.NTFY, ring(cfg), note())[0].endswith("skipped: blocked is not in "
                                                                 "notify.ntfy.on")
    _lines(notify_push.NTFY, ring(cfg), note(trigger="done", title="café ☕"))
    got = srv.wait(2)[1]
    assert got.headers["priority"] == "1" and got.headers["tags"] == "white_check_mark"
    import email.header

    title = "".join(p.decode(c or "ascii") if isinstance(p, bytes) else p
                    for p, c in email.header.decode_header(got.headers["title"]))
    assert title == "tma: claude done — café ☕"


# ------------------------------------------------------------------ config


@pytest.mark.parametrize(("text", "key"), [
    ('[notify.webhook]\nsecret = "x"\n', "notify.webhook.url"),
    ('[notify.webhook]\nurl = "ftp://x/y"\n', "notify.webhook.url"),
    ('[notify.webhook]\nurl = "https://h/"\ntimeout_s = 0\n', "notify.webhook.timeout_s"),
    ('[notify.webhook]\nurl = "https://h/"\nretries = 9\n', "notify.webhook.retries"),
    ('[notify.webhook]\nurl = "https://h/"\nsecret = "a"\nsecret_file = "b"\n',
     "notify.webhook.secret_file"),
    ('[notify.webhook]\nurl = "https://h/"\ntoken = "a"\n', "notify.webhook.token"),
    ('[notify.ntfy]\nurl = "https://ntfy.sh/t"\npriority = 7\n', "notify.ntfy.priority"),
    ('[notify.ntfy]\nurl = "https://ntfy.sh/t"\non = ["working"]\n', "notify.ntfy.on"),
    ('[notify.ntfy]\nurl = "https://ntfy.sh/t"\ninclude_title = "yes"\n',
     "notify.ntfy.include_title"),
    ('[notify.ntfy]\nurl = "https://ntfy.sh/t"\ntags = ["a,b"]\n', "notify.ntfy.tags"),
    # the agent's last sentence: a sink cannot opt in alone, and both keys are bools
    ('[notify.webhook]\nurl = "https://h/"\ninclude_last_sentence = true\n',
     "notify.webhook.include_last_sentence"),
    ('[notify]\nlast_sentence = false\n[notify.ntfy]\nurl = "https://ntfy.sh/t"\n'
     'include_last_sentence = true\n', "notify.ntfy.include_last_sentence"),
    ('[notify]\nlast_sentence = true\n[notify.ntfy]\nurl = "https://ntfy.sh/t"\n'
     'include_last_sentence = 1\n', "notify.ntfy.include_last_sentence"),
    ('[notify]\nlast_sentence = "yes"\n', "notify.last_sentence"),
])
def test_bad_values_name_the_key(tmp_path, text, key):
    with pytest.raises(config.ConfigError) as exc:
        cfg_of(tmp_path, text)
    assert f": {key}: " in str(exc.value)
    assert "s3cret" not in str(exc.value)


def test_off_unless_configured(tmp_path):
    assert notify_sinks.live(config.Config()) == []
    cfg = cfg_of(tmp_path, '[notify.ntfy]\nurl = "https://ntfy.sh/t"\n')
    assert [s.NAME for s in notify_sinks.live(cfg)] == ["ntfy"]


# ------------------------------------------------------------------ isolation


def _hung_webhook_and_ntfy(tmp_path, sinks, timeout: float = 3, retries: int = 2):
    hung, ok = sinks(["hang"]), sinks()
    cfg = cfg_of(tmp_path, f'[notify]\nmessage = false\ndesktop = false\n'
                           f'[notify.webhook]\nurl = "{hung.url()}"\ntimeout_s = {timeout}\n'
                           f'retries = {retries}\n'
                           f'[notify.ntfy]\nurl = "{ok.url("/t")}"\n')
    return hung, ok, cfg


def _dispatch_timed(cfg, n: Note, daemon: bool) -> float:
    server = adapter.Server("tmux", socket_name=f"tma-none-{os.getpid()}")
    t0 = time.monotonic()
    notify.dispatch(server, cfg, n, wait=not daemon, daemon=daemon, clients=[])
    return t0


def test_a_hung_webhook_delays_neither_the_caller_nor_ntfy_daemon(rt, tmp_path, sinks):
    hung, ok, cfg = _hung_webhook_and_ntfy(tmp_path, sinks, timeout=1, retries=0)
    failed = notify_http.stats().get("webhook", {}).get("failed", 0)
    ring_ = ring(cfg, daemon=True)
    # each sink's worker thread starts with its first job, once in a daemon's life (this
    # worker process may have started them in an earlier test, or not): started here, so
    # what is timed is the hand-off every ring pays. Under a CPU burner per core the two
    # threads' start alone took 60-70 ms against the 50 ms bound.
    for name in ("webhook", "ntfy"):
        notify_http.worker(name)
    t0 = time.monotonic()
    notify_push.WEBHOOK.fire(ring_, note())  # first, so a shared queue would show
    notify_push.NTFY.fire(ring_, note())
    fired = time.monotonic() - t0
    assert fired < 0.05, fired
    got = ok.wait(1, timeout=5)[0]
    hung.wait(1, timeout=5)
    assert got.at - t0 < 0.5  # ntfy's worker never waited on the webhook's
    assert hung.count() == 1  # still hanging: its answer cannot have come first
    # a whole dispatch on the daemon path returns as quickly
    t1 = _dispatch_timed(cfg, note(), daemon=True)
    assert time.monotonic() - t1 < 0.05
    got = ok.wait(2, timeout=5)[1]
    assert got.at - t1 < 0.5
    # the in-process worker finishes its two hung deliveries before the test ends
    # (else its record would land in the next test's runtime dir)
    deadline = time.monotonic() + 6
    while notify_http.stats()["webhook"]["failed"] < failed + 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert notify_log.last_failure()["reason"] == "timed out after 1s"


def test_the_hook_path_detaches_and_returns(rt, tmp_path, sinks):
    hung, ok, cfg = _hung_webhook_and_ntfy(tmp_path, sinks)
    t0 = _dispatch_timed(cfg, note(), daemon=False)
    took = time.monotonic() - t0
    # two posix_spawns (one child per sink): a few ms, tens on a loaded 2-CPU machine;
    # the bound that matters is far below the hung webhook's 3 s
    assert took < 0.25, took
    got = ok.wait(1, timeout=10)[0]  # a child of its own delivered it
    hung.wait(1, timeout=10)
    assert got.at - t0 < 2.0  # a python start in the child, never the webhook's 3 s


def test_the_child_leaves_no_stdio_open_and_ends_by_its_budget(rt, tmp_path, sinks):
    """A hook's stdout is the agent's pipe: a child holding it would keep the agent
    waiting for EOF. The child must run in its own session and die by its budget."""
    hung = sinks(["hang"])
    cfg_of(tmp_path, f'[notify.webhook]\nurl = "{hung.url()}"\ntimeout_s = 0.5\n'
                           'retries = 0\n')
    code = ("import sys, time\n"
            "from tma.runtime import config\n"
            "from tma.runtime.notify import push as notify_push, sinks as notify_sinks\n"
            f"cfg = config.load({str(tmp_path / 'config.toml')!r})\n"
            "r = notify_sinks.Ring(cfg=cfg, now=int(time.time() * 1000))\n"
            "notify_push.WEBHOOK.fire(r, notify_push.Note(agent='a', pane='%1'))\n")
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         timeout=10, env=os.environ)
    # communicate() read to EOF on both pipes: the child did not hold them
    assert time.monotonic() - t0 < 3 and res.returncode == 0, res.stderr
    hung.wait(1, timeout=5)
    rec_path = rt / "notify-error"
    deadline = time.monotonic() + 8
    while not rec_path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "timed out after 0.5s" in json.loads(rec_path.read_text())["reason"]


def test_the_child_sends_plain_http_before_its_heavy_imports(rt, tmp_path, sinks):
    """The detached child's imports are the hook path's latency: a plain-http request
    goes out over a bare socket (no urllib, ssl, email parser), and the failure
    record's modules load only after it went. Its time to the request is bounded."""
    ok = sinks()
    job = notify_push.job("webhook", notify_gate_push(tmp_path, ok.url()), note(),
                          ring(None))
    code = ("import json, sys, time\n"
            "t0 = time.monotonic()\n"
            "from tma.runtime.notify import http as notify_http\n"
            "job = json.loads(sys.stdin.read())\n"
            "real = notify_http.attempt\n"
            "def spy(j, b):\n"
            "    got = real(j, b)\n"
            "    print(json.dumps(sorted(m for m in ('ssl', 'urllib.request', 'email.parser',\n"
            "          'http.client', 'tma.runtime.notify.log', 'tma.tmux.adapter')\n"
            "          if m in sys.modules)))\n"
            "    return got\n"
            "notify_http.attempt = spy\n"
            "print(notify_http.deliver(job).ok)\n")
    res = subprocess.run([sys.executable, "-c", code], input=json.dumps(job), text=True,
                         capture_output=True, timeout=20, env=os.environ)
    assert res.returncode == 0, res.stderr
    loaded, delivered = res.stdout.splitlines()
    assert json.loads(loaded) == [] and delivered == "True", res.stdout
    got = ok.wait(1)[0]
    assert got.headers["x-tma-signature"].startswith("sha256=")
    assert json.loads(got.body)["summary"] == "Bash: rm -rf build/"


def test_a_proxy_in_the_environment_still_carries_plain_http(rt, tmp_path, sinks, monkeypatch):
    """The bare-socket sender would bypass a proxy: with one set, urllib sends."""
    proxy = sinks()
    monkeypatch.setenv("http_proxy", proxy.url("").rstrip("/"))
    job = notify_push.job("webhook", notify_gate_push(tmp_path, "http://tma.invalid/hook"),
                          note(), ring(None))
    assert notify_http.deliver(job).ok
    assert proxy.wait(1)[0].path == "http://tma.invalid/hook"


def notify_gate_push(tmp_path, url: str) -> dict:
    from tma.runtime.notify import gate as notify_gate

    cfg = cfg_of(tmp_path, f'[notify.webhook]\nurl = "{url}"\nsecret = "{SECRET}"\n')
    settings = notify_gate.push(cfg, "webhook")
    assert settings is not None
    return settings


# ------------------------------------------------------------------ notify-test


def test_notify_test_reports_the_push_sinks(tmp_path, sinks):
    ok, bad = sinks(), sinks([503])
    cfgf = tmp_path / "config.toml"
    cfgf.write_text(f'[notify]\ndesktop = false\n[notify.ntfy]\nurl = "{ok.url("/topic")}"\n'
                    f'[notify.webhook]\nurl = "{bad.url("/x")}"\nretries = 1\n')
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMA_NOTIFY_CMD", "DBUS_SESSION_BUS_ADDRESS", "TMUX", "TMUX_PANE")}
    env.update(TMA_CONFIG=str(cfgf), XDG_RUNTIME_DIR=str(run))
    res = subprocess.run([sys.executable, "-m", "tma", "--socket-name", "tma-no-such-server",
                          "debug", "notify-test"], capture_output=True, text=True, env=env,
                         timeout=30, cwd=tmp_path)
    lines = res.stdout.splitlines()
    assert any(x.startswith(f"ntfy http://127.0.0.1:{ok.port}/… 200 in ") for x in lines), lines
    assert f"webhook http://127.0.0.1:{bad.port}/… failed: HTTP 503 (1 retry)" in lines
    assert res.returncode == 1
    assert "/topic" not in res.stdout
    assert lines[-1].endswith("; ntfy (its line above); webhook (its line above)"), lines


# ------------------------------------------------------------------ the daemon, end to end


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path) as d:
        d.env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        yield d


def test_daemon_rings_the_webhook_exactly_once(srv, daemon, tmp_path, sinks):
    hook = sinks()
    srv.config.write_text(f'[daemon]\nsweep_secs = 1\n[notify]\ndesktop = false\n'
                          f'[notify.webhook]\nurl = "{hook.url("/d")}"\nsecret = "{SECRET}"\n')
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    t0 = time.monotonic()
    _draw(srv, pane, "blocked")
    got = hook.wait(1, timeout=10)
    print(f"\nMEASURED blocked-to-webhook {got[0].at - t0:.3f}s")
    doc = verify(SECRET, got[0].headers, got[0].body, time.time())
    assert (doc["state"], doc["pane"], doc["agent"]) == ("blocked", pane, "claude")
    assert "title" not in doc
    start = daemon.status()["sweeps"]
    srv.wait_for(lambda: (daemon.status() or {}).get("sweeps", 0) >= start + 3, timeout=15)
    assert hook.count() == 1
    assert daemon.status()["notify"]["push"]["webhook"] == {
        "queued": 0, "sent": 1, "failed": 0, "dropped": 0}


@pytest.mark.parametrize("daemon", [True, False], ids=["daemon", "hook"])
def test_a_hung_webhook_does_not_delay_the_message_line(srv, rt, tmp_path, sinks, daemon):
    """The message line on a real attached client, the webhook answering or never
    answering: dispatch (which shows the message, then fires the sinks) takes no more
    than 50 ms longer with the hang, the message shows, and ntfy receives every one."""
    from tests.helpers.ptyclient import PtyClient

    pane = srv.agent_pane()
    hung, fine, ok = sinks(["hang"]), sinks(), sinks()
    client = PtyClient(srv)
    try:
        server = adapter.Server(srv.tmux_bin, socket_name=srv.name)

        def cfg_to(url: str) -> config.Config:
            return cfg_of(tmp_path, f'[notify]\ndesktop = false\n[notify.webhook]\n'
                                    f'url = "{url}"\ntimeout_s = 1\nretries = 0\n'
                                    f'[notify.ntfy]\nurl = "{ok.url("/t")}"\n')

        def timed(cfg, i: int) -> float:
            t0 = time.monotonic()
            notify.dispatch(server, cfg, note(pane=pane, title="", agent=f"a{i}"),
                            wait=not daemon, daemon=daemon)
            took = time.monotonic() - t0
            srv.wait_for(lambda: f"tma: a{i} blocked in {pane}" in client.output())
            return took

        answering, hanging = cfg_to(fine.url()), cfg_to(hung.url())
        timed(answering, 99)  # warm: the sinks' modules imported, the workers started
        ok.wait(1, timeout=10)
        base, with_hang = [], []
        for i in range(7):  # interleaved, each run's senders done before the next (on a
            # loaded 2-CPU machine a child still starting up would tax the next run)
            for cfg, out, where in ((answering, base, fine), (hanging, with_hang, hung)):
                n_ok, n_where = ok.count(), where.count()
                out.append(timed(cfg, 2 * i + (out is with_hang)))
                ok.wait(n_ok + 1, timeout=10)
                where.wait(n_where + 1, timeout=10)
        base_ms, hang_ms = sorted(base)[3], sorted(with_hang)[3]
        assert hang_ms - base_ms < 0.05, (base, with_hang)
        if daemon:  # let the in-process worker finish its hung deliveries (see above)
            deadline = time.monotonic() + 12
            while notify_http.stats()["webhook"]["queued"]:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            time.sleep(1.2)
    finally:
        client.close()


def test_screen_only_when_opted_in(srv, rt, tmp_path, sinks):
    pane = srv.shell_pane()
    srv.tmux("send-keys", "-t", pane, "printf 'SCREEN-MARK-42\\n'", "Enter")
    srv.wait_for(lambda: "SCREEN-MARK-42" in srv.tmux("capture-pane", "-p", "-t", pane))
    hook = sinks()
    server = adapter.Server(srv.tmux_bin, socket_name=srv.name)
    r = notify_sinks.Ring(server=server, cfg=None, now=notify_log.now_ms())
    for opt_in in (False, True):
        cfg = cfg_of(tmp_path, f'[notify.webhook]\nurl = "{hook.url()}"\n'
                               f'include_screen = {str(opt_in).lower()}\n')
        _lines(notify_push.WEBHOOK, notify_sinks.Ring(server=server, cfg=cfg, now=r.now),
                                 note(pane=pane))
    first, second = (json.loads(g.body) for g in hook.wait(2))
    assert "screen" not in first and "SCREEN-MARK-42" not in json.dumps(first)
    assert "SCREEN-MARK-42" in second["screen"] and "\x1b" not in second["screen"]
