#!/usr/bin/env python3
"""Scripted fake LLM for recording tma's dialog fixtures (stdlib only, 127.0.0.1).

Adapted from the agentlab mock (same idea, written separately, not imported). It speaks
the Anthropic Messages API (claude) and OpenAI Chat Completions (opencode, pi) and picks
its reply from the last *user* turn.  Unlike the lab mock it skips trailing `system`
entries in `messages` (Claude Code 2.1.332 appends one after the user prompt, which
makes the lab mock miss every keyword).

  last turn is a tool result  -> text "TOOL RESULT SEEN: the command ran. All done."
  PLANTOOL   -> tool call ExitPlanMode {"plan": ...}      (claude plan-approval dialog);
                if a plan-mode reminder names a plan file, first Write that file, then
                ExitPlanMode after the Write's result
  ASKTOOL    -> tool call AskUserQuestion / question      (question dialogs)
  RUNTOOL    -> one shell tool call `echo hi > mockllm-hi.txt`
  SLOWREPLY  -> text streamed word by word over --slow-seconds
  otherwise  -> "Hello from fakellm. This is a short scripted reply."

Every request is appended to --log as JSONL.  Exits after --max-seconds.
"""

import argparse
import json
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

QUICK = "Hello from fakellm. This is a short scripted reply."
AFTER_TOOL = "TOOL RESULT SEEN: the command ran. All done."
SLOW = (
    "Working slowly through this scripted reply, one word at a time, so the agent "
    "shows its busy screen for a while before finishing. Slow reply complete."
).split(" ")
TOOL_CMD = "echo hi > mockllm-hi.txt"
PLAN = (
    "# Plan: add a greeting file\n\n"
    "1. Create `hello.txt` containing `hi`.\n"
    "2. Add a line about it to README.md.\n"
    "3. Run `cat hello.txt` to check it.\n"
)
QUESTION = {
    "question": "Which colour should the new button be?",
    "header": "Colour",
    "options": [
        {"label": "Blue (Recommended)", "description": "Matches the existing theme"},
        {"label": "Green", "description": "Stands out more"},
    ],
    "multiple": False,
}
SHELLS = ["Bash", "bash", "shell", "run_shell_command", "exec_command"]
ARGS = None
LOCK = threading.Lock()


def log(rec):
    with LOCK, open(ARGS.log, "a") as f:
        f.write(json.dumps(rec) + "\n")


def text_of(content):
    if isinstance(content, str):
        return content
    out = []
    for p in content or []:
        if isinstance(p, dict) and isinstance(p.get("text"), str):
            out.append(p["text"])
    return "\n".join(out)


PLAN_FILE_RE = re.compile(r"create your plan at (/\S+?\.md)")


def decide(last_text, after_tool, tool_names, all_text="", prev_tool=None):
    """-> (kind, tool_name, tool_args)

    prev_tool: (name, input) of the assistant's last tool call, when the last turn is its
    result.  Claude Code >= 2.1.3xx reads the plan from a plan file named in a plan-mode
    system reminder, so PLANTOOL first Writes that file, then calls ExitPlanMode.
    """
    if (
        after_tool
        and prev_tool
        and prev_tool[0] == "Write"
        and "/plans/" in str(prev_tool[1].get("file_path"))
    ):
        return "tool", "ExitPlanMode", {"plan": PLAN}
    # keywords first: claude merges a rejected tool's result and the next prompt into
    # one user message, so a tool_result there does not mean "answer the tool"
    if (
        not any(k in last_text for k in ("PLANTOOL", "ASKTOOL", "RUNTOOL", "SLOWREPLY"))
        and after_tool
    ):
        return "after_tool", None, None
    if "PLANTOOL" in last_text:
        m = PLAN_FILE_RE.search(all_text)
        if m and "Write" in tool_names:
            return "tool", "Write", {"file_path": m.group(1), "content": PLAN}
        return "tool", "ExitPlanMode", {"plan": PLAN}
    if "ASKTOOL" in last_text:
        if "AskUserQuestion" in tool_names:
            return "tool", "AskUserQuestion", {"questions": [QUESTION]}
        if "question" in tool_names:
            return "tool", "question", {"questions": [QUESTION]}
    if "RUNTOOL" in last_text:
        for s in SHELLS:
            if s in tool_names:
                return "tool", s, {"command": TOOL_CMD, "description": "Print hi"}
    if "SLOWREPLY" in last_text and tool_names:
        return "slow", None, None
    return "quick", None, None


def pieces(kind):
    if kind == "slow":
        per = ARGS.slow_seconds / len(SLOW)
        return [(per, w if i == 0 else " " + w) for i, w in enumerate(SLOW)]
    text = AFTER_TOOL if kind == "after_tool" else QUICK
    return [(0.01, w if i == 0 else " " + w) for i, w in enumerate(text.split(" "))]


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("Content-Encoding") == "gzip" and raw:
            import gzip

            raw = gzip.decompress(raw)
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def send_json(self, obj, code=200):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def sse_start(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, s):
        b = s.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
        self.wfile.flush()

    def event(self, name, obj):
        self.chunk((f"event: {name}\n" if name else "") + f"data: {json.dumps(obj)}\n\n")

    def sse_end(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self):
        log({"t": time.time(), "method": "GET", "path": self.path})
        if self.path.rstrip("/").endswith("/models"):
            return self.send_json(
                {"object": "list", "data": [{"id": "mock-model", "object": "model"}]}
            )
        return self.send_json({"error": {"message": "no GET " + self.path}}, 404)

    def do_POST(self):
        b = self.body()
        p = self.path.split("?")[0]
        try:
            if p.endswith("/count_tokens"):
                log({"t": time.time(), "path": p, "decision": "count_tokens"})
                return self.send_json({"input_tokens": 100})
            if p.endswith("/messages"):
                return self.anthropic(b)
            if p.endswith("/chat/completions"):
                return self.chat(b)
        except (BrokenPipeError, ConnectionResetError):
            return
        return self.send_json({"error": {"message": "no POST " + p}}, 404)

    # ---------------------------------------------------------------- anthropic
    def anthropic(self, b):
        msgs = [m for m in b.get("messages") or [] if m.get("role") != "system"]
        last = msgs[-1] if msgs else {}
        content = last.get("content")
        after_tool = (
            last.get("role") == "user"
            and isinstance(content, list)
            and any(isinstance(x, dict) and x.get("type") == "tool_result" for x in content)
        )
        names = [t.get("name") for t in b.get("tools") or [] if isinstance(t, dict)]
        all_text = "\n".join(text_of(m.get("content")) for m in b.get("messages") or [])
        prev_tool = None
        if after_tool and len(msgs) >= 2 and isinstance(msgs[-2].get("content"), list):
            for x in msgs[-2]["content"]:
                if isinstance(x, dict) and x.get("type") == "tool_use":
                    prev_tool = (x.get("name"), x.get("input") or {})
        kind, tname, targs = decide(
            text_of(content) if last.get("role") == "user" else "",
            after_tool,
            names,
            all_text,
            prev_tool,
        )
        log(
            {
                "t": time.time(),
                "path": "/v1/messages",
                "decision": kind,
                "tool": tname,
                "tools": names,
                "last_text": text_of(content)[-200:],
                "permission_mode_hint": "plan" if "ExitPlanMode" in names else None,
            }
        )
        model = b.get("model", "mock-model")
        mid = "msg_" + uuid.uuid4().hex[:20]
        usage = {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        if not b.get("stream"):
            blocks = [{"type": "text", "text": "".join(x for _, x in pieces(kind))}]
            if kind == "tool":
                blocks = [
                    {
                        "type": "tool_use",
                        "id": "toolu_" + uuid.uuid4().hex[:20],
                        "name": tname,
                        "input": targs,
                    }
                ]
            return self.send_json(
                {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": "tool_use" if kind == "tool" else "end_turn",
                    "stop_sequence": None,
                    "usage": usage,
                }
            )
        self.sse_start()
        self.event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": dict(usage, output_tokens=1),
                },
            },
        )
        if kind == "tool":
            intro = {
                "ExitPlanMode": "Here is my plan.",
                "AskUserQuestion": "I have a question.",
                "Write": "I will write the plan file.",
            }
            self.event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            self.event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {
                        "type": "text_delta",
                        "text": intro.get(tname, "I will run a command."),
                    },
                },
            )
            self.event("content_block_stop", {"type": "content_block_stop", "index": 0})
            self.event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {
                        "type": "tool_use",
                        "id": "toolu_" + uuid.uuid4().hex[:20],
                        "name": tname,
                        "input": {},
                    },
                },
            )
            self.event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(targs)},
                },
            )
            self.event("content_block_stop", {"type": "content_block_stop", "index": 1})
            stop = "tool_use"
        else:
            self.event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            for delay, piece in pieces(kind):
                time.sleep(delay)
                self.event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
            self.event("content_block_stop", {"type": "content_block_stop", "index": 0})
            stop = "end_turn"
        self.event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        )
        self.event("message_stop", {"type": "message_stop"})
        self.sse_end()

    # ---------------------------------------------------------------- chat completions
    def chat(self, b):
        msgs = [m for m in b.get("messages") or [] if m.get("role") != "system"]
        last = msgs[-1] if msgs else {}
        names = [(t.get("function") or {}).get("name") for t in b.get("tools") or []]
        kind, tname, targs = decide(
            text_of(last.get("content")) if last.get("role") == "user" else "",
            last.get("role") == "tool",
            names,
        )
        log(
            {
                "t": time.time(),
                "path": "/v1/chat/completions",
                "decision": kind,
                "tool": tname,
                "tools": names,
                "last_text": text_of(last.get("content"))[-200:],
            }
        )
        cid = "chatcmpl-" + uuid.uuid4().hex[:20]
        model = b.get("model", "mock-model")
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        if not b.get("stream"):
            msg = {"role": "assistant", "content": "".join(x for _, x in pieces(kind))}
            fr = "stop"
            if kind == "tool":
                msg = {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_" + uuid.uuid4().hex[:20],
                            "type": "function",
                            "function": {"name": tname, "arguments": json.dumps(targs)},
                        }
                    ],
                }
                fr = "tool_calls"
            return self.send_json(
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "message": msg, "finish_reason": fr}],
                    "usage": usage,
                }
            )
        self.sse_start()

        def ch(delta, fr=None):
            self.event(
                None,
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": fr}],
                },
            )

        ch({"role": "assistant", "content": ""})
        if kind == "tool":
            ch(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_" + uuid.uuid4().hex[:20],
                            "type": "function",
                            "function": {"name": tname, "arguments": ""},
                        }
                    ]
                }
            )
            ch({"tool_calls": [{"index": 0, "function": {"arguments": json.dumps(targs)}}]})
            fr = "tool_calls"
        else:
            for delay, piece in pieces(kind):
                time.sleep(delay)
                ch({"content": piece})
            fr = "stop"
        ch({}, fr)
        if (b.get("stream_options") or {}).get("include_usage"):
            self.event(
                None,
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [],
                    "usage": usage,
                },
            )
        self.chunk("data: [DONE]\n\n")
        self.sse_end()


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=18080)
    ap.add_argument("--log", default="/tmp/fakellm-plan.jsonl")
    ap.add_argument("--slow-seconds", type=float, default=8.0)
    ap.add_argument("--max-seconds", type=float, default=1800)
    ARGS = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), H)
    srv.daemon_threads = True
    srv.timeout = 0.5
    deadline = time.time() + ARGS.max_seconds
    print(f"fakellm_plan listening on http://127.0.0.1:{ARGS.port} (log {ARGS.log})", flush=True)
    while time.time() < deadline:
        srv.handle_request()
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
