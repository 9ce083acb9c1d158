"""Rendering agent rows: the `ls` text line and the schema-1 JSON row."""

from __future__ import annotations

from tma.core import codec

#: The ls --json row keys, in order (schema 1; additive only). Pinned by schemas/ls.schema.json.
ROW_KEYS = (
    "pane", "agent", "state", "detail", "since", "since_ms", "episode_ms", "locator", "title",
    "attention", "done", "session", "context", "context_at_ms", "tokens", "model",
    "quota", "quota_window", "quota_resets_at_ms", "quota_at_ms", "cost_usd", "muted",
    "repo", "branch", "worktree", "server", "host", "cost_caveat",
)

#: What the vendor says about its own cost figure; it rides every row that carries one
#: (seed 002: the note "applies to the number and travels with it").
COST_CAVEAT = ("the vendor's own live estimate at list price, not the bill; on a Max or "
               "Pro subscription it isn't relevant for billing purposes")


def _int_opt(opts: dict, key: str, clock: bool = False) -> int | None:
    raw = opts.get(key, "")
    if not raw.isdigit():
        return None
    return codec.to_ms(int(raw)) if clock else int(raw)


def _float_opt(opts: dict, key: str) -> float | None:
    raw = opts.get(key, "")
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if value == value and value >= 0 else None  # drop NaN / negatives


def row_dict(row, *, server: str, host: str, git=None) -> dict:
    stamp = row.stamp
    opts = row.pane.options
    repo = branch = worktree = None
    if git is not None:
        repo, branch, worktree = git(row.pane.current_path)
    context = _int_opt(opts, "@agent_context_pct")
    cost = _float_opt(opts, "@agent_cost_usd")
    return {
        "pane": row.pane.pane_id,
        "agent": row.agent,
        "state": stamp.state,
        "detail": stamp.detail or None,
        "since": stamp.since,
        "since_ms": stamp.since,
        "episode_ms": stamp.episode_ms,
        "locator": row.pane.locator,
        "title": row.pane.title,
        "attention": stamp.attention,
        "done": stamp.state == "idle" and stamp.attention,
        "session": stamp.session or None,
        "context": context if context is not None and context <= 100 else None,
        "context_at_ms": _int_opt(opts, "@agent_context_at", clock=True),
        "tokens": _int_opt(opts, "@agent_tokens"),
        "model": opts.get("@agent_model") or None,
        "quota": _int_opt(opts, "@agent_quota_pct"),
        "quota_window": opts.get("@agent_quota_window") or None,
        "quota_resets_at_ms": _int_opt(opts, "@agent_quota_resets_at", clock=True),
        "quota_at_ms": _int_opt(opts, "@agent_quota_at", clock=True),
        "cost_usd": cost,
        "muted": row.muted,
        "repo": repo,
        "branch": branch if repo is not None else None,
        "worktree": worktree if repo is not None else None,
        "server": server,
        "host": host,
        "cost_caveat": COST_CAVEAT if cost is not None else None,
    }


def _clean(text: str) -> str:
    return text.replace("\t", " ").replace("\n", " ")


def text_line(row, git=None) -> str:
    stamp = row.stamp
    repo = branch = worktree = None
    if git is not None:
        repo, branch, worktree = git(row.pane.current_path)
    cols = [
        row.pane.pane_id, row.agent, stamp.state, stamp.detail, str(stamp.since),
        row.pane.locator, _clean(row.pane.title), "1" if stamp.attention else "",
        "1" if row.muted else "", repo or "", branch or "" if repo else "",
        "1" if worktree else "",
    ]
    return "\t".join(cols) + "\n"
