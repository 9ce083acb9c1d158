"""OpenCode's question stamp and its session filter, outside the live suite: the events are
the ones tma's OpenCode plugin sends (question-required {session_id, question_id[, header]},
question-replied {session_id, question_id}), run through the real `tma event` on a private
server's pane (a process named `opencode`), and the question requests come from a fake
OpenCode on 127.0.0.1 (tests/helpers/fake_opencode.py) that holds requests of two sessions.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers.events import event
from tests.helpers.fake_opencode import FakeOpenCode, question

OURS, OTHER = "ses_ours", "ses_other"
QID, OTHER_QID = "que_ours1", "que_other1"


def ev(srv, pane: str, kind: str, **payload: str) -> None:
    res = event(srv, kind, pane, json.dumps(payload), agent="opencode", manifests=False)
    assert res.returncode == 0, res.stderr


def opts(srv, pane: str) -> dict[str, str]:
    return srv.options(pane)


def request(qid: str, session: str, text: str) -> dict:
    return {"id": qid, "sessionID": session,
            "questions": [question(text, "Colour", ["Red", "Blue"])]}


def card(srv, pane: str) -> dict:
    res = srv.tma("card", "--pane", pane, "--json", manifests=False, check=True)
    return json.loads(res.stdout)


def registered(srv, api: FakeOpenCode) -> str:
    pane = srv.agent_pane("opencode")
    ev(srv, pane, "session-start", session_id=OURS, api_endpoint=api.url)
    ev(srv, pane, "user-prompt-submit", session_id=OURS)
    assert opts(srv, pane)["@agent_session"] == OURS
    return pane


def test_the_question_stamp(srv):
    with FakeOpenCode([request(QID, OURS, "Which colour?")]) as api:
        pane = registered(srv, api)
        ev(srv, pane, "question-required", session_id=OURS, question_id=QID, header="Colour")
        o = opts(srv, pane)
        assert (o["@agent_state"], o["@agent_detail"], o["@agent_source"]) == (
            "blocked", "question", "hook")
        assert o["@agent_question_request"] == QID
        assert o["@agent_attention"] == "1"
        since = o["@agent_since"]
        row = srv.row(pane, manifests=False)
        assert (row["state"], row["detail"]) == ("blocked", "question")

        # the plan agent's plan_exit asks through the same tool: a plan, a new episode
        ev(srv, pane, "question-required", session_id=OURS, question_id="que_plan",
           header="Build Agent")
        o = opts(srv, pane)
        assert (o["@agent_detail"], o["@agent_question_request"]) == ("plan", "que_plan")
        assert int(o["@agent_since"]) > int(since)


def test_the_session_filter(srv):
    """Another session's reply never clears the pane's question; the card finds the pane's
    request by its id, else by the pane's session, never another session's; the owner's
    reply clears it."""
    theirs = request(OTHER_QID, OTHER, "Which shape?")
    ours = request(QID, OURS, "Which colour?")
    with FakeOpenCode([theirs, ours]) as api:
        pane = registered(srv, api)
        ev(srv, pane, "question-required", session_id=OURS, question_id=QID)

        ev(srv, pane, "question-replied", session_id=OTHER, question_id=QID)
        assert opts(srv, pane)["@agent_question_request"] == QID  # not the owner's reply
        doc = card(srv, pane)
        assert (doc["card"], doc["request_id"]) == ("question", QID)
        assert doc["questions"][0]["question"] == "Which colour?"

        # no id on the pane (a plugin that sent none): the pane's session picks it
        srv.tmux("set-option", "-p", "-u", "-t", pane, "@agent_question_request")
        doc = card(srv, pane)
        assert (doc["card"], doc["request_id"]) == ("question", QID)

        # the owner's reply clears it
        srv.tmux("set-option", "-p", "-t", pane, "@agent_question_request", QID)
        ev(srv, pane, "question-replied", session_id=OURS, question_id=QID)
        assert opts(srv, pane).get("@agent_question_request", "") == ""


@pytest.mark.parametrize("others", [1, 2], ids=["one pending", "two pending"])
def test_the_card_never_takes_another_sessions_question(srv, others):
    """Only another session's requests are pending (the pane's own was answered from
    another client, say): the pane's card names none of them, even when one is the only
    request the server holds."""
    pending = [request(f"que_other{i}", OTHER, "Which shape?") for i in range(others)]
    with FakeOpenCode(pending) as api:
        pane = registered(srv, api)
        ev(srv, pane, "question-required", session_id=OURS, question_id=QID)
        doc = card(srv, pane)
        assert (doc["card"], doc["detail"]) == ("informational", "question"), doc
        assert api.posts() == []


def test_a_hostile_servers_question_is_plain_bounded_data(srv):
    """The question's texts come from whatever listens on the pane's port: escape
    sequences (an OSC 52 clipboard write, a screen clear), a bell and a flood reach no
    terminal and no JSON reader, as a fleet host's card would not."""
    evil = "Which\x1b]52;c;aGk=\x07\x1b[2J\r\nX #(touch x) -oProxy " + "A" * 9000
    req = {"id": QID, "sessionID": OURS,
           "questions": [question(evil, "H\x1b[31m", ["R\x1b[2J", "B"])]}
    with FakeOpenCode([req]) as api:
        pane = registered(srv, api)
        ev(srv, pane, "question-required", session_id=OURS, question_id=QID)
        text = srv.tma("card", "--pane", pane, manifests=False, check=True).stdout
        assert "Which" in text and "\x1b" not in text and "\x07" not in text, text[:200]
        assert len(text) < 6000
        doc = card(srv, pane)
        [q] = doc["questions"]
        assert q["question"].startswith("Which]52;c;aGk=") and q["question"].endswith("…")
        assert not any(ord(c) < 0x20 for c in q["question"] + q["header"])
        assert [o["label"] for o in q["options"]] == ["R[2J", "B"]
