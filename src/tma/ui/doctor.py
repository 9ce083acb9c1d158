"""`tma doctor`'s text report: the judged document (tma.runtime.doctor), one labelled
line per section and its indented items.

It renders and decides nothing: every ok/warn/fail, the fix to suggest and whether the
tmux hooks and the wrapper matter are in the document (`verdict`, `tmux.too_old`,
`ambient_driver.fix`), so the text and `--json` agree by construction.
"""

from __future__ import annotations

import time

LABEL = 9  # "ambient: " and friends, padded to one column


def _age(ms: int | None) -> str:
    if ms is None:
        return "?"
    secs = ms // 1000
    if secs < 120:
        return f"{secs}s"
    if secs < 7200:
        return f"{secs // 60}m"
    if secs < 172800:
        return f"{secs // 3600}h"
    return f"{secs // 86400}d"


def _line(label: str, text: str) -> str:
    return f"{label + ':':<{LABEL}}{text}\n"


def _item(text: str) -> str:
    return f"  - {text}\n"


def _tmux(doc: dict) -> list[str]:
    tmux = doc["tmux"]
    version = tmux["version"] or ""
    setpf = {True: "guarded writes (set-option -F expands)",
             False: "UNGUARDED writes (set-option -F does not expand)",
             None: "guarded writes untested (set-option -F probe failed)"}[tmux["setpf_ok"]]
    standing = tmux["standing"]
    tested = f"tested: {tmux['range']}"
    where = {
        "tested": f"{version} ({tested})",
        "inside": f"{version} (inside the range {tested})",
        "older": f"{version} (older than {tmux['oldest']}; {tested})",
        "newer": f"{version} (newer than {tmux['newest']}; {tested})",
        "unplaced": f"{version} (names no tmux release; {tested})",
        "unreported": f"the server reports no version ({tested})",
    }[standing]
    out = [_line("tmux", f"{where}, {setpf}")]
    if tmux["too_old"]:
        out.append(_item(f"tmux {version} is older than 3.2: guarded writes do not work and "
                         "another writer's stamp can be clobbered; upgrade tmux"))
    elif tmux["setpf_ok"] is False:
        out.append(_item("this tmux stores set-option -F formats literally: tma's writes are "
                         "unguarded; upgrade tmux"))
    elif standing == "older":
        out.append(_item(f"tma is not tested on tmux {version}; upgrade to "
                         f"{tmux['oldest']} or newer if anything below misbehaves"))
    elif standing == "newer":
        out.append(_item(f"note: tma is not yet tested on tmux {version}; it should work "
                         "(this line never counts as a warning)"))
    return out


def _ambient(doc: dict) -> list[str]:
    amb = doc["ambient_driver"]
    age = amb["last_poll_age_ms"]
    if not amb["polling"]:
        out = [_line("ambient", "NOT polling — status-right does not run `tma status`; add "
                                f"{amb['fix']} to status-right")]
        if age is not None:
            out.append(_item(f"note: a `tma status` or `tma ls` ran {_age(age)} ago, but "
                             "nothing runs it from the status line"))
        return out + _segment(amb)
    command = amb["status_command"]
    if command is not None and not command["runs"]:
        out = [_line("ambient", f"✗ status-right runs `tma status`, but {command['problem']}: "
                                "the status line shows nothing")]
        out.append(_item(f"tmux runs it with PATH={command['path']}"))
        out.append(_item(f"name tma as tmux can run it: {command['fix']}"))
        return out
    when = f"last ran {_age(age)} ago" if age is not None else "has not run yet"
    return [_line("ambient", f"polling — status-right runs `tma status` ({when})"),
            *_segment(amb)]


def _segment(amb: dict) -> list[str]:
    """Which status-line set-up: the daemon form reads the daemon's segment."""
    seg = amb.get("daemon_segment") or {}
    if not seg.get("reads"):
        return []
    if seg.get("live"):
        return [_item("daemon form: the status line reads the daemon's segment "
                      "(@tma_status_segment) and spawns nothing; `tma status` runs only "
                      "when no daemon keeps it")]
    return [_item("daemon form, but no daemon keeps the segment now: the status line "
                  "runs `tma status` instead")]


def _clients(doc: dict) -> list[str]:
    n = doc["clients"]["attached"]
    if n:
        return [_line("clients", f"{n} attached")]
    return [_line("clients", "none attached"),
            _item("note: with no client attached nothing redraws a status line, so nothing "
                  "runs `tma status` until one attaches")]


def _config(doc: dict) -> list[str]:
    c = doc.get("config") or {}
    if not c.get("error"):
        return []
    return [_line("config", f"✗ {c['error']}"),
            _item("the rest of this report runs on the default settings; tma ls, status, "
                  "the picker and watch refuse to start until it loads")]


def _config_stale(doc: dict) -> list[str]:
    c = doc.get("config") or {}
    if not c.get("daemon_stale"):
        return []

    at = time.strftime("%H:%M:%S", time.localtime(c["daemon_loaded_at"] / 1000))
    head = f"✗ the config changed after the daemon loaded it ({at}): it still runs the old settings"
    if ((doc.get("daemon") or {}).get("last_error") or "").startswith("reload kept"):
        # the daemon tried the edit: it does not load (the last error says why)
        return [_item(f"{head} (the edit does not load: see the last error); fix the "
                      "file and the daemon reloads it within 2 s")]
    return [_item(f"{head}; the daemon reloads an edit within 2 s (`tma reload` does it "
                  "now)")]


def _daemon(doc: dict) -> list[str]:
    d = doc.get("daemon")
    if d is None:
        return []
    if d.get("refused"):
        return [_line("daemon", f"✗ {d['refused']}: no daemon, hooks and the status line "
                                "work without one")]
    if not d["running"]:
        out = [_line("daemon", "not running (tier 3 off: start it with tma daemon --ensure)")]
        if d["stale"]:
            out.append(_item("left by a daemon that died (harmless, the next one takes "
                             f"them): {', '.join(d['stale'])}"))
        return out
    up = f", up {_age(d['uptime_ms'])}" if d["uptime_ms"] is not None else ""
    out = [_line("daemon", f"running, pid {d['pid']}, version {d['version'] or '?'}{up}, "
                           f"{d['sessions'] if d['sessions'] is not None else '?'} "
                           f"session(s) watched")]
    if d["version_skew"]:
        where = d.get("package") or "an older install"
        out.append(_item(f"✗ it runs another tma than this one ({where}): restart it with "
                         "tma daemon --restart"))
    if not d["answers"]:
        out.append(_item(f"✗ its socket does not answer: {d['socket']} (see {d['log']})"))
    if d["last_error"]:
        out.append(_item(f"last error: {d['last_error']}"))
    out += _config_stale(doc)
    out.append(_item(f"socket: {d['socket']}"))
    return out


def _notify(doc: dict) -> list[str]:
    notify = doc["notify"]
    failure = notify["last_failure"]
    if failure is None:
        out = [_line("notify", "no failed notify command on record")]
    else:
        when = (f"{_age(notify['last_failure_age_ms'])} ago"
                if notify["last_failure_age_ms"] is not None else "at an unknown time")
        out = [_line("notify", f"✗ the notify command last failed {when}: "
                               f"{failure['reason']}")]
        if failure["command"]:
            out.append(_item(f"command: {failure['command']}"))
    return out + _push(notify) + _notifier(notify)


def _push(notify: dict) -> list[str]:
    """A push sink whose secret is refused sends nothing: one line each, saying why."""
    return [_line("push", f"✗ {p['problem']}; {p['sink']} sends nothing until then")
            for p in notify.get("push_problems", ())]


def _notifier(notify: dict) -> list[str]:
    """Which sink is live: who rings, and what each enabled trigger reaches."""
    sinks = notify.get("sink")
    if not isinstance(sinks, dict):
        return []
    by = notify.get("dispatcher")
    if by is None:
        return [_line("sink", "nobody rings: no daemon runs, and [notify] from_event "
                                  "is off (tma daemon --ensure)")]
    words = []
    for trigger, s in sinks.items():
        if s["kind"] == "off":
            continue
        what = ", ".join(_reach(r) for r in s.get("rings") or ()) or "nothing"
        words.append(f"{trigger} → {what}")
    line = "; ".join(words) or "every trigger is off"
    return [_line("sink", f"the {by} rings: {line}")]


_REACH = {"message": "the tmux message line", "bell": "a bell", "osc": "OSC 9 in the pane",
          "command": "your command", "terminal": "the terminal (OSC)"}


def _reach(r: dict) -> str:
    """One sink that rings, in a word or two (tma.runtime.notify.dispatch.reaches)."""
    name, what = r.get("sink", ""), r.get("what", "")
    if name == "log":
        return f"the log {what}"
    if name == "desktop":
        return f"desktop ({what})"
    return _REACH.get(name, name)  # a push sink by its name: ntfy, webhook


_STATUS_WORDS = {"wired": "wired", "incomplete": "incomplete", "not_installed": "not installed",
                 "hookless": "hookless", "no_adapter": "no installer"}


_PERSISTENCE = {
    "managed_file": "kept: in the managed key file (tma install-keys), so every new tmux "
                    "server has them",
    "server_only": "on the running server only: gone when tmux restarts (tma install-keys "
                   "keeps them)",
    "missing": "missing: neither in a managed key file nor on the running server",
}


def _hooks(doc: dict) -> list[str]:
    hooks = doc["tmux_hooks"]
    wired = doc["verdict"]["wiring_matters"]
    if doc.get("tmux_hooks_error"):
        return [_line("hooks", f"✗ cannot read the tmux hooks: {doc['tmux_hooks_error']}")]
    if not hooks:
        return [_line("hooks", "no tmux attention hook is managed here")]
    if not wired and all(h["hook_state"] == "missing" for h in hooks):
        return [_line("hooks", "not installed — no agent is wired, so nothing needs them yet "
                               "(tma install-hooks AGENT installs them with the agent's wiring)")]
    marks = ", ".join(f"{'✓' if h['present'] else '✗'} {h['hook']}"
                      + ("" if h["present"] else f" ({h['hook_state']})") for h in hooks)
    out = [_line("hooks", marks), _item(_PERSISTENCE.get(doc.get("tmux_hooks_persistence") or "",
                                                         _PERSISTENCE["missing"]))]
    out += [_item(h["problem"]) for h in hooks if h["problem"]]
    if any(not h["present"] for h in hooks):
        if wired:
            out.append(_item("run `tma install-hooks --all` to reinstall them"))
        else:
            out.append(_item("note: no agent is wired, so these are not counted"))
    return out


def _wrapper(doc: dict) -> list[str]:
    w = doc["wrapper"]
    if w["reference"] is None:
        return [_line("wrapper", f"✗ unknown: {w['problem']}")]
    shown = w["reference"]
    if w["path"] and w["path"] != w["reference"]:
        shown += f" ({w['path']})"
    needed = doc["verdict"]["wiring_matters"]
    if w["bare"]:
        mark = "✓ on $PATH" if w["present"] else "✗ not on $PATH"
    elif w["present"]:
        mark = "✓"
    elif w["exists"]:
        mark = "✗ not executable"
    else:
        mark = "✗ missing" if needed else "not written yet"  # nothing needs it: no ✗
    out = [_line("wrapper", f"{shown} {mark}")]
    if w["problem"] and w["present"]:
        out.append(_item(w["problem"]))
    if not w["present"] and not needed:
        out.append(_item("note: no agent is wired, so no hook runs it yet"))
    elif not w["present"]:
        out.append(_item("every wired hook fails silently: run `tma install-hooks --all` "
                         "to write it"))
    return out


def _wiring(doc: dict) -> list[str]:
    wiring = doc["hook_wiring"]
    if not wiring:
        return [_line("wiring", "no agent with a hook installer is loaded")]
    groups: dict[str, list[str]] = {}
    for w in wiring:
        groups.setdefault(w["status"], []).append(w["agent"])
    order = ("wired", "incomplete", "not_installed", "hookless")
    text = "; ".join(f"{', '.join(groups[k])} {_STATUS_WORDS[k]}" for k in order if k in groups)
    out = [_line("wiring", text)]
    for w in wiring:
        out += [_item(r) for r in w["reasons"]]
    return out


def _agents(doc: dict) -> list[str]:
    man = doc["manifests"]
    names = doc["process_name_issues"]
    n = len(man["issues"]) + len(names)
    summary = "no issues" if not n else f"{n} issue{'s' if n != 1 else ''}"
    out = [_line("agents", f"{man['loaded']} loaded, {summary}")]
    for issue in man["issues"]:
        out.append(_item(f"skipped {issue['file']}: {issue['problem']}"))
    for issue in names:
        name, width = issue["name"], issue["comm_max"]
        out.append(_item(
            f"{issue['agent']}: process_names entry \"{name}\" has {len(name)} characters; "
            f"the Linux kernel and macOS libproc both cut a process name to {width}, so tmux "
            f"and ps can report \"{name[:width]}\", which no entry matches — add "
            f"\"{name[:width]}\" beside it"))
    return out


def _stamps(doc: dict) -> list[str]:
    issues = doc["stamp_issues"]
    if not issues:
        return [_line("stamps", "no issues")]
    out = [_line("stamps", f"{len(issues)} pane{'s' if len(issues) != 1 else ''} with "
                           "undecodable @agent_* options (invisible to every tma surface)")]
    out += [_item(f"{i['pane']} {i['locator']}: {i['problem']}") for i in issues]
    return out


def _listed(doc: dict) -> list[str]:
    out = []
    foreign = doc["foreign_panes"]
    if foreign:
        out.append(_line("foreign", f"{len(foreign)} pane(s) stamped by another producer "
                                    "(shown in tma surfaces as they are, never rewritten)"))
        out += [_item(f"{f['pane']} {f['locator']}: " + (
            f"@agent_name {f['agent']!r} is no loaded manifest" if f["agent"]
            else "no @agent_name")) for f in foreign]
    ignored = doc["ignored_panes"]
    if ignored:
        out.append(_line("ignored", f"{len(ignored)} pane(s) opted out with @agent_ignore"))
        out += [_item(f"{i['pane']} {i['locator']}: @agent_ignore={i['value']!r}; undo: "
                      f"tmux set-option -p -u -t {i['pane']} @agent_ignore") for i in ignored]
    nested = doc["nested_multiplexers"]
    if nested:
        out.append(_line("nested", f"{len(nested)} pane(s) running a multiplexer client"))
        out += [_item(f"{n['pane']} {n['locator']}: {n['command']} — agents inside it live in "
                      "the inner server; run tma there") for n in nested]
    remote = doc["remote_panes"]
    if remote:
        out.append(_line("remote", f"{len(remote)} pane(s) behind a remote shell or container"))
        for r in remote:
            held = "; its stamp is held, not refreshed" if r["stamped"] else ""
            out.append(_item(f"{r['pane']} {r['locator']}: {r['command']} — tma cannot see "
                             f"the processes on the other side{held}"))
    return out


def _procs(doc: dict) -> list[str]:
    walk = doc["process_walk"]
    if walk["ok"]:
        return [_line("procs", "process walk ok")]
    return [_line("procs", f"process walk FAILED ({walk['error']}): only hook-registered "
                           "panes can be identified")]


def _panes(doc: dict) -> list[str]:
    agents = doc["agents"]
    out = [f"panes ({len(agents)}):\n"]
    for a in agents:
        if a["state"] is None:
            state = "unstamped"
        elif a["evidence_age_ms"] is None:
            state = f"{a['state']} ({a['source']}, evidence age unknown)"
        else:
            state = f"{a['state']} ({a['source']}, evidence {_age(a['evidence_age_ms'])} ago)"
        out.append(f"  {a['pane']} {a['agent']} {a['locator']} tier {a['tier']} {state}\n")
        out.append(f"      hooks: {_STATUS_WORDS[a['hook_status']]}\n")
        if a["hooks_pending_restart"]:
            out.append(f"      restart: this {a['agent']} started before its hooks were "
                       "installed; they take effect at its next start\n")
        if a["hook_demoted"]:
            out.append("      demoted: registered by hook, but its state is screen-read\n")
        if a["model"] and a["window_covered"] is False:
            out.append(f"      model: {a['model']} (no [telemetry.windows] entry names it)\n")
        elif a["model"]:
            out.append(f"      model: {a['model']}\n")
        if a.get("api") is not None:
            out.append(f"      api: {_api_line(a)}\n")
        if a["tier_reason"]:
            out.append(f"      not tier {a['tier'] + 1}: {a['tier_reason']}\n")
        if a.get("transcript") is not None:
            out.append(f"      transcript: {_transcript_line(a['transcript'])}\n")
    return out


_HOW = {"hook": "named by its hook", "session": "by its session id",
        "scan": "found by a scan for its session id"}


def _transcript_line(t: dict) -> str:
    """Which transcript tma reads for the pane, or why none; and the records its reader
    did not know on the newest page."""
    if t["path"] is None:
        return f"none: {t['why']}"
    line = f"{t['path']} ({_HOW.get(t['how'], t['how'])})"
    if t["why"]:
        return f"{line}: ✗ {t['why']}"
    if t["unknown"]:
        line += (f"; ✗ {t['unknown']} of the newest {t['events']} events are records the "
                 f"reader does not know (the agent's format changed?)")
    else:
        line += f"; the newest {t['events']} events all known"
    return line


def _api_line(a: dict) -> str:
    """The API lane of an OpenCode pane, as it is now: the endpoint, whether it answers,
    and what that means for `tma act` (and for a pending permission request)."""
    api, pending = a["api"], a["permission_request"]
    if api["answers"]:
        who = f"OpenCode {api['version']}" if api["version"] else "OpenCode"
        where = "from the pane" if api["source"] == "pane" else "from config"
        act = ("tma act approve/deny reply over HTTP" if a.get("act_uses_api")
               else "tma act does not use this lane yet (it refuses OpenCode's prompts)")
        return (f"{api['endpoint']} ({where}) answers ({who}): {act}"
                + (f"; permission request {pending} is pending" if pending else ""))
    if api["endpoint"] is None:
        bad = f" (its {api['stamped']!r} is not a loopback URL)" if api["stamped"] else ""
        head = (f"no endpoint: the pane has no usable @agent_api_endpoint{bad} and config.toml "
                f"no [api.{a['agent']}] api_base")
    else:
        head = f"{api['endpoint']} does not answer: {api['reason']}"
    tail = (f"; permission request {pending} is pending and tma act cannot answer it"
            if pending else "; tma act cannot reply over HTTP")
    return head + tail


RENDERERS = (_config, _tmux, _ambient, _clients, _notify, _daemon, _hooks, _wrapper, _wiring,
             _agents, _stamps, _listed, _procs, _panes)


def render(doc: dict) -> str:
    """The text report of a judged document (tma.runtime.doctor.check)."""
    return "".join(line for r in RENDERERS for line in r(doc))
