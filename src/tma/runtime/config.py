"""config.toml: defaults for every key, strict validation, a TOML-free fast path.

Path: --config > TMA_CONFIG > $XDG_CONFIG_HOME/tma/config.toml > ~/.config/tma/config.toml.
A missing file means defaults. A malformed file or an unknown key is an error
naming the file and the key. The hot paths never parse TOML: the validated config
is cached (marshal, keyed by path, mtime and size) and re-read only on change.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLASSES = ("blocked", "working", "idle", "done", "unknown")

STATUS_DEFAULTS = {
    "blocked": ("⚑", "red"),
    "working": ("●", "yellow"),
    "idle": ("○", "green"),
    "done": ("✓", "magenta"),
    "unknown": ("?", "colour244"),
}
PICKER_DEFAULTS = dict(STATUS_DEFAULTS, unknown=("?", "darkgray"))


class ConfigError(Exception):
    pass


class Config:
    """Every setting, defaulted. A plain class: this module sits on the hot paths."""

    def __init__(self, path: str | None = None):
        self.path = path
        self.load_error: str | None = None  # doctor: why the file did not load (defaults)
        self.dwell_secs = 3
        self.hook_decay_secs = 60
        self.blocked_decay_secs = 300
        self.freshness_secs = 3
        self.status = dict(STATUS_DEFAULTS)
        self.picker = dict(PICKER_DEFAULTS)
        self.tmux_bin: str | None = None
        self.claude_reply_lane = True
        self.hold_ms = 25_000
        self.notify: dict = {}
        self.focus_events = False
        self.wrapper_ref = "absolute"
        self.telemetry_windows: dict = {}
        self.daemon: dict = {}
        self.agents: list = []
        self.api: dict = {}
        self.serve: dict = {}
        self.fleet: dict = {}
        self.web: dict = {}

    def fold(self):
        from tma.core.fold import FoldConfig

        return FoldConfig(self.dwell_secs * 1000, self.hook_decay_secs * 1000,
                          self.blocked_decay_secs * 1000, self.freshness_secs * 1000)


def resolve_path(explicit: str | None) -> str:
    from tma.core.paths import here

    return here().config_file(explicit)


def _err(path: str, key: str, msg: str) -> ConfigError:
    return ConfigError(f"tma: config {path}: {key}: {msg}")


def _uint(path: str, key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _err(path, key, "must be a non-negative integer")
    return value


def _bool(path: str, key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _err(path, key, "must be true or false")
    return value


def _str(path: str, key: str, value: object) -> str:
    if not isinstance(value, str):
        raise _err(path, key, "must be a string")
    return value


def _table(path: str, key: str, value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise _err(path, key, "must be a table")
    return value


def _known(path: str, prefix: str, table: dict[str, object], allowed: tuple[str, ...]) -> None:
    for key in table:
        if key not in allowed:
            where = f"{prefix}.{key}" if prefix else key
            raise _err(path, where, f"unknown key (expected one of: {', '.join(allowed)})")


_NOTIFY_KEYS = ("from_event", "command", "on", "bell", "osc", "log", "blocked", "done",
                "context_high", "desktop", "desktop_actions", "message", "terminal",
                "quiet_if_active_s", "coalesce_done_ms", "ntfy", "webhook", "last_sentence")
# a day of quiet, a minute of holding `done`: beyond these a value is a typo, not a wish
NOTIFY_RANGES = {"quiet_if_active_s": (0, 86_400), "coalesce_done_ms": (0, 60_000)}
_DAEMON_KEYS = ("sweep_secs", "quiet_ms", "zero_member_recheck_secs", "demote_edges", "autostart")
# checked here, not only in the daemon: with autostart a surface that loaded a config the
# daemon would refuse would start a doomed daemon on every run
DAEMON_RANGES = {"sweep_secs": (1, 86_400), "quiet_ms": (100, 10_000),
                 "zero_member_recheck_secs": (1, 3600), "demote_edges": (1, 1_000_000)}


def validate(path: str, doc: dict[str, object]) -> dict[str, object]:
    """Check every key; return a plain dict (marshal-able) of the settings."""
    _known(path, "", doc, ("fold", "status", "picker", "tmux", "hooks", "notify", "focus",
                           "install", "telemetry", "daemon", "agent", "api", "agents",
                           "serve", "fleet", "web"))
    if "agents" in doc:
        raise _err(path, "agents", "the [agents] table was renamed to [api]")
    out: dict[str, object] = {}
    for section in _SECTIONS:
        section(path, doc, out)
    return out


def _fold(path: str, doc: dict, out: dict) -> None:
    fold = _table(path, "fold", doc.get("fold", {}))
    _known(path, "fold", fold, ("dwell_secs", "hook_decay_secs", "blocked_decay_secs",
                                "freshness_secs"))
    for k, v in fold.items():
        out[k] = _uint(path, f"fold.{k}", v)


def _glyphs(path: str, doc: dict, out: dict) -> None:
    for section in ("status", "picker"):
        table = _table(path, section, doc.get(section, {}))
        _known(path, section, table, CLASSES)
        entries = {}
        for cls, entry in table.items():
            entry = _table(path, f"{section}.{cls}", entry)
            _known(path, f"{section}.{cls}", entry, ("glyph", "color"))
            entries[cls] = {k: _str(path, f"{section}.{cls}.{k}", v) for k, v in entry.items()}
        out[section] = entries


def _tmux_hooks(path: str, doc: dict, out: dict) -> None:
    tmux = _table(path, "tmux", doc.get("tmux", {}))
    _known(path, "tmux", tmux, ("bin",))
    if "bin" in tmux:
        out["tmux_bin"] = _str(path, "tmux.bin", tmux["bin"])
    hooks = _table(path, "hooks", doc.get("hooks", {}))
    _known(path, "hooks", hooks, ("claude_reply_lane", "hold_ms"))
    if "claude_reply_lane" in hooks:
        out["claude_reply_lane"] = _bool(path, "hooks.claude_reply_lane", hooks["claude_reply_lane"])
    if "hold_ms" in hooks:
        out["hold_ms"] = _uint(path, "hooks.hold_ms", hooks["hold_ms"])


def _focus_install(path: str, doc: dict, out: dict) -> None:
    focus = _table(path, "focus", doc.get("focus", {}))
    _known(path, "focus", focus, ("events",))
    if "events" in focus:
        out["focus_events"] = _bool(path, "focus.events", focus["events"])
    install = _table(path, "install", doc.get("install", {}))
    _known(path, "install", install, ("wrapper_ref",))
    if "wrapper_ref" in install:
        if install["wrapper_ref"] not in ("absolute", "bare"):
            raise _err(path, "install.wrapper_ref", "must be \"absolute\" or \"bare\"")
        out["wrapper_ref"] = install["wrapper_ref"]


def _notify(path: str, doc: dict, out: dict) -> None:
    notify = _table(path, "notify", doc.get("notify", {}))
    _known(path, "notify", notify, _NOTIFY_KEYS)
    for key in ("from_event", "bell", "osc", "message", "last_sentence"):
        if key in notify:
            _bool(path, f"notify.{key}", notify[key])
    _desktop(path, notify)
    for key in ("command", "log"):
        if key in notify:
            _str(path, f"notify.{key}", notify[key])
    for key, (lo, hi) in NOTIFY_RANGES.items():
        if key in notify and not lo <= _uint(path, f"notify.{key}", notify[key]) <= hi:
            raise _err(path, f"notify.{key}", f"must be {lo}-{hi}")
    if "on" in notify:
        on = notify["on"]
        if not isinstance(on, list) or any(v not in ("blocked", "done") for v in on):
            raise _err(path, "notify.on", "must be a list of \"blocked\" and \"done\"")
    for trig in ("blocked", "done"):
        if trig in notify:
            t = _table(path, f"notify.{trig}", notify[trig])
            _known(path, f"notify.{trig}", t, ("command",))
            if "command" in t:
                _str(path, f"notify.{trig}.command", t["command"])
    _notify_tables(path, notify)
    out["notify"] = notify


def _notify_tables(path: str, notify: dict) -> None:
    """The sub-tables that configure one trigger or one sink each."""
    if "context_high" in notify:
        _context_high(path, notify["context_high"])
    if "terminal" in notify:
        _terminal(path, notify["terminal"])
    for name in ("ntfy", "webhook"):
        if name in notify:
            _push(path, name, notify[name])
            # the sentence leaves the machine only when both say so: a sink that asks for
            # it without [notify]'s own opt-in would send nothing, silently
            if notify[name].get("include_last_sentence") is True \
                    and notify.get("last_sentence") is not True:
                raise _err(path, f"notify.{name}.include_last_sentence",
                           "needs notify.last_sentence = true (the sentence is read only "
                           "where [notify] opts in)")


def _desktop(path: str, notify: dict) -> None:
    """`desktop` and `desktop_actions`: a bool, or the one string each also takes."""
    for key, word, must in (("desktop", "auto", "must be \"auto\", true or false"),
                            ("desktop_actions", "jump",
                             "must be true (Approve / Deny buttons and jump), \"jump\" "
                             "(the jump only) or false (no actions)")):
        if key in notify and not (notify[key] == word or isinstance(notify[key], bool)):
            raise _err(path, f"notify.{key}", must)


def _terminal(path: str, value: object) -> None:
    from tma.runtime.notify.gate import TERMINAL_OSC

    t = _table(path, "notify.terminal", value)
    _known(path, "notify.terminal", t, ("enabled", "osc", "bell"))
    for key in ("enabled", "bell"):
        if key in t:
            _bool(path, f"notify.terminal.{key}", t[key])
    if "osc" in t:
        osc = t["osc"]
        codes = [osc] if isinstance(osc, int) and not isinstance(osc, bool) else osc
        if not isinstance(codes, list) or not codes or any(
                isinstance(c, bool) or c not in TERMINAL_OSC for c in codes):
            raise _err(path, "notify.terminal.osc",
                       "must be 9, 777 or 99, or a non-empty list of them")


def _context_high(path: str, value: object) -> None:
    t = _table(path, "notify.context_high", value)
    _known(path, "notify.context_high", t, ("threshold", "command"))
    if "threshold" not in t:
        raise _err(path, "notify.context_high.threshold", "required when the table is present")
    th = _uint(path, "notify.context_high.threshold", t["threshold"])
    if th > 100:
        raise _err(path, "notify.context_high.threshold", "must be 0-100")


_PUSH_COMMON = ("url", "on", "include_title", "include_screen", "include_last_sentence",
                "timeout_s", "retries")
_PUSH_KEYS = {"ntfy": _PUSH_COMMON + ("token", "token_file", "priority", "tags"),
              "webhook": _PUSH_COMMON + ("secret", "secret_file")}
NTFY_PRIORITIES = ("min", "low", "default", "high", "max", "urgent")


def _push(path: str, name: str, value: object) -> None:
    """[notify.ntfy] and [notify.webhook]: the phone-reaching sinks (off without a url)."""
    where = f"notify.{name}"
    t = _table(path, where, value)
    _known(path, where, t, _PUSH_KEYS[name])
    if "url" not in t:
        raise _err(path, f"{where}.url", "required when the table is present")
    url = _str(path, f"{where}.url", t["url"])
    scheme, sep, rest = url.partition("://")
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    if not sep or scheme.lower() not in ("http", "https") or not host \
            or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise _err(path, f"{where}.url", "must be an http:// or https:// URL with a host")
    if "on" in t:
        on = t["on"]
        if not isinstance(on, list) or any(v not in ("blocked", "done", "context_high")
                                           for v in on):
            raise _err(path, f"{where}.on",
                       "must be a list of \"blocked\", \"done\" and \"context_high\"")
    for key in ("include_title", "include_screen", "include_last_sentence"):
        if key in t:
            _bool(path, f"{where}.{key}", t[key])
    if "timeout_s" in t:
        v = t["timeout_s"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.1 <= v <= 60:
            raise _err(path, f"{where}.timeout_s", "must be a number of seconds, 0.1 to 60")
    if "retries" in t and not 0 <= _uint(path, f"{where}.retries", t["retries"]) <= 5:
        raise _err(path, f"{where}.retries", "must be between 0 and 5")
    _push_secret_ntfy(path, name, t)


def _push_secret_ntfy(path: str, name: str, t: dict) -> None:
    where = f"notify.{name}"
    secret, secret_file = ("token", "token_file") if name == "ntfy" else ("secret", "secret_file")
    for key in (secret, secret_file):
        if key in t and not _str(path, f"{where}.{key}", t[key]):
            raise _err(path, f"{where}.{key}", "must not be empty")
    if secret in t and secret_file in t:
        raise _err(path, f"{where}.{secret_file}", f"give {secret} or {secret_file}, not both")
    if "priority" in t:
        p = t["priority"]
        if not (p in NTFY_PRIORITIES or (isinstance(p, int) and not isinstance(p, bool)
                                         and 1 <= p <= 5)):
            raise _err(path, f"{where}.priority",
                       "must be 1-5 or one of: " + ", ".join(NTFY_PRIORITIES))
    if "tags" in t:
        tags = t["tags"]
        if not isinstance(tags, list) or not all(
                isinstance(x, str) and x and x.isascii() and x.isprintable() and "," not in x
                for x in tags):
            raise _err(path, f"{where}.tags", "must be a list of printable ASCII words "
                       "without commas")


def _telemetry_daemon(path: str, doc: dict, out: dict) -> None:
    telemetry = _table(path, "telemetry", doc.get("telemetry", {}))
    _known(path, "telemetry", telemetry, ("windows",))
    windows = _table(path, "telemetry.windows", telemetry.get("windows", {}))
    out["telemetry_windows"] = {
        k: _uint(path, f"telemetry.windows.{k}", v) for k, v in windows.items()
    }
    daemon = _table(path, "daemon", doc.get("daemon", {}))
    _known(path, "daemon", daemon, _DAEMON_KEYS)
    for k, v in daemon.items():
        if k == "autostart":
            _bool(path, "daemon.autostart", v)
            continue
        low, high = DAEMON_RANGES[k]
        if not low <= _uint(path, f"daemon.{k}", v) <= high:
            raise _err(path, f"daemon.{k}", f"must be between {low} and {high}, got {v}")
    out["daemon"] = daemon


def _agents(path: str, doc: dict, out: dict) -> None:
    agents = doc.get("agent", [])
    if not isinstance(agents, list):
        raise _err(path, "agent", "must be an array of tables ([[agent]])")
    for i, a in enumerate(agents):
        a = _table(path, f"agent[{i}]", a)
        _known(path, f"agent[{i}]", a, ("name", "enabled", "process_names"))
        if "name" not in a:
            raise _err(path, f"agent[{i}].name", "required")
        _str(path, f"agent[{i}].name", a["name"])
        if "enabled" in a:
            _bool(path, f"agent[{i}].enabled", a["enabled"])
        if "process_names" in a:
            names = a["process_names"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise _err(path, f"agent[{i}].process_names", "must be a list of strings")
    out["agents"] = agents


def _api(path: str, doc: dict, out: dict) -> None:
    api = _table(path, "api", doc.get("api", {}))
    out_api = {}
    for agent, t in api.items():
        t = _table(path, f"api.{agent}", t)
        _known(path, f"api.{agent}", t, ("api_base",))
        out_api[agent] = {k: _str(path, f"api.{agent}.{k}", v) for k, v in t.items()}
    out["api"] = out_api


#: [serve]'s numbers (tma.runtime.fleet.serve.settings reads them): idle_secs at least 2, as a
#: connection quiet for half of it may be evicted and a second is too fine a grain.
SERVE_RANGES = {"max_connections": (0, 64), "max_per_device": (1, 64),
                "idle_secs": (2, 86_400)}


def _serve(path: str, doc: dict, out: dict) -> None:
    """[serve]: `tma serve`'s connection seats on this host."""
    serve = _table(path, "serve", doc.get("serve", {}))
    _known(path, "serve", serve, tuple(SERVE_RANGES))
    got: dict[str, int] = {}
    for key, (lo, hi) in SERVE_RANGES.items():
        if key in serve:
            got[key] = n = _uint(path, f"serve.{key}", serve[key])
            if not lo <= n <= hi:
                raise _err(path, f"serve.{key}", f"must be {lo}-{hi}, got {n}")
    cap = max(1, got.get("max_connections", 4))  # 4: tma.runtime.fleet.serve.MAX_CONNECTIONS
    if got.get("max_per_device", 0) > cap:
        # one device's share is of the seats there are: more would be no share at all
        raise _err(path, "serve.max_per_device", f"must be at most max_connections "
                   f"({cap}), got {got['max_per_device']}")
    out["serve"] = serve


FLEET_RANGES = {"keepalive_secs": (1, 60), "rings_per_minute": (1, 600)}


def _fleet(path: str, doc: dict, out: dict) -> None:
    """[fleet]: the daemon's links to the hosts in hosts.toml."""
    fleet = _table(path, "fleet", doc.get("fleet", {}))
    _known(path, "fleet", fleet, ("status", "keepalive_secs", "rings_per_minute"))
    if "status" in fleet:
        _bool(path, "fleet.status", fleet["status"])
    for key, (lo, hi) in FLEET_RANGES.items():
        if key in fleet and not lo <= _uint(path, f"fleet.{key}", fleet[key]) <= hi:
            raise _err(path, f"fleet.{key}", f"must be {lo}-{hi}")
    out["fleet"] = fleet


def _web(path: str, doc: dict, out: dict) -> None:
    """[web]: `tma web`'s names (hosts it answers to besides loopback) and its public URL
    (what `tma web pair` prints and a push notification's click opens)."""
    web = _table(path, "web", doc.get("web", {}))
    _known(path, "web", web, ("hosts", "url"))
    hosts = web.get("hosts", [])
    if not isinstance(hosts, list) or not all(
            isinstance(h, str) and h and not any(c in h for c in "/:@ ") for h in hosts):
        raise _err(path, "web.hosts", "must be a list of host names (no scheme, port or "
                   "path), e.g. [\"box.tailnet.ts.net\"]")
    if "url" in web:
        url = _str(path, "web.url", web["url"])
        if not url.startswith(("http://", "https://")):
            raise _err(path, "web.url", "must start with http:// or https://")
    out["web"] = web


#: validate()'s steps, in the order the keys are reported (the first bad key wins).
_SECTIONS = (_fold, _glyphs, _tmux_hooks, _notify, _focus_install, _telemetry_daemon,
             _agents, _api, _serve, _fleet, _web)


def _build(path: str | None, settings: dict[str, Any]) -> Config:
    cfg = Config(path=path)
    for key in ("dwell_secs", "hook_decay_secs", "blocked_decay_secs", "freshness_secs",
                "tmux_bin", "claude_reply_lane", "hold_ms", "focus_events", "wrapper_ref",
                "telemetry_windows", "notify", "daemon", "agents", "api", "serve",
                "fleet", "web"):
        if key in settings:
            setattr(cfg, key, settings[key])
    for section, defaults in (("status", STATUS_DEFAULTS), ("picker", PICKER_DEFAULTS)):
        merged = dict(defaults)
        for cls, entry in settings.get(section, {}).items():
            glyph, color = merged[cls]
            merged[cls] = (entry.get("glyph", glyph), entry.get("color", color))
        setattr(cfg, section, merged)
    return cfg


def load(explicit: str | None = None) -> Config:
    """Load the config (cached). Raises ConfigError with a message naming the key."""
    path = resolve_path(explicit)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Config(path=None)
    except OSError as exc:
        raise ConfigError(f"tma: config {path}: {exc.strerror}") from None
    from tma.runtime import cache  # only with a file (the default config reads none)

    key = ("config", path, st.st_mtime_ns, st.st_size)
    settings = cache.get("config", key)
    if settings is None:
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise ConfigError(f"tma: config {path}: {exc.strerror}") from None
        import tomllib

        try:
            doc = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise ConfigError(f"tma: config {path}: not UTF-8") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"tma: config {path}: {exc}") from None
        settings = validate(path, doc)
        cache.put("config", key, settings)
    return _build(path, settings)
