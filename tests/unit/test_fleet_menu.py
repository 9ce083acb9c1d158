"""What a fleet host's pane's action menu offers (tma.runtime.fleet.act.offered): only
what the host would fire there now, from the bundled action set, this machine's
hosts.toml grant, the host's serve grants and the pane's row; and when nothing, why."""

from __future__ import annotations

from tma.runtime.act import registry
from tma.runtime.fleet.act import offered
from tma.runtime.fleet.hosts import Host

ACTIONS = list(registry.load("/nonexistent").actions.values())
ANSWER = Host("box", "me@box", act="answer")
STEER = Host("box", "me@box", act="steer")
BOTH = ("read", "act:answer", "act:steer")


def _row(agent: str, state: str, detail: str | None = None) -> dict:
    return {"pane": "%3", "host": "box", "agent": agent, "state": state, "detail": detail,
            "attention": False}


def _names(host, row, scopes=BOTH) -> tuple[list[str], str]:
    got, why = offered(ACTIONS, host, "box:%3", row, scopes)
    return sorted(a.name for a in got), why


def test_a_permission_prompt_offers_its_answers_and_no_question_reject():
    assert _names(ANSWER, _row("claude", "blocked", "permission")) == (["approve", "deny"],
                                                                       "")
    # steer adds interrupt, which fires on a working pane only
    assert _names(STEER, _row("claude", "blocked", "permission"))[0] == ["approve", "deny"]
    assert _names(STEER, _row("claude", "working"))[0] == ["interrupt"]


def test_an_opencode_question_offers_reject_question_only():
    assert _names(ANSWER, _row("opencode", "blocked", "question"))[0] == ["question_reject"]


def test_nothing_granted_fires_in_the_panes_state_says_so():
    got, why = _names(ANSWER, _row("claude", "working"))
    assert got == []
    assert why == ("no action from here fires on box:%3 now: it is working, and hosts.toml "
                   "grants act:answer (approve, deny, question_reject)")


def test_the_hosts_own_grants_narrow_the_menu():
    assert _names(STEER, _row("claude", "working"), ("read", "act:answer")) == (
        [], "no action from here fires on box:%3 now: it is working, and hosts.toml grants "
            "act:steer (approve, deny, question_reject)")
    got, why = _names(ANSWER, _row("claude", "blocked", "permission"), ("read",))
    assert got == [] and why.startswith("host box grants nothing to fire here: its serve "
                                        "allows read"), why
    # no link has greeted the host yet: its grants are not known, the host decides
    assert _names(ANSWER, _row("claude", "blocked", "permission"), None)[0] == ["approve",
                                                                                 "deny"]


def test_a_read_only_host_and_a_gone_row_say_why():
    got, why = _names(Host("box", "me@box"), _row("claude", "blocked", "permission"))
    assert got == [] and "read-only here" in why and "--act answer" in why
    got, why = _names(ANSWER, None)
    assert got == [] and why.startswith("no agent pane box:%3")
