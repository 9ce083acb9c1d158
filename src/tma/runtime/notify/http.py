"""Delivering a push sink's request (tma.runtime.notify.push built it): HTTP POST with a
timeout and bounded retries, the webhook's signature, the failure record.

Policy: each attempt takes at most `timeout_s`, end to end: the name lookup, the
connect, the TLS handshake, the send and the answer's status all come out of that one
budget (tma.runtime.notify.post), whatever the receiver does. A connection error, a
timeout or a 5xx is retried `retries` times after a short pause (BACKOFF_S); a 4xx or
a redirect is final at once (the same request would fail the same way, and following
a redirect would hand the signed body to a host nobody configured). So a delivery
takes at most `budget(job)`: (retries + 1) x timeout_s plus the pauses, 9.75 s with the
defaults (3 s, 2 retries) and 363.75 s at the most the config allows (60 s, 5): the
user's own numbers, and never the receiver's choice. The outcome goes to the one
failure record tma.runtime.notify.log keeps (doctor shows it); a success clears it
only when the standing record is this sink's own. A failure's reason is cleaned and
bounded before it is kept or shown: it may quote what the receiver sent.

Signature (`[notify.webhook] secret`): `X-Tma-Signature: sha256=<hex>`, HMAC-SHA256
with the secret over the exact body bytes. The body carries `sent_at` (epoch seconds)
and a random `id`, both signed, so a receiver rejects stale or replayed deliveries;
`X-Tma-Timestamp` repeats `sent_at` for receivers that check before parsing. Retries
resend the same bytes (same id: the receiver may dedupe).

Two ways in: `enqueue` (the daemon: one worker thread per sink, a bounded queue that
drops the oldest and counts the drop) and `main` (the hook path's detached child,
`python -m tma.runtime.notify.http` with the job as JSON on stdin).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sys
import threading
import time
from collections import deque

import tma
from tma.core import untrusted
from tma.runtime.notify import post as notify_post

# What the hook path's detached child imports before its request leaves is its latency:
# a plain-http POST goes out over a bare socket (urllib drags in ssl and the email
# parser, ~110 ms of CPU per child, ~3x that on a loaded machine: the hook path's webhook
# p95 was past 1 s because of it), and the failure record (tma.runtime.notify.log, which
# pulls in tmux's modules) is imported only once the request has gone.

BACKOFF_S = (0.25, 0.5, 1.0, 1.0, 1.0)  # pause before retry 1, 2, …
QUEUE_MAX = 32                          # waiting jobs per sink in the daemon
REASON_MAX = 300                        # characters of a failure's reason kept or shown


class Outcome:
    def __init__(self, ok: bool, status: int | None, ms: int, tries: int, reason: str):
        self.ok, self.status, self.ms, self.tries, self.reason = ok, status, ms, tries, reason


# ------------------------------------------------------------------ one request


def body_of(job: dict) -> bytes:
    if "doc" in job:
        return json.dumps(job["doc"], ensure_ascii=False, separators=(",", ":")).encode()
    return str(job.get("body", "")).encode("utf-8", "replace")


def sign(secret: str, body: bytes) -> str:
    import hashlib
    import hmac

    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def headers_of(job: dict, body: bytes) -> dict[str, str]:
    out = {"User-Agent": f"tma/{tma.__version__}"}
    out.update(job.get("headers", {}))
    secret = job.get("secret") or ""
    if job["sink"] == "webhook":
        out["X-Tma-Timestamp"] = str(job["doc"].get("sent_at", 0))
        out["X-Tma-Delivery"] = str(job["doc"].get("id", ""))
        if secret:
            out["X-Tma-Signature"] = sign(secret, body)
    elif secret:
        out["Authorization"] = f"Bearer {secret}"
    return out


def _split_userinfo(url: str) -> tuple[str, str | None]:
    """(url without user:password@, the Basic credentials or None): urllib would take
    the userinfo for part of the host (and put it in its error message)."""
    scheme, sep, rest = url.partition("://")
    hostpart, slash, path = rest.partition("/")
    if not sep or "@" not in hostpart:
        return url, None
    from urllib.parse import unquote

    userinfo, host = hostpart.rsplit("@", 1)
    cred = base64.b64encode(unquote(userinfo).encode("utf-8")).decode("ascii")
    return f"{scheme}://{host}{slash}{path}", cred


def attempt(job: dict, body: bytes) -> tuple[int | None, str, bool]:
    """One POST, bounded end to end by `timeout_s` (tma.runtime.notify.post): (HTTP
    status or None, reason when it failed, worth retrying)."""
    timeout = float(job["timeout_s"])
    url, cred = _split_userinfo(job["url"])
    headers = headers_of(job, body)
    if cred and "Authorization" not in headers:
        headers["Authorization"] = f"Basic {cred}"
    # a proxy in the environment is urllib's to honour (the bare socket would bypass it)
    bare = url[:7].lower() == "http://" and not (os.environ.get("http_proxy")
                                                 or os.environ.get("HTTP_PROXY"))
    dl = notify_post.Deadline(timeout)
    try:
        code = (notify_post.plain if bare else notify_post.via_urllib)(url, headers, body, dl)
    except Exception as exc:  # a timeout, a refused connection, a malformed answer …
        if notify_post.timed_out(exc, dl):
            return None, f"timed out after {timeout:g}s", True
        return None, f"connection failed: {notify_post.why(exc)}", True
    finally:
        dl.close()
    if 200 <= code < 300:
        return code, "", False
    # redirects are not followed: anything else is an error, a 5xx worth retrying
    return code, f"HTTP {code}", code >= 500


def _scrub(reason: str, job: dict) -> str:
    """Never let the secret or the URL's path reach a record or a report, nor the
    receiver's bytes as they came (an error may quote its answer: escape sequences
    and all): cleaned and bounded (tma.core.untrusted)."""
    for s in (job.get("secret") or "", job.get("url") or ""):
        if s:
            reason = reason.replace(s, "…")
    return untrusted.clean(reason, REASON_MAX)


def deliver(job: dict, sleep=time.sleep) -> Outcome:
    """Send with retries; record the outcome. Never raises."""
    start = time.monotonic()
    tries = 0
    status: int | None = None
    reason = job.get("problem") or ""
    try:
        if not reason:
            body = body_of(job)
            retries = max(0, int(job.get("retries", 0)))
            while True:
                tries += 1
                status, reason, again = attempt(job, body)
                if not reason or not again or tries > retries:
                    break
                sleep(BACKOFF_S[min(tries - 1, len(BACKOFF_S) - 1)])
    except Exception as exc:
        reason = f"failed: {type(exc).__name__}"
    reason = _scrub(reason, job)
    ms = int((time.monotonic() - start) * 1000)
    out = Outcome(not reason, status, ms, tries, reason)
    _record(job, out)
    return out


def _record(job: dict, out: Outcome) -> None:
    try:
        from tma.runtime.notify import log as notify_log

        who = job.get("label") or job.get("sink", "push")
        # the server the job was rung for (the hook path's child has no scope of its own)
        sock = job.get("scope") if isinstance(job.get("scope"), str) else None
        if out.ok:
            standing = notify_log.last_failure(sock)
            if standing is not None and standing.get("command") == who:
                notify_log.clear_failure(sock)
        else:
            notify_log.record_failure(who, _reason(out), job.get("at") or None, sock)
    except Exception:
        pass


def _reason(out: Outcome) -> str:
    retried = out.tries - 1
    return out.reason + (f" ({retried} retr{'y' if retried == 1 else 'ies'})" if retried > 0
                         else "")


def report(job: dict, out: Outcome) -> str:
    """notify-test's line: `webhook https://host/… 200 in 12 ms` or `… failed: why`."""
    who = job.get("label") or job.get("sink", "push")
    if out.ok:
        return f"{who} {out.status} in {out.ms} ms"
    return f"{who} failed: {_reason(out)}"


# ------------------------------------------------------------------ the daemon's workers


class Worker:
    """One sink's thread and queue: jobs go out in order; a full queue drops its oldest
    job (counted, and recorded as a failure) rather than block the daemon's loop."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.jobs: deque[dict] = deque()
        self.cv = threading.Condition()
        self.sent = self.failed = self.dropped = 0
        self.thread = threading.Thread(target=self._run, name=f"tma-push-{name}", daemon=True)
        self.thread.start()

    def put(self, job: dict) -> None:
        from tma.runtime.notify import log as notify_log

        with self.cv:
            if len(self.jobs) >= QUEUE_MAX:
                old = self.jobs.popleft()
                self.dropped += 1
                notify_log.record_failure(old.get("label") or self.name,
                                          f"dropped: {QUEUE_MAX} deliveries were waiting",
                                          old.get("at") or None)
            self.jobs.append(job)
            self.cv.notify()

    def _run(self) -> None:
        while True:
            with self.cv:
                while not self.jobs:
                    self.cv.wait()
                job = self.jobs.popleft()
            try:
                ok = deliver(job).ok
            except Exception:
                ok = False
            with self.cv:
                if ok:
                    self.sent += 1
                else:
                    self.failed += 1

    def stats(self) -> dict:
        with self.cv:
            return {"queued": len(self.jobs), "sent": self.sent, "failed": self.failed,
                    "dropped": self.dropped}


_workers: dict[str, Worker] = {}
_lock = threading.Lock()


def worker(name: str) -> Worker:
    """The sink's worker, started on first use (once in a daemon's life)."""
    with _lock:
        w = _workers.get(name)
        if w is None:
            w = _workers[name] = Worker(name)
    return w


def enqueue(job: dict) -> None:
    """Hand a job to its sink's worker (started on first use); returns at once."""
    worker(job.get("sink", "push")).put(job)


def stats() -> dict:
    with _lock:
        return {name: w.stats() for name, w in _workers.items()}


# ------------------------------------------------------------------ the hook path's child


def budget(job: dict) -> float:
    """The most a delivery may take: every attempt's timeout and every pause."""
    retries = max(0, int(job.get("retries", 0)))
    return (retries + 1) * float(job.get("timeout_s", 3)) + sum(BACKOFF_S[:retries])


def main() -> int:
    try:
        job = json.loads(sys.stdin.buffer.read())
    except ValueError:
        return 2
    # the child's own hard stop: nothing waits for it, so it must not linger
    signal.alarm(int(budget(job)) + 3)
    deliver(job)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
