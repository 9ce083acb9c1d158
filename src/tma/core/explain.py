"""Detection of one screen, explained: every rule's result, the plan, the verdict.

The offline form (`tma debug explain --capture FILE`) and the live form (`tma
debug explain PANE`) both build their JSON document here, so they share a schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tma.core import plan as P, states
from tma.core.codec import Stamp
from tma.core.fold import Facts, FoldConfig, evidence_from, verdict
from tma.core.manifest import Manifest
from tma.core.rules import EngineResult, Screen, evaluate


@dataclass(frozen=True)
class Detection:
    result: EngineResult
    plan: P.Plan
    prev: Stamp | None
    now: int = 0
    cfg: FoldConfig | None = None

    @property
    def state(self) -> str | None:
        """The state the pane reads after this plan (a hold keeps the prior)."""
        if self.plan.action == P.PUBLISH:
            return self.plan.state
        return self.prev.state if self.prev is not None else None

    @property
    def detail(self) -> str:
        if self.plan.action == P.PUBLISH:
            return self.plan.detail
        return self.prev.detail if self.prev is not None else ""

    @property
    def source(self) -> str | None:
        if self.plan.action == P.PUBLISH:
            return self.plan.source
        return self.prev.source if self.prev is not None else None


def detect(
    manifest: Manifest,
    screen: Screen,
    *,
    captured_at: int,
    now: int,
    prev: Stamp | None = None,
    facts: Facts | None = None,
    cfg: FoldConfig | None = None,
) -> Detection:
    result = evaluate(manifest, screen)
    facts = facts or Facts()
    if result.history_view and not facts.history_view:
        facts = Facts(facts.agent_pid, facts.foreground_is_agent, facts.scrolled, True)
    cfg = cfg or FoldConfig()
    plan = verdict(prev, facts, evidence_from(result, captured_at), manifest.visible, cfg, now,
                   decisive=manifest.decisive)
    return Detection(result, plan, prev, now, cfg)


def hook_claim(det: Detection, event: str) -> dict[str, Any] | None:
    """The stored hook claim this plan left standing (held, or refreshed by agreeing
    chrome): which event made it, for which agent, how old, against which window."""
    prev, plan = det.prev, det.plan
    if prev is None or not prev.is_hook_claim or det.now <= 0:
        return None
    if plan.action == P.PUBLISH and plan.guard.kind != P.REFRESH_CLAIM:
        return None  # the plan replaces the claim: what replaced it is the winner
    cfg = det.cfg or FoldConfig()
    age = max(0, det.now - prev.evidence_at)
    decay = cfg.decay_window(prev.state)
    return {"event": event or None, "agent": prev.name or None, "state": prev.state,
            "age_ms": age, "decay_ms": decay, "past_decay": age > decay}


def _claim_text(claim: dict[str, Any]) -> str:
    event = claim["event"] or "(event not recorded)"
    return (f"hook event {event} from {claim['agent'] or 'the agent'}: {claim['state']} "
            f"claimed {claim['age_ms'] / 1000:.1f}s ago, decay window "
            f"{claim['decay_ms'] / 1000:g}s" + (" (past it)" if claim["past_decay"] else ""))


def prior_stamp(state: str, *, source: str = states.SOURCE_CAPTURE, at: int = 0) -> Stamp:
    """A synthetic prior for `--prior STATE` and tests."""
    return Stamp(state=state, source=source, evidence_at=at, since=at, stamped_at=at)


def document(det: Detection, *, extra: dict[str, Any] | None = None,
             hook_event: str = "") -> dict[str, Any]:
    """The explain JSON document (schemas/explain.schema.json). `hook_event` is the
    event the stored hook claim came from (@tma_hook_event), named when it wins."""
    plan = det.plan
    claim = hook_claim(det, hook_event)
    winning = _claim_text(claim) if claim is not None else plan.label or None
    rules = [
        {
            "index": r.rule.index,
            "matched": r.matched,
            "state": r.rule.state,
            "detail": r.rule.detail or None,
            "priority": r.rule.priority,
            "region": str(r.rule.region),
            "skip_state_update": r.rule.skip_state_update,
            "claim": (det.result.claims.get(r.rule.state) is not None
                      and det.result.claims[r.rule.state].rule.index == r.rule.index),
        }
        for r in det.result.reports
    ]
    doc: dict[str, Any] = {
        "schema": 1,
        "state": det.state,
        "detail": det.detail or "",
        "source": det.source,
        "winning": winning,
        "hook_claim": claim,
        "action": plan.action,
        "guard": str(plan.guard) if plan.action == P.PUBLISH else None,
        "set_attention": plan.set_attention,
        "episode_reset": plan.episode_reset,
        "reason": plan.reason,
        "history_view": det.result.history_view,
        "claims": {s: c.rule.label for s, c in det.result.claims.items()},
        "rules": rules,
    }
    if extra:
        doc.update(extra)
    return doc
