"""tma.runtime.web's pure pieces: the bind check, a pane's host, a fleet host's row read
back into the FleetRow it was made from, and the device store's pairing rules."""

from __future__ import annotations

import pytest

from tma.core import proto
from tma.runtime.web import devices, server
from tma.ui.rows import fleet_row_dict


@pytest.mark.parametrize("addr,want", [("127.0.0.1", "127.0.0.1"), ("127.0.0.2", "127.0.0.2"),
                                       ("::1", "::1"), ("[::1]", "::1"),
                                       ("localhost", "127.0.0.1")])
def test_loopback_binds(addr, want):
    assert server.check_bind(addr) == want


@pytest.mark.parametrize("addr", ["0.0.0.0", "::", "192.168.1.5", "box.example", ""])
def test_any_other_bind_is_refused_naming_the_ways_in(addr):
    with pytest.raises(server.BindRefused) as got:
        server.check_bind(addr)
    for way in ("tailscale serve", "ssh -L", "reverse proxy"):
        assert way in str(got.value)


def test_a_pane_names_its_host_or_is_this_machines():
    assert server.split_pane("%3", "here") == ("here", "%3")
    assert server.split_pane("devbox:%3", "here") == ("devbox", "%3")


def _row(**kw) -> proto.FleetRow:
    values = dict(
        pane="%4", agent="claude", state="blocked", detail="permission", since=1_700_000_000,
        since_ms=1_700_000_000_123, episode_ms=1_700_000_000_123, locator="w:1.0",
        attention=True, done=False, session="s-1", transcript="/t.jsonl",
        permission_request="req-1", stamped_at_ms=1_700_000_000_200, context=40,
        context_at_ms=5, muted=False, tokens=1200,
        quota=proto.Quota(pct=12, window="5h", resets_at_ms=9), cost_usd=0.5, repo="tma",
        branch="main", worktree=False, pending_tool="Bash", pending_call="call-1",
        pending_summary="rm -rf build", server="/tmp/tmux-1/default", host="devbox")
    values.update(kw)
    return proto.FleetRow(**values)


@pytest.mark.parametrize("row", [_row(), _row(quota=None, detail=None, repo=None, branch=None,
                                              worktree=None, cost_usd=None, state="idle")])
def test_a_fleet_hosts_row_reads_back_as_the_row_it_was(row):
    assert server.remote_row(fleet_row_dict(row, host=row.host)) == row


def test_a_row_that_is_not_one_is_left_out():
    assert server.remote_row({"pane": "%1"}) is None


def test_a_code_pairs_once_and_wrong_tries_void_it(tmp_path):
    now = [1000]
    store = devices.Store(str(tmp_path), clock=lambda: now[0])
    code, expires = store.new_code("phone", ("read", "act:answer"))
    assert expires == 1000 + devices.CODE_TTL_MS and len(code) == devices.CODE_LEN
    token, dev = store.redeem(f" {code.lower()} ")
    assert (dev.name, dev.scopes) == ("phone", ("read", "act:answer"))
    assert store.device_for(token) == dev and store.device_for("x" + token) is None
    with pytest.raises(devices.DeviceError, match="no pairing code"):
        store.redeem(code)
    code, _ = store.new_code(None, ("read",))
    for _ in range(devices.CODE_TRIES - 1):
        with pytest.raises(devices.DeviceError, match="wrong"):
            store.redeem("AAAAAAA2" if code != "AAAAAAA2" else "AAAAAAA3")
    with pytest.raises(devices.DeviceError, match="last try"):
        store.redeem("AAAAAAA2" if code != "AAAAAAA2" else "AAAAAAA3")
    with pytest.raises(devices.DeviceError, match="no pairing code"):
        store.redeem(code)
    code, _ = store.new_code(None, ("read",))
    now[0] += devices.CODE_TTL_MS
    with pytest.raises(devices.DeviceError, match="expired"):
        store.redeem(code)
    assert [d.name for d in store.list()] == ["phone"]
    store.grant("phone", ("read",))
    assert store.device_for(token).scopes == ("read",)
    store.revoke("phone")
    assert store.device_for(token) is None
    with pytest.raises(devices.DeviceError):
        store.revoke("phone")
    assert oct((tmp_path / "web" / "devices.json").stat().st_mode & 0o777) == "0o600"


def test_a_revoked_devices_name_is_not_given_to_the_next_browser(tmp_path):
    """browser-1 revoked, the next pairing is browser-2: the ledger keeps receipts by
    device name, and a new browser must not inherit the old one's."""
    store = devices.Store(str(tmp_path), clock=lambda: 1000)
    names = []
    for revoke in (True, False, False):
        code, _ = store.new_code(None, ("read",))
        _token, dev = store.redeem(code)
        names.append(dev.name)
        if revoke:
            store.revoke(dev.name)
    assert names == ["browser-1", "browser-2", "browser-3"]
    assert [d.name for d in store.list()] == ["browser-2", "browser-3"]


def test_a_device_name_is_a_plain_token():
    for bad in ("", "a b", "x:y", "a/b", "é", "x" * 65):
        with pytest.raises(devices.DeviceError):
            devices.check_name(bad)
    assert devices.check_name("my-phone_2.0") == "my-phone_2.0"
