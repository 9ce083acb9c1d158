"""The configured hosts' rows as every surface sees them (ls --hosts, the picker, watch,
wait, subscribe, card): from the running daemon's long-lived links when it holds exactly
the configured hosts (no SSH at all), else, when the surface may afford it, one snapshot
from each host in parallel (tma.runtime.fleet.links). A remote row is the ls --json row of
tma.ui.rows.fleet_row_dict; its pane is named HOST:%N wherever a person or a script
reads or types it."""

from __future__ import annotations

import time

from tma.runtime.fleet import hosts, link, links as fleet
from tma.ui import rows as render


class Remote:
    """One read of the hosts' side. `probe`: with no daemon holding the hosts, take a
    snapshot from each (ls, card); False keeps a surface that opens from a key free of
    SSH (the picker, watch): no daemon, no remote rows. Raises hosts.HostError for a
    broken hosts file."""

    def __init__(self, session, timeout: float = link.DEFAULT_TIMEOUT_S,
                 probe: bool = True) -> None:
        configured = [h.name for h in hosts.load(session)]
        self.configured = configured
        self.cached = _from_daemon(session, configured) if configured else None
        self.probes = None
        if self.cached is None and configured and probe:
            self.probes = fleet.snapshot_all(session, timeout=timeout)

    def rows(self, sel=None) -> list[dict]:
        if self.cached is not None:
            return [d for d in self.cached["agents"] if matches(d, sel)]
        out = []
        for p in self.probes or ():
            for frow in p.rows:
                d = render.fleet_row_dict(frow, host=p.name)
                d["age_ms"] = max(0, _now_ms() - p.at_ms) if p.at_ms else None
                if matches(d, sel):
                    out.append(d)
        return out

    def entries(self) -> list[dict]:
        """Each host: name, state (online, offline, connecting, or a probe's named
        failure), error, age_ms; from the daemon also its link state and `stale`."""
        if self.cached is not None:
            return [_cached_entry(h) for h in self.cached["hosts"]]
        return [_host_entry(p) for p in self.probes or ()]

    def scopes(self, name: str) -> tuple[str, ...] | None:
        """What host `name`'s serve grants this machine (its hello's scopes; None: not
        known, no link has greeted it)."""
        if self.cached is not None:
            entry = next((h for h in self.cached["hosts"] if h.get("name") == name), None)
            got = entry.get("scopes") if entry is not None else None
            return tuple(s for s in got if isinstance(s, str)) if isinstance(got, list) \
                else None
        probe = next((p for p in self.probes or () if p.name == name), None)
        return probe.hello.scopes if probe is not None and probe.hello is not None else None

    def problems(self) -> list[str]:
        """One line for each host that is not answering (or answers after a banner)."""
        out = []
        for h in self.cached["hosts"] if self.cached is not None else ():
            if h["state"] != "online":
                age = h["age_ms"]
                out.append(f"host {h['name']}: {h['state']} ({h['link']}: {h['error']})"
                           + (f"; rows {age // 1000} s old" if age is not None else ""))
            out += [f"host {h['name']}: {note}" for note in h.get("problems") or ()]
        for p in self.probes or ():
            if not p.ok:
                out.append(f"host {p.name}: {p.state}: {p.error}")
            elif p.banner:
                out.append(f"host {p.name}: {p.banner_note()}")
            out += [f"host {p.name}: {note}" for note in p.notes]
        return out


def _from_daemon(session, configured: list[str]) -> dict | None:
    """The running daemon's fleet document when it holds exactly the configured hosts."""
    doc = session.daemon_fleet()
    if doc is None or sorted(h.get("name") for h in doc["hosts"]) != sorted(configured):
        return None
    return doc


def matches(d: dict, sel) -> bool:
    """The selector flags on a remote row (what the row says; the host already decided)."""
    if sel is None:
        return True
    if sel.session is not None and d["locator"].split(":", 1)[0] != sel.session:
        return False
    if sel.agent is not None and d["agent"] != sel.agent:
        return False
    if sel.repo is not None and d["repo"] != sel.repo:
        return False
    if sel.branch is not None and d["branch"] != sel.branch:
        return False
    if sel.states:
        state = "done" if d["done"] else d["state"]
        if state not in sel.states and d["state"] not in sel.states:
            return False
    return True


def _host_entry(p) -> dict:
    entry = {"name": p.name, "state": p.state, "error": p.error,
             "age_ms": max(0, _now_ms() - p.at_ms) if p.ok else None}
    if p.notes:  # what was refused of the host's frames (tma.core.inbound)
        entry["problems"] = list(p.notes)
    return entry


def _cached_entry(h: dict) -> dict:
    """A host as the daemon's link keeps it: online, offline or connecting, with the
    link's named state (link.py) and its error."""
    entry = {"name": h["name"], "state": h["state"], "error": h["error"],
             "age_ms": h["age_ms"], "link": h["link"], "stale": h["stale"],
             "source": "daemon"}
    if h.get("problems"):
        entry["problems"] = list(h["problems"])
    return entry


def _now_ms() -> int:
    return time.time_ns() // 1_000_000
