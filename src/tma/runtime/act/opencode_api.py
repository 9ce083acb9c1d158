"""OpenCode's HTTP lane: answer a pending permission or question over OpenCode's own server.

The routes are OpenCode's v1 plane (verified against the pinned 1.18.33, by its schemas
and by running it): `POST /permission/{requestID}/reply` with `{"reply": "once"|"reject"}`,
`POST /question/{requestID}/reject` with no body, and `POST /question/{requestID}/reply`
with `{"answers": [[label, ...], ...]}` (one list of chosen labels per question, in the
questions' order). They answer 200 `true` when the request was pending and 404
(`PermissionNotFoundError` / `QuestionNotFoundError`) once it is gone. `GET /question` lists
the pending question requests: `[{id, sessionID, questions: [{question, header, options:
[{label, description}], multiple?, custom?}], tool?: {messageID, callID}}]`; `custom` absent
means true (OpenCode's own default: the TUI offers "Type your own answer").
The `/api/**` family is a different set of objects (the opencode server's own API) and is never used here.

OpenCode's TUI serves HTTP only when started with `--port` (or `--hostname`, `--mdns`);
without one its plugin still reports the SDK's default `http://localhost:4096`, where nothing
listens. So a refused connection is the common failure, and its message says how to fix it.

Safety (machinery.md §8): a pane's endpoint is pane text, so it is used only when it is a
plain http URL on a loopback host; a non-loopback base is accepted only from the user's own
config (`[api.opencode] api_base`). Request ids are checked against a safe charset before
anything is sent. Stdlib only, one request, a strict whole-request deadline.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import re
import socket
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from tma.core import untrusted

REPLIED = "replied"
VANISHED = "vanished"
ERROR = "error"

AGENT = "opencode"
PANE_OPTION = "@agent_api_endpoint"
#: What OpenCode's plugin reports as `serverUrl` when its TUI runs no server.
SDK_FALLBACK = "http://localhost:4096"
REPLIES = ("once", "reject")
HOW_TO_LISTEN = ("start OpenCode with a port (`opencode --port 4096`; `--port 0` takes 4096 "
                 "or a free port) so that its TUI serves HTTP, or set [api.opencode] api_base "
                 "in tma's config.toml to a server that listens")

_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_SAFE_PATH = re.compile(r"(/[A-Za-z0-9._~-]+)*/?")
_MAX_BODY = 64 * 1024
#: The longest server version shown (OpenCode's are like "1.18.33"; the protocol's bound
#: for a version, tma.core.inbound.SHORT, which this module does not import).
VERSION_MAX = 64
_MAX_LIST_BODY = 1024 * 1024  # GET /question: every pending request, options and all


@dataclass(frozen=True)
class ApiResult:
    """What one API call came to: `outcome` in replied / vanished / error, and a sentence
    for a person. `status` is the HTTP status when there was one; `url` what was asked."""

    outcome: str
    message: str
    status: int | None = None
    url: str = ""
    body: object = None  # the decoded JSON answer of a 2xx (probe: the pending list)


class ApiError(Exception):
    """A read that did not come back as OpenCode's answer; `result` says why."""

    def __init__(self, result: ApiResult) -> None:
        super().__init__(result.message)
        self.result = result


@dataclass(frozen=True)
class QuestionOption:
    label: str
    description: str = ""


@dataclass(frozen=True)
class Question:
    """One question of a request, verbatim. `custom`: whether a typed answer (a label not
    among `options`) is accepted; OpenCode's default is yes."""

    question: str
    header: str = ""
    options: tuple[QuestionOption, ...] = ()
    multiple: bool = False
    custom: bool = True

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(o.label for o in self.options)


@dataclass(frozen=True)
class QuestionRequest:
    """One pending question request: what `GET /question` lists, one entry."""

    id: str
    session_id: str = ""
    questions: tuple[Question, ...] = ()
    message_id: str = ""
    call_id: str = ""


class Endpoint(str):
    """An endpoint string that remembers where it came from: `pane` or `config`. Only a
    config endpoint may name a non-loopback host."""

    source: str = "pane"

    def __new__(cls, value: str, source: str) -> Endpoint:
        obj = super().__new__(cls, value)
        obj.source = source
        return obj


# ---------------------------------------------------------------- endpoint

def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_endpoint(endpoint: str, *, allow_remote: bool = False) -> str | None:
    """Why `endpoint` must not be used, or None when it is a plain http(s) base URL (no
    credentials, query or fragment) on a loopback host (any host when `allow_remote`)."""
    if not isinstance(endpoint, str) or not endpoint or len(endpoint) > 256:
        return "it is empty or too long"
    if any(ord(c) <= 32 or ord(c) >= 127 for c in endpoint):
        return "it contains spaces, control or non-ASCII characters"
    try:
        parts = urlsplit(endpoint)
        port = parts.port
    except ValueError:
        return "it is not a URL with a valid port"
    if parts.scheme not in ("http", "https"):
        return "it is not an http:// or https:// URL"
    host = parts.hostname or ""
    if not host or parts.username is not None or parts.password is not None:
        return "it names no host, or carries credentials"
    if parts.query or parts.fragment or "?" in endpoint or "#" in endpoint:
        return "it carries a query or fragment"
    if not _SAFE_PATH.fullmatch(parts.path or ""):
        return "its path has characters a base URL does not need"
    if port == 0:
        return "it names port 0"
    if not allow_remote and not _is_loopback(host):
        return ("its host is not loopback (127.0.0.1, localhost, ::1); only "
                f"[api.{AGENT}] api_base may name another host")
    return None


def resolve_endpoint(pane_options: dict, config) -> str | None:
    """The pane's `@agent_api_endpoint` when it is a usable loopback URL, else the config's
    `[api.opencode] api_base`, else None. The result is an `Endpoint` (a str)."""
    pane_value = ((pane_options or {}).get(PANE_OPTION) or "").strip().rstrip("/")
    if pane_value and check_endpoint(pane_value) is None:
        return Endpoint(pane_value, "pane")
    api = getattr(config, "api", None)
    if api is None and isinstance(config, dict):
        api = config.get("api")
    base = ((api or {}).get(AGENT) or {}).get("api_base") or ""
    base = base.strip().rstrip("/")
    if base and check_endpoint(base, allow_remote=True) is None:
        return Endpoint(base, "config")
    return None


def _usable(endpoint: str) -> str | None:
    why = check_endpoint(endpoint, allow_remote=getattr(endpoint, "source", "") == "config")
    if why is None:
        return None
    return f"tma does not send to the API endpoint {_shown(endpoint)}: {why}"


def _shown(value: object) -> str:
    """Pane text quoted for a message: escaped and capped."""
    text = repr(str(value)[:80])
    return text + "…" if len(str(value)) > 80 else text


def _safe_id(request_id: str) -> bool:
    return isinstance(request_id, str) and _SAFE_ID.fullmatch(request_id) is not None


# ---------------------------------------------------------------- the calls

def reply_permission(endpoint: str, request_id: str, reply: str, timeout_s: float) -> ApiResult:
    """Answer OpenCode permission request `request_id` with `reply` ("once" or "reject")."""
    if reply not in REPLIES:
        return ApiResult(ERROR, f"unknown permission reply {reply!r} (tma sends "
                                f"{' or '.join(REPLIES)})")
    return _answer(endpoint, "permission", request_id, "reply", {"reply": reply}, timeout_s)


def reject_question(endpoint: str, request_id: str, timeout_s: float) -> ApiResult:
    """Dismiss OpenCode question request `request_id` (the TUI's own "dismiss")."""
    return _answer(endpoint, "question", request_id, "reject", None, timeout_s)


def reply_question(endpoint: str, request_id: str, answers: list[list[str]],
                   timeout_s: float) -> ApiResult:
    """Answer OpenCode question request `request_id`: `answers` holds one list of chosen
    labels per question, in the questions' order (what the TUI sends when the person picks).
    The shape is checked here; whether the labels fit the questions is `check_answers`."""
    if not (isinstance(answers, list) and answers and all(
            isinstance(a, list) and all(isinstance(x, str) for x in a) for a in answers)):
        return ApiResult(ERROR, "tma sends question answers as a non-empty list of label "
                                "lists, one per question")
    return _answer(endpoint, "question", request_id, "reply",
                   {"answers": [list(a) for a in answers]}, timeout_s)


def questions(endpoint: str, timeout_s: float) -> list[QuestionRequest]:
    """The question requests OpenCode at `endpoint` holds pending (GET /question), parsed.
    Raises ApiError (its `result` says why) when the endpoint is unusable, does not answer,
    or answers something that is not OpenCode's list. Malformed entries are skipped."""
    why = _usable(endpoint)
    if why:
        raise ApiError(ApiResult(ERROR, why))
    base = str(endpoint).rstrip("/")
    res = _http("GET", base, "/question", None, timeout_s, _MAX_LIST_BODY)
    if res.outcome == VANISHED or (res.outcome == REPLIED and not isinstance(res.body, list)):
        raise ApiError(ApiResult(ERROR, f"{base} answers, but not like OpenCode's server "
                                        "(GET /question)", res.status, res.url))
    if res.outcome != REPLIED:
        raise ApiError(res)
    assert isinstance(res.body, list)
    return [r for r in (_request_of(x) for x in res.body) if r is not None]


def find_question(requests: list[QuestionRequest], request_id: str) -> QuestionRequest | None:
    return next((r for r in requests if r.id == request_id), None)


def check_answers(request: QuestionRequest, answers: list[list[str]]) -> str | None:
    """Why `answers` must not be sent to `request`, or None: one answer per question, at
    least one label each, one only unless the question is `multiple`, every label one of
    the question's options unless the question accepts a custom answer, no label twice."""
    qs = request.questions
    if len(answers) != len(qs):
        return (f"question request {request.id} asks {len(qs)} question"
                f"{'s' if len(qs) != 1 else ''}; {len(answers)} answer"
                f"{'s were' if len(answers) != 1 else ' was'} given (one per question)")
    for n, (q, chosen) in enumerate(zip(qs, answers, strict=True), 1):
        name = f"question {n} ({_shown(q.header or q.question)})"
        if not chosen:
            return f"{name}: no label chosen"
        if any(not c.strip() for c in chosen):
            return f"{name}: an empty label"
        if len(chosen) > 1 and not q.multiple:
            return f"{name} takes one choice, not {len(chosen)}"
        if len(set(chosen)) != len(chosen):
            return f"{name}: a label is chosen twice"
        unknown = [c for c in chosen if c not in q.labels]
        if unknown and not q.custom:
            offered = ", ".join(_shown(x) for x in q.labels) or "none"
            return (f"{name}: {_shown(unknown[0])} is not one of its options ({offered}), "
                    "and it takes no custom answer")
    return None


def _request_of(raw: object) -> QuestionRequest | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        return None
    qs = raw.get("questions")
    if not isinstance(qs, list):
        return None
    parsed = tuple(q for q in (_question_of(x) for x in qs) if q is not None)
    if len(parsed) != len(qs) or not parsed:
        return None  # answers go by position: a request with an unreadable question is unusable
    tool = raw.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    return QuestionRequest(raw["id"], _str(raw.get("sessionID")), parsed,
                           _str(tool.get("messageID")), _str(tool.get("callID")))


def _question_of(raw: object) -> Question | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("question"), str):
        return None
    opts = raw.get("options")
    opts = opts if isinstance(opts, list) else []
    options = tuple(QuestionOption(o["label"], _str(o.get("description")))
                    for o in opts if isinstance(o, dict) and isinstance(o.get("label"), str))
    return Question(raw["question"], _str(raw.get("header")), options,
                    raw.get("multiple") is True, raw.get("custom") is not False)


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def probe(endpoint: str, timeout_s: float) -> ApiResult:
    """A cheap check that OpenCode answers at `endpoint`: GET {endpoint}/global/health,
    which 1.18.33 answers `{"healthy": true, "version": …}` in milliseconds (the first
    read of the v1 plane boots the project instance and can take a second or more).
    `replied` means OpenCode answers; its `body` is the health document."""
    why = _usable(endpoint)
    if why:
        return ApiResult(ERROR, why)
    base = str(endpoint).rstrip("/")
    res = _http("GET", base, "/global/health", None, timeout_s)
    if res.outcome == VANISHED or (res.outcome == REPLIED and not (
            isinstance(res.body, dict) and res.body.get("healthy") is True)):
        return ApiResult(ERROR, f"{base} answers, but not like OpenCode's server (GET "
                                "/global/health)", res.status, res.url)
    return res


def _answer(endpoint: str, kind: str, request_id: str, verb: str, payload: dict | None,
            timeout_s: float) -> ApiResult:
    why = _usable(endpoint)
    if why:
        return ApiResult(ERROR, why)
    if not _safe_id(request_id):
        return ApiResult(ERROR, f"tma does not send the {kind} request id {_shown(request_id)}: "
                                "an id is 1-128 letters, digits, '_' or '-'")
    base = str(endpoint).rstrip("/")
    res = _http("POST", base, f"/{kind}/{request_id}/{verb}", payload, timeout_s)
    if res.outcome == VANISHED:
        return ApiResult(VANISHED, f"OpenCode at {base} no longer holds {kind} request "
                                   f"{request_id} (answered or withdrawn)", res.status, res.url)
    if res.outcome == REPLIED:
        if verb == "reject":
            what = "dismissed"
        elif kind == "question":
            what = "took the answers to"
        else:
            what = f"replied {payload['reply'] if payload else ''} to"
        return ApiResult(REPLIED, f"OpenCode at {base} {what} {kind} request {request_id}",
                         res.status, res.url, res.body)
    return res


# ---------------------------------------------------------------- HTTP

def _http(method: str, base: str, path: str, payload: dict | None,
          timeout_s: float, max_body: int = _MAX_BODY) -> ApiResult:
    """One request with a whole-request deadline: a watchdog shuts the socket down when
    `timeout_s` passes, so a server that trickles bytes cannot hold the caller."""
    url = base + path
    parts = urlsplit(base)
    timeout_s = max(0.05, float(timeout_s))
    conn_cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    # check_endpoint refused a base without a host before any request is made
    conn = conn_cls(parts.hostname or "", parts.port, timeout=timeout_s)
    fired = threading.Event()
    held: list[socket.socket] = []  # the connected socket (the response outlives conn.sock)

    def expire() -> None:
        fired.set()
        for sock in held or ([conn.sock] if conn.sock is not None else []):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(timeout_s, expire)
    watchdog.daemon = True
    body = b"" if payload is None else json.dumps(payload).encode()
    headers = {"Accept": "application/json", "Connection": "close",
               "Content-Length": str(len(body))}
    if payload is not None:
        headers["Content-Type"] = "application/json"
    watchdog.start()
    try:
        conn.connect()
        held.append(conn.sock)
        conn.request(method, (parts.path.rstrip("/") or "") + path, body=body or None,
                     headers=headers)
        resp = conn.getresponse()
        raw = resp.read(max_body + 1)
        status = resp.status
    except TimeoutError:
        return _timed_out(url, timeout_s)
    except ConnectionRefusedError:
        return ApiResult(ERROR, _unreachable(base, "connection refused"), None, url)
    except (OSError, http.client.HTTPException) as exc:
        if fired.is_set():
            return _timed_out(url, timeout_s)
        return ApiResult(ERROR, _unreachable(base, _describe(exc)), None, url)
    finally:
        watchdog.cancel()
        conn.close()
    if fired.is_set():
        return _timed_out(url, timeout_s)
    if len(raw) > max_body:
        return ApiResult(ERROR, f"{method} {url} answered more than {max_body} bytes",
                         status, url)
    return _classify(method, url, status, raw)


def _classify(method: str, url: str, status: int, raw: bytes) -> ApiResult:
    text = raw.decode("utf-8", "replace")
    try:
        decoded, is_json = (json.loads(text), True) if text.strip() else (None, False)
    except ValueError:
        decoded, is_json = None, False
    if 200 <= status < 300:
        if text.strip() and not is_json:
            return ApiResult(ERROR, f"{method} {url} answered {status} with a body that is not "
                                    "JSON: is something other than OpenCode listening there?",
                             status, url)
        return ApiResult(REPLIED, f"{method} {url} answered {status}", status, url, decoded)
    if status == 404:
        return ApiResult(VANISHED, f"{method} {url} answered 404 (request gone)", status, url)
    detail = _server_message(decoded) if is_json else ""
    if status == 401:
        hint = (": the server wants a password (OPENCODE_SERVER_PASSWORD), and tma sends none; "
                "run OpenCode's server without one on a loopback address")
        return ApiResult(ERROR, f"{method} {url} answered 401{hint}", status, url)
    what = "a server error" if status >= 500 else "an error"
    return ApiResult(ERROR, f"{method} {url} answered {status}, {what}"
                            + (f": {detail}" if detail else ""), status, url)


def _server_message(decoded) -> str:
    """The server's own words on an error, as plain one-line data (whatever listens on
    the port wrote them: no escape sequence reaches a terminal)."""
    if isinstance(decoded, dict):
        data = decoded.get("data")
        for v in (decoded.get("message"), data.get("message") if isinstance(data, dict) else None):
            if isinstance(v, str) and v:
                return untrusted.clean(" ".join(v.split()), 200)
    return ""


def server_version(body: object) -> str | None:
    """The `version` of a health document, as plain data (None when it names none)."""
    version = body.get("version") if isinstance(body, dict) else None
    return untrusted.clean(version, VERSION_MAX) if isinstance(version, str) else None


def _timed_out(url: str, timeout_s: float) -> ApiResult:
    return ApiResult(ERROR, f"{url} did not answer within {timeout_s:g} s", None, url)


def _unreachable(base: str, why: str) -> str:
    note = ""
    if base == SDK_FALLBACK:
        note = (f" ({SDK_FALLBACK} is the address OpenCode's plugin reports when its TUI "
                "serves no HTTP)")
    return f"nothing answers at {base} ({why}){note}: {HOW_TO_LISTEN}"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, socket.gaierror):
        return "the host name does not resolve"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
