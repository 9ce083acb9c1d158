"""The option registry: every tmux user option tma reads or writes, in one table.

The codec, the removal on agent exit, `tma uninstall`, `doctor` and the docs drift
test all read this table, so an option added here is handled everywhere at once.
"""

from __future__ import annotations

from tma.core.record import Record

# Removal classes.
EPISODE = "episode"  # unset when the agent leaves the pane
SURVIVOR = "survivor"  # outlives the agent; only `tma uninstall` sweeps it
ROLLUP = "rollup"  # recomputed from panes; uninstall sweeps it
SERVER = "server"  # tma internals on the server; uninstall sweeps them
USER = "user"  # written by the user only; tma never touches it


class Option(Record):
    # writer: F fold, E event intake, C context lane, N notifier, B broker, D daemon, U user,
    # W watch, J jump
    name: str = ""
    scope: str = "pane"
    writer: str = ""
    fmt: str = ""
    removal: str = EPISODE
    doc: str = ""


def _pane(name: str, writer: str, fmt: str, doc: str, removal: str = EPISODE) -> Option:
    return Option(name, "pane", writer, fmt, removal, doc)


#: A `tma watch` wanting SIGUSR1 nudges (its own pane; it removes it on quit).
WATCH_PID = "@tma_watch_pid"
#: Written beside a hook's own claim; only `debug explain` reads it (not the cycle).
HOOK_EVENT = "@tma_hook_event"
#: Which prompt the blocked episode that began at `since` is (tma.core.prompt).
PROMPT = "@tma_prompt"

OPTIONS: tuple[Option, ...] = (
    # -- the state tuple, decoded together
    _pane("@agent_state", "F,E", "idle|working|blocked|unknown", "the verdict (closed set)"),
    _pane("@agent_detail", "F,E", "[a-z0-9_-] token or empty", "why the pane is in its state"),
    _pane("@agent_source", "F,E", "hook|capture|process", "provenance of the state (absent = capture)"),
    _pane("@agent_evidence_at", "F,E", "epoch ms", "when the evidence behind the state happened"),
    _pane("@agent_since", "F,E", "epoch ms",
          "state transition instant, written once per state run (and anew when a blocked "
          "pane's prompt changes: each prompt is an episode)"),
    _pane("@agent_stamped_at", "F,E", "epoch ms",
          "instant of the last tuple write that committed (a held write leaves it), "
          "always written last"),
    _pane("@agent_attention", "F,E", "1 or absent", "changed and not yet seen (done = idle + attention)"),
    _pane("@agent_notified_at", "N", "epoch ms", "last notification fired for this pane"),
    _pane("@agent_turn_at", "E", "epoch ms", "last turn end that raised the attention mark"),
    _pane("@agent_hash", "F", "opaque", "viewport hash; presence means the screen was read"),
    _pane("@agent_pid", "F,E", "pid or 0", "the agent's process-group leader (0 = hook-registered)"),
    _pane("@agent_name", "F,E", "text", "the agent (manifest stem)"),
    _pane("@agent_session", "E", "text", "the agent's own session id"),
    _pane("@agent_subagents", "E", "space-separated ids", "live subagent session ids"),
    # -- telemetry lanes
    _pane("@agent_context_pct", "C", "int 0-100", "context window used"),
    _pane("@agent_context_at", "C", "epoch ms", "evidence time of the context reading"),
    _pane("@agent_tokens", "C", "int", "tokens in the context window"),
    _pane("@agent_tokens_at", "C", "epoch ms", "evidence time of the token count"),
    _pane("@agent_context_notified_at", "N", "epoch ms",
          "context_high already fired (absent = armed; unset again below threshold - 10)"),
    _pane("@agent_quota_pct", "C", "int 0-100", "account quota used, window closest to exhausted"),
    _pane("@agent_quota_window", "C", "token", "which quota window the percent is for"),
    _pane("@agent_quota_resets_at", "C", "epoch ms", "when that quota window resets"),
    _pane("@agent_quota_at", "C", "epoch ms", "evidence time of the quota reading"),
    _pane("@agent_cost_usd", "C", "decimal", "the vendor's live session cost estimate"),
    _pane("@agent_model", "C,E", "text", "model label"),
    # -- request lanes
    _pane("@agent_permission_request", "E", "id", "pending permission request id"),
    _pane("@agent_pending_tool", "E", "text", "tool of the pending permission call"),
    _pane("@agent_pending_call", "E", "id", "id of the pending permission call"),
    _pane("@agent_pending_summary", "E", "text", "one-line summary of the pending call"),
    _pane("@agent_pending_input", "E", "base64 of JSON",
          "the pending call's full input (compact JSON, at most 4 KiB; the card reads it)"),
    _pane("@agent_api_endpoint", "E", "url", "agent server base URL (OpenCode)"),
    _pane("@agent_transcript", "E", "path",
          "the agent's transcript file its hooks named (tma transcript reads it; Codex's "
          "rollout is tailed for telemetry)"),
    _pane("@agent_question_request", "E", "id", "pending question id (OpenCode)"),
    _pane("@tma_reply_holder", "E", "pid", "a Claude PermissionRequest hook holding for a verdict"),
    _pane("@tma_reply_verdict", "B", "<id> allow|deny", "verdict handed to the holding hook"),
    _pane("@agent_answered", "B", "<episode>_<nonce>",
          "the blocked episode whose answer a `tma act` typed (no other act types into it)"),
    # -- internal anchors
    _pane("@tma_title_match_pid", "F", "pid", "anchor for a title-narrowed identity"),
    _pane("@tma_reg_dead_since", "F", "epoch ms", "first seen a shell-only subtree on a pid-less registration"),
    _pane(HOOK_EVENT, "E", "event name",
          "the hook event behind the stored hook claim (named by `tma debug explain`)"),
    _pane(PROMPT, "F", "<since>:<detail>:<digest>",
          "which prompt the blocked episode that began at since shows (a different one "
          "is a new episode)"),
    # -- survivors
    _pane("@agent_action", "B", "<expiry_ms>:<nonce>:<pid>:<name>",
          "single-flight action lock (`tma act`: expiry, nonce and holder pid; a dead holder's is reclaimed)",
          SURVIVOR),
    _pane("@agent_mute_until", "U", "epoch ms", "notifications muted until", SURVIVOR),
    _pane("@tma_watch_pid", "W", "pid", "a tma watch on this pane wants SIGUSR1 nudges", SURVIVOR),
    _pane("@tma_remote", "J", "HOST:%N", "a fleet jump's window: the host's pane it logs in to "
          "(the next jump there reuses it)", SURVIVOR),
    # -- the user's
    _pane("@agent_ignore", "U", "any non-empty", "opt this pane out of detection", USER),
    # -- rollups and server internals
    Option("@agent_summary", "window", "F,E", "blocked:N working:N idle:N unknown:N", ROLLUP,
           "window rollup"),
    Option("@agent_session_summary", "session", "F,E", "blocked:N working:N idle:N unknown:N",
           ROLLUP, "session rollup"),
    Option("@tma_last_poll", "server", "F", "epoch ms", SERVER, "last producing poll cycle"),
    Option("@tma_setpf_ok", "server", "F", "1|0", SERVER, "cached set-option -F expansion probe"),
    Option("@tma_origin_*", "server", "J", "pane ids", SERVER, "per-client jump trail"),
    Option("@tma_status_segment", "server", "D", "tmux status markup", SERVER,
           "the `tma status` segment the daemon keeps while a status line reads it"),
    Option("@tma_status_until", "server", "D", "epoch s", SERVER,
           "until when the segment may be believed (the daemon form of status-right)"),
    Option("@tma_keep_attention", "session", "J", "pane id", SERVER,
           "a cross-session jump's departed pane the window hook must not clear"),
)

BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}

#: Unset in one invocation when the agent leaves the pane.
EPISODE_OPTIONS: tuple[str, ...] = tuple(
    o.name for o in OPTIONS if o.scope == "pane" and o.removal == EPISODE
)
#: Pane options `tma uninstall` sweeps (everything tma writes on a pane).
UNINSTALL_PANE_OPTIONS: tuple[str, ...] = tuple(
    o.name for o in OPTIONS if o.scope == "pane" and o.removal in (EPISODE, SURVIVOR)
)
ROLLUP_WINDOW = "@agent_summary"
ROLLUP_SESSION = "@agent_session_summary"

#: The per-pane user options a read fetches (everything pane-scoped).
PANE_READ_OPTIONS: tuple[str, ...] = tuple(o.name for o in OPTIONS if o.scope == "pane")
