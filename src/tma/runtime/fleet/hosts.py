"""The fleet's host list: `hosts.toml` in tma's config directory (beside config.toml).

    [hosts.devbox]
    target = "me@devbox.lan"          # what ssh connects to
    # via = ["docker", "exec", "-i", "box", "tma", "serve", "--stdio"]   # any argv with stdio
    # act = "answer"                  # what this machine asks to do there (the host decides)
    # login = "me@devbox.lan"         # where `tma jump` logs in (default: target)

The file is edited with tomlkit so a person's comments and order survive `host add` and
`host remove`; it is written by an atomic rename and kept 0600 (it names machines and
accounts). A host name becomes part of a pane's name (`devbox:%3`), so it is a plain
token: letters, digits, `.`, `_`, `-`, and never a colon.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import tomlkit

from tma.core.untrusted import clean

ACTS = ("answer", "steer")
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


class HostError(Exception):
    """A bad host name, argv or file: the message is for the person."""


@dataclass(frozen=True)
class Host:
    name: str
    target: str
    via: tuple[str, ...] | None = None  # None: the default ssh argv (tma.runtime.fleet.link)
    act: str | None = None
    login: str | None = None  # `tma jump`'s interactive login (None: target)

    def describe_via(self) -> str:
        return shlex.join(self.via) if self.via else "ssh (default)"


def path(session) -> str:
    return session.paths.hosts_file()


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name) or name in (".", ".."):
        raise HostError(f"bad host name {name!r}: use letters, digits, '.', '_' or '-' "
                        "(no colon: a remote pane is named HOST:%N)")
    return name


def check_target(value: object, what: str) -> str:
    """An ssh destination (a target or a login): a non-empty word that ssh can never read
    as an option (no leading `-`: `-oProxyCommand=...` would run a command here) and
    with no blank or control character."""
    if not isinstance(value, str) or not value:
        raise HostError(f"{what} must be a non-empty string (user@host or an ssh_config "
                        "alias)")
    if value.startswith("-"):
        raise HostError(f"{what} {clean(value, 64)!r} starts with '-': ssh would read it "
                        "as an option, so tma refuses it (name the host, e.g. me@devbox)")
    if not value.isprintable() or any(c.isspace() for c in value) or len(value) > 255:
        raise HostError(f"{what} {clean(value, 64)!r} must be one word of printable "
                        "characters (at most 255)")
    return value


def parse_via(text: str) -> tuple[str, ...]:
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise HostError(f"--via: {exc}") from None
    if not argv:
        raise HostError("--via needs a command (e.g. 'docker exec -i box tma serve --stdio')")
    return argv


def _read_doc(file: str):
    try:
        with open(file, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return tomlkit.document()
    except UnicodeDecodeError as exc:
        raise HostError(f"{file}: not UTF-8 text (byte {exc.start}): fix or remove the "
                        "file") from None
    except IsADirectoryError:
        raise HostError(f"{file} is a directory, not the hosts file: move it away") from None
    except OSError as exc:
        raise HostError(f"{file}: cannot read it: {exc.strerror}") from None
    try:
        return tomlkit.parse(text)
    except Exception as exc:  # tomlkit's ParseError names line and column
        raise HostError(f"{file}: {exc}") from None


def _host(name: str, table, file: str) -> Host:
    if not hasattr(table, "get"):
        raise HostError(f"{file}: [hosts.{name}] is not a table")
    target = table.get("target")
    via = table.get("via")
    act = table.get("act")
    login = table.get("login")
    try:
        check_target(target, f"hosts.{name}.target")
        if login is not None:
            check_target(login, f"hosts.{name}.login")
    except HostError as exc:
        raise HostError(f"{file}: {exc}") from None
    if via is not None and (not isinstance(via, list) or not via
                            or not all(isinstance(a, str) for a in via)):
        raise HostError(f"{file}: hosts.{name}.via must be a list of strings")
    if act is not None and act not in ACTS:
        raise HostError(f"{file}: hosts.{name}.act must be one of {', '.join(ACTS)}")
    try:
        check_name(name)
    except HostError as exc:
        raise HostError(f"{file}: {exc}") from None
    return Host(str(name), str(target), tuple(str(a) for a in via) if via else None,
                str(act) if act else None, str(login) if login else None)


def load(session) -> list[Host]:
    """Every configured host, in file order (none when the file is absent)."""
    file = path(session)
    doc = _read_doc(file)
    hosts = doc.get("hosts", {})
    if not hasattr(hosts, "items"):
        raise HostError(f"{file}: `hosts` must be a table")
    return [_host(name, table, file) for name, table in hosts.items()]


def get(session, name: str) -> Host:
    for h in load(session):
        if h.name == name:
            return h
    raise HostError(f"no host named {name!r} (tma host list shows them)")


def _write(file: str, doc) -> None:
    # the installers' atomic write (tempfile, shutil, importlib.resources: ~10 ms) only
    # for `tma host add` and `remove`: every fleet read loads this module
    from tma.install.common import write_atomic

    write_atomic(file, tomlkit.dumps(doc).encode("utf-8"), mode=0o600, force_mode=True)


def add(session, host: Host, *, replace: bool = False) -> str:
    """Adds (or with `replace`, rewrites) one host; returns the file written."""
    check_name(host.name)
    check_target(host.target, "the target")
    if host.login is not None:
        check_target(host.login, "--login")
    file = path(session)
    doc = _read_doc(file)
    if "hosts" not in doc:
        doc["hosts"] = tomlkit.table(is_super_table=True)
    hosts = doc["hosts"]
    if host.name in hosts and not replace:
        raise HostError(f"host {host.name!r} exists already (tma host remove {host.name} "
                        "first)")
    table = tomlkit.table()
    table["target"] = host.target
    if host.via:
        table["via"] = list(host.via)
    if host.act:
        table["act"] = host.act
    if host.login:
        table["login"] = host.login
    hosts[host.name] = table
    _write(file, doc)
    return file


#: `host set`'s keys; None leaves a key as it is, "" takes it out (target stays).
SETTABLE = ("target", "via", "act", "login")


def update(session, name: str, changes: dict[str, object]) -> tuple[Host, str]:
    """Change only the keys named in `changes` (None: leave it; "" or () : remove it) of
    one host, keeping the rest of its table (and the file's comments and order); the
    result is checked as a read would check it. Returns (the host now, the file)."""
    file = path(session)
    doc = _read_doc(file)
    hosts = doc.get("hosts", {})
    if not hasattr(hosts, "items") or name not in hosts:
        raise HostError(f"no host named {name!r} (tma host list shows them)")
    table = hosts[name]
    if not hasattr(table, "get"):
        raise HostError(f"{file}: [hosts.{name}] is not a table")
    for key in SETTABLE:
        value = changes.get(key)
        if value is None:
            continue
        if value in ("", ()):
            if key == "target":
                raise HostError("a host keeps a target (tma host remove forgets it)")
            if key in table:
                del table[key]
        else:
            table[key] = list(value) if isinstance(value, tuple) else value
    host = _host(name, table, file)  # what a read would refuse is refused now
    _write(file, doc)
    return host, file


def remove(session, name: str) -> str:
    file = path(session)
    doc = _read_doc(file)
    hosts = doc.get("hosts", {})
    if not hasattr(hosts, "items") or name not in hosts:
        raise HostError(f"no host named {name!r} (tma host list shows them)")
    del hosts[name]
    _write(file, doc)
    return file
