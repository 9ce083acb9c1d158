"""The link's bad-input bounds against real child processes that misbehave on purpose:
each one ends as a named state within its deadline, the child killed when it lingers.

The far ends here are small Python programs that answer the hello the way a broken or
foreign host would (a banner that never ends, a huge line, a malformed frame, another
schema, silence); the real `tma serve` behind a real sshd is tests/integration/test_fleet.py.
"""

from __future__ import annotations

import sys
import time

from tma.runtime.fleet import link

HELLO = ('{"schema":1,"id":"1","t":"hello","host":"h","tma_version":"9","'
         'reconcile_interval_ms":2000,"scopes":["read"]}')


def _far(body: str) -> list[str]:
    """A far end: reads the hello line, then runs `body` (sys and time imported)."""
    return [sys.executable, "-c",
            "import sys, time\nsys.stdin.readline()\n" + body]


def _probe(body: str, timeout: float = 3.0) -> tuple[link.Probe, float]:
    start = time.monotonic()
    p = link.converse("h", _far(body), timeout=timeout)
    return p, time.monotonic() - start


def test_a_short_banner_is_skipped_and_counted():
    p, _ = _probe(f"print('motd line 1'); print('motd 2'); print({HELLO!r}, flush=True)\n"
                  "sys.stdin.readline()\n"
                  "print('{\"schema\":1,\"id\":\"2\",\"t\":\"snapshot\",\"agents\":[]}', "
                  "flush=True)\nsys.stdin.read()")
    assert (p.state, p.banner, p.rows) == ("ok", 2, ())
    assert p.hello is not None and p.hello.tma_version == "9"
    assert p.banner_note().startswith("the remote shell printed 2 lines before tma")


def test_an_endless_banner_is_cut_at_the_cap():
    p, took = _probe("while True: print('chatter', flush=True)")
    assert p.state == "banner" and p.banner == link.BANNER_LINES + 1
    assert took < 3


def test_a_huge_line_is_frame_too_large():
    size = link.MAX_RESPONSE_BYTES + 10
    p, took = _probe(f"sys.stdout.write('{{' + 'x' * {size}); sys.stdout.flush(); "
                     "time.sleep(30)", timeout=10)
    assert p.state == "frame-too-large", (p.state, p.error)
    assert took < 10


def test_a_malformed_frame_after_hello_is_bad_frame():
    p, _ = _probe(f"print({HELLO!r}, flush=True)\nsys.stdin.readline()\n"
                  "print('{\"schema\":1,\"id\":\"2\",\"t\":\"snapshot\",\"agents\":7}', "
                  "flush=True)\nsys.stdin.read()")
    assert p.state == "bad-frame" and "agents" in p.error


def test_another_schema_is_unsupported_schema():
    p, _ = _probe("print('{\"schema\":2,\"id\":\"1\",\"t\":\"hello\"}', flush=True)\n"
                  "sys.stdin.read()")
    assert p.state == "unsupported-schema"


def test_silence_times_out_and_the_child_is_killed():
    p, took = _probe("time.sleep(60)", timeout=1.0)
    assert p.state == "timeout" and took < 3
    assert p.exit_code is not None and p.exit_code < 0  # killed, not left behind


def test_an_exit_before_any_frame_names_its_cause():
    p, _ = _probe("sys.stderr.write('tma: no tmux server running\\n'); sys.exit(1)")
    assert p.state == "tmux-down"
    p, _ = _probe("sys.stderr.write('sh: 1: tma: not found\\n'); sys.exit(127)")
    assert p.state == "tma-missing" and "tma: not found" in p.error
    p, _ = _probe("sys.stderr.write('something else broke\\n'); sys.exit(3)")
    assert (p.state, p.error) == ("closed", "something else broke")


def test_a_transport_that_cannot_start_is_named():
    p = link.converse("h", ["/nonexistent/transport"], timeout=1)
    assert p.state == "spawn-failed" and "/nonexistent/transport" in p.error


def test_hosts_are_probed_in_parallel():
    slow = _far("time.sleep(60)")
    start = time.monotonic()
    probes = link.probe_all([("a", slow), ("b", slow), ("c", slow)], timeout=1.5)
    assert [p.state for p in probes] == ["timeout"] * 3
    assert time.monotonic() - start < 3.5  # one timeout, not three
