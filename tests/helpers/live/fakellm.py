"""The live suite's fake LLM: a scripted, loopback-only model API for real agent CLIs.

Adapted for tma from the agentlab's mock (same wire formats and keyword idea, written
again here so the suite owns it). One stdlib HTTP server bound to 127.0.0.1 on a port the
kernel picks (bind 0) speaks:

  * Anthropic Messages           POST /v1/messages              (claude)
  * OpenAI Responses             POST /v1/responses             (codex)
  * OpenAI Chat Completions      POST /v1/chat/completions      (opencode, pi)
  * Gemini                       POST /v1beta/models/M:streamGenerateContent,
                                      :generateContent, :countTokens   (gemini)

The reply depends on the last *user* turn. Trailing `system` entries are skipped:
Claude Code 2.1.332 appends one after the prompt.

  * the turn is a tool result        -> AFTER_TOOL text
  * the prompt contains RUNTOOL      -> one shell tool call `echo hi > fakellm-hi.txt`
                                        (a write, so every agent asks before running it);
                                        the tool and its arguments come from the request's
                                        own tool list and schemas
  * the prompt contains SLOWREPLY:ID -> text streamed one word every `slow_tick` seconds
                                        until the harness calls `release(ID)` (or
                                        `slow_max` seconds pass): the agent stays busy
                                        exactly as long as the test needs it to
  * the prompt contains CALLTOOL:<name>{json} (one or more)
                                     -> a call of the agent's OWN tool <name> with those
                                        arguments (question tools, plan approval, file
                                        writes...), when the request offers that tool; the
                                        k-th token is the k-th call of the turn (a call is
                                        made once the previous one's result is back), then
                                        AFTER_TOOL text. `@PLANFILE@` in the arguments is
                                        replaced by the plan file path the request names
                                        (Claude Code's plan mode asks for one), `@PLANSDIR@`
                                        by its plans directory (gemini's plan mode);
                                        with FORCETOOL in the prompt, even a tool the
                                        request does not list (claude's deferred tools)
  * the prompt contains SLOWTEXT:ID   -> the same slow text, tools offered or not (aider)
  * the prompt contains SAY{text}SAY -> that text as the quick reply (`\\n`: a new line)
  * the prompt contains HTTPFAIL:<code> (Chat Completions only)
                                     -> an HTTP error <code> (4xx/5xx) with an OpenAI-shaped
                                        error body, no reply: a model call that fails
  * anything else                    -> QUICK text

`hold(ID)`: every text reply (not a tool call) streams slowly under ID until `release(ID)`,
whatever the prompt: what an agent's own requests (a compaction's summary) need.

Gemini's structured side calls (`responseMimeType: application/json`: model router,
next-speaker check) get JSON built from the schema they send.

Use it in-process (`FakeLLM().start()` … `.stop()`), or run this file for manual work:
`python tests/helpers/live/fakellm.py [--port 0]` prints the URL.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

QUICK = "Hello from the tma fake model. This is a short scripted reply."
AFTER_TOOL = "TOOL RESULT SEEN: the command ran. All done."
SLOW_WORDS = ("Streaming slowly through a scripted reply, one word at a time, so that the "
              "agent keeps its busy screen up while the test watches it.").split(" ")
SLOW_DONE = " Slow reply complete."
TOOL_CMD = "echo hi > fakellm-hi.txt"
KEY_TOOL = "RUNTOOL"
KEY_SLOW = "SLOWREPLY"
SHELL_TOOLS = ("Bash", "bash", "shell_command", "exec_command", "shell", "run_shell_command",
               "local_shell")
_SLOW_ID = re.compile(KEY_SLOW + r":([A-Za-z0-9_-]+)")
# SLOWTEXT:ID streams slowly whether the request offers tools or not (aider offers none);
# SLOWREPLY needs tools, so that an agent's tool-less side calls quoting it stay quick
KEY_SLOW_TEXT = "SLOWTEXT"
_SLOW_TEXT_ID = re.compile(KEY_SLOW_TEXT + r":([A-Za-z0-9_-]+)")
KEY_CALL = "CALLTOOL:"
KEY_FORCE = "FORCETOOL"  # call a CALLTOOL tool the request does not list (a deferred one)
_CALL_NAME = re.compile(re.escape(KEY_CALL) + r"([A-Za-z0-9_.-]+)(?=\{)")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_SAY = re.compile(r"SAY\{(.*?)\}SAY", re.S)
_HTTPFAIL = re.compile(r"HTTPFAIL:([45]\d\d)\b")
_PLANS_DIR = re.compile(r"(/[^\s\"'\\`]*/plans)/")
_PLAN_FILE = re.compile(r"(/[^\s\"'\\`]*/plans/[^\s\"'\\`]+\.md)")


def scripted_calls(prompt: str) -> list[tuple[str, dict]]:
    """The CALLTOOL:<name>{json} tokens of a prompt, in order (bad JSON: {})."""
    out = []
    dec = json.JSONDecoder()
    for m in _CALL_NAME.finditer(prompt):
        try:
            args, _end = dec.raw_decode(prompt, m.end())
        except ValueError:
            args = {}
        out.append((m.group(1), args if isinstance(args, dict) else {}))
    return out


def fill_placeholders(args, raw: str):
    """`@PLANFILE@` -> the plan file path named anywhere in the request (claude);
    `@PLANSDIR@` -> the plans directory it names (gemini)."""
    text = json.dumps(args)
    if "@PLANFILE@" in text:
        m = _PLAN_FILE.search(raw)
        text = text.replace("@PLANFILE@", m.group(1) if m else "/tmp/fakellm-plan.md")
    if "@PLANSDIR@" in text:
        # the longest: gemini's prompt names the real directory and a short `/home/…` form
        dirs = sorted(set(_PLANS_DIR.findall(raw)), key=len)
        text = text.replace("@PLANSDIR@", dirs[-1] if dirs else "/tmp/fakellm-plans")
    return json.loads(text)


def text_of(content) -> str:
    if isinstance(content, str):
        return content
    out = []
    for part in content or []:
        if isinstance(part, dict):
            for key in ("text", "input_text"):
                if isinstance(part.get(key), str):
                    out.append(part[key])
        elif isinstance(part, str):
            out.append(part)
    return "\n".join(out)


def typed_text(content) -> str:
    """The typed part of a user message: its last text part once Claude Code's
    <system-reminder> blocks are dropped. Agents send a cancelled turn's text again in the
    next turn's message (gemini: one entry, two text parts; claude: with the declined
    tool's result): the last part is what was typed now."""
    parts = [content] if isinstance(content, str) else [
        p if isinstance(p, str) else p.get("text") for p in content or []
        if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str))]
    for part in reversed(parts):
        part = _REMINDER.sub("", part).strip()
        if part:
            return part
    return ""


def snip(text: str) -> str:
    """A user turn for the decision log: its tail, where the typed words come last, and,
    for a long one, its head too (aider puts its edit-format reminder after them)."""
    return text if len(text) <= 600 else text[:200] + "\n…\n" + text[-400:]


def schema_args(schema: dict | None) -> dict:
    """Arguments for a shell tool, filled from the tool's own JSON schema."""
    props = (schema or {}).get("properties") or {}
    args: dict = {}
    if "command" in props:
        kind = (props["command"] or {}).get("type")
        args["command"] = ["bash", "-lc", TOOL_CMD] if kind == "array" else TOOL_CMD
    elif "cmd" in props:
        args["cmd"] = TOOL_CMD
    else:
        args["command"] = TOOL_CMD
    if "description" in props:
        args["description"] = "Write a greeting file"
    # codex under approval_policy=on-request only asks when the call leaves the sandbox
    if "sandbox_permissions" in props:
        args["sandbox_permissions"] = "require_escalated"
    if "with_escalated_permissions" in props:
        args["with_escalated_permissions"] = True
    if "justification" in props:
        args["justification"] = "the test wants a file written"
    return args


def pick_shell(tools: list[tuple[str, dict | None]]) -> tuple[str | None, dict | None]:
    by_name = dict(tools)
    for name in SHELL_TOOLS:
        if name in by_name:
            return name, schema_args(by_name[name])
    for name, schema in tools:
        if re.search(r"bash|shell|exec|command", name or "", re.I):
            return name, schema_args(schema)
    return None, None


def gemini_prompt(contents: list) -> tuple[str, int]:
    """-> (the turn's typed text, the function responses sent since it)."""
    done = 0
    for entry in reversed(contents):
        entry = entry if isinstance(entry, dict) else {}
        parts = [q for q in entry.get("parts") or [] if isinstance(q, dict)]
        if entry.get("role") == "model":
            continue
        if any("functionResponse" in q for q in parts):
            done += 1
            continue
        return typed_text(parts), done
    return "", done


def json_for_schema(schema: dict | None) -> dict:
    out: dict = {}
    for key, spec in ((schema or {}).get("properties") or {}).items():
        spec = spec or {}
        kind = str(spec.get("type", "")).lower()
        if key == "next_speaker":
            out[key] = "user"
        elif spec.get("enum"):
            out[key] = spec["enum"][0]
        elif kind in ("number", "integer"):
            out[key] = 0
        elif kind == "boolean":
            out[key] = False
        elif kind == "array":
            out[key] = []
        elif kind == "object":
            out[key] = json_for_schema(spec)
        else:
            out[key] = "fake"
    return out


class FakeLLM:
    """The server. `url` is valid after start(); `requests` is the decision log."""

    def __init__(self, *, slow_tick: float = 0.25, slow_max: float = 90.0,
                 log_path: str | None = None) -> None:
        self.slow_tick = slow_tick
        self.slow_max = slow_max
        self.log_path = log_path
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._released: set[str] = set()
        self._streaming: set[str] = set()
        self._hold: str = ""
        self._cond = threading.Condition(self._lock)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    def start(self, port: int = 0) -> FakeLLM:
        handler = type("Handler", (_Handler,), {"llm": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.2}, daemon=True,
                                        name="fakellm")
        self._thread.start()
        return self

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        with self._cond:
            self._released.add("*")  # end every slow stream still open
            self._cond.notify_all()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    # -- the slow-stream gate
    def hold(self, slow_id: str) -> None:
        """Every text reply from now on streams slowly under `slow_id` until released."""
        with self._cond:
            self._hold = slow_id

    def release(self, slow_id: str) -> None:
        with self._cond:
            if self._hold == slow_id:
                self._hold = ""
            self._released.add(slow_id)
            self._cond.notify_all()

    def streaming(self, slow_id: str) -> bool:
        with self._lock:
            return slow_id in self._streaming

    def _slow_pieces(self, slow_id: str):
        """Words every slow_tick until released; then the closing sentence."""
        deadline = time.monotonic() + self.slow_max
        with self._lock:
            self._streaming.add(slow_id)
        try:
            i = 0
            while True:
                with self._cond:
                    done = (slow_id in self._released or "*" in self._released
                            or time.monotonic() > deadline)
                    if not done:
                        self._cond.wait(self.slow_tick)
                        done = slow_id in self._released or "*" in self._released
                if done:
                    break
                word = SLOW_WORDS[i % len(SLOW_WORDS)]
                yield word if i == 0 else " " + word
                i += 1
            yield SLOW_DONE
        finally:
            with self._lock:
                self._streaming.discard(slow_id)

    # -- decisions
    def decide(self, last_text: str, after_tool: bool, has_tools: bool) -> tuple[str, str]:
        """-> (kind, slow_id): kind is after_tool, tool, slow or quick."""
        if after_tool and KEY_TOOL not in last_text and KEY_SLOW not in last_text:
            return "after_tool", ""
        if has_tools and KEY_TOOL in last_text:
            return "tool", ""
        if has_tools and KEY_SLOW in last_text:
            m = _SLOW_ID.search(last_text)
            return "slow", m.group(1) if m else "default"
        m = _SLOW_TEXT_ID.search(last_text)
        if m:
            return "slow", m.group(1)
        return "quick", ""

    def choose(self, text: str, after_tool: bool, tools: list[tuple[str | None, dict | None]],
               prompt: str, done: int, raw: str) -> tuple[str, str, str | None, dict | None]:
        """-> (kind, slow_id, tool name, tool args). `text`: the last user turn's text ('' when
        it is a tool result); `prompt`: the turn's typed text; `done`: the tool results since
        it; `raw`: the whole request (for placeholders)."""
        calls = scripted_calls(prompt)
        offered = {n for n, _ in tools if n}
        if calls:
            if done < len(calls) and (calls[done][0] in offered or KEY_FORCE in prompt):
                name, args = calls[done]
                return "tool", "", name, fill_placeholders(args, raw)
            if done or after_tool:
                return self._held("after_tool", "")
            return self._held("quick", "")
        kind, slow_id = self.decide(text, after_tool, bool(tools))
        if kind == "tool":
            name, args = pick_shell([(n, sc) for n, sc in tools if n])
            if name:
                return kind, slow_id, name, args
            kind = "quick"
        return self._held(kind, slow_id)

    def _held(self, kind: str, slow_id: str) -> tuple[str, str, None, None]:
        with self._lock:
            hold = self._hold
        if hold and kind != "slow":
            return "slow", hold, None, None
        return kind, slow_id, None, None

    def pieces(self, kind: str, slow_id: str = "", prompt: str = ""):
        if kind == "slow":
            yield from self._slow_pieces(slow_id)
            return
        text = self.full_text(kind, prompt)
        for i, word in enumerate(text.split(" ")):
            yield word if i == 0 else " " + word

    def full_text(self, kind: str, prompt: str = "") -> str:
        if kind == "slow":
            return " ".join(SLOW_WORDS) + SLOW_DONE
        if kind == "quick":
            m = _SAY.search(prompt)
            if m:
                return m.group(1).replace("\\n", "\n")
        return AFTER_TOOL if kind == "after_tool" else QUICK

    def record(self, rec: dict) -> None:
        rec = dict(rec, t=round(time.time(), 3))
        with self._lock:
            self.requests.append(rec)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec) + "\n")

    def decisions(self) -> list[str]:
        with self._lock:
            return [r.get("decision", "") for r in self.requests]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "tma-fakellm/1"
    llm: FakeLLM

    def log_message(self, *args) -> None:  # quiet
        pass

    # -- plumbing
    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("Content-Encoding") == "gzip" and raw:
            raw = gzip.decompress(raw)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return body if isinstance(body, dict) else {}

    def _json(self, obj: dict, code: int = 200) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _event(self, name: str | None, obj: dict) -> None:
        self._chunk((f"event: {name}\n" if name else "") + f"data: {json.dumps(obj)}\n\n")

    def _sse_end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # -- routing
    def do_GET(self) -> None:  # noqa: N802
        path = urlparse(self.path).path
        self.llm.record({"method": "GET", "path": path, "decision": "get"})
        if path.rstrip("/").endswith("/models"):
            return self._json({"object": "list",
                               "data": [{"id": "mock-model", "object": "model", "created": 0,
                                         "owned_by": "fake"}],
                               "models": [{"slug": "mock-model",
                                           "display_name": "mock-model"}]})
        return self._json({"error": {"message": "fakellm: no GET " + path}}, 404)

    def do_HEAD(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        path = urlparse(self.path).path
        body = self._body()
        try:
            if path.endswith("/count_tokens"):
                self.llm.record({"path": path, "decision": "count_tokens"})
                return self._json({"input_tokens": 100})
            if path.endswith("/messages"):
                return self.h_anthropic(body)
            if path.endswith("/responses"):
                return self.h_responses(body)
            if path.endswith("/chat/completions"):
                return self.h_chat(body)
            m = re.search(r"/models/([^/:]+):(\w+)$", path)
            if m:
                return self.h_gemini(body, m.group(1), m.group(2))
        except (BrokenPipeError, ConnectionResetError):
            return None
        self.llm.record({"path": path, "decision": "404"})
        return self._json({"error": {"message": "fakellm: no POST " + path}}, 404)

    # -- Anthropic Messages
    def h_anthropic(self, body: dict) -> None:
        msgs = [m for m in body.get("messages") or [] if m.get("role") != "system"]
        last = msgs[-1] if msgs else {}
        content = last.get("content")
        after_tool = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
        tools = [(t.get("name"), t.get("input_schema")) for t in body.get("tools") or []
                 if isinstance(t, dict) and t.get("name")]
        text = text_of(content) if last.get("role") == "user" else ""
        prompt, done = "", 0
        for msg in reversed(msgs):
            blocks = msg.get("content")
            if msg.get("role") != "user":
                continue
            typed = typed_text(blocks)
            if isinstance(blocks, list) and any(isinstance(b, dict) and
                                                 b.get("type") == "tool_result" for b in blocks):
                if not typed:  # a tool's result (claude merges a declined one with the
                    done += 1  # next prompt: that message is the prompt)
                    continue
            prompt = typed
            break
        kind, slow_id, tname, targs = self.llm.choose(text, after_tool, tools, prompt, done,
                                                      json.dumps(body))
        self.llm.record({"path": "/v1/messages", "decision": kind, "tool": tname,
                         "slow_id": slow_id, "prompt": snip(text),
                         "tools": [n for n, _ in tools], "args": targs})
        model = body.get("model", "mock-model")
        mid = "msg_" + uuid.uuid4().hex[:20]
        usage = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        tool_id = "toolu_" + uuid.uuid4().hex[:20]
        if not body.get("stream"):
            blocks = ([{"type": "text", "text": "I will run a command."},
                       {"type": "tool_use", "id": tool_id, "name": tname, "input": targs}]
                      if kind == "tool" else [{"type": "text",
                                               "text": self.llm.full_text(kind, prompt)}])
            return self._json({"id": mid, "type": "message", "role": "assistant",
                               "model": model, "content": blocks,
                               "stop_reason": "tool_use" if kind == "tool" else "end_turn",
                               "stop_sequence": None, "usage": usage})
        self._sse_start()
        self._event("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": dict(usage, output_tokens=1)}})

        def text_block(index: int, pieces) -> None:
            self._event("content_block_start", {"type": "content_block_start", "index": index,
                                                "content_block": {"type": "text", "text": ""}})
            for piece in pieces:
                self._event("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": piece}})
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})

        if kind == "tool":
            text_block(0, ["I will run a command."])
            self._event("content_block_start", {
                "type": "content_block_start", "index": 1,
                "content_block": {"type": "tool_use", "id": tool_id, "name": tname,
                                  "input": {}}})
            self._event("content_block_delta", {
                "type": "content_block_delta", "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(targs)}})
            self._event("content_block_stop", {"type": "content_block_stop", "index": 1})
            stop = "tool_use"
        else:
            text_block(0, self.llm.pieces(kind, slow_id, prompt))
            stop = "end_turn"
        self._event("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 20}})
        self._event("message_stop", {"type": "message_stop"})
        self._sse_end()

    # -- OpenAI Responses
    def h_responses(self, body: dict) -> None:
        items = body.get("input") or []
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        items = [i for i in items if isinstance(i, dict) and i.get("role") != "system"]
        last = items[-1] if items else {}
        after_tool = str(last.get("type", "")).endswith("_output")
        last_user, done = "", 0
        for item in reversed(items):
            if item.get("role") == "user":
                last_user = text_of(item.get("content"))
                break
            if str(item.get("type", "")).endswith("_output"):
                done += 1
        tools = []
        for t in body.get("tools") or []:
            if isinstance(t, dict) and t.get("type") == "function":
                tools.append((t.get("name"), t.get("parameters")))
            elif isinstance(t, dict) and t.get("type") == "local_shell":
                tools.append(("local_shell", None))
        kind, slow_id, tname, targs = self.llm.choose(
            "" if after_tool else last_user, after_tool, tools, last_user, done,
            json.dumps(body))
        self.llm.record({"path": "/v1/responses", "decision": kind, "tool": tname,
                         "slow_id": slow_id, "prompt": snip(last_user),
                         "tools": [n for n, _ in tools], "args": targs})
        prompt = last_user
        rid = "resp_" + uuid.uuid4().hex[:20]
        model = body.get("model", "mock-model")
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 120}
        if not body.get("stream"):
            out = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text",
                                 "text": self.llm.full_text(kind, prompt),
                                 "annotations": []}]}]
            return self._json({"id": rid, "object": "response", "status": "completed",
                               "model": model, "output": out, "usage": usage})
        self._sse_start()
        seq = [0]

        def ev(name: str, obj: dict) -> None:
            self._event(name, dict(obj, type=name, sequence_number=seq[0]))
            seq[0] += 1

        base = {"id": rid, "object": "response", "model": model, "status": "in_progress",
                "output": []}
        ev("response.created", {"response": base})
        ev("response.in_progress", {"response": base})
        if kind == "tool":
            call_id = "call_" + uuid.uuid4().hex[:20]
            if tname == "local_shell":
                item = {"type": "local_shell_call", "id": "lsh_1", "call_id": call_id,
                        "status": "completed",
                        "action": {"type": "exec", "command": ["bash", "-lc", TOOL_CMD]}}
            else:
                item = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:16],
                        "call_id": call_id, "name": tname, "arguments": json.dumps(targs),
                        "status": "completed"}
            ev("response.output_item.added", {"output_index": 0,
                                              "item": dict(item, status="in_progress")})
            ev("response.output_item.done", {"output_index": 0, "item": item})
        else:
            mid = "msg_" + uuid.uuid4().hex[:16]
            ev("response.output_item.added", {"output_index": 0, "item": {
                "type": "message", "id": mid, "role": "assistant", "status": "in_progress",
                "content": []}})
            ev("response.content_part.added", {
                "item_id": mid, "output_index": 0, "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}})
            acc = ""
            for piece in self.llm.pieces(kind, slow_id, prompt):
                acc += piece
                ev("response.output_text.delta", {"item_id": mid, "output_index": 0,
                                                  "content_index": 0, "delta": piece})
            ev("response.output_text.done", {"item_id": mid, "output_index": 0,
                                             "content_index": 0, "text": acc})
            part = {"type": "output_text", "text": acc, "annotations": []}
            ev("response.content_part.done", {"item_id": mid, "output_index": 0,
                                              "content_index": 0, "part": part})
            item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                    "content": [part]}
            ev("response.output_item.done", {"output_index": 0, "item": item})
        ev("response.completed", {"response": dict(base, status="completed", output=[item],
                                                   usage=usage)})
        self._sse_end()

    # -- OpenAI Chat Completions
    def h_chat(self, body: dict) -> None:
        msgs = [m for m in body.get("messages") or [] if m.get("role") != "system"]
        last = msgs[-1] if msgs else {}
        after_tool = last.get("role") == "tool"
        tools = []
        for t in body.get("tools") or []:
            fn = (t or {}).get("function") or {}
            if fn.get("name"):
                tools.append((fn["name"], fn.get("parameters")))
        text = text_of(last.get("content")) if last.get("role") == "user" else ""
        fail = _HTTPFAIL.search(text)
        if fail:
            code = int(fail.group(1))
            self.llm.record({"path": "/v1/chat/completions", "decision": f"http_{code}",
                             "prompt": snip(text)})
            return self._json({"error": {"message": f"fakellm: scripted HTTP {code}",
                                         "type": "invalid_request_error", "code": None}},
                              code)
        prompt, done = "", 0
        for msg in reversed(msgs):
            if msg.get("role") == "tool":
                done += 1
            elif msg.get("role") == "user":
                prompt = text_of(msg.get("content"))
                break
        kind, slow_id, tname, targs = self.llm.choose(text, after_tool, tools, prompt, done,
                                                      json.dumps(body))
        self.llm.record({"path": "/v1/chat/completions", "decision": kind, "tool": tname,
                         "slow_id": slow_id, "prompt": snip(text),
                         "tools": [n for n, _ in tools], "args": targs,
                         # what the agent's tool returned (an answered question's labels)
                         "tool_result": snip(text_of(last.get("content"))) if after_tool
                         else ""})
        cid = "chatcmpl-" + uuid.uuid4().hex[:20]
        model = body.get("model", "mock-model")
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        call = {"id": "call_" + uuid.uuid4().hex[:20], "type": "function",
                "function": {"name": tname, "arguments": json.dumps(targs)}}
        if not body.get("stream"):
            msg = ({"role": "assistant", "content": None, "tool_calls": [call]}
                   if kind == "tool" else {"role": "assistant",
                                           "content": self.llm.full_text(kind, prompt)})
            return self._json({"id": cid, "object": "chat.completion",
                               "created": int(time.time()), "model": model,
                               "choices": [{"index": 0, "message": msg,
                                            "finish_reason": "tool_calls" if kind == "tool"
                                            else "stop"}],
                               "usage": usage})
        self._sse_start()

        def chunk(delta: dict, finish: str | None = None) -> None:
            self._event(None, {"id": cid, "object": "chat.completion.chunk",
                               "created": int(time.time()), "model": model,
                               "choices": [{"index": 0, "delta": delta,
                                            "finish_reason": finish}]})

        chunk({"role": "assistant", "content": ""})
        if kind == "tool":
            chunk({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                   "function": {"name": tname, "arguments": ""}}]})
            chunk({"tool_calls": [{"index": 0,
                                   "function": {"arguments": json.dumps(targs)}}]})
            finish = "tool_calls"
        else:
            for piece in self.llm.pieces(kind, slow_id, prompt):
                chunk({"content": piece})
            finish = "stop"
        chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            self._event(None, {"id": cid, "object": "chat.completion.chunk",
                               "created": int(time.time()), "model": model, "choices": [],
                               "usage": usage})
        self._chunk("data: [DONE]\n\n")
        self._sse_end()

    # -- Gemini
    def h_gemini(self, body: dict, model: str, method: str) -> None:
        if method == "countTokens":
            self.llm.record({"path": method, "decision": "countTokens"})
            return self._json({"totalTokens": 100})
        if method == "embedContent":
            self.llm.record({"path": method, "decision": "embed"})
            return self._json({"embedding": {"values": [0.0] * 8}})
        usage = {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}

        def cand(parts: list, finish: str | None = None) -> dict:
            c: dict = {"content": {"role": "model", "parts": parts}, "index": 0}
            if finish:
                c["finishReason"] = finish
            return {"candidates": [c], "usageMetadata": usage, "modelVersion": model}

        gen = body.get("generationConfig") or {}
        if gen.get("responseMimeType") == "application/json":
            obj = json_for_schema(gen.get("responseJsonSchema") or gen.get("responseSchema"))
            self.llm.record({"path": method, "decision": "json"})
            resp = cand([{"text": json.dumps(obj)}], "STOP")
            if method == "streamGenerateContent":
                self._sse_start()
                self._event(None, resp)
                return self._sse_end()
            return self._json(resp)
        contents = body.get("contents") or []
        last = contents[-1] if contents else {}
        parts = [p for p in last.get("parts") or [] if isinstance(p, dict)]
        after_tool = any("functionResponse" in p for p in parts)
        text = "\n".join(p.get("text", "") for p in parts)
        tools = []
        for t in body.get("tools") or []:
            for fd in (t or {}).get("functionDeclarations") or []:
                tools.append((fd.get("name"),
                              fd.get("parametersJsonSchema") or fd.get("parameters")))
        prompt, done = gemini_prompt(contents)
        kind, slow_id, tname, targs = self.llm.choose(text, after_tool, tools, prompt, done,
                                                      json.dumps(body))
        self.llm.record({"path": method, "decision": kind, "tool": tname, "slow_id": slow_id,
                         "prompt": snip(text), "tools": [n for n, _ in tools], "args": targs})
        if method != "streamGenerateContent":
            if kind == "tool":
                return self._json(cand([{"functionCall": {"name": tname, "args": targs}}],
                                       "STOP"))
            return self._json(cand([{"text": self.llm.full_text(kind, prompt)}], "STOP"))
        self._sse_start()
        if kind == "tool":
            self._event(None, cand([{"text": "I will run a command."}]))
            self._event(None, cand([{"functionCall": {"name": tname, "args": targs}}], "STOP"))
        else:
            pending = None
            for piece in self.llm.pieces(kind, slow_id, prompt):
                if pending is not None:
                    self._event(None, cand([{"text": pending}]))
                pending = piece
            self._event(None, cand([{"text": pending or ""}], "STOP"))
        self._sse_end()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="tma live suite fake LLM (loopback only)")
    ap.add_argument("--port", type=int, default=0, help="0 = a free port")
    ap.add_argument("--log", help="append one JSON line per request here")
    ap.add_argument("--slow-max", type=float, default=20.0,
                    help="seconds a SLOWREPLY streams when nobody releases it")
    args = ap.parse_args(argv)
    llm = FakeLLM(slow_max=args.slow_max, log_path=args.log).start(args.port)
    print(f"fakellm listening on {llm.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        llm.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
