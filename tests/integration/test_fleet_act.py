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
