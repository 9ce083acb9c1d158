"""The card a pane shows: what a blocked agent asks, in the protocol's vocabulary.

`build` turns one cycle row into a protocol card frame (tma.core.proto): `none` for a
pane that is not blocked, `permission` for blocked/permission, `question` for OpenCode's
blocked/question once its questions are fetched, `informational` for everything else.
Only the cycle's verdict decides whether a pane is blocked; everything added after that
is best effort and can never refuse a card (a source that fails only lowers it).

Sources, most faithful first:
- the hook lane: the hook intake parked the pending call on the pane
  (@agent_pending_tool, @agent_pending_call, @agent_pending_summary, and the full input
  as base64 JSON in @agent_pending_input); exactly allow-once and reject-once, `exact`;
- the api lane: OpenCode answers over its own HTTP server (tma.runtime.act.opencode_api),
  and its questions come from `GET /question` under a 750 ms limit;
- the screen lane: the manifest's `[dialog]` rules read off a fresh capture
  (tma.core.card.extract); without rules, or when they find nothing, `failed`;
- the rollout (Codex): Codex writes the call (its `function_call` record) to its
  rollout before it asks for the approval, so the newest page of the pane's rollout
  names the call it waits on: its name, its arguments exactly as the model sent them,
  and its call id. A screen-lane card takes its pending call from there (the dialog's
  options stay the screen's); a hook-lane card keeps the hook's tool and input and gains
  the call id the hook did not send (or, when the hook parked no input, takes the
  rollout's call whole).
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Callable

from tma.core import inbound, proto, states
from tma.core.errors import NoPane
from tma.core.rules import strip_ansi
from tma.runtime.act.card_screen import extract, manifest_for, wants_screen
from tma.tmux import read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tma.runtime.act import opencode_api

#: OpenCode's question fetch limit (on timeout the card is informational).
QUESTION_TIMEOUT_S = 0.75

HOOK = "hook"
API = "api"
SCREEN = "screen"
EXACT, WRAPPED, FAILED = "exact", "wrapped", "failed"

#: The hook lane's two answers: option ids are the `tma act` actions that fire them.
HOOK_OPTIONS = (proto.CardOption("allow-once", "Yes", "approve"),
                proto.CardOption("reject-once", "No", "deny"))
#: OpenCode's permission replies, by the reply word its API takes.
API_OPTIONS = (proto.CardOption("allow-once", "Allow once", "once"),
               proto.CardOption("allow-always", "Allow always", "always"),
               proto.CardOption("reject-once", "Reject", "reject"))

#: What an informational card says for the details tma knows.
HEADLINES = {
    "plan": "Waiting for a plan to be approved",
    "trust": "Asks whether to trust this folder",
    "rate_limit": "Rate limited: waiting for the limit to reset",
    "question": "Asks a question",
    "permission": "Asks for permission",
    "error": "Stopped on an error",
}


# ---------------------------------------------------------------- the hook lane


def hook_input(opts: dict) -> dict:
    """The pending call's full input the hook intake parked ({} when none or unreadable)."""
    raw = opts.get("@agent_pending_input", "")
    if not raw:
        return {}
    try:
        doc = json.loads(binascii.a2b_base64(raw.encode("ascii")).decode("utf-8"))
    except (ValueError, binascii.Error, UnicodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


# ---------------------------------------------------------------- the card


def build(row, *, rid: str = proto.NO_REQUEST_ID, config=None, manifest=None,
          screen: Callable[[], list[str] | None] | None = None,
          timeout_s: float = QUESTION_TIMEOUT_S,
          rollout: Callable[[], proto.PendingCall | None] | None = None) -> proto.Card:
    """The card of one cycle row. `screen` reads the pane's lines when (and only when)
    the screen lane needs them; `config` gives OpenCode's configured endpoint; `rollout`
    reads the call a Codex pane waits on from its rollout (asked only for a Codex
    permission card)."""
    stamp = row.stamp
    if stamp.state != states.BLOCKED:
        return proto.NoCard(rid)
    detail = stamp.detail or ""
    opts = row.pane.options
    agent = row.agent or stamp.name
    if detail == "permission":
        asks = _permission(row, agent, rid, config, manifest, screen)
        if agent in ROLLOUT_AGENTS and rollout is not None:
            asks = _with_rollout(asks, rollout)
        return asks
    if detail == "question" and agent == "opencode":
        card = _question(row, agent, rid, config, timeout_s)
        if card is not None:
            return card
    return informational(detail, opts, rid)


def informational(detail: str, opts: dict, rid: str = proto.NO_REQUEST_ID
                  ) -> proto.InformationalCard:
    headline = HEADLINES.get(detail) or (f"Blocked: {detail}" if detail else "Blocked")
    summary = opts.get("@agent_pending_summary", "")
    if summary:
        headline = f"{headline}: {summary}"
    return proto.InformationalCard(rid, detail or "unknown", headline)


def _binder(row, request: str = "") -> proto.Binder:
    return proto.Binder(row.stamp.episode_ms, request or None)


def _permission(row, agent: str, rid: str, config, manifest, screen) -> proto.PermissionCard:
    opts = row.pane.options
    binder = _binder(row, opts.get("@agent_permission_request", ""))
    tool = opts.get("@agent_pending_tool", "")
    hooked = proto.PendingCall(tool, hook_input(opts), opts.get("@agent_pending_call", "")) \
        if tool else None
    pane_id = row.pane.pane_id
    if agent == "opencode":
        # the answer goes over OpenCode's API; what the call is comes from its plugin
        return proto.PermissionCard(rid, pane_id, agent, API, API_OPTIONS, FAILED, hooked,
                                    binder)
    if hooked is not None:
        return proto.PermissionCard(rid, pane_id, agent, HOOK, HOOK_OPTIONS, EXACT, hooked,
                                    binder)
    rules = getattr(manifest, "dialog", None) if manifest is not None else None
    lines = screen() if screen is not None and rules else None  # no rules: no capture
    ask = extract(agent, lines, manifest) if lines else None
    if ask is None:
        return proto.PermissionCard(rid, pane_id, agent, SCREEN, (), FAILED, None, binder)
    # an option the dialog shows no key for has no option_id: the app offers no keycap
    options = tuple(proto.CardOption(o.kind, o.name, o.option_id or None) for o in ask.options)
    value: proto.JsonObject = dict(ask.input)
    call = proto.PendingCall(ask.tool, value, "") if ask.tool else None
    return proto.PermissionCard(rid, pane_id, agent, SCREEN, options, ask.extraction, call,
                                binder)


#: The agents whose transcript holds the pending call while their permission prompt is
#: up (Codex 0.171.0 writes the function_call record before it asks).
ROLLOUT_AGENTS = frozenset({"codex"})


def _with_rollout(card: proto.PermissionCard,
                  rollout: Callable[[], proto.PendingCall | None]) -> proto.PermissionCard:
    """The card with what the rollout says of the call it waits on (the module's
    docstring); as it was when the rollout names none or does not read."""
    try:
        call = rollout()
    except Exception:  # noqa: BLE001 - best effort: a rollout never refuses a card
        return card
    if call is None:
        return card
    hooked = card.pending_call if card.lane == HOOK else None
    if hooked is not None and hooked.input:
        if hooked.call_id:
            return card
        return card.replace(pending_call=hooked.replace(call_id=call.call_id))
    return card.replace(pending_call=call)


def rollout_call(row, env) -> proto.PendingCall | None:
    """The call the pane's agent waits on, read from the newest page of its transcript
    (tma.runtime.transcript.read.pending_call): its name, its arguments (a JSON object,
    else {}) and its call id; None when there is none, or no transcript to read."""
    # the transcript room only for a card that asks it (a Codex permission prompt)
    from tma.runtime.transcript import locate, read as transcript, stores

    try:
        found = transcript.pending_call(locate.target_of(row), env)
    except stores.TranscriptError:
        return None
    if found is None:
        return None
    data, body = found.event.data, found.event.body
    args: object = {}
    if body is not None and body[0] == "json":
        try:
            args = json.loads(body[1])
        except ValueError:
            args = {}
    name, call = data.get("name"), data.get("call_id")
    return proto.PendingCall(name if isinstance(name, str) else "",
                             args if isinstance(args, dict) else {},
                             call if isinstance(call, str) else "")


def _question(row, agent: str, rid: str, config, timeout_s: float) -> proto.QuestionCard | None:
    """OpenCode's pending question, fetched from its server (None: it did not answer in
    time, or holds no question for this pane)."""
    # its HTTP client (http.client, ssl, email: ~15 ms) only for OpenCode's question card
    from tma.runtime.act import opencode_api

    opts = row.pane.options
    endpoint = opencode_api.resolve_endpoint(opts, config)
    if endpoint is None:
        return None
    try:
        requests = opencode_api.questions(endpoint, timeout_s)
    except opencode_api.ApiError:
        return None
    request = _pick(requests, opts.get("@agent_question_request", ""), row.stamp.session)
    if request is None or not request.questions:
        return None
    questions = tuple(
        proto.Question(q.question, q.header,
                       tuple(proto.QuestionOption(o.label, o.description) for o in q.options),
                       q.multiple, q.custom)
        for q in request.questions)
    card = proto.QuestionCard(rid, row.pane.pane_id, agent, request.id, questions,
                              _binder(row, request.id))
    # whatever listens on the pane's port wrote these texts: they are made safe as a
    # fleet host's card is (bounded, no control characters), before any surface shows them
    safe, _cut = inbound.response(card)
    assert isinstance(safe, proto.QuestionCard)
    return safe


def _pick(requests: list[opencode_api.QuestionRequest], request_id: str,
          session: str) -> opencode_api.QuestionRequest | None:
    """The pane's question request: by its id, else by its session; the only one pending
    only when the pane names neither (another session's question is never the pane's)."""
    if request_id:
        match = [r for r in requests if r.id == request_id]
        if match:
            return match[0]
    if session:
        match = [r for r in requests if r.session_id == session]
        return match[0] if match else None
    if request_id:
        return None  # the pane's own request is no longer pending
    return requests[0] if len(requests) == 1 else None


def document(card: proto.Card) -> dict:
    """The card as `tma card --json` prints it: the protocol's card frame."""
    return proto.to_wire(card)


def for_pane(session, pane_id: str, *, rid: str = proto.NO_REQUEST_ID) -> proto.Card:
    """The card of one live pane after one poll cycle: NoPane when the pane does not
    exist (the only failure), `none` when it runs no agent or is not blocked."""
    result = session.cycle()
    if all(p.pane_id != pane_id for p in result.snapshot.panes):
        raise NoPane(pane_id)
    row = next((r for r in result.rows if r.pane.pane_id == pane_id), None)
    if row is None:
        return proto.NoCard(rid)
    return for_row(session, row, rid)


def for_row(session, row, rid: str = proto.NO_REQUEST_ID) -> proto.Card:
    """The card of a row a cycle of `session` read (tma serve's card request): the screen
    is captured only for a permission dialog no hook named, under `[dialog]` rules."""
    pane_id = row.pane.pane_id
    manifest = manifest_for(session.manifests, row.agent) if wants_screen(row) else None

    def screen() -> list[str] | None:
        if manifest is None or not getattr(manifest, "dialog", None):
            return None
        cap = read.capture_many(session.server, [(pane_id, 0)]).get(pane_id)
        return strip_ansi(cap.body).splitlines() if cap is not None else None

    return build(row, rid=rid, config=session.config, manifest=manifest, screen=screen,
                 rollout=lambda: rollout_call(row, session.env))
