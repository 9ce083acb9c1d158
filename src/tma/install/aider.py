"""aider: `notifications` and `notifications-command` in ~/.aider.conf.yml.

Path: `--aider-config` > `TMA_AIDER_CONFIG` > `~/.aider.conf.yml`.

aider has one hook: its notifications command, run through the shell at the first input
after a model call (the prompt after a reply, or the reply's first question), only while
`notifications` is true. tma adds two top-level lines, each marked with a comment, at the
top of the file (after a leading `---` document marker, when there is one):

    notifications: true  # added by tma install-hooks
    notifications-command: "'<tma-hook>' aider notify '{}'"  # added by tma install-hooks

The command's stdin is aider's terminal, so the payload rides on argv (the wrapper then
never reads stdin). Observe only: the command prints nothing and exits 0, and aider does
not wait on it for anything but its exit.

Nothing else in the file moves, so an uninstall (which removes exactly the marked lines)
gives back the original bytes, a file without a final newline included. A
`notifications-command` that is not tma's makes the install refuse, naming it: aider runs
one command. `notifications: false` (the user's) is refused too, rather than overridden;
an unmarked `notifications: true` is kept, and only the command line is added. The file
is read line by line (aider's config is flat YAML: top-level `key: value` lines); a key
indented or inside a block is not aider's top-level setting and is left alone.
"""

from __future__ import annotations

import json
import os
import re
import shlex

from tma.install import common
from tma.install.common import FileOption

AGENT = "aider"
FILES = (FileOption("aider_config", "--aider-config", "TMA_AIDER_CONFIG", "aider .aider.conf.yml",
                    lambda p: os.path.join(p.home, ".aider.conf.yml")),)
STATUSLINE = False
LABEL = "aider config"
MARK = "# added by tma install-hooks"
EVENT = "notify"
CAVEAT = "aider: the notifications command takes effect when aider next starts"

_KEY = re.compile(r"^(?P<key>notifications(?:-command)?)[ \t]*:[ \t]*(?P<value>.*?)[ \t]*$")


def path(ctx: common.Ctx) -> str:
    return ctx.paths["aider_config"]


def want_command(ctx: common.Ctx) -> str:
    return f"{ctx.cmd_ref} {AGENT} {EVENT} {shlex.quote('{}')}"


def _scalar(value: str) -> str:
    """A YAML scalar's text without its comment and quotes (flat values only)."""
    v = value
    if v[:1] in "\"'":
        q = v[0]
        end = v.find(q, 1)
        while q == '"' and end > 0 and v[end - 1] == "\\":
            end = v.find(q, end + 1)
        inner = v[1:end] if end > 0 else v[1:]
        if q == '"':
            try:
                return json.loads(f'"{inner}"')
            except ValueError:
                return inner
        return inner.replace("''", "'")
    return re.sub(r"[ \t]+#.*$", "", v)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _scan(text: str) -> dict[str, tuple[int, str, bool]]:
    """top-level key -> (line index, value, marked) for notifications(-command)."""
    out: dict[str, tuple[int, str, bool]] = {}
    for i, line in enumerate(_lines(text)):
        m = _KEY.match(line.rstrip("\r\n"))
        if m and m.group("key") not in out:
            out[m.group("key")] = (i, _scalar(m.group("value")), line.rstrip().endswith(MARK))
    return out


def is_ours(command: str) -> bool:
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return (len(words) >= 3 and os.path.basename(words[0]) == common.WRAPPER_NAME
            and words[1:3] == [AGENT, EVENT])


def _install_text(text: str, ctx: common.Ctx) -> str:
    keys = _scan(text)
    add = []
    if "notifications" not in keys:
        add.append(f"notifications: true  {MARK}\n")
    cmd = keys.get("notifications-command")
    want = f"notifications-command: {json.dumps(want_command(ctx))}  {MARK}\n"
    lines = _lines(text)
    if cmd is not None:  # ours (is_ours checked by the caller): refreshed in place
        if cmd[1] != want_command(ctx):
            end = "\n" if lines[cmd[0]].endswith("\n") else ""
            lines[cmd[0]] = want[:-1] + end
    else:
        add.append(want)
    at = 0
    for i, line in enumerate(lines):  # after a leading `---` (comments may precede it)
        s = line.strip()
        if s.startswith("#") or s.startswith("%") or not s:
            continue
        if s == "---" or s.startswith("--- "):
            at = i + 1
        break
    return "".join(lines[:at] + add + lines[at:])


def _uninstall_text(text: str) -> str:
    out = []
    for line in _lines(text):
        m = _KEY.match(line.rstrip("\r\n"))
        if m and line.rstrip().endswith(MARK) and (
                m.group("key") == "notifications"
                or is_ours(_scalar(m.group("value")))):
            continue
        out.append(line)
    return "".join(out)


def _refuse(p: str, keys: dict[str, tuple[int, str, bool]], ctx: common.Ctx) -> None:
    cmd = keys.get("notifications-command")
    if cmd is not None and not is_ours(cmd[1]):
        raise common.InstallError(
            f"{p} already sets notifications-command: {cmd[1]!r}; aider runs only one, so "
            "tma will not replace it. Remove it, or have it also run "
            f"`{want_command(ctx)}`, then install again")
    note = keys.get("notifications")
    if note is not None and note[1].lower() not in ("true", "yes", "on"):
        raise common.InstallError(
            f"{p} sets notifications: {note[1]}; aider runs no notifications command unless it "
            "is true. Set it to true (or remove it) and install again")


def status(ctx: common.Ctx, manifest) -> common.Status:
    p = path(ctx)
    st, text = common.load_status(AGENT, lambda: common.read_text(p))
    if st.error is not None:
        return st
    keys = _scan(text or "")
    where = common.tilde(p)
    cmd = keys.get("notifications-command")
    if cmd is not None and is_ours(cmd[1]):
        st.ours = True
        if cmd[1] != want_command(ctx):
            st.reasons.append(f"aider: notifications-command in {where} runs another tma-hook "
                              f"({cmd[1]})")
    elif cmd is not None:
        st.reasons.append(f"aider: notifications-command in {where} is a foreign command "
                          f"({cmd[1]!r}); aider runs only one, so tma's is not set")
    else:
        st.reasons.append(f"aider: no notifications-command in {where}")
    note = keys.get("notifications")
    if note is None or note[1].lower() not in ("true", "yes", "on"):
        st.reasons.append(f"aider: notifications is not true in {where} (the command never runs)")
    return st


def plan(ctx: common.Ctx, manifest, uninstall: bool) -> common.Plan:
    p = path(ctx)
    text = common.read_text(p)
    out = common.Plan(AGENT)
    if uninstall:
        if text is not None:
            new = _uninstall_text(text)
            if new != text:
                out.changes.append(common.Change(p, text, new, LABEL))
        return out
    src = text or ""
    _refuse(p, _scan(src), ctx)
    new = _install_text(src, ctx)
    if new != src or text is None:
        out.changes.append(common.Change(p, text, new, LABEL))
    return out.caveat(CAVEAT, uninstall)
