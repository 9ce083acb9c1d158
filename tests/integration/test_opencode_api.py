"""OpenCode's HTTP lane against a real HTTP server on 127.0.0.1.

The server is a stdlib `http.server` in a thread that records every request (method, path,
headers, body) and answers what the test scripted for that path, the way OpenCode 1.18.33
does: 200 `true` for a pending request, 404 with `PermissionNotFoundError` once it is gone.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tma.runtime.act import opencode_api as api
from tma.runtime.config import Config


class Recorder:
    """A loopback HTTP server: `routes[(method, path)] = (status, content_type, body)`
    or a callable taking the handler (for slow answers)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.routes: dict = {}
        rec = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _serve(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                rec.requests.append({"method": self.command, "path": self.path,
                                     "headers": dict(self.headers), "body": body})
                route = rec.routes.get((self.command, self.path))
                if callable(route):
                    route(self)
                    return
                status, ctype, payload = route or (404, "application/json",
                                                   b'{"_tag":"NotFound"}')
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Recorder:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def server():
    with Recorder() as rec:
        yield rec


def free_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RID = "per_23357a5d5001yHhstHVaGypEaf"
QID = "que_2335800aa001Q1bXyZ"


# ---------------------------------------------------------------- replied

@pytest.mark.parametrize("reply", ["once", "reject"])
def test_reply_permission_posts_the_v1_path_and_body(server, reply):
    server.routes[("POST", f"/permission/{RID}/reply")] = (200, "application/json", b"true")
    res = api.reply_permission(server.url, RID, reply, 2.0)
    assert (res.outcome, res.status, res.body) == ("replied", 200, True)
    assert RID in res.message and server.url in res.message
    [req] = server.requests
    assert (req["method"], req["path"]) == ("POST", f"/permission/{RID}/reply")
    assert json.loads(req["body"]) == {"reply": reply}
    assert req["headers"]["Content-Type"] == "application/json"


def test_a_204_without_a_body_is_replied(server):
    server.routes[("POST", f"/permission/{RID}/reply")] = (204, "application/json", b"")
    assert api.reply_permission(server.url, RID, "once", 2.0).outcome == "replied"


def test_reject_question_posts_the_v1_reject_route_with_no_body(server):
    server.routes[("POST", f"/question/{QID}/reject")] = (200, "application/json", b"true")
    res = api.reject_question(server.url, QID, 2.0)
    assert res.outcome == "replied" and "dismissed" in res.message
    [req] = server.requests
    assert (req["method"], req["path"], req["body"]) == ("POST", f"/question/{QID}/reject", b"")


def test_an_endpoint_with_a_trailing_slash_does_not_double_it(server):
    server.routes[("POST", f"/permission/{RID}/reply")] = (200, "application/json", b"true")
    assert api.reply_permission(server.url + "/", RID, "once", 2.0).outcome == "replied"
    assert server.requests[0]["path"] == f"/permission/{RID}/reply"


# ---------------------------------------------------------------- vanished

def test_404_is_vanished_request_gone(server):
    server.routes[("POST", f"/permission/{RID}/reply")] = (
        404, "application/json",
        json.dumps({"_tag": "PermissionNotFoundError", "requestID": RID}).encode())
    res = api.reply_permission(server.url, RID, "once", 2.0)
    assert (res.outcome, res.status) == ("vanished", 404)
    assert "no longer holds permission request" in res.message
    assert len(server.requests) == 1


def test_question_404_is_vanished(server):
    res = api.reject_question(server.url, QID, 2.0)  # no route: the recorder answers 404
    assert res.outcome == "vanished" and QID in res.message


# ---------------------------------------------------------------- errors

def test_refused_connection_names_the_endpoint_and_how_to_listen():
    endpoint = f"http://127.0.0.1:{free_port()}"
    res = api.reply_permission(endpoint, RID, "once", 2.0)
    assert res.outcome == "error"
    assert endpoint in res.message and "connection refused" in res.message
    assert "--port" in res.message and "api_base" in res.message


def test_the_plugins_fallback_url_is_called_out_when_nothing_listens():
    # http://localhost:4096 is what the plugin stamps when the TUI serves no HTTP; on this
    # machine nothing may listen there, in which case the message says so.
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", 4096)) == 0:
            pytest.skip("something listens on 127.0.0.1:4096 here")
    res = api.reply_permission(api.SDK_FALLBACK, RID, "once", 2.0)
    assert res.outcome == "error"
    assert "the address OpenCode's plugin reports when its TUI serves no HTTP" in res.message


def test_a_server_that_never_answers_times_out_within_the_deadline(server):
    gate = threading.Event()

    def hang(handler):
        gate.wait(10)

    server.routes[("POST", f"/permission/{RID}/reply")] = hang
    t0 = time.monotonic()
    res = api.reply_permission(server.url, RID, "once", 0.4)
    elapsed = time.monotonic() - t0
    gate.set()
    assert res.outcome == "error" and "did not answer within 0.4 s" in res.message
    assert elapsed < 1.5, elapsed


def test_a_trickling_server_cannot_stretch_the_deadline(server):
    # headers arrive at once, then one body byte every 0.1 s: each read is under a
    # per-socket timeout, so only a whole-request deadline stops it
    def trickle(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", "100")
        handler.end_headers()
        try:
            for _ in range(100):
                handler.wfile.write(b" ")
                handler.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass

    server.routes[("POST", f"/permission/{RID}/reply")] = trickle
    t0 = time.monotonic()
    res = api.reply_permission(server.url, RID, "once", 0.5)
    assert res.outcome == "error" and "did not answer within" in res.message
    assert time.monotonic() - t0 < 1.5


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_5xx_is_an_error_with_the_status(server, status):
    server.routes[("POST", f"/permission/{RID}/reply")] = (
        status, "application/json", b'{"message":"boom"}')
    res = api.reply_permission(server.url, RID, "once", 2.0)
    assert (res.outcome, res.status) == ("error", status)
    assert str(status) in res.message and "boom" in res.message


def test_a_hostile_servers_message_is_plain_bounded_data(server):
    """Whatever listens on the port writes the error's words: escape sequences (a screen
    clear, an OSC 52 clipboard write), a bell, newlines and a flood reach no terminal."""
    evil = "boom\x1b[2J\x1b]52;c;aGk=\x07\r\nnext #(touch x) -oProxyCommand=y " + "A" * 5000
    server.routes[("POST", f"/permission/{RID}/reply")] = (
        500, "application/json", json.dumps({"message": evil}).encode())
    res = api.reply_permission(server.url, RID, "once", 2.0)
    assert res.outcome == "error" and "boom" in res.message
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in res.message), res.message
    assert len(res.message) < 400 and res.message.endswith("…")


def test_a_2xx_that_is_not_json_is_an_error(server):
    server.routes[("POST", f"/permission/{RID}/reply")] = (
        200, "text/html", b"<html>some other web server</html>")
    res = api.reply_permission(server.url, RID, "once", 2.0)
    assert res.outcome == "error" and "not JSON" in res.message


def test_a_400_carries_opencodes_message(server):
    body = {"name": "BadRequest", "data": {"message": 'Expected "once" | "always" | "reject"'}}
    server.routes[("POST", f"/permission/{RID}/reply")] = (
        400, "application/json", json.dumps(body).encode())
    res = api.reply_permission(server.url, RID, "once", 2.0)
    assert res.outcome == "error" and 'Expected "once"' in res.message


def test_401_says_the_server_wants_a_password(server):
    server.routes[("POST", f"/permission/{RID}/reply")] = (401, "text/plain", b"Unauthorized")
    res = api.reply_permission(server.url, RID, "once", 2.0)
    assert res.outcome == "error" and "OPENCODE_SERVER_PASSWORD" in res.message


# ---------------------------------------------------------------- refused before sending

@pytest.mark.parametrize("rid", [
    "../../global/dispose", "per_1/../../x", "per 1", "per_1?x=1", "per_1#x", "",
    "per_1\r\nX-Evil: 1", "per_%2e%2e", "a" * 129, "pér_1",
])
def test_hostile_request_ids_are_refused_before_any_request(server, rid):
    for res in (api.reply_permission(server.url, rid, "once", 2.0),
                api.reject_question(server.url, rid, 2.0)):
        assert res.outcome == "error" and "request id" in res.message
    assert server.requests == []


def test_an_unknown_reply_is_refused_before_any_request(server):
    res = api.reply_permission(server.url, RID, "always", 2.0)  # never wired: a grant
    assert res.outcome == "error" and server.requests == []


@pytest.mark.parametrize("endpoint", [
    "http://example.com:4096", "http://10.0.0.5:4096", "file:///etc/passwd",
    "ftp://127.0.0.1:21", "http://user:pw@127.0.0.1:4096", "http://127.0.0.1:4096/?x=1",
    "http://127.0.0.1:4096/#f", "http://127.0.0.1:4096/a b", "http://127.0.0.1:notaport",
    "http://127.0.0.1.evil.example:4096", "", "127.0.0.1:4096",
])
def test_unsafe_endpoints_are_refused_before_any_request(server, endpoint):
    res = api.reply_permission(endpoint, RID, "once", 2.0)
    assert res.outcome == "error" and "does not send" in res.message
    assert server.requests == []


def test_a_loopback_pane_endpoint_is_used(server):
    server.routes[("POST", f"/permission/{RID}/reply")] = (200, "application/json", b"true")
    endpoint = api.resolve_endpoint({"@agent_api_endpoint": server.url}, Config())
    assert endpoint == server.url and endpoint.source == "pane"
    assert api.reply_permission(endpoint, RID, "once", 2.0).outcome == "replied"


# ---------------------------------------------------------------- resolve_endpoint

def _cfg(base: str | None) -> Config:
    cfg = Config()
    cfg.api = {"opencode": {"api_base": base}} if base is not None else {}
    return cfg


def test_resolve_prefers_the_pane_then_the_config_then_none():
    assert api.resolve_endpoint({"@agent_api_endpoint": "http://127.0.0.1:4096/"},
                                _cfg("http://127.0.0.1:5000")) == "http://127.0.0.1:4096"
    got = api.resolve_endpoint({}, _cfg("http://127.0.0.1:5000"))
    assert got == "http://127.0.0.1:5000" and got.source == "config"
    assert api.resolve_endpoint({}, _cfg(None)) is None
    assert api.resolve_endpoint({"@agent_api_endpoint": ""}, None) is None


def test_a_non_loopback_pane_endpoint_is_ignored_for_the_config_base():
    opts = {"@agent_api_endpoint": "http://attacker.example:4096"}
    assert api.resolve_endpoint(opts, _cfg(None)) is None
    assert api.resolve_endpoint(opts, _cfg("http://127.0.0.1:5000")) == "http://127.0.0.1:5000"


def test_a_remote_config_base_is_allowed_but_the_same_url_from_a_pane_is_not(server):
    remote = "http://192.0.2.7:4096"  # TEST-NET-1: never routed
    got = api.resolve_endpoint({}, _cfg(remote))
    assert got == remote and got.source == "config"
    assert api.check_endpoint(got, allow_remote=True) is None
    res = api.reply_permission(remote, RID, "once", 0.3)  # a plain str: pane-grade trust
    assert res.outcome == "error" and "not loopback" in res.message


def test_resolve_reads_a_real_config_file(tmp_path):
    from tma.runtime import config as config_mod

    path = tmp_path / "config.toml"
    path.write_text('[api.opencode]\napi_base = "http://127.0.0.1:4097"\n')
    cfg = config_mod.load(str(path))
    assert api.resolve_endpoint({}, cfg) == "http://127.0.0.1:4097"


# ---------------------------------------------------------------- probe (doctor)

def test_probe_reads_opencodes_health(server):
    server.routes[("GET", "/global/health")] = (
        200, "application/json", b'{"healthy":true,"version":"1.18.33"}')
    res = api.probe(server.url, 0.5)
    assert res.outcome == "replied" and res.body["version"] == "1.18.33"
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", "/global/health")]


@pytest.mark.parametrize("route", [(200, "application/json", b'{"hello": 1}'),
                                   (200, "text/html", b"<html></html>"), None])
def test_probe_of_something_that_is_not_opencode_is_an_error(server, route):
    if route is not None:
        server.routes[("GET", "/global/health")] = route
    res = api.probe(server.url, 0.5)
    assert res.outcome == "error" and server.url in res.message


def test_probe_of_a_closed_port_is_an_error():
    assert api.probe(f"http://127.0.0.1:{free_port()}", 0.5).outcome == "error"


@pytest.mark.parametrize("endpoint", [
    "http://127.0.0.1:4096", "http://localhost:4096", "http://[::1]:4096",
    "http://127.0.0.2:4096", "http://127.0.0.1:4096/", "http://127.0.0.1:4096/opencode",
    "https://localhost:4096",
])
def test_loopback_endpoints_are_accepted(endpoint):
    assert api.check_endpoint(endpoint) is None
    assert api.resolve_endpoint({"@agent_api_endpoint": endpoint}, None) == endpoint.rstrip("/")


def test_a_base_path_prefixes_the_route(server):
    server.routes[("POST", f"/opencode/permission/{RID}/reply")] = (
        200, "application/json", b"true")
    assert api.reply_permission(server.url + "/opencode", RID, "once", 2.0).outcome == "replied"


# ---------------------------------------------------------------- questions

#: GET /question as OpenCode 1.18.33 answers it (its QuestionRequest schema): `multiple`
#: and `custom` are optional, and a question the question tool asked carries neither.
PENDING = [
    {"id": QID, "sessionID": "ses_1",
     "questions": [
         {"question": "Which database?", "header": "DB",
          "options": [{"label": "Postgres", "description": "relational"},
                      {"label": "SQLite", "description": "a file"}]},
         {"question": "Which features?", "header": "Features", "multiple": True,
          "custom": False,
          "options": [{"label": "auth", "description": ""},
                      {"label": "logs", "description": "structured"}]}],
     "tool": {"messageID": "msg_1", "callID": "call_1"}},
    {"id": "que_bad"},  # no questions: skipped
    "not an object",
]


def test_questions_lists_the_pending_requests_verbatim(server):
    server.routes[("GET", "/question")] = (200, "application/json",
                                           json.dumps(PENDING).encode())
    [req] = api.questions(server.url, 2.0)
    assert (req.id, req.session_id, req.message_id, req.call_id) == (
        QID, "ses_1", "msg_1", "call_1")
    db, feats = req.questions
    assert (db.question, db.header, db.labels, db.multiple, db.custom) == (
        "Which database?", "DB", ("Postgres", "SQLite"), False, True)
    assert db.options[0] == api.QuestionOption("Postgres", "relational")
    assert (feats.multiple, feats.custom, feats.labels) == (True, False, ("auth", "logs"))
    assert server.requests[0]["method"] == "GET" and server.requests[0]["path"] == "/question"


def test_questions_of_an_empty_server_is_an_empty_list(server):
    server.routes[("GET", "/question")] = (200, "application/json", b"[]")
    assert api.questions(server.url, 2.0) == []


@pytest.mark.parametrize("route", [(200, "application/json", b'{"x": 1}'),
                                   (404, "application/json", b"{}"),
                                   (500, "application/json", b'{"message": "boom"}')])
def test_questions_that_are_not_opencodes_list_raise_with_a_reason(server, route):
    server.routes[("GET", "/question")] = route
    with pytest.raises(api.ApiError) as exc:
        api.questions(server.url, 2.0)
    assert exc.value.result.outcome == "error" and "/question" in str(exc.value)


def test_questions_of_a_closed_port_raise_unreachable():
    with pytest.raises(api.ApiError, match="connection refused"):
        api.questions(f"http://127.0.0.1:{free_port()}", 1.0)


def test_reply_question_posts_one_label_list_per_question(server):
    server.routes[("POST", f"/question/{QID}/reply")] = (200, "application/json", b"true")
    res = api.reply_question(server.url, QID, [["Postgres"], ["auth", "logs"]], 2.0)
    assert res.outcome == "replied" and QID in res.message
    [req] = server.requests
    assert (req["method"], req["path"]) == ("POST", f"/question/{QID}/reply")
    assert json.loads(req["body"]) == {"answers": [["Postgres"], ["auth", "logs"]]}
    assert req["headers"]["Content-Type"] == "application/json"


def test_reply_question_once_gone_is_vanished(server):
    res = api.reply_question(server.url, QID, [["Postgres"]], 2.0)
    assert res.outcome == "vanished" and QID in res.message


@pytest.mark.parametrize("answers", [[], [[]][:0], [["a"], "b"], [[1]], "Postgres"])
def test_reply_question_refuses_a_malformed_answer_before_any_request(server, answers):
    res = api.reply_question(server.url, QID, answers, 2.0)
    assert res.outcome == "error" and not server.requests
