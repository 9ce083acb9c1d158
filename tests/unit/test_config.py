"""config.validate: every section's bad key is an error naming the key (one step each)."""

from __future__ import annotations

import re

import pytest

from tma.runtime import config

P = "/c.toml"


@pytest.mark.parametrize("doc,key", [
    ({"bogus": 1}, "bogus"),
    ({"agents": {}}, "agents"),
    ({"fold": {"dwell_secs": -1}}, "fold.dwell_secs"),
    ({"status": {"idle": {"glyph": 3}}}, "status.idle.glyph"),
    ({"picker": {"nope": {}}}, "picker.nope"),
    ({"tmux": {"bin": 1}}, "tmux.bin"),
    ({"hooks": {"hold_ms": "x"}}, "hooks.hold_ms"),
    ({"notify": {"on": ["working"]}}, "notify.on"),
    ({"notify": {"context_high": {}}}, "notify.context_high.threshold"),
    ({"notify": {"context_high": {"threshold": 101}}}, "notify.context_high.threshold"),
    ({"notify": {"done": {"x": 1}}}, "notify.done.x"),
    ({"notify": {"desktop": "yes"}}, "notify.desktop"),
    ({"notify": {"desktop": 1}}, "notify.desktop"),
    ({"notify": {"desktop_actions": "yes"}}, "notify.desktop_actions"),
    ({"notify": {"desktop_actions": 1}}, "notify.desktop_actions"),
    ({"notify": {"message": "off"}}, "notify.message"),
    ({"notify": {"terminal": True}}, "notify.terminal"),
    ({"notify": {"terminal": {"enabled": "yes"}}}, "notify.terminal.enabled"),
    ({"notify": {"terminal": {"osc": 8}}}, "notify.terminal.osc"),
    ({"notify": {"terminal": {"osc": [9, "777"]}}}, "notify.terminal.osc"),
    ({"notify": {"terminal": {"osc": []}}}, "notify.terminal.osc"),
    ({"notify": {"terminal": {"osc": True}}}, "notify.terminal.osc"),
    ({"notify": {"terminal": {"bell": 0}}}, "notify.terminal.bell"),
    ({"notify": {"terminal": {"sound": 1}}}, "notify.terminal.sound"),
    ({"notify": {"quiet_if_active_s": -1}}, "notify.quiet_if_active_s"),
    ({"notify": {"quiet_if_active_s": True}}, "notify.quiet_if_active_s"),
    ({"notify": {"quiet_if_active_s": 86_401}}, "notify.quiet_if_active_s"),
    ({"notify": {"coalesce_done_ms": "3s"}}, "notify.coalesce_done_ms"),
    ({"notify": {"coalesce_done_ms": 60_001}}, "notify.coalesce_done_ms"),
    ({"focus": {"events": 1}}, "focus.events"),
    ({"install": {"wrapper_ref": "weird"}}, "install.wrapper_ref"),
    ({"telemetry": {"windows": {"m": -5}}}, "telemetry.windows.m"),
    ({"daemon": {"autostart": 1}}, "daemon.autostart"),
    ({"agent": [{"enabled": True}]}, "agent[0].name"),
    ({"agent": [{"name": "x", "process_names": "y"}]}, "agent[0].process_names"),
    ({"api": {"opencode": {"api_base": 1}}}, "api.opencode.api_base"),
    ({"fleet": {"status": "on"}}, "fleet.status"),
    ({"fleet": {"keepalive_secs": 0}}, "fleet.keepalive_secs"),
    ({"fleet": {"keepalive_secs": 61}}, "fleet.keepalive_secs"),
    ({"fleet": {"poll": 1}}, "fleet.poll"),
    ({"serve": {"max_connections": 65}}, "serve.max_connections"),
    ({"serve": {"idle_secs": 1}}, "serve.idle_secs"),
    ({"serve": {"idle_secs": "5m"}}, "serve.idle_secs"),
    ({"serve": {"idle_secs": True}}, "serve.idle_secs"),
    ({"serve": {"max_per_device": 0}}, "serve.max_per_device"),
    ({"serve": {"max_per_device": 5}}, "serve.max_per_device"),
    ({"serve": {"max_connections": 2, "max_per_device": 3}}, "serve.max_per_device"),
    ({"serve": {"idle": 60}}, "serve.idle"),
])
def test_a_bad_key_is_named(doc, key):
    with pytest.raises(config.ConfigError, match=rf"^tma: config {re.escape(P)}: "
                                                 rf"{re.escape(key)}: "):
        config.validate(P, doc)


def test_the_terminal_sink_reads_its_table():
    from tma.runtime.notify import gate as notify_gate

    def gate(table):
        cfg = config.Config()
        cfg.notify = config.validate(P, {"notify": {"terminal": table}})["notify"]
        return notify_gate.terminal(cfg)

    assert gate({}) is None and gate({"enabled": False, "osc": 99}) is None
    assert gate({"enabled": True}) == ((9,), True)
    assert gate({"enabled": True, "osc": 777, "bell": False}) == ((777,), False)
    assert gate({"enabled": True, "osc": [99, 9, 777]}) == ((9, 777, 99), True)


def test_the_first_bad_section_wins_in_file_order():
    doc = {"notify": {"on": "x"}, "focus": {"events": 1}}
    with pytest.raises(config.ConfigError, match="notify.on"):
        config.validate(P, doc)


def test_a_good_document_round_trips():
    doc = {"fold": {"dwell_secs": 5}, "status": {"idle": {"glyph": "o"}}, "tmux": {"bin": "t"},
           "hooks": {"hold_ms": 1}, "notify": {"on": ["done"], "from_event": True},
           "focus": {"events": True}, "install": {"wrapper_ref": "bare"},
           "telemetry": {"windows": {"m": 100}}, "daemon": {"quiet_ms": 200},
           "agent": [{"name": "x"}], "api": {"opencode": {"api_base": "http://h"}}}
    out = config.validate(P, doc)
    assert out["dwell_secs"] == 5 and out["tmux_bin"] == "t" and out["focus_events"] is True
    assert out["wrapper_ref"] == "bare" and out["telemetry_windows"] == {"m": 100}
    assert out["api"] == {"opencode": {"api_base": "http://h"}} and out["agents"] == [
        {"name": "x"}]


def test_daemon_ranges_are_checked_where_the_config_loads():
    import pytest

    from tma.runtime import config

    for key, (low, high) in config.DAEMON_RANGES.items():
        for bad in (low - 1, high + 1):
            if bad < 0:
                continue
            with pytest.raises(config.ConfigError, match=f"daemon.{key}: must be between"):
                config.validate("/c.toml", {"daemon": {key: bad}})
        config.validate("/c.toml", {"daemon": {key: low}})


def test_serve_settings_default_a_share_of_half_the_seats():
    from tma.runtime.fleet import serve

    def settings(table):
        cfg = config.Config()
        cfg.serve = config.validate(P, {"serve": table})["serve"]
        return serve.settings(cfg)

    assert settings({}) == (4, 2, 300)
    assert settings({"max_connections": 5}) == (5, 3, 300)  # half, rounded up
    assert settings({"max_connections": 0}) == (1, 1, 300)  # 0 counts as 1
    assert settings({"max_connections": 8, "max_per_device": 8, "idle_secs": 30}) == (8, 8, 30)
