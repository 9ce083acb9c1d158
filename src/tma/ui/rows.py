"""Rendering agent rows: the `ls` text line, the schema-1 JSON row and document (ls,
wait and subscribe write the same one), and subscribe's edge records."""

from __future__ import annotations

import os

from tma.core import codec

#: subscribe --events names a finished turn (idle with attention) as its own state
VOCAB_DONE = "done"

#: The ls --json row keys, in order (schema 1; additive only). Pinned by schemas/ls.schema.json.
ROW_KEYS = (
    "pane", "agent", "state", "detail", "since", "since_ms", "episode_ms", "locator", "title",
    "attention", "done", "session", "context", "context_at_ms", "tokens", "model",
    "quota", "quota_window", "quota_resets_at_ms", "quota_at_ms", "cost_usd", "muted",
    "repo", "branch", "worktree", "pending_tool", "pending_summary", "server", "host",
    "cost_caveat",
)

#: What the vendor says about its own cost figure; it rides every row that carries one
#: (the note "applies to the number and travels with it").
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


def pending(row, screen: dict | None = None) -> tuple[str | None, str | None]:
    """(pending_tool, pending_summary) of a blocked pane: the hook intake's options, else
    what the screen's dialog says (`screen`: pane id -> (tool, summary), read by the
    runtime); (None, None) for a pane that is not blocked or when nobody knows."""
    if row.stamp.state != "blocked":
        return None, None
    opts = row.pane.options
    tool = opts.get("@agent_pending_tool", "")
    if tool:
        return tool, opts.get("@agent_pending_summary") or tool
    tool, summary = (screen or {}).get(row.pane.pane_id, (None, None))
    return tool or None, summary or tool or None


def row_dict(row, *, server: str, host: str, git=None, screen: dict | None = None) -> dict:
    """One ls --json row; `screen` adds what only the screen knows of a blocked pane's ask
    (pane id -> (tool, summary))."""
    stamp = row.stamp
    opts = row.pane.options
    pending_tool, pending_summary = pending(row, screen)
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
        "pending_tool": pending_tool,
        "pending_summary": pending_summary,
        "server": server,
        "host": host,
        "cost_caveat": COST_CAVEAT if cost is not None else None,
    }


def document(rows, *, server: str, git=None, host: str | None = None,
             one: bool = False, screen: dict | None = None) -> dict:
    """The schema-1 document (schemas/ls.schema.json): `{"schema": 1, "agents": [...]}`,
    each row with the server's socket path and this host; `one`: the single row's keys
    beside "schema" instead (wait on one pane)."""
    host = os.uname().nodename if host is None else host
    dicts = [row_dict(r, server=server, host=host, git=git, screen=screen) for r in rows]
    return {"schema": 1, **dicts[0]} if one else {"schema": 1, "agents": dicts}


def edges(before: dict | None, dicts: list[dict], now: int) -> tuple[dict, list[dict]]:
    """subscribe --events: the states of this document's rows (pane -> (state, row))
    and the edge records since `before` (none against no baseline: the first document
    is the baseline, no synthetic edges)."""
    states = {d["pane"]: (VOCAB_DONE if d["done"] else d["state"], d) for d in dicts}
    if before is None:
        return states, []
    records = []
    for pane, (state, d) in states.items():
        prior = before.get(pane)
        if prior is None or prior[0] != state:
            records.append(edge(now, d, prior[0] if prior else "", state))
    for pane, (state, d) in before.items():
        if pane not in states:
            records.append(edge(now, d, state, ""))
    return states, records


def edge(now: int, row: dict, before: str, after: str) -> dict:
    """One edge record (schemas/subscribe-events.schema.json)."""
    return {"schema": 1, "at_ms": now, "pane": row["pane"], "agent": row["agent"],
            "from": before, "to": after, "detail": row["detail"] if after else None,
            "locator": row["locator"], "repo": row["repo"], "branch": row["branch"]}


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


#: What a remote row carries beyond the ls row keys (the protocol's own), then `stale`.
FLEET_EXTRA_KEYS = ("transcript", "permission_request", "stamped_at_ms", "pending_tool",
                    "pending_call", "pending_summary", "stale")


def fleet_row_dict(frow, *, host: str, stale: bool = False) -> dict:
    """A host's FleetRow as an ls --json row: the ls keys in their order (`title` null:
    titles never leave a host; `host` the name this machine gave it), then the protocol's
    own keys and `stale`."""
    quota = frow.quota
    cost = frow.cost_usd
    out = {
        "pane": frow.pane, "agent": frow.agent, "state": frow.state, "detail": frow.detail,
        "since": frow.since_ms,  # the ls row's since is epoch ms, as since_ms
        "since_ms": frow.since_ms, "episode_ms": frow.episode_ms, "locator": frow.locator,
        "title": None, "attention": frow.attention, "done": frow.done,
        "session": frow.session, "context": frow.context, "context_at_ms": frow.context_at_ms,
        "tokens": frow.tokens, "model": None,
        "quota": quota.pct if quota is not None and 0 <= quota.pct <= 100 else None,
        "quota_window": (quota.window or None) if quota is not None else None,
        "quota_resets_at_ms": quota.resets_at_ms if quota is not None else None,
        "quota_at_ms": None, "cost_usd": cost, "muted": frow.muted, "repo": frow.repo,
        "branch": frow.branch, "worktree": frow.worktree, "server": frow.server,
        "host": host, "cost_caveat": COST_CAVEAT if cost is not None else None,
    }
    for key in FLEET_EXTRA_KEYS[:-1]:
        out[key] = getattr(frow, key)
    out["stale"] = stale
    return out


def fleet_text_line(d: dict) -> str:
    """ls's tab-separated line for a remote row: the pane is HOST:%N, no title."""
    cols = [f"{d['host']}:{d['pane']}", d["agent"], d["state"], d["detail"] or "",
            str(d["since"]), d["locator"], "", "1" if d["attention"] else "",
            "1" if d["muted"] else "", d["repo"] or "", d["branch"] or "" if d["repo"] else "",
            "1" if d["worktree"] else ""]
    return "\t".join(_clean(str(c)) for c in cols) + "\n"
