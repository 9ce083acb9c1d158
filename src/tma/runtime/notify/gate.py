"""`[notify]`, read in one place: which triggers are on, who fires, which command runs.

Lean on purpose (os only): the hook intake asks `due` on every stamp, the daemon's
notifier and server ask `enabled`, `from_event` and `context_threshold`, and the sinks
(tma.runtime.notify.dispatch) ask `command_for`, `desktop_mode`, `desktop_actions` and
`message_on`. Nothing else reads `cfg.notify`. The trigger rule itself is tma.core.notice.trigger; the dedup is
server-side: the marker commits only when @agent_notified_at predates max(@agent_since,
@agent_turn_at), and only the writer whose marker reads back fires
(tma.tmux.write.already_notified).
"""

from __future__ import annotations

import os

from tma.core import notice

DEFAULT_ON = ("blocked",)
# 30 s: long enough to cover reading an agent's output after the last key typed into
# its pane (an agent that blocks while you watch it), short enough that a person who
# turned to another window or left the desk without touching tmux is rung again
QUIET_IF_ACTIVE_S = 30
# 3 s: agents started together (a fan-out, one prompt sent to several panes) finish
# within a few seconds of each other; `done` is never urgent, so holding it that long
# costs little, and blocked is never held
COALESCE_DONE_MS = 3000
TRIGGERS = ("blocked", "done", "context_high")
#: The terminal notifications `[notify.terminal] osc` may name: 9 (iTerm2, WezTerm,
#: ghostty, ConEmu, Windows Terminal), 777 (urxvt, foot, ghostty, WezTerm), 99 (kitty).
TERMINAL_OSC = (9, 777, 99)


def table(cfg) -> dict:
    """The `[notify]` table as validated by tma.runtime.config ({} when absent)."""
    t = getattr(cfg, "notify", None)
    return t if isinstance(t, dict) else {}


def enabled(cfg, trigger: str) -> bool:
    """Is this trigger switched on? blocked/done: listed in `notify.on` (default
    ["blocked"]); context_high: the `[notify.context_high]` table is present.
    Says nothing about *who* fires; see from_event()."""
    n = table(cfg)
    if trigger == "context_high":
        return isinstance(n.get("context_high"), dict)
    if trigger not in ("blocked", "done"):
        return False
    return trigger in n.get("on", DEFAULT_ON)


def context_threshold(cfg) -> int | None:
    """`[notify.context_high] threshold`, or None when the table (or the value) is absent."""
    t = table(cfg).get("context_high")
    if not isinstance(t, dict):
        return None
    value = t.get("threshold")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def from_event(cfg) -> bool:
    """May the hook intake fire for itself? TMA_NOTIFY_FROM_EVENT wins when set
    (exactly "1" = on, any other value = off); unset -> `notify.from_event` (false)."""
    env = os.environ.get("TMA_NOTIFY_FROM_EVENT")
    if env is not None:
        return env == "1"
    return table(cfg).get("from_event") is True


def command_for(cfg, trigger: str) -> str | None:
    """TMA_NOTIFY_CMD (non-empty) replaces every command; else `notify.<trigger>.command`;
    else `notify.command`; else None. An empty string counts as unset."""
    env = os.environ.get("TMA_NOTIFY_CMD")
    if env:
        return env
    n = table(cfg)
    t = n.get(trigger)
    if isinstance(t, dict):
        cmd = t.get("command")
        if isinstance(cmd, str) and cmd:
            return cmd
    cmd = n.get("command")
    if isinstance(cmd, str) and cmd:
        return cmd
    return None


def desktop_mode(cfg) -> str | bool:
    """`[notify] desktop`: "auto" (the default: the daemon uses a desktop notifier when
    one is available), true (always try one, the hook path too) or false (never)."""
    value = table(cfg).get("desktop", "auto")
    return value if isinstance(value, bool) else "auto"


def desktop_actions(cfg) -> str:
    """`[notify] desktop_actions`: what the daemon's desktop notification offers where
    notify-send takes actions. "answer" (true, the default): a click on the body jumps
    to the pane, and a permission prompt the agent's manifest can answer gets Approve /
    Deny buttons (fired through the broker, bound to the episode); "jump" (the string
    "jump"): the jump only; "none" (false): no actions, notify-send does not wait."""
    value = table(cfg).get("desktop_actions", True)
    if value is False:
        return "none"
    return "jump" if value == "jump" else "answer"


def message_on(cfg) -> bool:
    """`[notify] message` (default true): the tmux message line on attached clients."""
    return table(cfg).get("message") is not False


def quiet_if_active_s(cfg) -> int:
    """`[notify] quiet_if_active_s` (default 30; 0 = never quiet): no ring for a pane
    shown on an attached client that had input within this many seconds."""
    value = table(cfg).get("quiet_if_active_s", QUIET_IF_ACTIVE_S)
    return value if isinstance(value, int) and not isinstance(value, bool) else QUIET_IF_ACTIVE_S


def coalesce_done_ms(cfg) -> int:
    """`[notify] coalesce_done_ms` (default 3000; 0 = ring each at once): the daemon
    holds `done` this long and rings every `done` of the window as one notification."""
    value = table(cfg).get("coalesce_done_ms", COALESCE_DONE_MS)
    return value if isinstance(value, int) and not isinstance(value, bool) else COALESCE_DONE_MS


def on_screen(cfg, pane: str, watchers, now: int) -> bool:
    """Is PANE in front of a person now: shown on an attached client that had input
    within `quiet_if_active_s` (tma.core.notice.on_screen; watchers from
    tma.tmux.notify.parse_clients)?"""
    return notice.on_screen(pane, watchers, now, quiet_if_active_s(cfg))


def last_sentence(cfg) -> bool:
    """`[notify] last_sentence` (default false): a notification carries the agent's last
    sentence (read from its transcript) on this machine's sinks: the message line, the
    desktop notification, the log and the command. A push sink sends it only when its
    own table opts in too (`include_last_sentence`, see push)."""
    return table(cfg).get("last_sentence") is True


def log_path(cfg) -> str | None:
    """`[notify] log`: the JSON-lines file, or None."""
    log = table(cfg).get("log")
    return log if isinstance(log, str) and log else None


def flag(cfg, key: str) -> bool:
    """A boolean `[notify]` switch that defaults off (bell, osc)."""
    return table(cfg).get(key) is True


def terminal(cfg) -> tuple[tuple[int, ...], bool] | None:
    """`[notify.terminal]`: (the OSC codes to send, ring a BEL where passthrough is off),
    or None when the sink is off (the default: `enabled` is not true). `osc` is one code
    or a list (default [9]); `bell` defaults true."""
    t = table(cfg).get("terminal")
    if not isinstance(t, dict) or t.get("enabled") is not True:
        return None
    osc = t.get("osc", [9])
    codes = [osc] if isinstance(osc, int) else osc if isinstance(osc, list) else [9]
    return (tuple(c for c in TERMINAL_OSC if c in codes) or (9,), t.get("bell") is not False)


def blocking_sink(cfg) -> bool:
    """Would the hook intake run a sink that may take seconds (a command, or a desktop
    notifier with `desktop = true`)? The daemon then leaves such events to the hook."""
    return from_event(cfg) and (desktop_mode(cfg) is True
                                or any(command_for(cfg, t) for t in TRIGGERS))


def trigger_of(plan) -> str | None:
    """The trigger a planned stamp would fire (tma.core.notice.trigger's rule)."""
    return notice.trigger(plan.state, bool(plan.set_attention))


def due(cfg, plan) -> bool:
    """Should the hook intake fire a notification for this planned stamp?"""
    if not from_event(cfg):
        return False
    trigger = trigger_of(plan)
    return trigger is not None and enabled(cfg, trigger)


# ------------------------------------------------------------------ the push sinks

PUSH_SINKS = ("ntfy", "webhook")
PUSH_TIMEOUT_S = 3.0
PUSH_RETRIES = 2
#: the secret's config key, its file key and the environment variable that wins over both
PUSH_SECRET = {"ntfy": ("token", "token_file", "TMA_NTFY_TOKEN"),
               "webhook": ("secret", "secret_file", "TMA_WEBHOOK_SECRET")}


def push(cfg, name: str) -> dict | None:
    """`[notify.<name>]` (ntfy, webhook) with its defaults filled in, or None when the
    table or its url is absent (the sink is off). The secret is not read here: see
    push_secret."""
    t = table(cfg).get(name)
    if not isinstance(t, dict):
        return None
    url = t.get("url")
    if not isinstance(url, str) or not url:
        return None
    out = dict(t)
    out["on"] = tuple(t.get("on", TRIGGERS))
    out["include_title"] = t.get("include_title") is True
    out["include_screen"] = t.get("include_screen") is True
    # the agent's last sentence leaves the machine only when both opt in
    out["include_last_sentence"] = t.get("include_last_sentence") is True and last_sentence(cfg)
    out["timeout_s"] = float(t.get("timeout_s", PUSH_TIMEOUT_S))
    out["retries"] = int(t.get("retries", PUSH_RETRIES))
    return out


def push_secret(name: str, settings: dict) -> tuple[str, str]:
    """(secret, problem): the environment variable (non-empty) wins, then the key, then
    the file's first line; ("", "") when none is set; a problem names the key, never
    the secret. A file group or others may read or write is refused, its mode named
    (tma.runtime.notify.secret_file): nothing is sent with a secret others hold."""
    key, file_key, env_name = PUSH_SECRET[name]
    env = os.environ.get(env_name)
    if env:
        return env, ""
    value = settings.get(key)
    if isinstance(value, str) and value:
        return value, ""
    path = settings.get(file_key)
    if isinstance(path, str) and path:
        from tma.core.paths import here
        from tma.runtime.notify import secret_file

        what = "token file" if name == "ntfy" else "secret file"
        text, why = secret_file.read_first_line(here().expand(path), what)
        if why:
            return "", f"notify.{name}.{file_key}: {why}"
        return text, ""
    return "", ""


def push_problems(cfg) -> list[dict]:
    """Each configured push sink whose secret cannot be used, and why ({sink,
    problem}): what doctor and the daemon's log say (the file is read to know)."""
    out = []
    for name in PUSH_SINKS:
        settings = push(cfg, name)
        if settings is None:
            continue
        _secret, problem = push_secret(name, settings)
        if problem:
            out.append({"sink": name, "problem": problem})
    return out
