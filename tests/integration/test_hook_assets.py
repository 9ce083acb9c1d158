"""The installed assets of the hook tier: the tma-hook wrapper and the two JS bridges.

The wrapper runs against fake `tma` scripts that record their argv and stdin. The bridges
run in node (and, when a pinned OpenCode install is cached for the live suite, in the Bun
runtime OpenCode itself loads plugins with) behind a small ESM harness: the installer's
token is replaced by the path of a recorder script, `child_process.spawn` is wrapped only
to count children (so the harness can wait for every one of them instead of sleeping), and
fake events are fed in. The OpenCode plugin also replays the bus events captured from a
real OpenCode 1.18.33 (tests/fixtures/hooks/lab).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

ASSETS = Path(str(resources.files("tma.install").joinpath("assets")))
WRAPPER = ASSETS / "tma-hook"
OPENCODE = ASSETS / "opencode-plugin.js"
PI = ASSETS / "pi-extension.js"
TOKEN = "@@TMA_HOOK@@"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "lab"
NODE = shutil.which("node")
LIVE_CACHE = Path(os.environ.get("TMA_LIVE_CACHE") or Path.home() / ".cache" / "tma-live")

needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")

# ------------------------------------------------------------------ the wrapper

FAKE_TMA = """#!/bin/sh
rec={rec}
printf '%s' "$0" > "$rec/who"
: > "$rec/argv"
for a in "$@"; do printf '%s\\n' "$a" >> "$rec/argv"; done
cat > "$rec/stdin"
printf 'decision-object'
printf 'noise on stderr' >&2
exit 3
"""


def _runners() -> list[tuple[str, list[str]]]:
    out = [("exec", [])]  # the agent execs the wrapper: its #!/bin/sh line decides
    for shell in ("sh", "dash", "bash"):
        path = shutil.which(shell)
        if path:
            out.append((shell, [path]))
    return out


RUNNERS = _runners()


class Hook:
    """A copy of the wrapper in its own bin dir, a rec dir, and a hermetic PATH."""

    def __init__(self, tmp_path: Path, runner: list[str]) -> None:
        self.root = tmp_path
        self.runner = runner
        self.bin = tmp_path / "bin"
        self.rec = tmp_path / "rec"
        self.tools = tmp_path / "tools"  # what the wrapper and the fakes need, and no tma
        for d in (self.bin, self.rec, self.tools):
            d.mkdir()
        self.wrapper = self.bin / "tma-hook"
        shutil.copyfile(WRAPPER, self.wrapper)
        self.wrapper.chmod(0o755)
        for tool in ("dirname", "cat"):
            found = shutil.which(tool)
            assert found, f"{tool} is needed by the wrapper tests"
            (self.tools / tool).symlink_to(found)
        self.env = {"PATH": str(self.tools), "LANG": "C"}

    def fake(self, path: Path, mode: int = 0o755) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(FAKE_TMA.format(rec=shlex.quote(str(self.rec))))
        path.chmod(mode)
        return path

    def run(self, *args: str, stdin: bytes | None = b"", env: dict | None = None):
        return subprocess.run(
            [*self.runner, str(self.wrapper), *args],
            input=stdin, stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True, env={**self.env, **(env or {})}, timeout=30)

    def argv(self) -> list[str] | None:
        path = self.rec / "argv"
        return path.read_text().splitlines() if path.exists() else None

    def stdin(self) -> bytes:
        return (self.rec / "stdin").read_bytes()

    def who(self) -> str:
        return (self.rec / "who").read_text()


@pytest.fixture(params=RUNNERS, ids=[name for name, _ in RUNNERS])
def hook(request, tmp_path) -> Hook:
    return Hook(tmp_path, request.param[1])


def test_wrapper_is_posix_sh():
    text = WRAPPER.read_text()
    assert text.startswith("#!/bin/sh\n")
    for shell in ("sh", "dash", "bash"):
        path = shutil.which(shell)
        if path:
            res = subprocess.run([path, "-n", str(WRAPPER)], capture_output=True)
            assert res.returncode == 0, (shell, res.stderr)
    assert "[[" not in text and "local " not in text and "$(( " not in text


def test_sibling_gets_event_argv_and_stdin(hook):
    hook.fake(hook.bin / "tma")
    payload = b'{"session_id": "s-1", "note": "50% \\\\n done"}\nsecond line'
    res = hook.run("claude", "Stop", stdin=payload)
    assert res.returncode == 0  # the fake exits 3
    assert hook.argv() == ["event", "--agent", "claude", "--kind", "Stop", "--payload", "-"]
    assert hook.stdin() == payload
    assert res.stdout == b"decision-object"  # the Claude reply lane answers through it
    assert res.stderr == b""
    assert hook.who() == str(hook.bin / "tma")


def test_socket_name_is_passed_before_the_payload(hook):
    hook.fake(hook.bin / "tma")
    res = hook.run("gemini", "AfterAgent", stdin=b"{}", env={"TMA_HOOK_SOCKET": "work sock"})
    assert res.returncode == 0
    assert hook.argv() == ["event", "--agent", "gemini", "--kind", "AfterAgent",
                           "--socket-name", "work sock", "--payload", "-"]


def test_empty_socket_name_is_no_flag(hook):
    hook.fake(hook.bin / "tma")
    hook.run("gemini", "AfterAgent", env={"TMA_HOOK_SOCKET": ""})
    assert "--socket-name" not in hook.argv()


def test_third_argument_becomes_stdin(hook):
    hook.fake(hook.bin / "tma")
    notify = '{"type":"agent-turn-complete","thread-id":"t-1","msg":"100%s \\\\ done"}'
    res = hook.run("codex", "notify", notify, stdin=b"this stdin is not the payload")
    assert res.returncode == 0
    assert hook.argv() == ["event", "--agent", "codex", "--kind", "notify", "--payload", "-"]
    assert hook.stdin() == notify.encode()  # verbatim: no newline added, no % expansion
    assert res.stdout == b"decision-object"


def test_empty_third_argument_is_an_empty_payload(hook):
    hook.fake(hook.bin / "tma")
    hook.run("codex", "notify", "", stdin=b"not this")
    assert hook.stdin() == b""


def test_closed_stdin_is_an_empty_payload(hook):
    hook.fake(hook.bin / "tma")
    res = hook.run("claude", "Stop", stdin=None)
    assert res.returncode == 0
    assert hook.stdin() == b""


def test_tma_bin_wins(hook):
    hook.fake(hook.bin / "tma")
    hook.fake(hook.tools / "tma")
    chosen = hook.fake(hook.root / "elsewhere" / "my-tma")
    res = hook.run("claude", "Stop", env={"TMA_BIN": str(chosen)})
    assert res.returncode == 0
    assert hook.who() == str(chosen)


@pytest.mark.parametrize("bad", ["missing", "not-executable", "directory"])
def test_unusable_tma_bin_falls_back_to_the_sibling(hook, bad):
    hook.fake(hook.bin / "tma")
    target = hook.root / "elsewhere" / "tma"
    if bad == "not-executable":
        hook.fake(target, mode=0o644)
    elif bad == "directory":
        target.mkdir(parents=True)
        target.chmod(0o755)
    hook.run("claude", "Stop", env={"TMA_BIN": str(target)})
    assert hook.who() == str(hook.bin / "tma")


def test_path_lookup_when_there_is_no_sibling(hook):
    hook.fake(hook.bin / "tma", mode=0o644)  # present but not executable: skipped
    on_path = hook.fake(hook.tools / "tma")
    res = hook.run("pi", "agent_end", stdin=b'{"session_id": "p"}')
    assert res.returncode == 0
    assert hook.who() == str(on_path)
    assert hook.stdin() == b'{"session_id": "p"}'


def test_no_tma_anywhere_is_a_silent_no_op(hook):
    res = hook.run("claude", "Stop", stdin=b"{}")
    assert (res.returncode, res.stdout, res.stderr) == (0, b"", b"")
    assert hook.argv() is None


def test_sibling_is_skipped_when_dirname_fails(hook):
    hook.fake(hook.bin / "tma")
    (hook.tools / "dirname").unlink()  # dirname cannot run: the wrapper's dir is unknown
    res = hook.run("claude", "Stop")
    assert (res.returncode, res.stdout, res.stderr) == (0, b"", b"")
    assert hook.argv() is None


@pytest.mark.parametrize("args", [(), ("claude",), ("", "Stop"), ("claude", "")],
                         ids=["none", "agent-only", "empty-agent", "empty-event"])
def test_missing_agent_or_event_exits_0(hook, args):
    hook.fake(hook.bin / "tma")
    res = hook.run(*args, stdin=b"{}")
    assert (res.returncode, res.stdout, res.stderr) == (0, b"", b"")
    assert hook.argv() is None


def test_extra_arguments_are_ignored(hook):
    hook.fake(hook.bin / "tma")
    hook.run("codex", "notify", "{}", "--surprise")
    assert hook.argv() == ["event", "--agent", "codex", "--kind", "notify", "--payload", "-"]


def test_exec_failure_still_exits_0(hook):
    broken = hook.bin / "tma"
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)
    res = hook.run("claude", "Stop", stdin=b"{}")
    assert (res.returncode, res.stdout, res.stderr) == (0, b"", b"")


# ------------------------------------------------------------------ the JS bridges

HARNESS = r"""
import { createRequire, syncBuiltinESMExports } from "node:module";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const cp = require("node:child_process");
const realSpawn = cp.spawn;
let spawned = 0;
let finished = 0;
cp.spawn = function (...args) {
  const child = realSpawn.apply(this, args);
  spawned++;
  let done = false;
  const fin = () => { if (!done) { done = true; finished++; } };
  child.on("exit", fin);
  child.on("error", fin);
  return child;
};
syncBuiltinESMExports();

const [assetPath, mode, specPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));
const quiet = () => new Promise((resolve) => {
  const t = setInterval(() => { if (spawned === finished) { clearInterval(t); resolve(); } }, 5);
});
const value = (r) => (r === undefined ? "undefined" : r);
const mod = await import(pathToFileURL(assetPath).href);
const out = { exports: Object.keys(mod).sort(), returns: [] };

if (mode === "opencode") {
  const input = {};
  if (spec.serverUrl !== undefined) {
    input.serverUrl = spec.urlObject ? new URL(spec.serverUrl) : spec.serverUrl;
  }
  const hooks = await mod.TmaBridge(input);
  out.hooks = Object.keys(hooks).sort();
  for (const [what, name, data] of spec.steps) {
    if (spec.settle) await quiet();
    const fn = what === "event" ? hooks.event : hooks[name];
    if (typeof fn !== "function") continue;
    const arg = what === "event" ? { event: { id: "evt_x", type: name, properties: data } } : data;
    out.returns.push(value(await fn(arg, {})));
  }
} else {
  const handlers = new Map();
  const pi = {
    on(name, handler) {
      if (!handlers.has(name)) handlers.set(name, []);
      handlers.get(name).push(handler);
    },
  };
  out.factory = value(mod.default(pi));
  out.registered = [...handlers.keys()];
  for (const [name, c] of spec.steps) {
    if (spec.settle) await quiet();
    const ctx = {
      sessionManager: c.noManager ? undefined : {
        getSessionId() { if (c.sidThrows) throw new Error("stale ctx"); return c.sid; },
      },
      getContextUsage() {
        if (c.usageThrows) throw new Error("stale ctx");
        return c.usage === "undefined" ? undefined : c.usage;
      },
    };
    for (const handler of handlers.get(name) ?? []) {
      out.returns.push(value(await handler({ type: name }, ctx)));
    }
  }
}
await quiet();
out.spawned = spawned;
console.log(JSON.stringify(out));
"""

RECORDER = """#!/bin/sh
payload=$(cat)
printf '%s\\t%s\\t%s\\n' "$1" "$2" "$payload" >> {log}
"""


def _opencode_bun() -> list[str] | None:
    """OpenCode's own Bun runtime (BUN_BE_BUN=1) from the live suite's agent cache."""
    exe = (LIVE_CACHE / "opencode-1.18.33" / "node_modules" / "opencode-linux-x64" / "bin"
           / "opencode")
    return ["env", "BUN_BE_BUN=1", str(exe)] if os.access(exe, os.X_OK) else None


def _runtimes() -> list:
    out = [pytest.param(["node"] if NODE else None, id="node", marks=needs_node)]
    bun = _opencode_bun()
    out.append(pytest.param(bun, id="opencode-bun", marks=pytest.mark.skipif(
        bun is None, reason=f"no opencode-1.18.33 in the live cache {LIVE_CACHE}")))
    return out


class Bridge:
    """One bridge asset rendered for a recorder, plus the harness that drives it."""

    def __init__(self, tmp_path: Path, asset: Path, mode: str, hook_path: Path | None = None,
                 runtime: list[str] | None = None) -> None:
        self.dir = tmp_path
        self.mode = mode
        self.runtime = runtime or [NODE or "node"]
        self.log = tmp_path / "rec.log"
        recorder = tmp_path / "recorder.sh"
        recorder.write_text(RECORDER.format(log=shlex.quote(str(self.log))))
        recorder.chmod(0o755)
        self.hook_path = hook_path or recorder
        self.module = tmp_path / f"{mode}-bridge.mjs"
        self.module.write_text(render(asset, self.hook_path))
        self.harness = tmp_path / "harness.mjs"
        self.harness.write_text(HARNESS)

    def run(self, spec: dict, pane: str | None = "%7") -> dict:
        spec_path = self.dir / "spec.json"
        spec_path.write_text(json.dumps(spec))
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        if pane is not None:
            env["TMUX_PANE"] = pane
        res = subprocess.run(
            [*self.runtime, str(self.harness), str(self.module), self.mode, str(spec_path)],
            capture_output=True, text=True, env=env, timeout=60, cwd=self.dir)
        assert res.returncode == 0, res.stderr
        assert res.stderr == "", res.stderr
        return json.loads(res.stdout.strip().splitlines()[-1])

    def records(self) -> list[tuple[str, str, dict]]:
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text().splitlines():
            agent, kind, payload = line.split("\t", 2)
            out.append((agent, kind, json.loads(payload)))
        return out


def render(asset: Path, hook_path: Path) -> str:
    """What the installer writes: the token replaced by a JSON string literal."""
    text = asset.read_text()
    assert text.count(TOKEN) == 1
    return text.replace(TOKEN, json.dumps(str(hook_path)))


def collapse(records: list) -> list:
    """Adjacent identical signals collapsed (the bridges may drop such repeats)."""
    out: list = []
    for rec in records:
        if not out or out[-1] != rec:
            out.append(rec)
    return out


@pytest.mark.parametrize("asset,marker", [(OPENCODE, "tma OpenCode bridge"),
                                          (PI, "tma pi bridge")])
def test_bridge_markers_and_token(asset, marker):
    text = asset.read_text()
    assert text.splitlines()[0] == f"// {marker}"
    assert text.count(TOKEN) == 1


@needs_node
@pytest.mark.parametrize("asset", [OPENCODE, PI], ids=["opencode", "pi"])
def test_node_check_passes(tmp_path, asset):
    module = tmp_path / "bridge.mjs"
    module.write_text(render(asset, Path("/opt/with space/tma-hook")))
    res = subprocess.run([NODE, "--check", str(module)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


# ---- OpenCode

URL = "http://127.0.0.1:4096/"
ENDPOINT = "http://127.0.0.1:4096"


def oc_event(type_: str, **props) -> list:
    return ["event", type_, props]


def oc_hook(name: str, **data) -> list:
    return ["hook", name, data]


@pytest.mark.parametrize("runtime", _runtimes())
def test_opencode_forwards_each_signal(tmp_path, runtime):
    bridge = Bridge(tmp_path, OPENCODE, "opencode", runtime=runtime)
    steps = [
        oc_event("session.created", sessionID="ses_1", info={"id": "ses_1", "title": "t"}),
        oc_event("session.status", sessionID="ses_1", status={"type": "busy"}),
        oc_event("permission.asked", id="per_1", sessionID="ses_1", permission="bash",
                 patterns=["echo hi"], metadata={}, always=[]),
        oc_event("permission.replied", sessionID="ses_1", requestID="per_1", reply="once"),
        oc_hook("tool.execute.before", tool="bash", sessionID="ses_1", callID="c1"),
        oc_event("question.asked", id="que_1", sessionID="ses_1", questions=[]),
        oc_event("question.replied", sessionID="ses_1", requestID="que_1", answers=[["Blue"]]),
        oc_event("session.status", sessionID="ses_1", status={"type": "idle"}),
        oc_hook("chat.message", sessionID="ses_1", agent="build", messageID="msg_1"),
        oc_event("session.status", sessionID="ses_1", status={"type": "retry", "attempt": 1}),
        oc_event("message.updated", info={"id": "msg_1", "sessionID": "ses_1"}),
        oc_event("session.idle", sessionID="ses_1"),
    ]
    out = bridge.run({"serverUrl": URL, "steps": steps})
    assert out["exports"] == ["TmaBridge"]  # OpenCode calls every export as a plugin
    assert out["hooks"] == ["chat.message", "event", "tool.execute.before"]
    assert set(out["returns"]) == {"undefined"}  # hooks never alter OpenCode's output
    ses = {"session_id": "ses_1"}
    assert bridge.records() == [
        ("opencode", "session-start", {"session_id": "", "api_endpoint": ENDPOINT}),
        ("opencode", "session-start", {"session_id": "ses_1", "api_endpoint": ENDPOINT}),
        ("opencode", "user-prompt-submit", ses),
        ("opencode", "permission-required",
         {"session_id": "ses_1", "permission": "bash", "request_id": "per_1"}),
        ("opencode", "permission-replied",
         {"session_id": "ses_1", "request_id": "per_1", "reply": "once"}),
        ("opencode", "user-prompt-submit", ses),
        ("opencode", "question-required", {"session_id": "ses_1", "question_id": "que_1"}),
        ("opencode", "question-replied", {"session_id": "ses_1", "question_id": "que_1"}),
        ("opencode", "stop", ses),
        ("opencode", "user-prompt-submit", ses),
        ("opencode", "stop", ses),
    ]
    assert out["spawned"] == len(bridge.records())


@needs_node
def test_opencode_synonyms(tmp_path):
    bridge = Bridge(tmp_path, OPENCODE, "opencode")
    steps = [
        oc_event("permission.updated", id="per_2", sessionID="ses_1", type="bash", title="x"),
        oc_event("question.updated", id="que_2", sessionID="ses_1"),
        oc_event("question.answered", sessionID="ses_1", requestID="que_2"),
        oc_event("permission.asked", requestID="per_3", sessionID="ses_1", permission="edit"),
        oc_event("question.asked", id="que_3", sessionID="ses_1"),
        oc_event("question.rejected", sessionID="ses_1", requestID="que_3"),
        oc_event("question.asked", id="que_4", sessionID="ses_1", questions=[
            {"question": "Plan at p.md is complete. Would you like to switch to the build "
             "agent and start implementing?", "header": "Build Agent", "options": []}]),
        oc_event("permission.replied", sessionID="ses_1", permissionID="per_3",
                 response="reject"),
    ]
    bridge.run({"serverUrl": URL, "steps": steps})
    assert [(k, p) for _, k, p in bridge.records()][1:] == [
        ("permission-required", {"session_id": "ses_1", "permission": "bash",
                                 "request_id": "per_2"}),
        ("question-required", {"session_id": "ses_1", "question_id": "que_2"}),
        ("question-replied", {"session_id": "ses_1", "question_id": "que_2"}),
        ("permission-required", {"session_id": "ses_1", "permission": "edit",
                                 "request_id": "per_3"}),
        ("question-required", {"session_id": "ses_1", "question_id": "que_3"}),
        ("question-replied", {"session_id": "ses_1", "question_id": "que_3"}),
        ("question-required", {"session_id": "ses_1", "question_id": "que_4",
                               "header": "Build Agent"}),
        ("permission-replied", {"session_id": "ses_1", "request_id": "per_3",
                                "reply": "reject"}),
    ]


@needs_node
@pytest.mark.parametrize("server_url,url_object,endpoint", [
    (URL, True, ENDPOINT),  # OpenCode 1.18 hands a URL object
    ("http://127.0.0.1:4096///", False, ENDPOINT),
    ("http://[::1]:5000/base/", False, "http://[::1]:5000/base"),
    (None, False, ""),
], ids=["url-object", "slashes", "path", "absent"])
def test_opencode_load_fire_endpoint(tmp_path, server_url, url_object, endpoint):
    bridge = Bridge(tmp_path, OPENCODE, "opencode")
    spec: dict = {"steps": [], "urlObject": url_object}
    if server_url is not None:
        spec["serverUrl"] = server_url
    bridge.run(spec)
    assert bridge.records() == [
        ("opencode", "session-start", {"session_id": "", "api_endpoint": endpoint})]


@needs_node
def test_opencode_is_inert_outside_tmux(tmp_path):
    bridge = Bridge(tmp_path, OPENCODE, "opencode")
    steps = [oc_event("session.status", sessionID="ses_1", status={"type": "busy"}),
             oc_event("permission.asked", id="per_1", sessionID="ses_1", permission="bash")]
    out = bridge.run({"serverUrl": URL, "steps": steps}, pane=None)
    assert out["hooks"] == []
    assert out["spawned"] == 0
    assert bridge.records() == []
    out = bridge.run({"serverUrl": URL, "steps": steps}, pane="")
    assert (out["hooks"], out["spawned"]) == ([], 0)


@needs_node
def test_opencode_subagent_sessions(tmp_path):
    """A task-tool child settling is not the pane settling; its prompts are the pane's."""
    bridge = Bridge(tmp_path, OPENCODE, "opencode")
    child = {"id": "ses_child", "parentID": "ses_root", "title": "explore (@general)"}
    steps = [
        oc_event("session.status", sessionID="ses_root", status={"type": "busy"}),
        oc_event("session.created", sessionID="ses_child", info=child),
        oc_hook("chat.message", sessionID="ses_child", agent="general"),
        oc_event("session.status", sessionID="ses_child", status={"type": "busy"}),
        oc_event("permission.asked", id="per_9", sessionID="ses_child", permission="bash"),
        oc_event("question.asked", id="que_9", sessionID="ses_child"),
        oc_event("session.status", sessionID="ses_child", status={"type": "idle"}),
        oc_event("session.idle", sessionID="ses_child"),
        oc_event("session.status", sessionID="ses_root", status={"type": "idle"}),
    ]
    bridge.run({"serverUrl": URL, "steps": steps})
    assert [(k, p) for _, k, p in bridge.records()][1:] == [
        ("user-prompt-submit", {"session_id": "ses_root"}),
        ("permission-required", {"session_id": "ses_root", "permission": "bash",
                                 "request_id": "per_9"}),
        ("question-required", {"session_id": "ses_root", "question_id": "que_9"}),
        ("stop", {"session_id": "ses_root"}),
    ]


@needs_node
def test_opencode_survives_a_missing_hook(tmp_path):
    bridge = Bridge(tmp_path, OPENCODE, "opencode", hook_path=tmp_path / "gone" / "tma-hook")
    steps = [oc_event("session.status", sessionID="s", status={"type": "busy"}),
             oc_event("session.status", sessionID="s", status={"type": "idle"}),
             oc_hook("tool.execute.before", tool="bash", sessionID="s", callID="c"),
             oc_event("permission.asked", id="per_1", sessionID="s", permission="bash")]
    out = bridge.run({"serverUrl": URL, "steps": steps})
    assert out["spawned"] == 5  # every signal tried, each failure swallowed, in order


@needs_node
def test_opencode_keeps_order_when_settled(tmp_path):
    bridge = Bridge(tmp_path, OPENCODE, "opencode")
    steps = [oc_event("session.status", sessionID="s", status={"type": "busy"}),
             oc_event("session.status", sessionID="s", status={"type": "busy"}),
             oc_event("session.status", sessionID="s", status={"type": "idle"}),
             oc_event("session.idle", sessionID="s")]
    bridge.run({"serverUrl": URL, "steps": steps, "settle": True})
    kinds = [k for _, k, _ in bridge.records()]
    assert kinds == ["session-start", "user-prompt-submit", "user-prompt-submit", "stop", "stop"]


def _replay(name: str) -> list:
    steps = []
    for line in (FIXTURES / name).read_text().splitlines():
        rec = json.loads(line)
        event, data = rec["event"], rec.get("stdin") or {}
        if event.startswith("hook:"):
            steps.append(["hook", event[len("hook:"):], data])
        else:
            steps.append(["event", event, data])
    return steps


@pytest.mark.parametrize("runtime", _runtimes())
@pytest.mark.parametrize("fixture,expected", [
    ("opencode-1.18.33.jsonl", [
        "session-start", "session-start", "user-prompt-submit", "stop",
        "user-prompt-submit", "stop", "user-prompt-submit", "permission-required",
        "permission-replied", "user-prompt-submit", "stop"]),
    ("opencode-1.18.33_question-run.jsonl", [
        "session-start", "session-start", "user-prompt-submit", "question-required",
        "question-replied", "user-prompt-submit", "stop"]),
], ids=["permission-run", "question-run"])
def test_opencode_replays_a_real_session(tmp_path, runtime, fixture, expected):
    bridge = Bridge(tmp_path, OPENCODE, "opencode", runtime=runtime)
    bridge.run({"serverUrl": URL, "steps": _replay(fixture)})
    records = bridge.records()
    assert [k for _, k, _ in collapse(records)] == expected
    sessions = {p["session_id"] for _, _, p in records[1:]}
    assert len(sessions) == 1 and next(iter(sessions)).startswith("ses_")
    blocked = [p for _, k, p in records if k in ("permission-required", "question-required")]
    assert all((p.get("request_id") or p.get("question_id", "")).startswith(("per_", "que_"))
               for p in blocked)
    replied = [p for _, k, p in records if k.endswith("-replied")]
    assert [p.get("request_id") or p.get("question_id") for p in replied] == \
        [p.get("request_id") or p.get("question_id") for p in blocked]


# ---- pi

PI_EVENTS = ["session_start", "before_agent_start", "tool_execution_start", "agent_settled",
             "agent_end", "session_shutdown"]
USAGE = {"tokens": 12000, "contextWindow": 200000, "percent": 6}


@needs_node
def test_pi_forwards_each_event(tmp_path):
    bridge = Bridge(tmp_path, PI, "pi")
    ctx = {"sid": "pi-ses-1", "usage": USAGE}
    steps = [[name, ctx] for name in PI_EVENTS]
    out = bridge.run({"steps": steps, "settle": True})
    assert out["exports"] == ["default"]
    assert out["factory"] == "undefined"
    assert sorted(out["registered"]) == sorted(PI_EVENTS)
    assert set(out["returns"]) == {"undefined"}  # before_agent_start gets no result
    ses = {"session_id": "pi-ses-1"}
    ctx_payload = {"session_id": "pi-ses-1", "context_usage": USAGE}
    assert bridge.records() == [
        ("pi", "session_start", ses),
        ("pi", "before_agent_start", ses),
        ("pi", "tool_execution_start", ses),
        ("pi", "agent_settled", ses),
        ("pi", "context", ctx_payload),
        ("pi", "agent_end", ses),
        ("pi", "context", ctx_payload),
        ("pi", "session_shutdown", ses),
    ]


@needs_node
def test_pi_guards_every_ctx_call(tmp_path):
    bridge = Bridge(tmp_path, PI, "pi")
    steps = [
        ["agent_end", {"sidThrows": True, "usageThrows": True}],
        ["agent_end", {"noManager": True, "usage": "undefined"}],
        ["agent_end", {"sid": "s2", "usage": {"tokens": None, "contextWindow": 100000,
                                              "percent": None}}],
        ["agent_end", {"sid": "s3", "usage": {"percent": 41.5, "extra": {"x": 1}}}],
    ]
    bridge.run({"steps": steps, "settle": True})
    assert [(k, p) for _, k, p in bridge.records()] == [
        ("agent_end", {"session_id": ""}),
        ("context", {"session_id": "", "context_usage": None}),
        ("agent_end", {"session_id": ""}),
        ("context", {"session_id": "", "context_usage": None}),
        ("agent_end", {"session_id": "s2"}),
        ("context", {"session_id": "s2", "context_usage": {
            "tokens": None, "contextWindow": 100000, "percent": None}}),
        ("agent_end", {"session_id": "s3"}),
        ("context", {"session_id": "s3", "context_usage": {"percent": 41.5}}),
    ]


@needs_node
def test_pi_is_inert_outside_tmux(tmp_path):
    bridge = Bridge(tmp_path, PI, "pi")
    out = bridge.run({"steps": [["session_start", {"sid": "x"}]]}, pane=None)
    assert out["registered"] == []
    assert out["spawned"] == 0
    assert bridge.records() == []


@needs_node
def test_pi_shutdown_jumps_the_queue(tmp_path):
    bridge = Bridge(tmp_path, PI, "pi")
    ctx = {"sid": "s"}
    steps = [["session_start", ctx], ["before_agent_start", ctx],
             ["tool_execution_start", ctx], ["session_shutdown", ctx],
             ["session_start", {"sid": "s-new"}]]
    bridge.run({"steps": steps})  # fed back to back: the first is still running
    kinds = [(k, p["session_id"]) for _, k, p in bridge.records()]
    # what was pending belonged to the ending session; the next session waits its turn
    assert sorted(kinds) == [("session_shutdown", "s"), ("session_start", "s"),
                             ("session_start", "s-new")]
    assert kinds.index(("session_shutdown", "s")) < kinds.index(("session_start", "s-new"))


@needs_node
def test_pi_replays_a_real_session(tmp_path):
    bridge = Bridge(tmp_path, PI, "pi")
    ctx = {"sid": "pi-ses", "usage": USAGE}
    steps = [[json.loads(line)["event"], ctx]
             for line in (FIXTURES / "pi-0.73.1.jsonl").read_text().splitlines()]
    bridge.run({"steps": steps, "settle": True})
    assert [k for _, k, _ in bridge.records()] == [
        "session_start", "agent_end", "context", "agent_end", "context",
        "tool_execution_start", "agent_end", "context", "session_shutdown"]


def _pi_loader() -> Path | None:
    path = (LIVE_CACHE / "pi-0.73.1" / "node_modules" / "@mariozechner" / "pi-coding-agent"
            / "dist" / "core" / "extensions" / "loader.js")
    return path if path.is_file() else None


@needs_node
@pytest.mark.skipif(_pi_loader() is None, reason=f"no pi-0.73.1 in the live cache {LIVE_CACHE}")
def test_pi_real_loader_accepts_the_extension(tmp_path):
    """pi 0.73.1 loads extensions through jiti: the installed `tma.js` must load there."""
    ext = tmp_path / "tma.js"
    ext.write_text(render(PI, tmp_path / "tma-hook"))
    script = tmp_path / "load.mjs"
    script.write_text(
        f"import {{ loadExtensions }} from {json.dumps(str(_pi_loader()))};\n"
        f"const r = await loadExtensions([{json.dumps(str(ext))}], {json.dumps(str(tmp_path))});\n"
        "console.log(JSON.stringify({errors: r.errors,"
        " handlers: r.extensions.map((e) => [...e.handlers.keys()])}));\n")
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    env["TMUX_PANE"] = "%3"
    res = subprocess.run([NODE, str(script)], capture_output=True, text=True, env=env,
                         timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["errors"] == []
    assert sorted(out["handlers"][0]) == sorted(PI_EVENTS)


# ------------------------------------------------------------------ end to end


def _wired(srv, tmp_path: Path) -> Path:
    """The real wrapper with a sibling `tma` that runs this checkout's tma."""
    bindir = tmp_path / "wired"
    bindir.mkdir()
    wrapper = bindir / "tma-hook"
    shutil.copyfile(WRAPPER, wrapper)
    wrapper.chmod(0o755)
    shim = bindir / "tma"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m tma "$@"\n')
    shim.chmod(0o755)
    return wrapper


def _run_bridge(srv, bridge: Bridge, pane: str, spec: dict) -> dict:
    spec_path = bridge.dir / "spec.json"
    spec_path.write_text(json.dumps(spec))
    env = dict(srv.env, TMUX_PANE=pane, TMA_HOOK_SOCKET=srv.name)
    res = subprocess.run(
        [NODE, str(bridge.harness), str(bridge.module), bridge.mode, str(spec_path)],
        capture_output=True, text=True, env=env, timeout=120, cwd=bridge.dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


@needs_node
def test_opencode_plugin_drives_the_real_intake(srv, tmp_path):
    pane = srv.agent_pane("opencode")
    bridge = Bridge(tmp_path, OPENCODE, "opencode", hook_path=_wired(srv, tmp_path))
    _run_bridge(srv, bridge, pane, {"serverUrl": URL, "settle": True, "steps": [
        oc_event("session.created", sessionID="ses_e2e", info={"id": "ses_e2e"}),
        oc_event("session.status", sessionID="ses_e2e", status={"type": "busy"}),
        oc_hook("tool.execute.before", tool="bash", sessionID="ses_e2e", callID="c1"),
        oc_event("permission.asked", id="per_e2e", sessionID="ses_e2e", permission="bash"),
    ]})
    o = srv.options(pane)
    assert (o["@agent_state"], o["@agent_detail"], o["@agent_source"]) == \
        ("blocked", "permission", "hook")
    assert o["@agent_session"] == "ses_e2e"
    assert o["@agent_permission_request"] == "per_e2e"
    assert o["@agent_api_endpoint"] == ENDPOINT
    _run_bridge(srv, bridge, pane, {"serverUrl": URL, "settle": True, "steps": [
        oc_event("permission.replied", sessionID="ses_e2e", requestID="per_e2e", reply="once"),
        oc_event("session.status", sessionID="ses_e2e", status={"type": "busy"}),
        oc_event("session.status", sessionID="ses_e2e", status={"type": "idle"}),
        oc_event("session.idle", sessionID="ses_e2e"),
    ]})
    o = srv.options(pane)
    assert o["@agent_state"] == "idle"
    assert srv.option(pane, "@agent_permission_request") == ""


@needs_node
def test_pi_extension_drives_the_real_intake(srv, tmp_path):
    pane = srv.agent_pane("pi")
    bridge = Bridge(tmp_path, PI, "pi", hook_path=_wired(srv, tmp_path))
    ctx = {"sid": "pi-e2e", "usage": {"tokens": 84000, "contextWindow": 200000, "percent": 42}}
    _run_bridge(srv, bridge, pane, {"settle": True, "steps": [
        ["session_start", ctx], ["before_agent_start", ctx], ["tool_execution_start", ctx]]})
    o = srv.options(pane)
    assert (o["@agent_state"], o["@agent_session"]) == ("working", "pi-e2e")
    _run_bridge(srv, bridge, pane, {"settle": True, "steps": [["agent_end", ctx]]})
    o = srv.options(pane)
    assert o["@agent_state"] == "idle"
    assert o["@agent_context_pct"] == "42"
    _run_bridge(srv, bridge, pane, {"settle": True, "steps": [["session_shutdown", ctx]]})
    assert srv.option(pane, "@agent_state") == ""
