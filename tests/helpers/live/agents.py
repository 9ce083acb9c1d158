"""Per-agent knowledge for the live suite: install key, throwaway HOME and config, launch
line, keys, and the on-screen chrome that says which state the screen is in.

The screen classes are the harness's own reading of the screen (what a human would see),
used to time and check tma's verdict; they are deliberately plain (fixed strings, a title
glyph), never tma's rules. Classes:

  dialog   a startup dialog waiting for an answer (tma: blocked)
  prompt   a tool call waiting for approval (tma: blocked; pi: working, see below)
  working  the agent is busy (tma: working)
  idle     the composer is up and nothing runs (tma: idle)
  exited   the pane's shell is back in the foreground (tma: no row)
  question the agent's own question tool waits for an answer (tma: blocked/question)
  plan     a plan waits for approval (tma: blocked/plan)
  compacting  the agent summarises its context (tma: working/compacting)

pi has no permission prompt of its own; the suite's extension (assets/pi-ask-before-bash.ts)
draws one while pi's `Working...` row stays up, so the verdict there must be working.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the extension files stay with the live suite they configure
ASSETS = HERE.parents[2] / "tests" / "live" / "assets"
FAKE_KEY = "fake-key-0000"
# claude accepts a custom key once its last 20 characters are approved in ~/.claude.json
CLAUDE_KEY = "sk-ant-fake-" + "0" * 28
BRAILLE = re.compile(r"^[\u2800-\u28ff]")


@dataclass(frozen=True)
class Dialog:
    """A startup dialog: how to see it, how to pick the answer, how to send it."""

    name: str
    shows: str  # regex on the screen: the dialog is up
    select_keys: tuple[str, ...]  # keys that move the selection (sent one at a time)
    selected: str  # regex: the wanted answer is selected
    confirm: tuple[str, ...] = ("Enter",)
    detail: str = ""  # detail tma is expected to give (recorded, not asserted)


@dataclass(frozen=True)
class Agent:
    key: str  # install key = cache dir name: <agent>-<version>
    agent: str  # the manifest name tma reports
    package: str
    binary: str
    dialogs: tuple[Dialog, ...] = ()
    approve_ready: str = ""  # regex: the approval dialog has its default answer selected
    approve_keys: tuple[str, ...] = ("Enter",)
    prompt_verdict: str = "blocked"  # what tma must say while the tool waits
    prompt_detail: str = "permission"
    exit_steps: tuple[tuple[str, str], ...] = ()  # (key, regex to wait for before it or "")
    env: dict = field(default_factory=dict)
    node_min: int = 20  # the oldest Node the CLI runs on (its package's engines.node)
    # the walk's prompts: a slow reply held open (`{id}`: the fake LLM's slow id) and a
    # shell command waiting for approval. aider offers the model no tools: its command is a
    # ```bash block in a scripted reply, and its slow reply a text one (SLOWTEXT)
    slow_prompt: str = "SLOWREPLY:{id} please"
    tool_prompt: str = "RUNTOOL now"
    python: bool = False  # a PyPI package in <cache>/<key>/venv (install_agents.sh)

    @property
    def version(self) -> str:
        return self.key.rsplit("-", 1)[1]

    # -- screens
    def classify(self, screen: str, title: str, command: str) -> str | None:
        if command in ("bash", "sh") and not screen_has_agent(self, screen, title):
            return "exited"
        return CLASSIFIERS[self.agent](self, screen, title)

    def bin_dir(self, cache: Path) -> Path:
        if self.python:
            return cache / self.key / "venv" / "bin"
        return cache / self.key / "node_modules" / ".bin"

    def installed(self, cache: Path) -> bool:
        return (self.bin_dir(cache) / self.binary).exists()

    def launch(self) -> str:
        if self.agent == "pi":
            return f"{self.binary} -e {ASSETS / 'pi-ask-before-bash.ts'}"
        return self.binary


def screen_has_agent(agent: Agent, screen: str, title: str) -> bool:
    # pane_current_command reads `bash` for a moment while bash forks the agent; the
    # exited class needs the shell prompt back as the last non-empty line.
    lines = [ln for ln in screen.splitlines() if ln.strip()]
    return not (lines and lines[-1].startswith("live$"))


# the spinner row: glyph, a gerund with an ellipsis, then "(Ns" (completion rows say
# "for Ns" and carry no ellipsis)
_CLAUDE_SPINNER = re.compile(r"(?m)^\s*\S \S[^\n]*… \(\d+s")
# the composer: a `❯` row between two rules. With tma's statusline shim installed the
# footer ("? for shortcuts") is replaced by the shim's (empty) output.
_CLAUDE_COMPOSER = re.compile(r"(?m)^─{20,}\n❯[ \u00a0][^\n]*\n─{20,}$")


def _claude(agent: Agent, screen: str, title: str) -> str | None:
    if "Make auto mode your default permission mode?" in screen:
        return "dialog"
    if "Do you want to proceed?" in screen:
        return "prompt"
    if "Enter to select · ↑/↓ to navigate · Esc to cancel" in screen:  # AskUserQuestion
        return "question"
    if "Would you like to proceed?" in screen or "Exit plan mode?" in screen:  # ExitPlanMode
        return "plan"
    if "Compacting conversation…" in screen:  # /compact
        return "compacting"
    if "esc to interrupt" in screen or _CLAUDE_SPINNER.search(screen):
        return "working"
    if "? for shortcuts" in screen or _CLAUDE_COMPOSER.search(screen):
        return "idle"
    return None


_CODEX_APPROVAL = re.compile(
    r"Would you like to (?:run the following command|make the following edits)\?"
    r"|Allow the \S+ MCP server to run tool")


def _codex(agent: Agent, screen: str, title: str) -> str | None:
    if "Hooks need review" in screen:
        return "dialog"
    # the approval question wraps on narrow panes ("Would you like to run the following" /
    # "command?" at 40 columns): read it over the joined rows
    if _CODEX_APPROVAL.search(" ".join(screen.split())):
        return "prompt"
    # request_user_input (its footer also says "esc to interrupt")
    if "enter to submit answer" in screen:
        return "question"
    if "Implement this plan?" in screen:  # a <proposed_plan> in Plan mode
        return "plan"
    if BRAILLE.match(title):
        return "working"
    if "Ask Codex to do anything" in screen or "? for shortcuts" in screen:
        return "idle"
    return None


def _gemini(agent: Agent, screen: str, title: str) -> str | None:
    if "Allow execution of" in screen:
        return "prompt"
    if "Answer Questions" in screen and "Esc to cancel" in screen:  # ask_user
        return "question"
    if "Ready to start implementation?" in screen:  # exit_plan_mode
        return "plan"
    if title.startswith("✦  Working") or "esc to cancel" in screen:
        return "working"
    if title.startswith("◇  Ready") and "Type your message" in screen:
        return "idle"
    return None


def _opencode(agent: Agent, screen: str, title: str) -> str | None:
    if "Permission required" in screen:
        return "prompt"
    if "enter submit" in screen and "esc dismiss" in screen:  # the question tool
        # plan_exit asks through the same dialog (its first option's description)
        if "Switch to build agent and start implementing the plan" in screen:
            return "plan"
        return "question"
    if "esc interrupt" in screen:
        return "working"
    # the hint's words wrap to two rows when the cwd beside them is long (xdist's tmp paths)
    if "ctrl+p commands" in screen or _OC_HINT_WRAPPED.search(screen):
        return "idle"
    return None


_OC_HINT_WRAPPED = re.compile(r"(?m)ctrl\+p[ \t]*\n[^\n]*\bcommands[ \t]*$")


def _pi(agent: Agent, screen: str, title: str) -> str | None:
    if "Allow bash command?" in screen:
        return "prompt"
    if "Compacting context..." in screen:  # /compact
        return "compacting"
    if "Working..." in screen:
        return "working"
    if "mock-model" in screen:
        return "idle"
    return None


# Copilot's footer row (the last non-blank one) says working or idle; dialogs replace it
def _copilot(agent: Agent, screen: str, title: str) -> str | None:
    flat = " ".join(screen.split())  # the dialogs wrap at narrow widths
    if "Confirm folder trust" in screen:
        return "dialog"
    if re.search(r"Do you want to (?:run this command\?|create |edit )", flat):
        return "prompt"
    if "Copilot needs information." in screen:  # ask_user
        return "question"
    if "Plan Ready for Review" in screen:  # exit_plan_mode
        return "plan"
    # /compact: the idle footer stays; a row in column 0 above the cwd row says it
    if re.search(r"(?m)^\S Compacting conversation history\b", screen):
        return "compacting"
    rows = [ln for ln in screen.splitlines() if ln.strip()]
    footer = rows[-1] if rows else ""
    if "esc esc interrupt" in footer or re.match(r"^ \S Working\b", footer):
        return "working"
    if re.match(r"^ (?:← open sidebar · )?(?:Interactive|Plan|Autopilot) · ", footer) \
            or "ctrl+c again to exit" in footer:
        return "idle"
    return None


def _qwen(agent: Agent, screen: str, title: str) -> str | None:
    if "Do you trust this folder?" in screen:
        return "dialog"
    if "Allow execution of" in screen or "Apply this change?" in screen:
        return "prompt"
    if "↑/↓: Navigate | Enter: Select" in screen:  # ask_user_question
        return "question"
    if "No, keep planning" in screen:  # exit_plan_mode
        return "plan"
    # the title's "◐︎ " prefix while it responds; the loading row's "esc to cancel"
    if title.startswith("◐") or "esc to cancel" in screen:
        return "working"
    # the mode row under the composer ("⏸ Ask permissions (shift + tab to cycle)", cut
    # with "…" at 40 columns)
    if "(shift + tab to" in screen:
        return "idle"
    return None


# aider is line-mode: the last non-blank row says it all. A yes/no question ending in its
# default ("[Yes]:": a command or a file to run or write is a prompt, any other a question),
# the input prompt ("> ", "diff> "), or, while aider runs, anything else
# (its spinner "Waiting for <model>", the reply streaming with no chrome at all)
_AIDER_PROMPT = re.compile(r"^(?:[a-z-]+ )?(?:[a-z-]+)?>(?: |$)")


def _aider(agent: Agent, screen: str, title: str) -> str | None:
    rows = [ln.rstrip() for ln in screen.splitlines() if ln.strip()]
    if not rows:
        return None
    last = rows[-1]
    if last.endswith(("[Yes]:", "[No]:")):
        tail = " ".join(rows[-3:])
        if any(q in tail for q in ("Run shell command", "Create new file", "Allow edits to",
                                   "Edit the files?")):
            return "prompt"
        return "question"  # Add URL / command output / file to the chat?, git's questions
    if _AIDER_PROMPT.match(last):
        return "idle"
    return "working"


CLASSIFIERS = {"aider": _aider, "claude": _claude, "codex": _codex, "gemini": _gemini, "opencode": _opencode,
               "pi": _pi, "copilot": _copilot, "qwen": _qwen}

_CLAUDE_ENV = {
    "ANTHROPIC_API_KEY": CLAUDE_KEY,
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
_CLAUDE_EXIT = (("C-d", ""), ("C-d", r"Press Ctrl-D again"))

AGENTS: tuple[Agent, ...] = (
    Agent("claude-2.1.197", "claude", "@anthropic-ai/claude-code", "claude",
          approve_ready=r"❯ 1\. Yes", exit_steps=_CLAUDE_EXIT, env=_CLAUDE_ENV),
    Agent("claude-2.1.332", "claude", "@anthropic-ai/claude-code", "claude",
          dialogs=(Dialog("automode", r"Make auto mode your default permission mode\?",
                          ("Down",), r"❯ No, keep manual mode", detail="question"),),
          approve_ready=r"❯ 1\. Yes", exit_steps=_CLAUDE_EXIT, env=_CLAUDE_ENV),
    Agent("codex-0.171.0", "codex", "@openai/codex", "codex",
          dialogs=(Dialog("hooks-trust", r"Hooks need review", ("Down",),
                          r"› 2\. Trust all", detail="trust"),),
          approve_ready=r"› 1\. Yes, proceed", approve_keys=("y",),
          exit_steps=(("C-c", ""),), env={"FAKE_API_KEY": FAKE_KEY}),
    Agent("gemini-0.61.0", "gemini", "@google/gemini-cli", "gemini",
          approve_ready=r"● 1\. Allow once",
          exit_steps=(("C-c", ""), ("C-c", r"(?i)press ctrl\+c again")),
          env={"GEMINI_API_KEY": FAKE_KEY, "GEMINI_CLI_NO_RELAUNCH": "true"}),
    Agent("opencode-1.18.33", "opencode", "opencode-ai", "opencode",
          approve_ready=r"Allow once", exit_steps=(("C-c", ""),),
          env={"FAKE_API_KEY": FAKE_KEY, "OPENCODE_DISABLE_AUTOUPDATE": "1",
               "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_SHARE": "1",
               "OPENCODE_DISABLE_LSP_DOWNLOAD": "true"}),
    Agent("pi-0.73.1", "pi", "@mariozechner/pi-coding-agent", "pi",
          approve_ready=r"→ Allow", prompt_verdict="working", prompt_detail="",
          exit_steps=(("C-d", ""),),
          env={"FAKE_API_KEY": FAKE_KEY, "PI_SKIP_VERSION_CHECK": "1", "PI_OFFLINE": "1"}),
    # its own-provider settings: no GitHub account, nothing but the fake model on the wire
    Agent("copilot-1.0.102", "copilot", "@github/copilot", "copilot",
          approve_ready=r"❯ 1\. Yes", approve_keys=("1",),
          exit_steps=(("C-c", ""), ("C-c", r"ctrl\+c again to exit")),
          env={"COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_API_KEY": FAKE_KEY,
               "COPILOT_MODEL": "mock-model", "COPILOT_OFFLINE": "true",
               "COPILOT_AUTO_UPDATE": "false"}),
    # Node >= 22 (engines); the model comes from OPENAI_* (agent_env), the rest from
    # ~/.qwen/settings.json (_setup_qwen)
    Agent("qwen-0.24.4", "qwen", "@qwen-code/qwen-code", "qwen",
          approve_ready=r"› 1\. Yes, allow once",
          exit_steps=(("C-c", ""), ("C-c", r"Press Ctrl\+C again")),
          env={"OPENAI_API_KEY": FAKE_KEY, "OPENAI_MODEL": "mock-model"}, node_min=22),
    # a Python CLI (PyPI aider-chat) in a venv; the model and its settings come from
    # ~/.aider.conf.yml (_setup_aider), the fake model's address from OPENAI_API_BASE
    Agent("aider-0.86.2", "aider", "aider-chat", "aider",
          approve_ready=r"Run shell command\? \(Y\)es/\(N\)o[^\[]*\[Yes\]: *\s*\Z",
          approve_keys=("y", "Enter"), exit_steps=(("C-d", ""),),
          env={"OPENAI_API_KEY": FAKE_KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
          slow_prompt="SLOWTEXT:{id} please",
          tool_prompt="SAY{```bash\\necho hi > fakellm-hi.txt\\n```}SAY", python=True),
)
BY_KEY = {a.key: a for a in AGENTS}


# ---------------------------------------------------------------- throwaway HOME
def agent_env(agent: Agent, home: Path, base_url: str) -> dict[str, str]:
    """The variables the agent's pane gets (on top of PATH, TERM, LANG, HOME)."""
    env = dict(agent.env)
    if agent.agent == "claude":
        env["ANTHROPIC_BASE_URL"] = base_url
    elif agent.agent == "codex":
        env["CODEX_HOME"] = str(home / ".codex")
    elif agent.agent == "gemini":
        env["GOOGLE_GEMINI_BASE_URL"] = base_url
    elif agent.agent == "pi":
        env["PI_CODING_AGENT_DIR"] = str(home / ".pi" / "agent")
    elif agent.agent == "copilot":
        env["COPILOT_PROVIDER_BASE_URL"] = f"{base_url}/v1"
    elif agent.agent == "qwen":
        env["OPENAI_BASE_URL"] = f"{base_url}/v1"
    elif agent.agent == "aider":
        env["OPENAI_API_BASE"] = f"{base_url}/v1"
    return env


def setup_home(agent: Agent, home: Path, work: Path, base_url: str, *, cache: Path,
               hooked: bool) -> None:
    """Write the agent's config into a fresh HOME. Hooks are tma's business (install-hooks)."""
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    (work / "README.md").write_text(f"# scratch project for {agent.key}\n")
    SETUP[agent.agent](agent, home, work, base_url, cache, hooked)


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2) + "\n")


def _setup_claude(agent, home, work, base_url, cache, hooked) -> None:
    _write_json(home / ".claude.json", {
        "hasCompletedOnboarding": True, "lastOnboardingVersion": "9.9.9", "numStartups": 5,
        "theme": "dark", "autoUpdates": False,
        "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]], "rejected": []},
        "projects": {str(work): {"hasTrustDialogAccepted": True,
                                 "hasCompletedProjectOnboarding": True,
                                 "projectOnboardingSeenCount": 5, "allowedTools": []}}})
    # 2.1.3xx defaults to auto mode (no prompts at all); manual mode brings the prompts
    # back and makes 2.1.332 ask, once, whether to switch: the startup dialog under test
    _write_json(home / ".claude" / "settings.json", {"permissions": {"defaultMode": "default"}})


def _setup_codex(agent, home, work, base_url, cache, hooked) -> None:
    codex = home / ".codex"
    codex.mkdir(parents=True, exist_ok=True)
    (codex / "config.toml").write_text(f"""\
model = "mock-model"
model_provider = "fake"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake"
base_url = "{base_url}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects."{work}"]
trust_level = "trusted"

[analytics]
enabled = false

[features]
# else a detached app-server daemon outlives the TUI
daemon_auto_start = false
hooks = true

[otel]
exporter = "none"
""")
    if not hooked:
        # A no-op hook (it feeds tma nothing) so that codex shows its hook-trust dialog,
        # the startup dialog under test; in hooked mode `tma install-hooks` writes the file.
        _write_json(codex / "hooks.json", {"hooks": {"SessionStart": [
            {"hooks": [{"type": "command", "command": "true", "timeout": 10}]}]}})


def _setup_gemini(agent, home, work, base_url, cache, hooked) -> None:
    _write_json(home / ".gemini" / "settings.json", {
        "security": {"auth": {"selectedType": "gemini-api-key"},
                     "folderTrust": {"enabled": False}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True,
                    "enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "ui": {"hideTips": True, "showReleaseNotes": False},
        "ide": {"enabled": False, "hasSeenNudge": True}})


def _setup_opencode(agent, home, work, base_url, cache, hooked) -> None:
    conf = home / ".config" / "opencode"
    _write_json(conf / "opencode.json", {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False, "share": "disabled",
        "model": "fake/mock-model", "small_model": "fake/mock-model",
        "permission": {"bash": "ask", "edit": "ask"},
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "Fake",
            "options": {"baseURL": f"{base_url}/v1", "apiKey": "{env:FAKE_API_KEY}"},
            "models": {"mock-model": {"name": "mock-model", "tool_call": True,
                                      "limit": {"context": 100000, "output": 4096}}}}}})
    if hooked:
        # A plugin makes opencode install @opencode-ai/plugin into this dir at start (from
        # the registry, ~10 s): lay the pre-installed copy from the cache in its place.
        template = cache / agent.key / "config-template"
        for name in ("package.json", "package-lock.json", ".gitignore"):
            if (template / name).exists():
                shutil.copy2(template / name, conf / name)
        if (template / "node_modules").is_dir():
            shutil.copytree(template / "node_modules", conf / "node_modules", symlinks=True)


def _setup_pi(agent, home, work, base_url, cache, hooked) -> None:
    pi_dir = home / ".pi" / "agent"
    _write_json(pi_dir / "models.json", {"providers": {"fake": {
        "baseUrl": f"{base_url}/v1", "api": "openai-completions", "apiKey": "FAKE_API_KEY",
        "models": [{"id": "mock-model", "name": "mock-model", "reasoning": False,
                    "input": ["text"], "contextWindow": 100000, "maxTokens": 4096,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}})
    _write_json(pi_dir / "settings.json", {"defaultProvider": "fake",
                                           "defaultModel": "mock-model"})


def _setup_copilot(agent, home, work, base_url, cache, hooked) -> None:
    # the work dir pre-trusted, as "Yes, and remember this folder" leaves it (Copilot
    # manages this file itself); hooks, in hooked mode, are tma install-hooks' to write
    _write_json(home / ".copilot" / "config.json", {"trustedFolders": [str(work)]})


def _setup_qwen(agent, home, work, base_url, cache, hooked) -> None:
    # approvalMode "default" asks before tools (the schema's default, "auto", lets a model
    # classifier approve them, so no prompt would appear); enableAutoUpdate false keeps the
    # first start off the npm registry; folder trust off: no trust dialog
    _write_json(home / ".qwen" / "settings.json", {
        "general": {"enableAutoUpdate": False},
        "tools": {"approvalMode": "default"},
        "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False}})


def _setup_aider(agent, home, work, base_url, cache, hooked) -> None:
    # no git (no "create a repo?" question, no commits), no update check, no analytics, no
    # release notes; the diff edit format reads a ```bash block as a shell command to offer.
    # Hooks (notifications, notifications-command) are tma install-hooks' to add, on top.
    (home / ".aider.conf.yml").write_text(
        "model: openai/mock-model\nedit-format: diff\ngit: false\ngitignore: false\n"
        "check-update: false\nanalytics-disable: true\nshow-release-notes: false\n")
    # the model's facts, fresh, so aider does not fetch litellm's price list at start
    _write_json(home / ".aider" / "caches" / "model_prices_and_context_window.json", {
        "openai/mock-model": {"max_input_tokens": 100000, "max_output_tokens": 4096,
                              "input_cost_per_token": 0, "output_cost_per_token": 0,
                              "litellm_provider": "openai", "mode": "chat"}})


SETUP = {"aider": _setup_aider, "claude": _setup_claude, "codex": _setup_codex, "gemini": _setup_gemini,
         "opencode": _setup_opencode, "pi": _setup_pi, "copilot": _setup_copilot,
         "qwen": _setup_qwen}
