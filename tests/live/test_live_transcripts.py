"""Reading what a real agent said: `tma last`, `tma transcript --json` and `tma serve`'s
`window` / `event` on each pinned agent's own transcript, written by the agent itself
against the fake model.

Each agent runs hooked (`tma install-hooks <agent> --yes`: its hooks name the session,
and all but pi the transcript's path, Copilot's as its turn ends; OpenCode's plugin names
its `ses_*` session in its database), one turn: `RUNTOOL now` makes the fake model call the agent's shell tool, the
harness approves it, the command runs, and the fake model answers its result with
`TOOL RESULT SEEN: the command ran. All done.` Then, with the agent's own HOME and
directories in the environment (the user's tma sees what the agent wrote):

  tma last --pane P               prints that answer
  tma transcript --pane P --json  validates against schemas/transcript.schema.json and
                                  holds the shell call (its command) and its result
                                  (same call id, status ok)
  tma serve --stdio               a real child: `window` and `event` frames that validate
                                  against schemas/proto.schema.json, in the golden
                                  vectors' key order (../shared/reference/proto/vectors)

While Codex's prompt waits, `tma card --json` names the call from the rollout: the hook's
Bash input with the call id only the rollout has.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.live import agents as agents_mod
from tests.helpers.live.fakellm import AFTER_TOOL, SHELL_TOOLS, TOOL_CMD
from tests.helpers.live.harness import Scenario
from tests.helpers.live.steps import answer_dialog, settle
from tests.helpers.schemas import _schema
from tma.core import proto
from tma.runtime.transcript import stores

pytestmark = pytest.mark.live
jsonschema = pytest.importorskip("jsonschema")

PROTO = _schema("proto.schema.json")
DOCUMENT = _schema("transcript.schema.json")
VECTORS = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "proto" / "vectors"
#: where an agent keeps its files: the user's tma reads them with the same environment
AGENT_DIRS = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
              "CODEX_HOME", "PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR", "COPILOT_HOME",
              "QWEN_HOME", "QWEN_RUNTIME_DIR")


def agent_dirs(sc: Scenario) -> dict[str, str]:
    return {k: v for k, v in sc.pane_env().items() if k in AGENT_DIRS}


def tma(sc: Scenario, *args: str) -> subprocess.CompletedProcess:
    return sc.server.tma(*args, env=agent_dirs(sc), timeout=60)


def one_turn(sc: Scenario) -> None:
    """Start the agent, answer its startup dialogs, then one turn: the fake model's shell
    call, approved, run, and answered."""
    agent = sc.agent
    sc.start()
    for dialog in agent.dialogs:
        answer_dialog(sc, dialog)
    sc.wait_screen(lambda s: s.cls == "idle", 90, "the composer")
    t = sc.type_line("RUNTOOL now")
    sc.wait_screen(lambda s: s.cls == "prompt", 60, "the approval prompt", t)
    if agent.agent == "codex":
        codex_card(sc)
    sc.wait_regex(agent.approve_ready, 30)
    settle(sc, agent.approve_ready)
    t = time.time()
    sc.keys(*agent.approve_keys)
    sc.wait_screen(lambda s: s.cls == "idle" and "TOOL RESULT SEEN" in s.screen, 60,
                   "the answer to the tool's result", t)
    assert (sc.work / "fakellm-hi.txt").exists(), "the approved tool call did not run"


def codex_card(sc: Scenario) -> None:
    """Codex wrote the call to its rollout before it asked: the card names it, the
    hook's Bash input with the rollout's call id (Codex's hook sends none)."""
    deadline = time.time() + 20
    card: dict = {}
    while time.time() < deadline:
        res = tma(sc, "card", "--pane", sc.pane, "--json")
        card = json.loads(res.stdout) if res.stdout.strip() else {}
        if card.get("card") == "permission" and (card.get("pending_call") or {}).get("call_id"):
            break
        time.sleep(0.5)
    call = card.get("pending_call") or {}
    assert card.get("card") == "permission" and call.get("call_id", "").startswith("call_"), card
    assert call["tool"] == "Bash" and call["input"].get("command") == TOOL_CMD, card


def wait_last(sc: Scenario) -> str:
    """`tma last` once the agent has written its answer (a file lags its screen a little)."""
    deadline = time.time() + 30
    res = None
    while time.time() < deadline:
        res = tma(sc, "last", "--pane", sc.pane)
        if res.returncode == 0 and AFTER_TOOL in res.stdout:
            return res.stdout
        time.sleep(0.5)
    assert res is not None
    raise AssertionError(f"{sc.agent.key}: tma last -> {res.returncode}: {res.stdout!r} "
                         f"{res.stderr!r}")


def shell_call(events: list[dict]) -> tuple[dict, dict]:
    """The shell call of the turn and its result (same call id), from a window's events."""
    calls = [e for e in events if e["kind"] == "tool_call" and e.get("name") in SHELL_TOOLS]
    assert calls, [(e["kind"], e.get("name")) for e in events]
    call = calls[0]
    results = [e for e in events if e["kind"] == "tool_result"
               and e.get("call_id") == call["call_id"]]
    assert results, (call, [(e["kind"], e.get("call_id")) for e in events])
    return call, results[0]


class Device:
    """`tma serve --stdio`, a real child, driven frame by frame; every frame validated
    against the protocol's schema and read back."""

    def __init__(self, sc: Scenario) -> None:
        env = dict(sc.server.env, **agent_dirs(sc))
        self.proc = subprocess.Popen(sc.server.tma_prefix + ["serve", "--stdio"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.buf = b""
        self.n = 0

    def ask(self, t: str, **body) -> dict:
        self.n += 1
        rid = str(self.n)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"schema": 1, "id": rid, "t": t, **body}).encode()
                              + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + 30
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            assert left > 0, "serve sent no frame in time"
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 65536)
                assert chunk, "serve closed its stdout"
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        doc = json.loads(line)
        jsonschema.validate(doc, PROTO)
        assert proto.dumps(proto.parse_line(line, proto.RESPONSE)) == line.decode()
        assert doc["id"] == rid, doc
        return doc

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def vector_order(window: dict, event: dict) -> None:
    """Frames in the golden vectors' key order: the window's keys, each event header's
    keys for its kind (window.json's events), the event frame's (events.json)."""
    if not VECTORS.is_dir():
        pytest.skip(f"the golden vectors are not here ({VECTORS}): key order unchecked")
    vec_w = json.loads((VECTORS / "window.json").read_text(encoding="utf-8"))
    assert list(window) == list(vec_w)
    order = {e["kind"]: list(e) for e in vec_w["events"]}
    for e in window["events"]:
        assert list(e) == order[e["kind"]], e["kind"]
    vec_e = {e["kind"]: list(e) for e in json.loads((VECTORS / "events.json").read_text(
        encoding="utf-8"))}
    assert list(event) == vec_e[event["kind"]]


# every pinned agent tma has a transcript reader for
@pytest.mark.parametrize("key", [a.key for a in agents_mod.AGENTS
                                 if a.agent in stores.REGISTRY])
def test_what_the_agent_said_reads_back_on_every_surface(scenario_factory, key):
    sc: Scenario = scenario_factory(agents_mod.BY_KEY[key], "hooked")
    one_turn(sc)

    said = wait_last(sc)
    assert said.strip().endswith(AFTER_TOOL), said

    res = tma(sc, "transcript", "--pane", sc.pane, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, DOCUMENT)
    assert (doc["pane"], doc["agent"], doc["unknown"]) == (sc.pane, sc.agent.agent, 0), \
        [e.get("type_name") for e in doc["events"] if e["kind"] == "unknown"]
    call, result = shell_call(doc["events"])
    assert call["body"]["kind"] == "json" and TOOL_CMD in call["body"]["text"], call
    assert result["status"] == "ok", result
    answer = next(e for e in doc["events"] if e["kind"] == "assistant_text")
    assert answer["body"]["text"].strip() == AFTER_TOOL  # newest first: the last answer

    d = Device(sc)
    try:
        d.ask("hello", app="live", app_version="0", device="live")
        w = d.ask("window", pane=sc.pane)
        assert (w["t"], w["pane"], w["agent"], w["unknown"]) == ("window", sc.pane,
                                                                 sc.agent.agent, 0)
        assert all("body" not in e or e["body"] is None for e in w["events"])
        wcall, _wresult = shell_call(w["events"])
        ev = d.ask("event", pane=sc.pane, cursor=wcall["cursor"])
        assert ev["t"] == "event" and ev["kind"] == "tool_call"
        assert ev["body"]["kind"] == "json" and TOOL_CMD in ev["body"]["text"], ev
    finally:
        code = d.close()
    assert code == 0
    vector_order(w, ev)
