"""What the broker would do, without doing it: --dry-run, --list and --menu's view.

No lock is taken and nothing is sent; the gate runs on the stamps a producing cycle
just re-verified.
"""

from __future__ import annotations

from tma.core.actions import gate as G
from tma.runtime.act.fire import ANSWERED_WORDS, answered, api_endpoint, binder_of, target_of


def refusal(broker, action, pane, stamp, agent: str, force: bool = False):
    manifest = broker.cycle.manifests().get(agent) if agent else None
    why = G.gate(action, target_of(pane, stamp, agent, manifest), force=force)
    if why is None and broker.lane(action, agent, pane) == "keys" and answered(pane, stamp):
        why = G.Refusal(G.ANSWERED, ANSWERED_WORDS.format(pane=pane.pane_id, name=action.name))
    return why


def menu_actions(broker, aset, pane, stamp, agent: str) -> list:
    """What a pane's action menu offers: every action that would fire there now and
    needs nothing typed (no text, no answers): `tma act --menu`'s entries, and what the
    picker asks before it closes for the menu (nothing: it says so and stays)."""
    return [a for a in aset.actions.values() if not a.text and not a.takes_answers
            and refusal(broker, a, pane, stamp, agent) is None]


def effect_words(broker, action, pane, agent: str, text: str | None,
                 answers: tuple[str, ...] = ()) -> str:
    if not agent or not action.applies_to(agent):
        return "none (the action does not cover this pane)"
    lane = broker.lane(action, agent, pane)
    if lane == "hook":
        return f"hook lane: verdict {action.hook_reply} to the holding PermissionRequest hook"
    if lane == "api":
        op = action.api[agent]
        endpoint = api_endpoint(pane, agent, broker.cfg) or "<no endpoint>"
        if op.op.startswith("opencode.question_"):
            request = pane.options.get("@agent_question_request", "") or "<no request>"
            if op.op.endswith("question_reply"):
                return (f"api: GET {endpoint}/question (the labels are checked against "
                        f"request {request}), then POST {endpoint}/question/{request}/reply "
                        f"op={op.op} answers={list(answers)!r}")
            return f"api: POST {endpoint}/question/{request}/reject op={op.op}"
        request = pane.options.get("@agent_permission_request", "") or "<no request>"
        return f"api: POST {endpoint}/permission/{request}/reply op={op.op} reply={op.reply}"
    if lane == "exec":
        return f"command: {action.command}"
    shown = [f"-l {text!r}" if k == "{text}" else k for k in action.keys[agent]]
    sel = action.select.get(agent)
    menu = "" if sel is None else (
        f"; where the screen draws a menu with no digits: {sel.move} until the cursor "
        f"shows on {sel.option!r} (read back after each), then {sel.confirm}")
    return "keys: " + " ".join(shown) + menu


def _aged(value, at: int, now: int) -> dict:
    return {"value": value, "age_ms": max(0, now - at) if at else None}


def context_values(pane, stamp, now: int) -> dict:
    """Each context value with its age (None = read live from tmux just now)."""
    opts = pane.options
    out: dict = {}
    if stamp is not None:
        state = stamp.state + (f"/{stamp.detail}" if stamp.detail else "")
        out["state"] = _aged(state, stamp.stamped_at, now)
    pct = opts.get("@agent_context_pct", "")
    at = opts.get("@agent_context_at", "")
    out["context_pct"] = _aged(int(pct) if pct.isdigit() else None,
                               int(at) if at.isdigit() else 0, now)
    for key, value in (("session", opts.get("@agent_session", "")),
                       ("cwd", pane.current_path), ("title", pane.title),
                       ("pid", stamp.pid if stamp is not None else 0)):
        out[key] = {"value": value or None, "age_ms": None}
    return out


def describe(broker, action, pane, stamp, agent: str, req, now: int) -> dict:
    why = binder_of(action, pane.pane_id, req, stamp) or \
        refusal(broker, action, pane, stamp, agent, req.force)
    if why is None and action.confirm and not req.yes:
        why = G.Refusal(G.REQUIRES_UNMET, f"`{action.name}` asks for confirmation (--yes)")
    return {"action": action.name, "pane": pane.pane_id, "agent": agent or None,
            "fireable": why is None, "reason": why.reason if why else None,
            "message": why.message if why else "would fire",
            "effect": effect_words(broker, action, pane, agent, req.text, req.answers),
            "context": context_values(pane, stamp, now)}


def render(doc: dict) -> str:
    gate = "fireable" if doc["fireable"] else f"refused: {doc['reason']} — {doc['message']}"
    lines = [f"action:  {doc['action']}", f"pane:    {doc['pane']}",
             f"agent:   {doc['agent'] or '-'}", f"gate:    {gate}", f"effect:  {doc['effect']}",
             "context:"]
    for key, v in doc["context"].items():
        if v["value"] is None:
            lines.append(f"  {key}: (none)")
            continue
        age = "(live)" if v["age_ms"] is None else f"({v['age_ms']} ms old)"
        lines.append(f"  {key}: {v['value']} {age}")
    return "\n".join(lines) + "\n"


def listing(aset, ctx) -> list[dict]:
    """--list entries with a pane (ctx = (job, (pane, stamp, agent))): each action's
    (ActionSet.listing) and whether it would fire there, or why not."""
    job, (pane, stamp, agent) = ctx
    out = aset.listing()
    for a, entry in zip(aset.actions.values(), out, strict=True):
        why = refusal(job.broker, a, pane, stamp, agent) if pane is not None else \
            G.Refusal(G.GATED, "no such pane")
        entry["fireable"] = why is None
        entry["reason"] = why.reason if why else None
        entry["message"] = why.message if why else None  # text only (not in --json)
    return out
