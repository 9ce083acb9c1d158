"""The sinks that reach a phone: ntfy and a generic JSON webhook (tma.runtime.notify.sinks).

`[notify.ntfy]` posts the one-line message to a topic URL with ntfy's Title, Priority
and Tags headers; `[notify.webhook]` posts a JSON document, HMAC-SHA256 signed when a
secret is set. Both are off unless their table has a url (tma.runtime.notify.gate.push).

What leaves the machine is chosen here and nowhere else: the agent, state, detail, the
pending call's summary and tool, the pane id and locator, host, repo, branch and age.
Never the pane title or the screen unless the table says `include_title = true` or
`include_screen = true` (a title is what the agent thinks the work is; a screen holds
whatever the agent printed), and never the agent's last sentence unless both `[notify]
last_sentence` and the table's `include_last_sentence` are true (gate.push).

Delivery (tma.runtime.notify.http) never runs on the caller's thread: the daemon hands
the request to one worker thread per sink (a hung webhook delays only itself); the hook
path starts one detached child per sink (its own session, stdio on /dev/null, its life
bounded by an alarm) and returns, because the agent waits for the hook and a
daemon-less hook process exits right after firing: a thread would die with it, and
waiting on the request would hold the agent for up to the whole retry budget.

Import-light (os and tma only at module level): the hook path imports it when it fires.
"""

from __future__ import annotations

import os

from tma.core.rules import strip_ansi
from tma.runtime.notify import gate as notify_gate, log as notify_log
from tma.runtime.notify.note import Note
from tma.tmux.notify import strip_controls

SCREEN_LINES = 40      # the last lines of the pane sent with include_screen
SCREEN_MAX = 4000      # characters of screen text at most
MESSAGE_MAX = 1000     # characters of the one-line message at most
PRIORITY = {"blocked": "4", "done": "3", "context_high": "3"}
NTFY_PRIORITY = {"min": "1", "low": "2", "default": "3", "high": "4", "max": "5", "urgent": "5"}
TAGS = {"blocked": "warning", "done": "white_check_mark", "context_high": "hourglass"}


def shown(url: str) -> str:
    """The URL as reports show it: scheme and host only (a path may hold an ntfy topic
    or a webhook token, userinfo a password)."""
    scheme, sep, rest = url.partition("://")
    host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    return f"{scheme}://{host}/…" if sep else "…"


def label(name: str, url: str) -> str:
    """How a sink names itself in failure records and test lines."""
    return f"{name} {shown(url)}"


def line(note: Note, host: str) -> str:
    """The one-line message: what the pane asks (else its state), who and where."""
    what = note.summary or (f"{note.trigger}: {note.detail}" if note.detail else note.trigger)
    where = " ".join(x for x in (f"{note.repo}@{note.branch}" if note.repo and note.branch
                                 else note.repo, note.locator or note.pane, f"on {host}")
                     if x)
    text = " ".join(strip_controls(f"{note.agent} {what} — {where}").split())
    return text[:MESSAGE_MAX]


def host_name() -> str:
    try:
        return os.uname().nodename
    except (AttributeError, OSError):
        return ""


def screen_text(ring, note: Note) -> str:
    """The pane's last lines as plain text (only with include_screen; "" when unknown)."""
    if ring.server is None or not note.pane:
        return ""
    try:
        from tma.tmux.read import capture_many

        cap = capture_many(ring.server, [note.pane], scrollback=0).get(note.pane)
    except Exception:
        return ""
    if cap is None:
        return ""
    text = strip_ansi(cap.body)
    lines = [strip_controls(x).rstrip() for x in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines[-SCREEN_LINES:])[-SCREEN_MAX:]


def _header_text(text: str) -> str:
    """A header value: ASCII as is, else an RFC 2047 encoded word (ntfy decodes it)."""
    text = " ".join(strip_controls(text).split())
    if text.isascii():
        return text
    import base64

    return "=?UTF-8?B?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def click_url(cfg, host: str, pane: str) -> str:
    """`[web] url` with the pane's card in its fragment (`URL#pane=HOST:%N`, what `tma
    web`'s page opens), for ntfy's Click header; "" without a url or a pane."""
    web = getattr(cfg, "web", None) or {}
    url = web.get("url") if isinstance(web, dict) else None
    if not url or not pane.startswith("%") or not pane[1:].isdigit():
        return ""
    if not host or not all(c.isascii() and (c.isalnum() or c in "._-") for c in host):
        return ""  # a host name is a plain token (hosts.toml's rule); any other: no link
    return f"{str(url).split('#')[0]}#pane={host}:{pane}"


def job(name: str, settings: dict, note: Note, ring) -> dict:
    """Everything the sender needs for one delivery, as plain data (it crosses to a
    child process as JSON on the hook path). The secret rides along; nothing logs it.
    The host is where the agent runs: a fleet host's pane names that host as hosts.toml
    does, never this machine."""
    host = note.host or host_name()
    text = line(note, host)
    now = int(ring.now or 0) or notify_log.now_ms()  # sent_at must be real: receivers check it
    secret, problem = notify_gate.push_secret(name, settings)
    out = {"sink": name, "url": settings["url"], "label": label(name, settings["url"]),
           "timeout_s": settings["timeout_s"], "retries": settings["retries"],
           "secret": secret, "problem": problem, "at": now,
           "scope": notify_log.scope()}  # the hook path's child records for the same server
    title = strip_controls(note.title or "").strip() if settings["include_title"] else ""
    screen = screen_text(ring, note) if settings["include_screen"] else ""
    said = " ".join(strip_controls(note.last_sentence or "").split()) \
        if settings["include_last_sentence"] else ""
    if name == "ntfy":
        headline = f"tma: {note.agent} {note.trigger}" + (f" — {title}" if title else "")
        prio = settings.get("priority")
        prio = NTFY_PRIORITY.get(prio, str(prio)) if prio is not None else \
            PRIORITY.get(note.trigger, "3")
        tags = [TAGS.get(note.trigger, "bell")] + list(settings.get("tags", ()))
        headers = {"Title": _header_text(headline), "Priority": prio, "Tags": ",".join(tags),
                   "Content-Type": "text/plain; charset=utf-8"}
        click = click_url(ring.cfg, host, note.pane)
        if click:
            headers["Click"] = click
        out["headers"] = headers
        out["body"] = text + ("\n" + said if said else "") + ("\n\n" + screen if screen else "")
        return out
    doc: dict[str, object] = {
        "schema": 1, "id": os.urandom(12).hex(), "sent_at": now // 1000,
        "host": host, "agent": note.agent, "state": note.trigger,
        "detail": note.detail or None, "tool": note.tool or None,
        "summary": note.summary or None, "pane": note.pane, "locator": note.locator,
        "session": note.session or None, "repo": note.repo or None,
        "branch": note.branch or None, "age_ms": int(note.since_ms or 0),
        "context_pct": note.context_pct, "message": text}
    if settings["include_title"]:
        doc["title"] = title
    if settings["include_screen"]:
        doc["screen"] = screen
    if settings["include_last_sentence"]:
        doc["last_sentence"] = said or None
    out["headers"] = {"Content-Type": "application/json"}
    out["doc"] = doc
    return out


class Push:
    """One push sink (tma.runtime.notify.sinks' shape)."""

    def __init__(self, name: str) -> None:
        self.NAME = name

    def live(self, cfg) -> bool:
        return notify_gate.push(cfg, self.NAME) is not None

    def rings_for(self, cfg, trigger: str) -> bool:
        settings = notify_gate.push(cfg, self.NAME)
        return settings is not None and trigger in settings["on"]

    def _job(self, ring, note: Note) -> dict | None:
        settings = notify_gate.push(ring.cfg, self.NAME)
        if settings is None or note.trigger not in settings["on"]:
            return None
        return job(self.NAME, settings, note, ring)

    def fire(self, ring, note: Note) -> None:
        try:
            j = self._job(ring, note)
            if j is None:
                return
            if ring.daemon:
                from tma.runtime.notify import http as notify_http

                notify_http.enqueue(j)
            else:
                detach(j)
        except Exception:
            pass

    def test(self, ring, note: Note) -> tuple[list[str], bool]:
        """Send for real and wait (bounded by timeout_s and retries): ([one line], ok)."""
        settings = notify_gate.push(ring.cfg, self.NAME)
        if settings is None:
            return [], True
        if note.trigger not in settings["on"]:
            return [f"{label(self.NAME, settings['url'])} skipped: {note.trigger} is not in "
                    f"notify.{self.NAME}.on"], True
        from tma.runtime.notify import http as notify_http

        j = job(self.NAME, settings, note, ring)
        out = notify_http.deliver(j)
        return [notify_http.report(j, out)], out.ok


def detach(j: dict) -> None:
    """The hook path: hand the job to a child in its own session and return (the child
    bounds its own life; nobody waits for it)."""
    import json
    import sys

    from tma.tmux import spawn

    data = json.dumps(j).encode("utf-8")
    pid, fd = spawn.start([sys.executable, "-m", "tma.runtime.notify.http"], stdin_pipe=True,
                          new_session=True)
    if fd is None:
        return
    try:
        view = memoryview(data)
        while view:  # a job is a few KB; the pipe holds 64 KB, so this never waits
            n = os.write(fd, view)
            view = view[n:]
    except OSError:
        pass
    finally:
        os.close(fd)


NTFY = Push("ntfy")
WEBHOOK = Push("webhook")
