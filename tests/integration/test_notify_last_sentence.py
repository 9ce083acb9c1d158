"""The agent's last sentence on a notification: read from its transcript only where
`[notify] last_sentence` opts in, and sent off the machine only by a push sink that opts
in too.

Driven through the hook path for real: `tma event` for a finished turn (the fake agent's
`Stop`, whose payload names a recorded Claude transcript as a hook does), on a pane of a
private tmux server, rings the log sink and real HTTP receivers (the webhook and ntfy,
tests/helpers/http_sink.py) from its detached sender.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import jsonschema
import pytest

from tests.helpers.http_sink import Sink

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "notify.schema.json").read_text(encoding="utf-8"))
# a `[notify] log` line: $defs/log_line, whose properties point back at the payload's
LOG_LINE = {"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"],
            "properties": SCHEMA["properties"], "$ref": "#/$defs/log_line"}
PLAIN = next((ROOT / "tests/fixtures/transcripts/claude-2.1.332/plain").glob("*.jsonl"))
#: the recorded reply is "Hello from mockllm. This is a short scripted reply."
SENTENCE = "This is a short scripted reply."


@pytest.fixture
def receivers():
    made = [Sink(), Sink()]
    yield made
    for s in made:
        s.close()


def _ring(srv, receivers, notify: str, webhook: str = "", ntfy: str = "") -> tuple[dict, dict, bytes]:
    """One finished turn on a fake agent pane whose hook names a copy of a recorded
    Claude transcript: (the log line, the webhook's document, ntfy's body)."""
    hook, ntfy_sink = receivers
    log = srv.root / "notify.jsonl"
    transcript = srv.root / "session.jsonl"
    shutil.copyfile(PLAIN, transcript)
    srv.config.write_text(
        f'[notify]\nfrom_event = true\non = ["done"]\nmessage = false\ndesktop = false\n'
        f'log = "{log}"\n{notify}\n'
        f'[notify.webhook]\nurl = "{hook.url()}"\n{webhook}\n'
        f'[notify.ntfy]\nurl = "{ntfy_sink.url("/topic")}"\n{ntfy}\n')
    pane = srv.agent_pane()
    payload = json.dumps({"session_id": "3c1f31b0-7444-49a0-ab01-61146d05fda3",
                          "transcript_path": str(transcript)})
    # the transcript is Claude's: the fake agent reads it with Claude's store module
    env = {"TMA_HOOK_STRICT": "1", "TMA_TRANSCRIPT_STORES": "fake=tma.core.transcript.claude"}
    for kind in ("Work", "Stop"):
        res = srv.tma("event", "--agent", "fake", "--kind", kind, "--pane", pane,
                      input=payload, env=env)
        assert res.returncode == 0 and res.stdout == "", res.stderr
        time.sleep(0.005)
    doc = json.loads(hook.wait(1)[0].body)
    body = ntfy_sink.wait(1)[0].body
    lines = log.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1, lines
    line = json.loads(lines[0])
    jsonschema.validate(line, LOG_LINE)
    assert line["state"] == "done" and line["pane"] == pane
    return line, doc, body


def test_off_by_default_nothing_carries_a_sentence(srv, receivers):
    line, doc, body = _ring(srv, receivers, "")
    assert line["last_sentence"] is None
    assert "last_sentence" not in doc and SENTENCE not in json.dumps(doc)
    assert SENTENCE.encode() not in body


def test_opted_in_this_machine_carries_it_and_no_push_sink_does(srv, receivers):
    line, doc, body = _ring(srv, receivers, "last_sentence = true")
    assert line["last_sentence"] == SENTENCE
    # off the machine only where the sink opts in too
    assert "last_sentence" not in doc and SENTENCE not in json.dumps(doc)
    assert SENTENCE.encode() not in body


def test_a_push_sink_that_opts_in_too_sends_it(srv, receivers):
    line, doc, body = _ring(srv, receivers, "last_sentence = true",
                            webhook="include_last_sentence = true",
                            ntfy="include_last_sentence = true")
    assert line["last_sentence"] == SENTENCE
    assert doc["last_sentence"] == SENTENCE
    assert body.decode().splitlines()[1] == SENTENCE


def test_one_sink_opting_in_leaves_the_other_out(srv, receivers):
    _line, doc, body = _ring(srv, receivers, "last_sentence = true",
                             webhook="include_last_sentence = true")
    assert doc["last_sentence"] == SENTENCE
    assert SENTENCE.encode() not in body

