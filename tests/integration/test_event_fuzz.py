"""Hostile input to `tma event`: any bytes, huge payloads, format injection.

Mixed with valid payloads that must stamp: the stamp count equals the valid count,
nothing is printed, the exit code is always 0, every tuple still decodes and no
`#{…}` / `#(…)` is ever expanded.
"""

from __future__ import annotations

import subprocess
import sys

from hypothesis import HealthCheck, given, settings, strategies as st

from tma.core import codec

HOSTILE = st.one_of(
    st.binary(max_size=2048),
    st.text(max_size=512).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([
        b"\xff\xfe\x00garbage", b"{", b'{"session_id": "#{pane_id}", "model": "#(touch X)"}',
        b'{"session_id": "a,b}c", "tool_name": "#{?1,a,b}"}', b"\x00" * 4096,
        b'{"session_id": "' + b"\\u0000" * 50 + b'"}',
        b"{" + b'"k":' * 2000 + b"1}",
    ]),
)


def _stamp(srv, pane, payload: bytes, marker) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), "event", "--agent", "fake", "--kind", "Hint", "--pane", pane]
    env = dict(srv.env, TMA_HOOK_STRICT="1")
    payload = payload.replace(b"X)", str(marker).encode() + b")")
    return subprocess.run(argv, input=payload, capture_output=True, env=env, timeout=30)


def test_fuzz_event_payloads(srv):
    pane = srv.agent_pane()
    marker = srv.root / "expanded"
    counts = {"valid": 0, "stamps": 0}
    last = {"at": ""}

    @settings(max_examples=60, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(st.lists(st.tuples(st.booleans(), HOSTILE), min_size=1, max_size=3))
    def run(batch):
        for valid, junk in batch:
            payload = junk + b' VALID-7f3a ' if valid else junk.replace(b"VALID-7f3a", b"")
            res = _stamp(srv, pane, payload, marker)
            assert res.returncode == 0, res.stderr
            assert res.stdout == b""
            opts = srv.options(pane)
            codec.decode(opts)  # never raises: every tuple stays readable
            at = opts.get("@agent_stamped_at", "")
            if valid:
                counts["valid"] += 1
            if at != last["at"]:
                counts["stamps"] += 1
                last["at"] = at
            for key, value in opts.items():
                assert "#{" not in value or key in ("@agent_pending_summary",), (key, value)

    run()
    assert counts["stamps"] == counts["valid"] > 0
    assert not marker.exists()


def test_one_megabyte_payload(srv):
    pane = srv.agent_pane()
    big = b'{"session_id":"big","x":"' + b"a" * (1 << 20) + b'"} VALID-7f3a'
    res = _stamp(srv, pane, big, srv.root / "none")
    assert (res.returncode, res.stdout) == (0, b"")
    assert srv.option(pane, "@agent_state") == "blocked"
    assert srv.option(pane, "@agent_session") == "big"
