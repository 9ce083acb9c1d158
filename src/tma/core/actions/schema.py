"""The action manifest schema: a parsed TOML document -> an Action, unknown fields rejected.

Pure: the loader (tma.runtime.act.registry) reads the files and hands the decoded table and
the file's stem in. Every agent's key sequences live here, in the action manifests
(`[keys].<agent>`), and nowhere else: an agent manifest says how to see an agent, an
action manifest says how to answer it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tma.core import states
from tma.core.manifest import ENGINE_VERSION, ManifestError, check_engine, toml_doc

KIND_KEYS = "keys"
KIND_EXEC = "exec"
KINDS = (KIND_KEYS, KIND_EXEC)

#: Context an action may require to be present ("context" = the context gauge).
REQUIRES = ("session", "cwd", "pid", "title", "context")

#: The API op vocabulary (closed): op -> the replies it accepts (empty: takes none).
#: "always" is never wired: it writes a lasting grant, and an action answers one request.
API_OPS: dict[str, tuple[str, ...]] = {
    "opencode.permission_reply": ("once", "reject"),
    "opencode.question_reject": (),
    "opencode.question_reply": (),
}
#: The ops that carry the caller's chosen labels (`tma act --answer`, tma.core.actions.answers).
ANSWER_OPS = ("opencode.question_reply",)

#: The placeholder a text action's key arm holds once: the caller's --text, sent literally.
TEXT_SLOT = "{text}"

HOOK_REPLIES = ("allow", "deny")

DEFAULT_TIMEOUT_MS = 30_000
DEFAULT_DETACH_TIMEOUT_MS = 900_000

TOP_LEVEL = ("min_engine_version", "name", "label", "description", "kind", "when", "requires",
             "agents", "confirm", "text", "hook_reply", "detach", "timeout_ms",
             "detach_timeout_ms", "command", "keys", "api", "select")
SELECT_FIELDS = ("row", "option", "move", "confirm")


class ActionError(ManifestError):
    """An action manifest that does not validate (the message names the field)."""


@dataclass(frozen=True)
class When:
    states: tuple[str, ...] = ()
    details: tuple[str, ...] = ()
    context_pct_min: int | None = None
    context_pct_max: int | None = None

    @property
    def empty(self) -> bool:
        return not (self.states or self.details or self.context_pct_min is not None
                    or self.context_pct_max is not None)

    def as_json(self) -> dict[str, Any]:
        return {"state": list(self.states), "detail": list(self.details),
                "context_pct_min": self.context_pct_min, "context_pct_max": self.context_pct_max}


@dataclass(frozen=True)
class ApiOp:
    op: str
    reply: str = ""


@dataclass(frozen=True)
class Select:
    """`[select.<agent>]`: a menu with no digits or accelerators on its rows, answered by
    moving its selection cursor onto one option and confirming it (tma.core.actions.menu).
    The agent's `[keys]` arm answers every screen where no such menu is drawn."""

    row: re.Pattern[str]  # one option row: groups `option` (its words), `cursor` (the mark)
    option: str  # the option's words, as `option` captures them, the action picks
    move: str  # the key that moves the cursor one row down
    confirm: str  # the key that picks the row under the cursor


@dataclass(frozen=True)
class Action:
    name: str
    label: str
    description: str
    kind: str
    when: When = field(default_factory=When)
    requires: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()  # exec: applicable agents (empty = every agent)
    confirm: bool = False
    text: bool = False  # takes --text, delivered literally at the arm's {text} slot
    hook_reply: str = ""  # allow|deny over a live hook reply lane (Claude), before keys
    detach: bool = False
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    detach_timeout_ms: int = DEFAULT_DETACH_TIMEOUT_MS
    command: str = ""
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    api: dict[str, ApiOp] = field(default_factory=dict)
    select: dict[str, Select] = field(default_factory=dict)

    def applies_to(self, agent: str) -> bool:
        if self.kind == KIND_EXEC:
            return not self.agents or agent in self.agents
        return agent in self.keys or agent in self.api

    @property
    def takes_answers(self) -> bool:
        """Whether the action carries `--answer` labels (an answering API op)."""
        return any(op.op in ANSWER_OPS for op in self.api.values())

    def covered_agents(self) -> tuple[str, ...]:
        """The agents this action names: keys + api arms, or exec's list (empty = all)."""
        if self.kind == KIND_EXEC:
            return self.agents
        return tuple(sorted(set(self.keys) | set(self.api)))


# ---------------------------------------------------------------- helpers


def _fail(where: str, msg: str) -> ActionError:
    return ActionError(f"{where}: {msg}")


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, "must be a table")
    return value


def _known(table: dict[str, Any], where: str, allowed: tuple[str, ...]) -> None:
    for key in table:
        if key not in allowed:
            raise _fail(where, f"unknown field {key!r} (expected one of: {', '.join(allowed)})")


def _str(value: Any, where: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise _fail(where, "must be a non-empty string")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, "must be true or false")
    return value


def _int(value: object, where: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _fail(where, f"must be an integer from {lo} to {hi}")
    return value


def _tokens(value: Any, where: str, vocab: tuple[str, ...] | None = None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(where, "must be a list of strings")
    for v in value:
        if vocab is not None and v not in vocab:
            raise _fail(where, f"{v!r} is not one of {', '.join(vocab)}")
        if not states.is_safe_token(v):
            raise _fail(where, f"{v!r} is not a safe token (a-z, 0-9, _ and - only)")
    return tuple(value)


# ---------------------------------------------------------------- sections


def _when(value: Any) -> When:
    t = _table(value, "[when]")
    _known(t, "[when]", ("state", "detail", "context_pct_min", "context_pct_max"))
    sts = _tokens(t.get("state", []), "[when].state", states.STATES)
    details = _tokens(t.get("detail", []), "[when].detail")
    lo = _int(t["context_pct_min"], "[when].context_pct_min", 0, 100) \
        if "context_pct_min" in t else None
    hi = _int(t["context_pct_max"], "[when].context_pct_max", 0, 100) \
        if "context_pct_max" in t else None
    if lo is not None and hi is not None and lo > hi:
        raise _fail("[when]", f"context_pct_min {lo} is above context_pct_max {hi}")
    return When(sts, details, lo, hi)


def _key_arms(value: Any, text: bool) -> dict[str, tuple[str, ...]]:
    t = _table(value, "[keys]")
    out: dict[str, tuple[str, ...]] = {}
    for agent, arm in t.items():
        where = f"[keys].{agent}"
        if not states.is_safe_token(agent):
            raise _fail(where, "the agent name is not a safe token (a-z, 0-9, _ and - only)")
        if not isinstance(arm, list) or not arm or not all(isinstance(k, str) and k
                                                             for k in arm):
            raise _fail(where, "must be a non-empty list of non-empty strings (one send-keys "
                               "argument each)")
        slots = arm.count(TEXT_SLOT)
        if text and slots != 1:
            raise _fail(where, f"a text action's arm holds {TEXT_SLOT} exactly once "
                               f"(found {slots})")
        if not text and slots:
            raise _fail(where, f"{TEXT_SLOT} is only for a text action (text = true)")
        out[agent] = tuple(arm)
    return out


def _api_arms(value: Any) -> dict[str, ApiOp]:
    t = _table(value, "[api]")
    out: dict[str, ApiOp] = {}
    for agent, arm in t.items():
        where = f"[api].{agent}"
        arm = _table(arm, where)
        _known(arm, where, ("op", "reply"))
        op = _str(arm.get("op"), f"{where}.op")
        if op not in API_OPS:
            raise _fail(f"{where}.op", f"{op!r} is not one of {', '.join(API_OPS)}")
        if op.split(".", 1)[0] != agent:
            raise _fail(f"{where}.op", f"{op!r} is an op of {op.split('.', 1)[0]}, not {agent}")
        replies = API_OPS[op]
        reply = arm.get("reply", "")
        if replies and reply not in replies:
            raise _fail(f"{where}.reply", f"{reply!r} is not one of {', '.join(replies)}")
        if not replies and "reply" in arm:
            raise _fail(f"{where}.reply", f"{op} takes no reply")
        out[agent] = ApiOp(op, reply)
    return out


def _select_arms(value: Any, keys: dict[str, tuple[str, ...]],
                 text: bool) -> dict[str, Select]:
    t = _table(value, "[select]")
    out: dict[str, Select] = {}
    for agent, arm in t.items():
        where = f"[select].{agent}"
        arm = _table(arm, where)
        _known(arm, where, SELECT_FIELDS)
        for f in SELECT_FIELDS:
            if f not in arm:
                raise _fail(f"{where}.{f}", "required")
        if text:
            raise _fail(where, "a text action has no [select] arm")
        if agent not in keys:
            raise _fail(where, f"needs a [keys].{agent} arm too (it answers every screen "
                               "that draws no such menu)")
        try:
            row = re.compile(_str(arm["row"], f"{where}.row"))
        except re.error as exc:
            raise _fail(f"{where}.row", f"not a valid regex: {exc}") from None
        missing = [g for g in ("option", "cursor") if g not in row.groupindex]
        if missing:
            raise _fail(f"{where}.row", f"needs the named group(s) {', '.join(missing)} "
                                        "(the option's words, the cursor's mark)")
        out[agent] = Select(row, _str(arm["option"], f"{where}.option"),
                            _str(arm["move"], f"{where}.move"),
                            _str(arm["confirm"], f"{where}.confirm"))
    return out


def _kind_rules(doc: dict[str, Any], kind: str, keys: dict[str, tuple[str, ...]],
                api: dict[str, ApiOp]) -> None:
    """What each kind may and must carry."""
    if kind == KIND_KEYS:
        for f in ("command", "detach", "detach_timeout_ms", "agents"):
            if f in doc:
                raise _fail(f, "only for kind = \"exec\" (a keys action's agents are its "
                               "[keys] and [api] arms)" if f == "agents" else
                            "only for kind = \"exec\"")
        if not keys and not api:
            raise _fail("[keys]", "a keys action needs at least one [keys] or [api] arm")
        both = sorted(set(keys) & set(api))
        if both:
            raise _fail(f"[api].{both[0]}", "an agent is answered by [keys] or by [api], "
                                            "not both")
        return
    for f in ("keys", "api", "text", "hook_reply", "select"):
        if f in doc:
            raise _fail(f, "only for kind = \"keys\"")
    if "command" not in doc:
        raise _fail("command", "required for kind = \"exec\"")


def from_dict(name: str, doc: dict[str, Any], engine: str = ENGINE_VERSION) -> Action:
    """Validate one action manifest; `name` is the file stem."""
    try:
        check_engine(doc, engine)
    except ManifestError as exc:
        raise ActionError(str(exc)) from None
    _known(doc, "action", TOP_LEVEL)
    if not states.is_safe_token(name):
        raise _fail("name", f"{name!r} (the file stem) is not a safe token")
    if "name" in doc and doc["name"] != name:
        raise _fail("name", f"{doc['name']!r} does not match the file stem {name!r}")
    kind = doc.get("kind")
    if kind is None:
        raise _fail("kind", "required (\"keys\" or \"exec\")")
    if kind not in KINDS:
        raise _fail("kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    text = _bool(doc.get("text", False), "text")
    keys = _key_arms(doc.get("keys", {}), text)
    api = _api_arms(doc.get("api", {}))
    _kind_rules(doc, kind, keys, api)
    select = _select_arms(doc.get("select", {}), keys, text)
    if text and api:
        raise _fail("[api]", "a text action has no API arm (its text goes through the pane)")
    answering = sorted(a for a, op in api.items() if op.op in ANSWER_OPS)
    if answering and keys:
        raise _fail(f"[api].{answering[0]}", "an action that answers with --answer labels "
                    "has no [keys] arms (keys cannot carry the labels)")
    hook_reply = doc.get("hook_reply", "")
    if hook_reply and hook_reply not in HOOK_REPLIES:
        raise _fail("hook_reply", f"{hook_reply!r} is not one of {', '.join(HOOK_REPLIES)}")
    return Action(
        name=name,
        label=_str(doc.get("label"), "label"),
        description=_str(doc.get("description"), "description"),
        kind=kind,
        when=_when(doc["when"]) if "when" in doc else When(),
        requires=_tokens(doc.get("requires", []), "requires", REQUIRES),
        agents=_tokens(doc.get("agents", []), "agents"),
        confirm=_bool(doc.get("confirm", False), "confirm"),
        text=text,
        hook_reply=hook_reply,
        detach=_bool(doc.get("detach", False), "detach"),
        timeout_ms=_int(doc.get("timeout_ms", DEFAULT_TIMEOUT_MS), "timeout_ms", 1, 86_400_000),
        detach_timeout_ms=_int(doc.get("detach_timeout_ms", DEFAULT_DETACH_TIMEOUT_MS),
                               "detach_timeout_ms", 1, 86_400_000),
        command=_str(doc["command"], "command") if "command" in doc else "",
        keys=keys,
        api=api,
        select=select,
    )


def loads(name: str, text: str, engine: str = ENGINE_VERSION) -> Action:
    return from_dict(name, toml_doc(text, ActionError), engine)
