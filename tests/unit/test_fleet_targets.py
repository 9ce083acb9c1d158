"""The pure parts of acting on and jumping to a fleet host's pane: the HOST:%N name, the
deterministic slot, the local outbox's pending lookup, and the attach argv a jump runs."""

from __future__ import annotations

import pytest

from tma.runtime.fleet import act as fleet_act, links as fleet
from tma.runtime.fleet.hosts import Host
from tma.runtime.selectors import SelectorError, parse_target


@pytest.mark.parametrize("text", ["%3", "box:%3", "dev-box.lan_2:%10"])
def test_targets_that_parse(text):
    assert parse_target(text) == text


@pytest.mark.parametrize("text", ["3", "box:3", ":%3", "a:b:%3", "box:%", "b x:%3", "..:%1"])
def test_targets_that_do_not(text):
    with pytest.raises(SelectorError):
        parse_target(text)


def test_the_slot_is_the_same_answer_to_the_same_prompt():
    a = fleet_act.slot_for("box", "%3", 1000, "approve", None, None)
    assert a == fleet_act.slot_for("box", "%3", 1000, "approve", None, None)
    others = {fleet_act.slot_for("box", "%3", 1001, "approve", None, None),
              fleet_act.slot_for("box", "%4", 1000, "approve", None, None),
              fleet_act.slot_for("dev", "%3", 1000, "approve", None, None),
              fleet_act.slot_for("box", "%3", 1000, "deny", None, None),
              fleet_act.slot_for("box", "%3", 1000, "question_reply", None, (("A",),)),
              fleet_act.slot_for("box", "%3", 1000, "question_reply", None, (("B",),))}
    assert a not in others and len(others) == 6
    assert a.startswith("tma-") and len(a) <= 64


def test_the_outbox_gives_back_only_a_recent_unanswered_dispatch(tmp_path):
    box = fleet_act.Outbox(str(tmp_path / "fleet" / "dispatch.jsonl"))
    assert box.pending("i", 10_000) is None
    box.write({"slot": "s1", "intent": "i", "status": "pending", "episode_ms": 5,
               "at_ms": 10_000})
    assert box.pending("i", 10_001)["slot"] == "s1"
    assert box.pending("other", 10_001) is None
    assert box.pending("i", 10_000 + fleet_act.PENDING_MS) is None  # too old to retry
    box.write({"slot": "s1", "intent": "i", "status": "done", "at_ms": 10_002})
    assert box.pending("i", 10_003) is None
    with open(box.path, "ab") as fh:
        fh.write(b'{"slot": "torn", "int')  # a writer killed mid-line
    box.write({"slot": "s2", "intent": "i", "status": "pending", "at_ms": 10_004})
    assert box.pending("i", 10_005)["slot"] == "s2"
    assert (tmp_path / "fleet" / "dispatch.jsonl").stat().st_mode & 0o777 == 0o600


def test_attach_argv_for_each_transport():
    plain = Host("box", "me@box")
    assert fleet.attach_argv(plain, "%3") == ["ssh", "-t", "--", "me@box", "tma", "attach",
                                              "--pane", "%3"]
    via = Host("b", "x", ("ssh", "-T", "-o", "BatchMode=yes", "-o", "ControlMaster=auto",
                          "-oControlPath=/r/ssh-%C", "box", "/opt/tma", "--socket-name",
                          "w", "serve", "--stdio", "--scope", "read"))
    assert fleet.attach_argv(via, "%3") == ["ssh", "-t", "-o", "BatchMode=yes", "box",
                                            "/opt/tma", "--socket-name", "w", "attach",
                                            "--pane", "%3"]
    docker = Host("c", "x", ("docker", "exec", "-i", "box", "tma", "serve", "--stdio"))
    assert fleet.attach_argv(docker, "%1") == ["docker", "exec", "-it", "box", "tma",
                                               "attach", "--pane", "%1"]
    bare = Host("k", "x", ("kubectl", "exec", "pod", "--", "tma", "serve", "--stdio"))
    assert fleet.attach_argv(bare, "%1")[:3] == ["kubectl", "exec", "-it"]
    login = Host("l", "box-fleet", None, "answer", "me@box")  # the link's key is forced
    assert fleet.attach_argv(login, "%2") == ["ssh", "-t", "--", "me@box", "tma", "attach",
                                              "--pane", "%2"]
    forced = Host("f", "x", ("ssh", "box"))  # a forced command: nothing to cut
    assert fleet.attach_argv(forced, "%2") == ["ssh", "-t", "box", "tma", "attach",
                                               "--pane", "%2"]


def test_the_jump_login_never_hands_a_remote_shell_more_than_a_pane_id():
    import pytest

    host = Host("box", "me@box", None, None, "me@login")
    for bad in ("%1;touch F", "%1 x", "%1$(id)", "%1#(id)", "%\u0661"):
        with pytest.raises(ValueError):
            fleet.attach_argv(host, bad)
    argv = fleet.attach_argv(host, "%12")
    assert argv[:4] == ["ssh", "-t", "--", "me@login"]  # no option can hide in the login
