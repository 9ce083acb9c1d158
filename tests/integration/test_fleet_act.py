"""Acting on a fleet host's pane over a real OpenSSH server: `tma act ACTION --pane
HOST:%N` becomes the protocol's dispatch to the host's `tma serve --stdio` (sshd's forced
command) in front of a second tmux server, whose fake agent draws a captured Claude
permission prompt and records every byte typed into it.

The promises: the answer is typed exactly once; a dispatch whose link dropped after the
host answered is re-sent with the same slot and gets the host's stored receipt (the
agent still got one answer); a host not granting the scope refuses with exit 4 and
types nothing.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.helpers.fleet import Here
from tests.helpers.keyrecorder import KeyRecorder
from tma.core import fixture

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "tests" / "fixtures" / "captures"
ACT_SCHEMA = json.loads((ROOT / "schemas" / "act.schema.json").read_text())

#: A transport in front of the real one that drops the link once: it passes the dispatch
#: on, waits for the host's receipt, then kills the transport and leaves without passing
#: the receipt back (while the marker file exists; it removes it).
DROPPER = r'''
import os, select, signal, subprocess, sys
marker, argv = sys.argv[1], sys.argv[2:]
child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         start_new_session=True)
armed = os.path.exists(marker)
dispatched = False
inbuf = outbuf = b""
while True:
    ready, _, _ = select.select([0, child.stdout.fileno()], [], [])
    if 0 in ready:
        chunk = os.read(0, 65536)
        if not chunk:
            child.stdin.close()
        else:
            inbuf += chunk
            while b"\n" in inbuf:
                line, inbuf = inbuf.split(b"\n", 1)
                child.stdin.write(line + b"\n")
                child.stdin.flush()
                if armed and b'"t":"dispatch"' in line.replace(b" ", b""):
                    dispatched = True
    if child.stdout.fileno() in ready:
        chunk = os.read(child.stdout.fileno(), 65536)
        if not chunk:
            break
        outbuf += chunk
        while b"\n" in outbuf:
            line, outbuf = outbuf.split(b"\n", 1)
            if dispatched and b'"receipt"' in line:
                os.unlink(marker)
                os.killpg(child.pid, signal.SIGKILL)  # the link is cut: nothing comes back
                sys.exit(255)
            os.write(1, line + b"\n")
child.wait()
sys.exit(child.returncode)
'''


#: A hostile host: speaks the protocol itself (no tma), answers hello and snapshot as a
#: host would (one blocked pane %7, act:answer granted), logs every dispatch's slot, and
#: answers a dispatch with a receipt for a dispatch it was not sent (another slot, pane
#: or action: argv[3]) while the marker file exists (it removes it); afterwards honestly.
HOSTILE = r'''
import json, os, sys
log, marker, lie = sys.argv[1], sys.argv[2], sys.argv[3]
ROW = {"pane": "%7", "agent": "claude", "state": "blocked", "detail": "permission",
       "since": 1700000000, "since_ms": 1700000000000, "episode_ms": 1700000000000,
       "locator": "s:0.0", "attention": True, "done": False, "session": None,
       "transcript": None, "permission_request": None, "stamped_at_ms": None,
       "context": None, "context_at_ms": None, "muted": False, "tokens": None,
       "quota": None, "cost_usd": None, "repo": None, "branch": None, "worktree": None,
       "pending_tool": None, "pending_call": None, "pending_summary": None,
       "server": "/tmp/tmux-0/default", "host": "evil"}

def send(rid, t, **body):
    sys.stdout.write(json.dumps({"schema": 1, "id": rid, "t": t, **body}) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    req = json.loads(line)
    rid, t = req["id"], req["t"]
    if t == "hello":
        send(rid, "hello", host="evil", tma_version="9", reconcile_interval_ms=2000,
             scopes=["read", "act:answer"])
    elif t == "snapshot":
        send(rid, "snapshot", agents=[ROW])
    elif t == "dispatch":
        with open(log, "a") as fh:
            fh.write(req["slot"] + "\n")
        receipt = {"slot": req["slot"], "pane": req["pane"], "action": req["action"],
                   "outcome": "sent", "reason": None, "exit_code": 0, "cached": False,
                   "at_ms": 1700000000001}
        if os.path.exists(marker):
            os.unlink(marker)
            receipt[lie] = {"slot": "tma-" + "0" * 32, "pane": "%8", "action": "deny"}[lie]
        send(rid, "receipt", **receipt)
'''


class Local(Here):
    """This machine's tma, no local tmux server."""

    def act(self, *args: str) -> tuple[int, dict, str]:
        res = self.tma("act", *args, "--json")
        assert "Traceback" not in res.stderr, res.stderr
        doc = json.loads(res.stdout)
        jsonschema.validate(doc, ACT_SCHEMA)
        assert doc["exit_code"] == res.returncode
        return res.returncode, doc, res.stderr


@pytest.fixture
def local(tmp_path):
    return Local(tmp_path / "local", prefix="nolocal")


def _claude(srv) -> KeyRecorder:
    cap = fixture.parse((CAPTURES / "claude-2.1.332_blocked.txt").read_text("utf-8"))
    idle = fixture.parse((CAPTURES / "claude-2.1.332_idle.txt").read_text("utf-8"))
    return KeyRecorder.start(srv, "claude", cap, after=idle, redraw_ms=100)


def _add(local: Local, name: str, via: str, *extra: str) -> None:
    res = local.tma("host", "add", name, "tma-test", "--via", via, "--replace", *extra)
    assert res.returncode == 0, res.stderr


def _blocked(srv, rec) -> None:
    srv.ls(manifests=False)  # a cycle on the host stamps it blocked
    assert srv.display(rec.pane, "#{@agent_state}") == "blocked"


def test_act_over_the_link_types_once_and_a_repeat_is_the_cached_receipt(srv, sshd, local):
    rec = _claude(srv)
    _blocked(srv, rec)
    sshd.set_command(sshd.serve_command(srv, "--scope", "read,act:answer"))
    _add(local, "box", sshd.via(), "--act", "answer")

    code, doc, err = local.act("approve", "--pane", f"box:{rec.pane}")
    assert code == 0, err
    assert (doc["outcome"], doc["pane"], doc["host"], doc["cached"]) == (
        "sent", f"box:{rec.pane}", "box", False), doc
    sent = rec.settle(expect=1)
    assert sent  # the approve key reached the remote agent
    slot = doc["slot"]
    assert slot.startswith("tma-")

    # the same answer to the same prompt again (the episode named explicitly now, as a
    # caller who read ls --hosts --json would): the same slot, the host's stored receipt
    episode = json.loads(local.tma("ls", "--hosts", "--json").stdout)
    assert episode["agents"][0]["state"] != "blocked"  # the agent moved on
    outbox = Path(local.env["XDG_STATE_HOME"]) / "tma" / "fleet" / "dispatch.jsonl"
    lines = [json.loads(x) for x in outbox.read_text().splitlines()]
    assert [(x["slot"], x["status"]) for x in lines] == [(slot, "pending"), (slot, "done")]
    code, again, _err = local.act("approve", "--pane", f"box:{rec.pane}",
                                  "--expect-episode", str(lines[0]["episode_ms"]))
    assert (code, again["slot"], again["cached"], again["outcome"]) == (0, slot, True,
                                                                        "sent"), again
    assert rec.settle() == sent  # exactly one answer reached the agent


def test_a_dispatch_whose_link_dropped_is_resent_with_its_slot(srv, sshd, local, tmp_path):
    rec = _claude(srv)
    _blocked(srv, rec)
    sshd.set_command(sshd.serve_command(srv, "--scope", "read,act:answer"))
    dropper = tmp_path / "dropper.py"
    dropper.write_text(DROPPER)
    marker = tmp_path / "drop-once"
    marker.touch()
    _add(local, "box", shlex.join([sys.executable, str(dropper), str(marker),
                                   *sshd.ssh_argv()]), "--act", "answer")

    code, first, err = local.act("approve", "--pane", f"box:{rec.pane}")
    assert not marker.exists(), "the link was never cut"
    assert (code, first["outcome"]) == (1, "error"), (first, err)
    assert "dropped after the dispatch was sent" in first["message"]
    assert first["slot"]
    sent = rec.settle(expect=1)
    assert sent  # the host fired before the link went

    # the retry: no episode given, the prompt is gone (a fresh snapshot would bind a new
    # episode); the pending slot goes again and the host answers from its ledger
    code, retry, err = local.act("approve", "--pane", f"box:{rec.pane}")
    assert code == 0, (retry, err)
    assert (retry["slot"], retry["cached"], retry["outcome"]) == (first["slot"], True, "sent")
    assert "nothing fired again" in err
    assert rec.settle() == sent  # still exactly one answer

    # answered now: a later approve binds a fresh episode (a new slot), which the host's
    # binder refuses, since the agent is not at that prompt any more
    code, later, _err = local.act("approve", "--pane", f"box:{rec.pane}")
    assert later["slot"] != first["slot"]
    assert code in (4, 3) and later["outcome"] in ("refused", "vanished"), later
    assert rec.settle() == sent


@pytest.mark.parametrize("lie", ["slot", "pane", "action"])
def test_a_receipt_for_another_dispatch_is_refused_and_the_slot_kept(local, tmp_path, lie):
    # the host is hostile: its receipt names a dispatch this command never sent. Taken at
    # face value it would read as this approve's success (exit 0) and close the slot.
    script, log, marker = tmp_path / "hostile.py", tmp_path / "slots", tmp_path / "lie-once"
    script.write_text(HOSTILE)
    marker.touch()
    _add(local, "evil", shlex.join([sys.executable, str(script), str(log), str(marker), lie]),
         "--act", "answer")

    code, doc, err = local.act("approve", "--pane", "evil:%7")
    assert not marker.exists(), "the host never lied"
    assert (code, doc["outcome"], doc["cached"]) == (1, "error", False), (doc, err)
    assert "the host answered with a receipt for another dispatch" in doc["message"]
    sent = log.read_text().split()
    assert doc["slot"] == sent[0]
    outbox = Path(local.env["XDG_STATE_HOME"]) / "tma" / "fleet" / "dispatch.jsonl"
    lines = [json.loads(x) for x in outbox.read_text().splitlines()]
    assert [(x["slot"], x["status"]) for x in lines] == [(sent[0], "pending")]

    # the retry re-sends the same slot (its fate is still to learn); an honest receipt
    # for it is this dispatch's answer
    code, retry, err = local.act("approve", "--pane", "evil:%7")
    assert (code, retry["outcome"], retry["slot"]) == (0, "sent", sent[0]), (retry, err)
    assert log.read_text().split() == [sent[0], sent[0]]


def test_a_refusal_by_the_hosts_gate_says_why_as_a_local_one_does(srv, sshd, local):
    # the pane is idle on the host: approve is refused there by its `when` gate. Said
    # locally, the refusal names the state; over the link it used to be one token
    cap = fixture.parse((CAPTURES / "claude-2.1.332_idle.txt").read_text("utf-8"))
    rec = KeyRecorder.start(srv, "claude", cap, after=cap, redraw_ms=100)
    srv.ls(manifests=False)
    assert srv.display(rec.pane, "#{@agent_state}") == "idle"
    here = srv.tma("act", "approve", "--pane", rec.pane, "--json", manifests=False)
    why = json.loads(here.stdout)["message"]
    assert here.returncode == 4 and why.startswith(f"{rec.pane} is idle, not at a "), why
    sshd.set_command(sshd.serve_command(srv, "--scope", "read,act:answer"))
    _add(local, "box", sshd.via(), "--act", "answer")
    code, doc, err = local.act("approve", "--pane", f"box:{rec.pane}")
    assert (code, doc["outcome"], doc["reason"]) == (4, "refused", "gated"), doc
    assert doc["message"] == f"host box refused approve on box:{rec.pane}: {why}", doc
    assert why in err
    assert rec.settle() == b""
    # the host's ledger keeps the sentence: a repeat of the slot says it again
    outbox = Path(local.env["XDG_STATE_HOME"]) / "tma" / "fleet" / "dispatch.jsonl"
    episode = json.loads(outbox.read_text().splitlines()[0])["episode_ms"]
    code, again, _err = local.act("approve", "--pane", f"box:{rec.pane}",
                                  "--expect-episode", str(episode))
    assert (code, again["cached"]) == (4, True) and why in again["message"], again


def test_a_read_only_host_refuses_act(srv, sshd, local):
    rec = _claude(srv)
    _blocked(srv, rec)
    sshd.set_command(sshd.serve_command(srv, "--scope", "read"))
    # asked for here, not granted there: the host's hello says so, nothing is sent
    _add(local, "ro", sshd.via(), "--act", "answer")
    code, doc, err = local.act("approve", "--pane", f"ro:{rec.pane}")
    assert (code, doc["outcome"], doc["reason"], doc["slot"]) == (4, "refused",
                                                                  "scope-denied", None)
    assert "does not grant act:answer" in doc["message"]
    assert "--scope read,act:answer" in doc["message"]
    # not asked for here: refused before any link
    _add(local, "ro", sshd.via())
    code, doc, err = local.act("approve", "--pane", f"ro:{rec.pane}")
    assert (code, doc["reason"]) == (4, "scope-denied")
    assert "read-only here" in doc["message"] and "--act answer" in doc["message"]
    # steer needs the wider grant, even on a host that answers
    sshd.set_command(sshd.serve_command(srv, "--scope", "read,act:answer"))
    _add(local, "ro", sshd.via(), "--act", "answer")
    code, doc, err = local.act("steer", "--text", "hi", "--pane", f"ro:{rec.pane}")
    assert (code, doc["reason"]) == (4, "scope-denied") and "act:steer" in doc["message"]
    assert rec.settle() == b""
    outbox = Path(local.env["XDG_STATE_HOME"]) / "tma" / "fleet" / "dispatch.jsonl"
    assert not outbox.exists()  # nothing was ever sent


def test_unknown_host_and_local_only_flags(local):
    res = local.tma("act", "approve", "--pane", "nowhere:%1")
    assert res.returncode == 1 and "no host named 'nowhere'" in res.stderr
    res = local.tma("act", "approve", "--pane", "nowhere:%1", "--dry-run")
    assert res.returncode == 2 and "--dry-run does not go over the link" in res.stderr
    res = local.tma("act", "approve", "--pane", "a:b:%1")
    assert res.returncode == 2
