"""The fleet without a daemon: one snapshot from every configured host (`tma ls --hosts`)
and the doctor for one host's link (`tma host check`).

Detection stays on each host; this side only reads what the hosts decided, over the link
(tma.runtime.fleet.link), all hosts at once with a short timeout so one slow host costs only
its own wait.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from tma.core.untrusted import pane_id_ok
from tma.runtime import rundir
from tma.runtime.fleet import hosts as store, link


def _control_dir(session) -> str:
    """Where ssh keeps its ControlMaster sockets: the runtime dir (private, 0700)."""
    path = session.paths.runtime_dir
    try:
        rundir.make(path)
    except Exception:  # an untrusted runtime dir: ssh warns and connects without a master
        pass
    return path


def argv(session, host: store.Host) -> list[str]:
    return link.argv_for(host, _control_dir(session))


def snapshot_all(session, *, timeout: float = link.DEFAULT_TIMEOUT_S) -> list[link.Probe]:
    """One probe (hello + snapshot) per configured host, in parallel, in file order."""
    configured = store.load(session)
    if not configured:
        return []
    return link.probe_all([(h.name, argv(session, h)) for h in configured], timeout=timeout,
                          env=dict(session.env))


@dataclass(frozen=True)
class Line:
    ok: bool | None  # None: said for information
    what: str
    fix: str | None = None


#: What each grant lets this machine do there.
_GRANTS = {"read": "read rows and cards", "act:answer": "answer (approve, deny, questions)",
           "act:steer": "steer (send text, interrupt)", "act:always": "approve always"}


def check(session, name: str, *, timeout: float = 8.0) -> tuple[list[Line], bool]:
    """`tma host check NAME`: each finding with its fix; True when all passed."""
    host = store.get(session, name)
    cmd = argv(session, host)
    p = link.converse(host.name, cmd, timeout=timeout, env=dict(session.env))
    lines = [Line(None, f"{host.name}: {host.describe_via() if host.via else 'ssh ' + host.target}")]
    # every fix names the host as the person knows it (its hosts.toml name, what they
    # typed): the target may be an ssh_config alias they never think of as the machine
    remote = f"host {host.name}"
    if p.state in ("unreachable", "spawn-failed", "timeout") and p.hello is None:
        fix = (f"check that {remote} answers `ssh -T {host.target}` without a prompt "
               "(BatchMode: a key, no password), and that it is up"
               if not host.via else f"run {host.name}'s transport by hand: "
                                    f"{host.describe_via()}")
        lines.append(Line(False, f"reachable: no ({p.state}: {p.error})", fix))
        return lines, False
    lines.append(Line(True, "reachable: yes"))
    if p.state == "tma-missing":
        lines.append(Line(False, f"remote tma: missing ({p.error})",
                          f"install tma on {remote} and put it on the forced command's PATH "
                          "(or name it by full path in authorized_keys)"))
        return lines, False
    if p.state == "tma-too-old":
        lines.append(Line(False, f"remote tma: too old ({p.error})",
                          f"upgrade tma on {remote} to one with `tma serve`"))
        return lines, False
    if p.hello is None and p.state != "tmux-down":
        lines.append(Line(False, f"remote tma: no answer ({p.state}: {p.error})",
                          f"the far end ({remote}) must run `tma serve --stdio` and print "
                          "nothing else on stdout (a forced command in authorized_keys)"))
        return lines, False
    good = True
    if p.hello is not None:
        lines.append(Line(True, f"remote tma: {p.hello.tma_version} on {p.hello.host}"))
    note = p.banner_note()
    if note:
        good = False
        lines.append(Line(False, f"stdout: {note}",
                          f"make the login on {remote} quiet (no echo in the shell's rc files "
                          "for non-interactive shells; PrintMotd no) or use the forced "
                          "command"))
    if p.state == "tmux-down":
        lines.append(Line(False, "remote tmux: no server running",
                          f"start tmux on {remote} (the agents run in it)"))
        return lines, False
    if not p.ok:
        lines.append(Line(False, f"remote tmux: the snapshot failed ({p.state}: {p.error})",
                          f"run `tma ls` on {remote} and read what it says"))
        return lines, False
    rows = p.rows
    lines.append(Line(True, f"remote tmux: {len(rows)} agent pane{'s' if len(rows) != 1 else ''}"))
    lines.append(_hooks(rows, remote))
    lines += _scopes(host, p.hello.scopes if p.hello else (), remote)
    good = good and all(line.ok is not False for line in lines)
    return lines, good


def _hooks(rows, remote: str) -> Line:
    # a hook-fed row carries the agent's session id; a screen-read one has none (the
    # protocol sends no `source`, so this is what the rows show, not a certainty)
    if not rows:
        return Line(None, "hooks: no agent panes to tell from")
    fed = sum(1 for r in rows if r.session)
    if fed:
        return Line(True, f"hooks: {fed} of {len(rows)} panes carry a session id (hook-fed)")
    return Line(None, f"hooks: none of {len(rows)} panes carry a session id (read from the "
                      "screen only)", f"run `tma install-hooks` on {remote} for exact states")


def _scopes(host: store.Host, scopes: tuple[str, ...], remote: str) -> list[Line]:
    allowed = [s for s in scopes if s in _GRANTS]
    out = [Line(None, "scopes: " + (", ".join(_GRANTS[s] for s in allowed) or "none"))]
    acts = [s for s in scopes if s.startswith("act:")]
    if not acts:
        out.append(Line(None if host.act is None else False, "act: not allowed (read-only)",
                        f"{remote} grants acting in its forced command: "
                        "`tma serve --stdio --scope read,act:answer`"))
    elif host.act is not None and f"act:{host.act}" not in scopes:
        out.append(Line(False, f"act: {host.act} asked, not granted (granted: "
                               f"{', '.join(acts)})",
                        f"add act:{host.act} to --scope in the forced command on {remote}"))
    else:
        out.append(Line(True, "act: allowed (" + ", ".join(acts) + ")"))
    return out


def attach_argv(host: store.Host, pane: str) -> list[str]:
    """What a fleet jump runs in its local window: an interactive login to the host that
    runs `tma attach --pane %N` there, on a terminal.

    A host with a `login` is `ssh -t LOGIN tma attach --pane %N`. Otherwise the
    default transport becomes `ssh -t TARGET tma attach --pane %N`: a plain login,
    without the link's ControlMaster (a session multiplexed on the link's connection
    would get the link key's forced command, `tma serve`). A --via argv keeps its
    transport and gets a terminal the way its tool asks for one (ssh -t, docker/podman/
    kubectl exec -t); its `tma ... serve ...` tail becomes `tma ... attach --pane %N`
    (the tma program and its global options kept), and with no such tail `tma attach
    --pane %N` is appended.
    """
    if not pane_id_ok(pane):  # from a host's row: it reaches a remote shell below
        raise ValueError(f"not a pane id: {pane!r}")
    tail = ["attach", "--pane", pane]
    # `--` ends ssh's options (a login is never read as one); the remote command is
    # joined by ssh and read by the remote shell, so each word is quoted for it
    if host.login:  # a login of its own: the link's key is forced to `tma serve`
        return ["ssh", "-t", "--", host.login, *_remote(["tma", *tail])]
    if not host.via:
        return ["ssh", "-t", "--", host.target, *_remote(["tma", *tail])]
    argv = list(host.via)
    if "serve" in argv[1:]:
        argv = argv[:argv.index("serve", 1)] + tail
    else:
        argv += ["tma", *tail]
    return _with_tty(argv)


def _remote(words: list[str]) -> list[str]:
    return [shlex.quote(w) for w in words]


def _with_tty(argv: list[str]) -> list[str]:
    tool = os.path.basename(argv[0])
    if tool == "ssh":
        argv = _without_control(argv)
        if "-T" in argv:
            return [("-t" if a == "-T" else a) for a in argv]
        return [argv[0], "-t", *argv[1:]]
    if tool in ("docker", "podman", "kubectl", "nerdctl") and "exec" in argv:
        at = argv.index("exec") + 1
        rest = argv[at:]
        if "-it" in rest or "-ti" in rest or "-t" in rest or "--tty" in rest:
            return argv
        if "-i" in rest:
            i = at + rest.index("-i")
            return argv[:i] + ["-it"] + argv[i + 1:]
        return argv[:at] + ["-it"] + argv[at:]
    return argv


def _without_control(argv: list[str]) -> list[str]:
    """ssh's argv less its ControlMaster options (`-o ControlX=...`), for the reason
    attach_argv gives."""
    out: list[str] = []
    skip = False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a == "-o" and i + 1 < len(argv) and argv[i + 1].lower().startswith("control"):
            skip = True
            continue
        if a.startswith("-o") and a[2:].lower().startswith("control"):
            continue
        out.append(a)
    return out
