"""A small real HTTP server on 127.0.0.1 that answers OpenCode's question routes the way
OpenCode 1.18.33 does (its QuestionRequest / QuestionReply schemas):

  GET  /question                    -> 200, the pending requests (a JSON list)
  POST /question/{id}/reply         -> 200 `true` and the request leaves the list;
                                       404 QuestionNotFoundError once it is gone
  POST /question/{id}/reject        -> the same, with no body
  GET  /global/health               -> {"healthy": true, "version": "1.18.33"}

Every request is recorded (method, path, decoded JSON body or None).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def question(text: str, header: str, labels: list[str], multiple: bool | None = None,
             custom: bool | None = None) -> dict:
    """One QuestionInfo; `multiple` / `custom` left out when None (as the tool sends)."""
    q: dict = {"question": text, "header": header,
               "options": [{"label": x, "description": f"about {x}"} for x in labels]}
    if multiple is not None:
        q["multiple"] = multiple
    if custom is not None:
        q["custom"] = custom
    return q


class FakeOpenCode:
    def __init__(self, requests: list[dict] | None = None) -> None:
        self.pending: list[dict] = list(requests or [])
        self.seen: list[tuple[str, str, object]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, code: int, doc: object) -> None:
                data = json.dumps(doc).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802 - the stdlib's name
                outer._record(self, None)
                if self.path == "/question":
                    with outer.lock:
                        self._send(200, outer.pending)
                elif self.path == "/global/health":
                    self._send(200, {"healthy": True, "version": "1.18.33"})
                else:
                    self._send(404, {"name": "NotFound"})

            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw) if raw else None
                outer._record(self, body)
                parts = self.path.split("/")
                if len(parts) != 4 or parts[1] != "question" or parts[3] not in ("reply",
                                                                                 "reject"):
                    self._send(404, {"name": "NotFound"})
                    return
                with outer.lock:
                    held = next((r for r in outer.pending if r["id"] == parts[2]), None)
                    if held is not None:
                        outer.pending.remove(held)
                if held is None:
                    self._send(404, {"name": "QuestionNotFoundError", "data": {
                        "requestID": parts[2], "message": f"Question request not found: "
                                                          f"{parts[2]}"}})
                    return
                self._send(200, True)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def _record(self, handler, body) -> None:
        with self.lock:
            self.seen.append((handler.command, handler.path, body))

    def posts(self) -> list[tuple[str, object]]:
        return [(p, b) for m, p, b in self.seen if m == "POST"]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    def __enter__(self) -> FakeOpenCode:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
