"""`tma web`'s page in a real browser: Debian's chromium driven by Playwright, in front of
a real `tma web` process and a private tmux server whose agents are real processes
drawing real captured screens (tests/helpers/keyrecorder.py records every key they get).

A phone (390x844, touch) and a desktop (1280x800) each pair through the URL `tma web pair`
prints, see the blocked agent, open its card and tap Approve: the agent receives one
keystroke, however fast the button is tapped twice, and its row leaves blocked.

One browser and one `tma web` serve the whole module (CI's time budget). Each view's
screenshot is saved under the module's tmp dir, and also copied to $TMA_WEB_SCREENS
when that names a directory (a person checks the layout by eye there).

Skipped, saying why, when playwright or chromium is absent, unless TMA_REQUIRE_BROWSER is
set (CI sets it: a missing browser then fails instead of passing silently).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.keyrecorder import KeyRecorder
from tma.core import fixture

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
#: A recorded Claude session (as test_conversation_view reads it): its prompt, and the
#: agent's answer after its tool ran, later in the file.
TRANSCRIPT = next((Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
                   / "claude-2.1.332" / "tool-approved").glob("*.jsonl"))
ASKED = "RUNTOOL please write the file"
ANSWERED = "TOOL RESULT SEEN: the command ran. All done."
CHROMIUM = ("/usr/bin/chromium", "/usr/lib/chromium/chromium")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


def _chromium() -> str | None:
    found = shutil.which("chromium")
    if found:
        return found
    return next((p for p in CHROMIUM if os.access(p, os.X_OK)), None)


def _need_browser() -> tuple[object, str]:
    """Playwright's sync API and chromium's path; else skip (or fail under
    TMA_REQUIRE_BROWSER) naming what is missing."""
    missing = []
    try:
        from playwright import sync_api
    except ImportError:
        sync_api = None
        missing.append("playwright (pip install -e '.[test]')")
    chromium = _chromium()
    if chromium is None:
        missing.append("Debian's chromium (apt-get install chromium)")
    if missing:
        why = "the browser tests need " + " and ".join(missing)
        if os.environ.get("TMA_REQUIRE_BROWSER"):
            pytest.fail(f"{why}, and TMA_REQUIRE_BROWSER is set", pytrace=False)
        pytest.skip(why)
    return sync_api, chromium  # type: ignore[return-value]


# --- the module's host: one tmux server, one `tma web`, one browser -----------------------


class Host:
    def __init__(self, srv) -> None:
        self.srv = srv
        self.web: subprocess.Popen | None = None
        self.base = ""
        self.log = srv.root / "web.log"

    def tma(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
        # the bundled manifests (claude's), as test_serve's devices use
        argv = [sys.executable, "-m", "tma", "--socket-name", self.srv.name, *args]
        return subprocess.run(argv, capture_output=True, text=True, env=self.srv.env,
                              timeout=timeout)

    def claude(self) -> KeyRecorder:
        cap = fixture.parse((CAPTURES / "claude-2.1.332_blocked.txt").read_text("utf-8"))
        idle = fixture.parse((CAPTURES / "claude-2.1.332_idle.txt").read_text("utf-8"))
        return KeyRecorder.start(self.srv, "claude", cap, after=idle, redraw_ms=100)

    def start_web(self) -> None:
        argv = [sys.executable, "-m", "tma", "--socket-name", self.srv.name, "web",
                "--port", "0"]
        with open(self.log, "wb") as log:
            self.web = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                        env=self.srv.env, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            m = re.search(r"https?://[^\s#]+", self.log.read_text(errors="replace"))
            if m:
                self.base = m.group(0).rstrip("/") + "/"
                return
            assert self.web.poll() is None, f"tma web ended:\n{self.log.read_text()}"
            time.sleep(0.05)
        raise AssertionError(f"tma web printed no address:\n{self.log.read_text()}")

    def pair_url(self, scopes: str = "act:answer") -> str:
        port = self.base.rstrip("/").rsplit(":", 1)[1]
        res = self.tma("web", "pair", "--port", port, "--scope", scopes)
        assert res.returncode == 0, res.stderr
        m = re.search(r"https?://\S+#pair=\S+", res.stdout + res.stderr)
        assert m, f"no pairing URL in:\n{res.stdout}{res.stderr}"
        return m.group(0)

    def close(self) -> None:
        if self.web is not None and self.web.poll() is None:
            os.killpg(self.web.pid, signal.SIGTERM)
            try:
                self.web.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.web.pid, signal.SIGKILL)
                self.web.wait()


@pytest.fixture(scope="module")
def browser():
    sync_api, chromium = _need_browser()
    with sync_api.sync_playwright() as pw:  # type: ignore[attr-defined]
        b = pw.chromium.launch(executable_path=chromium)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def host(module_srv, browser):
    h = Host(module_srv)
    try:
        yield h
    finally:
        h.close()


@pytest.fixture(scope="module")
def screens(tmp_path_factory):
    out = tmp_path_factory.mktemp("screens")
    copies = os.environ.get("TMA_WEB_SCREENS")

    def save(page, name: str, **kw) -> Path:
        path = out / f"{name}.png"
        page.screenshot(path=str(path), **kw)
        if copies:
            os.makedirs(copies, exist_ok=True)
            shutil.copy(path, os.path.join(copies, path.name))
        return path

    return save


def _watch(page) -> list[str]:
    """The page's script errors and CSP refusals, to be asserted empty."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on("console", lambda m: errors.append(f"console: {m.text}")
            if m.type == "error" and "Content Security Policy" in m.text else None)
    return errors


def _overflow_at(page, width: int) -> int:
    size = page.viewport_size
    page.set_viewport_size({"width": width, "height": size["height"]})
    try:
        return page.evaluate("document.documentElement.scrollWidth")
    finally:
        page.set_viewport_size(size)


@pytest.fixture(scope="module")
def agents(host):
    """Two blocked Claude panes (the phone answers one, the desktop the other), then
    `tma web` in front of them."""
    host.srv.config.write_text("[fold]\nfreshness_secs = 3600\n")
    phone, desktop = host.claude(), host.claude()
    # the desktop's agent has a conversation, named as Claude's hooks name it
    path = host.srv.root / "talk.jsonl"
    shutil.copyfile(TRANSCRIPT, path)
    host.srv.tmux("set-option", "-p", "-t", desktop.pane, "@agent_transcript", str(path))
    host.start_web()
    return {"phone": phone, "desktop": desktop}


def _approve_once(page, rec: KeyRecorder) -> bytes:
    """Open the pane's card from the list, tap Approve twice as fast as a script can:
    the button is disabled by the first tap until its receipt comes, so one dispatch
    goes and the agent receives one keystroke."""
    row = page.locator(f'.row[data-pane="{rec.pane}"]')
    row.wait_for()
    page.wait_for_selector(f'.row[data-pane="{rec.pane}"][data-state="blocked"]')
    row.click()
    approve = page.locator('#card-ask button.act[data-action="approve"]')
    approve.wait_for()
    assert approve.is_enabled()
    page.evaluate("""() => {
        const b = document.querySelector('#card-ask button.act[data-action="approve"]');
        b.click(); b.click();
    }""")
    page.wait_for_selector('#card-outcome .receipt[data-outcome="sent"]', timeout=20000)
    assert page.locator("#card-outcome .receipt").count() == 1
    return rec.settle(expect=1)


def _paired_page(browser, host, scopes: str = "act:answer", **context):
    ctx = browser.new_context(**context)
    page = ctx.new_page()
    errors = _watch(page)
    page.goto(host.pair_url(scopes))
    page.wait_for_selector(".row")
    assert "#pair=" not in page.url  # the code left the address bar
    return ctx, page, errors


def test_unpaired_page_says_how_to_pair(browser, host, agents):
    ctx = browser.new_context(viewport=PHONE)
    try:
        page = ctx.new_page()
        errors = _watch(page)
        page.goto(host.base)
        note = page.locator("#unpaired")
        note.wait_for()
        assert "run tma web pair on the machine and open the URL it prints" in \
            note.inner_text().replace("`", "")
        assert page.locator(".row").count() == 0
        assert errors == []
    finally:
        ctx.close()


def test_phone_pairs_sees_the_blocked_agent_and_approves_it_once(browser, host, agents,
                                                                  screens):
    rec = agents["phone"]
    # a phone in its dark scheme (the desktop below is light)
    ctx, page, errors = _paired_page(browser, host, viewport=PHONE, is_mobile=True,
                                     has_touch=True, device_scale_factor=2,
                                     color_scheme="dark")
    try:
        blocked = page.locator(f'.row[data-pane="{rec.pane}"]')
        blocked.wait_for()
        page.wait_for_selector(f'.row[data-pane="{rec.pane}"][data-state="blocked"]')
        assert "Bash" in blocked.inner_text()  # what it asks
        screens(page, "phone-list", full_page=True)
        assert _overflow_at(page, 320) <= 320
        # a touch target is at least 44 px high
        assert blocked.bounding_box()["height"] >= 44
        blocked.tap()
        page.locator('#card-ask button.act[data-action="approve"]').wait_for()
        page.wait_for_selector("#attach-cmd")
        assert page.locator("#attach-cmd").inner_text() == f"tma attach --pane {rec.pane}"
        assert page.url.endswith(f"#pane={os.uname().nodename}:{rec.pane}")  # a link to it
        for b in page.locator("#card-body button:visible").all():
            assert b.bounding_box()["height"] >= 44, b.inner_text()
        screens(page, "phone-card", full_page=True)
        assert _overflow_at(page, 320) <= 320
        page.locator("#back").tap()
        page.wait_for_selector("#fleet .row")  # the list again, the card's link gone
        assert "#pane=" not in page.url
        sent = _approve_once(page, rec)
        assert sent == b"1", sent  # one keystroke: claude's approve
        assert rec.settle() == sent  # and nothing more came
        page.wait_for_selector(f'.row[data-pane="{rec.pane}"]:not([data-state="blocked"])',
                               state="attached", timeout=20000)
        # a reload (a phone woken later) reads the tap's outcome back from the ledger
        page.reload()
        page.wait_for_selector('#card-outcome .receipt[data-outcome="sent"]')
        assert page.locator("#card-outcome .receipt").count() == 1
        assert rec.settle() == sent
        assert errors == []
    finally:
        ctx.close()


def test_desktop_opens_a_notifications_link_beside_the_list_and_approves(browser, host,
                                                                          agents, screens):
    rec = agents["desktop"]
    ctx, first, errors = _paired_page(browser, host, "act:answer,act:steer", viewport=DESKTOP)
    try:
        # a notification's link (#pane=HOST:%N), loaded afresh, opens the pane's card
        page = ctx.new_page()
        errors += _watch(page)
        page.goto(f"{host.base}#pane={os.uname().nodename}:{rec.pane}")
        approve = page.locator('#card-ask button.act[data-action="approve"]')
        approve.wait_for()
        page.wait_for_selector(f'.row[data-pane="{rec.pane}"][aria-current="true"]')
        # both columns at once: the list beside the card
        assert page.locator("#fleet").is_visible() and page.locator("#card-body").is_visible()
        assert page.locator("#back").is_hidden()
        # its conversation, newest first: the answer above the prompt
        page.locator("#conv-list .event").first.wait_for()
        said = page.locator("#conv-list").inner_text()
        assert ANSWERED in said and ASKED in said
        assert said.index(ANSWERED) < said.index(ASKED)
        screens(page, "desktop")
        prompt = page.locator("#conv-list .event", has_text=ASKED).first
        prompt.locator("button.more").click()
        prompt.locator("pre.body").wait_for()
        assert ASKED in prompt.locator("pre.body").inner_text()
        sent = _approve_once(page, rec)
        assert sent == b"1", sent
        page.wait_for_selector(f'.row[data-pane="{rec.pane}"]:not([data-state="blocked"])',
                               timeout=20000)
        screens(page, "desktop-answered")
        assert rec.settle() == sent
        # the agent is idle now: a message typed here reaches it, once
        page.fill("#steer-text", "STEER-7f3a please go on")
        page.locator("#steer-send").click()
        page.wait_for_selector('#card-outcome .receipt:first-child[data-outcome="sent"]'
                               ':has-text("Message")', timeout=20000)
        got = rec.settle(expect=len(sent) + 5)
        assert got.count(b"STEER-7f3a please go on") == 1, got
        assert page.locator("#steer-text").input_value() == ""
        assert errors == []
    finally:
        ctx.close()


def test_a_lost_stream_shows_the_rows_as_stale_until_it_is_back(browser, host, agents,
                                                                screens):
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        errors = _watch(page)
        page.route("**/api/stream", lambda route: route.abort())  # the link drops
        page.goto(host.pair_url())
        page.wait_for_selector(".row")
        page.wait_for_selector('#link:not([data-state="live"])')
        page.wait_for_function("document.querySelectorAll('.row:not(.stale)').length === 0")
        assert page.locator(".row").count() >= 2
        assert "stale" in page.locator(".row").first.inner_text()  # said, not only greyed
        screens(page, "phone-stale")
        page.unroute("**/api/stream")  # it comes back: live, and the rows with it
        page.wait_for_selector('#link[data-state="live"]', timeout=20000)
        page.wait_for_function("document.querySelectorAll('.row.stale').length === 0")
        assert [e for e in errors if "pageerror" in e] == []
    finally:
        ctx.close()


def test_a_fleet_hosts_agent_is_grouped_under_its_host_and_answered_once(
        browser, screens, srv, sshd, fleet_local, fleet_daemon, tmp_path):
    """Over a real sshd (as tests/integration/test_web_fleet.py): this machine's daemon
    links the host `box`, whose blocked Claude shows under its own heading, with the ssh
    command that attaches to it, and Approve reaches it once."""
    from tests.helpers.web import Web

    local = fleet_local
    rec = KeyRecorder.start(
        srv, "claude", fixture.parse((CAPTURES / "claude-2.1.332_blocked.txt").read_text()),
        after=fixture.parse((CAPTURES / "claude-2.1.332_idle.txt").read_text()),
        redraw_ms=100)
    sshd.set_command(sshd.serve_command(srv, "--interval", "500", "--scope",
                                        "read,act:answer"))
    res = local.tma("host", "add", "box", "tma-test", "--via", sshd.via(), "--act", "answer")
    assert res.returncode == 0, res.stderr
    fleet_daemon.start()
    local.wait_for(lambda: local.host_state() == "online", timeout=20, interval=0.3)
    w = Web(local, tmp_path, "--interval", "500")
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        errors = _watch(page)
        page.goto(f"{w.url}#pair={w.pair_code('--scope', 'act:answer')}")
        row = page.locator(f'.host[data-host="box"] .row[data-pane="{rec.pane}"]')
        row.wait_for(timeout=20000)
        page.wait_for_selector(f'.row[data-host="box"][data-pane="{rec.pane}"]'
                               '[data-state="blocked"]', timeout=20000)
        screens(page, "phone-fleet-list")
        row.tap()
        assert page.url.endswith(f"#pane=box:{rec.pane}")
        page.wait_for_selector("#attach-cmd")
        assert page.locator("#attach-cmd").inner_text() == \
            f"ssh -t box tma attach --pane {rec.pane}"
        page.locator("#back").tap()
        sent = _approve_once(page, rec)
        assert sent == b"1", sent
        assert rec.settle() == sent
        # the host goes offline: its row stays, greyed, as what was last heard, and the
        # open card offers nothing to fire on it
        # (the phone shows the card, the list behind it: rows attached, not visible)
        page.wait_for_selector(f'.row[data-host="box"][data-pane="{rec.pane}"]'
                               '[data-state="idle"]', state="attached", timeout=20000)
        sshd.kill()
        stale = page.locator(f'.row.stale[data-host="box"][data-pane="{rec.pane}"]')
        stale.wait_for(state="attached", timeout=30000)
        assert stale.locator(".asks").text_content() == "stale: idle (last heard)"
        page.wait_for_selector("#card-ask >> text=box is offline", timeout=5000)
        assert page.locator("#card-ask button.act").count() == 0
        assert page.locator("#steer-form").is_hidden()
        assert errors == []
    finally:
        ctx.close()
        w.close()
