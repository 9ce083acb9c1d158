"""`tma act question_reply --answer [Q=]LABEL` end to end: the real `tma act` on a private
tmux server's pane (a real process drawing OpenCode 1.18.33's captured question dialog)
answers a real HTTP server on 127.0.0.1 that behaves like OpenCode's question routes.
Nothing is ever typed into the pane: the answer goes over the API or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.fake_opencode import FakeOpenCode, question
from tests.helpers.keyrecorder import KeyRecorder
from tma.core import fixture

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
QID = "que_2335800aa001Q1bXyZ"

TWO = {"id": QID, "sessionID": "ses_1", "questions": [
    question("Which database?", "DB", ["Postgres", "SQLite"], custom=False),
    question("Which features?", "Features", ["auth", "logs", "metrics"], multiple=True,
             custom=False)],
    "tool": {"messageID": "msg_1", "callID": "call_1"}}
ONE = {"id": QID, "sessionID": "ses_1", "questions": [
    question("Which colour should the new button be?", "Colour", ["Red", "Blue, dark"])]}


def _act(srv, *args):
    return srv.tma("act", *args, manifests=False)


@pytest.fixture
def pane(srv):
    """An OpenCode pane at its question dialog, stamped by `ls` as blocked/question."""
    cap = fixture.parse((CAPTURES / "opencode-1.18.33_blocked_question.txt")
                        .read_text(encoding="utf-8"))
    rec = KeyRecorder.start(srv, "opencode", cap)
    row = srv.row(rec.pane, manifests=False)
    if row is None:
        srv.next_second()
        row = srv.row(rec.pane, manifests=False)
    assert (row["agent"], row["state"], row["detail"]) == ("opencode", "blocked", "question")
    yield rec
    assert rec.settle() == b""  # never a key


def _point(srv, rec, api: FakeOpenCode, request: str = QID) -> None:
    for key, value in (("@agent_api_endpoint", api.url), ("@agent_question_request", request)):
        srv.tmux("set-option", "-p", "-t", rec.pane, key, value)


def test_labels_by_header_and_number_reach_opencode_as_one_list_per_question(srv, pane):
    with FakeOpenCode([TWO]) as api:
        _point(srv, pane, api)
        res = _act(srv, "question_reply", "--pane", pane.pane, "--json",
                   "--answer", "DB=Postgres", "--answer", "2=auth", "--answer", "Features=logs")
        doc = json.loads(res.stdout)
        assert (res.returncode, doc["outcome"], doc["reason"]) == (0, "replied", None), \
            res.stderr
        assert "DB=Postgres; Features=auth, logs" in doc["message"]
        assert api.posts() == [(f"/question/{QID}/reply",
                                {"answers": [["Postgres"], ["auth", "logs"]]})]
        # read afresh before the reply: the GET precedes the POST
        assert [(m, p) for m, p, _ in api.seen] == [("GET", "/question"),
                                                    ("POST", f"/question/{QID}/reply")]
        # once answered, OpenCode no longer lists it: a second act is vanished, nothing sent
        again = _act(srv, "question_reply", "--pane", pane.pane, "--answer", "1=SQLite",
                     "--answer", "2=auth")
        assert again.returncode == 3 and "no longer holds question request" in again.stderr
        assert len(api.posts()) == 1


def test_a_single_question_takes_a_bare_label_with_commas_and_custom_text(srv, pane):
    with FakeOpenCode([ONE]) as api:
        _point(srv, pane, api)
        res = _act(srv, "question_reply", "--pane", pane.pane, "--answer", "Blue, dark")
        assert res.returncode == 0, res.stderr
        assert api.posts() == [(f"/question/{QID}/reply", {"answers": [["Blue, dark"]]})]
    with FakeOpenCode([ONE]) as api:  # custom absent = OpenCode's default: typed text goes
        _point(srv, pane, api)
        res = _act(srv, "question_reply", "--pane", pane.pane, "--answer", "1=teal=ish")
        assert res.returncode == 0, res.stderr
        assert api.posts() == [(f"/question/{QID}/reply", {"answers": [["teal=ish"]]})]


@pytest.mark.parametrize(("answers", "words"), [
    (["DB=MySQL", "2=auth"], "'MySQL' is not one of its options ('Postgres', 'SQLite'), "
                             "and it takes no custom answer"),
    (["DB=Postgres", "DB=SQLite", "2=auth"], "takes one choice, not 2"),
    (["DB=Postgres"], "question 2 ('Features') has no --answer"),
    (["Postgres", "auth"], "asks 2 questions: name each answer's question"),
    (["3=x", "1=Postgres", "2=auth"], "there is no question 3"),
    (["Colour=Red", "1=Postgres", "2=auth"], "no question is numbered or headed 'Colour'"),
])
def test_answers_that_do_not_fit_are_refused_and_nothing_is_sent(srv, pane, answers, words):
    with FakeOpenCode([TWO]) as api:
        _point(srv, pane, api)
        argv = [x for a in answers for x in ("--answer", a)]
        res = _act(srv, "question_reply", "--pane", pane.pane, "--json", *argv)
        doc = json.loads(res.stdout)
        assert (res.returncode, doc["outcome"], doc["reason"]) == (4, "refused",
                                                                   "requires-unmet")
        assert words in doc["message"] and "nothing sent" in doc["message"], doc["message"]
        assert api.posts() == [] and api.pending == [TWO]
        assert srv.option(pane.pane, "@agent_action") == ""  # the lock is released


def test_the_pending_request_id_binds_the_answer(srv, pane):
    other = dict(TWO, id="que_other")
    with FakeOpenCode([other]) as api:  # OpenCode holds another request than the pane's
        _point(srv, pane, api)
        res = _act(srv, "question_reply", "--pane", pane.pane, "--answer", "1=Postgres",
                   "--answer", "2=auth")
        assert res.returncode == 3 and QID in res.stderr, res.stderr
        assert api.posts() == []
    srv.tmux("set-option", "-p", "-u", "-t", pane.pane, "@agent_question_request")
    res = _act(srv, "question_reply", "--pane", pane.pane, "--answer", "1=Postgres")
    assert res.returncode == 4 and "@agent_question_request" in res.stderr, res.stderr


def test_usage_errors_are_exit_2(srv, pane):
    assert _act(srv, "question_reply", "--pane", pane.pane).returncode == 2  # no --answer
    res = _act(srv, "question_reject", "--pane", pane.pane, "--answer", "x")
    assert res.returncode == 2 and "takes no --answer" in res.stderr
    res = _act(srv, "question_reply", "--pane", pane.pane, "--answer", "1=")
    assert res.returncode == 2 and "no label" in res.stderr
    res = _act(srv, "question_reply", "--pane", pane.pane, "--answer", "=x")
    assert res.returncode == 2 and "name the question" in res.stderr
    assert _act(srv, "--list", "--answer", "x").returncode == 2


def test_it_is_gated_to_a_question_and_dry_run_sends_nothing(srv, pane):
    with FakeOpenCode([TWO]) as api:
        _point(srv, pane, api)
        res = _act(srv, "question_reply", "--pane", pane.pane, "--dry-run", "--answer",
                   "DB=Postgres")
        assert res.returncode == 0 and "gate:    fireable" in res.stdout, res.stdout
        assert f"/question/{QID}/reply" in res.stdout and "DB=Postgres" in res.stdout
        assert api.seen == []
    codex = KeyRecorder.start(srv, "codex", fixture.parse(
        (CAPTURES / "codex-0.171.0_blocked.txt").read_text(encoding="utf-8")))
    if srv.row(codex.pane, manifests=False) is None:
        srv.next_second()
        assert srv.row(codex.pane, manifests=False)["state"] == "blocked"
    res = _act(srv, "question_reply", "--pane", codex.pane, "--answer", "x", "--json")
    doc = json.loads(res.stdout)
    assert (res.returncode, doc["reason"]) == (4, "gated") and "not at a question" in \
        doc["message"], doc["message"]
    res = _act(srv, "question_reply", "--pane", codex.pane, "--answer", "x", "--json",
               "--force")  # past `when`, still no OpenCode API arm for codex
    doc = json.loads(res.stdout)
    assert (res.returncode, doc["reason"]) == (4, "wrong-agent"), doc["message"]
    assert codex.settle() == b""


def test_an_unreachable_server_is_an_error(srv, pane):
    srv.tmux("set-option", "-p", "-t", pane.pane, "@agent_api_endpoint", "http://127.0.0.1:9")
    srv.tmux("set-option", "-p", "-t", pane.pane, "@agent_question_request", QID)
    res = _act(srv, "question_reply", "--pane", pane.pane, "--answer", "x")
    assert res.returncode == 1 and "127.0.0.1:9" in res.stderr, res.stderr
