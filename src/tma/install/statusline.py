"""The chaining statusline shim (Claude `settings.json`, Cursor `cli-config.json`).

Both agents run a `statusLine` command once per turn with a JSON payload on stdin and
render its stdout. The shim is a POSIX sh command that:

1. reads the payload once, byte for byte (trailing newlines included);
2. forwards it, in the background with every output discarded, to
   `tma event --agent <agent> --kind context --pane "$TMUX_PANE" --payload -`
   (tma: `$TMA_BIN` if executable, else the tma that installed the shim, else `tma` on
   $PATH; outside tmux nothing is spawned, and a missing tma fails silent);
3. pipes the same bytes into the user's own command, run unchanged inside a `{ … }`
   group so a compound command sees the whole payload. Its stdout is the status line
   and its exit status the shim's.

With no command of the user's to chain, the shim prints a minimal line of its own,
the model and the context used (`Opus · 42% context`), read from the same payload by
one POSIX awk (`MINIMAL`): any statusLine at all takes the place of Claude's footer
hint ("? for shortcuts", seen on 2.1.197 and 2.1.332), so printing nothing would
leave that line blank. A payload without either field prints nothing.

Only `command` changes: sibling keys (`type`, `padding`, …) stay as they were.
Recognition is the substring `event --agent <agent> --kind context`; the user's command
is everything after the separator, so editing it inside the shim keeps it recognised and
a reinstall re-wraps it. Uninstall restores the user's command, or removes a
`statusLine` the shim created from nothing.
"""

from __future__ import annotations

import os
import shlex
import tomllib

from tma.install.common import Change, InstallError, read_text

SEP = " & printf '%s' \"$_TMA_SL\" | "
OPEN = "{\n"
CLOSE = "\n}"

# The line printed when there is no user command: model · context %. Claude sends
# context_window.used_percentage; Cursor total_input_tokens / context_window_size.
_AWK = r"""BEGIN { RS = "\001" }
{ s = s $0 }
END {
  W = "[ \t\r\n]*"
  m = ""
  if (match(s, "\"display_name\"" W ":" W "\"[^\"]*\"")) {
    m = substr(s, RSTART, RLENGTH); sub("^[^:]*:" W "\"", "", m); sub("\"$", "", m)
    gsub("[[:cntrl:]]", "", m)
  }
  c = ""; i = index(s, "\"context_window\"")
  if (i && match(t = substr(s, i + 16), "^" W ":" W "[{]")) {
    t = substr(t, RLENGTH); d = 0
    for (j = 1; j <= length(t); j++) {
      ch = substr(t, j, 1)
      if (ch == "{") d++
      else if (ch == "}" && --d == 0) break
    }
    t = substr(t, 1, j)
    if (match(t, "\"used_percentage\"" W ":" W "[0-9.]+"))
      c = int(num(substr(t, RSTART, RLENGTH)) + 0.5)
    else if (match(t, "\"total_input_tokens\"" W ":" W "[0-9]+")) {
      u = num(substr(t, RSTART, RLENGTH))
      if (match(t, "\"context_window_size\"" W ":" W "[0-9]+") && (z = num(substr(t, RSTART, RLENGTH))) > 0)
        c = int(100 * u / z + 0.5)
    }
    if (c != "") c = c "% context"
  }
  if (m != "" && c != "") print m " \302\267 " c
  else if (m != "" || c != "") print m c
}
function num(kv) { sub("^[^:]*:[^0-9]*", "", kv); return kv + 0 }"""
MINIMAL = "{ printf '%s' \"$_TMA_SL\" | awk '" + _AWK + "'; }"

WIRED = "wired"
STALE = "stale"
FOREIGN = "foreign"
NONE = "none"


def marker(agent: str) -> str:
    return f"event --agent {agent} --kind context"


def build(agent: str, tma_bin: str | None, inner: str | None) -> str:
    bin_ = shlex.quote(tma_bin) if tma_bin else "tma"
    forward = (
        "_TMA_SL=$(cat; printf x); _TMA_SL=${_TMA_SL%x}; "
        f"_TMA_BIN={bin_}; "
        '[ -n "${TMA_BIN:-}" ] && [ -x "$TMA_BIN" ] && _TMA_BIN=$TMA_BIN; '
        '[ -x "$_TMA_BIN" ] || _TMA_BIN=tma; '
        '{ [ -z "${TMUX_PANE:-}" ] || printf \'%s\' "$_TMA_SL" | '
        f'"$_TMA_BIN" {marker(agent)} --pane "${{TMUX_PANE:-}}" --payload -; '
        "} >/dev/null 2>&1"
    )
    if not inner:
        return forward + " & " + MINIMAL
    return forward + SEP + OPEN + inner + CLOSE


def parse(command, agent: str) -> tuple[bool, str | None]:
    """(is it our shim, the user's command it wraps or None)."""
    if not isinstance(command, str):
        return False, None
    at = command.find(marker(agent))
    if at < 0:
        return False, None
    sep = command.find(SEP, at)
    if sep < 0:
        return True, None
    inner = command[sep + len(SEP):]
    if inner.startswith(OPEN) and inner.endswith(CLOSE):
        inner = inner[len(OPEN):-len(CLOSE)]
    return True, inner or None


def state(data: dict, agent: str, tma_bin: str | None) -> str:
    """wired | stale (ours, not what this install writes) | foreign | none."""
    sl = data.get("statusLine")
    if not isinstance(sl, dict):
        return FOREIGN if sl is not None else NONE
    cmd = sl.get("command")
    ours, inner = parse(cmd, agent)
    if not ours:
        return FOREIGN if cmd else NONE
    return WIRED if cmd == build(agent, tma_bin, inner) else STALE


def install(data: dict, agent: str, tma_bin: str | None) -> None:
    sl = data.get("statusLine")
    if not isinstance(sl, dict):
        # absent, or not an object (which no agent accepts): a fresh command object
        data["statusLine"] = {"type": "command", "command": build(agent, tma_bin, None)}
        return
    cmd = sl.get("command")
    ours, inner = parse(cmd, agent)
    if not ours:
        inner = cmd if isinstance(cmd, str) and cmd.strip() else None
    new = dict(sl)
    if "type" not in new:
        new["type"] = "command"
    new["command"] = build(agent, tma_bin, inner)
    data["statusLine"] = new


def uninstall(data: dict, agent: str) -> None:
    sl = data.get("statusLine")
    if not isinstance(sl, dict):
        return
    ours, inner = parse(sl.get("command"), agent)
    if not ours:
        return
    if inner is not None:
        data["statusLine"] = {**sl, "command": inner}
    elif set(sl) <= {"type", "command"}:
        del data["statusLine"]
    else:
        rest = dict(sl)
        del rest["command"]
        data["statusLine"] = rest


def wanted(agent: str, mode: str, optout: set[str], exists: bool = True) -> bool | None:
    """Should the shim be there? True / False / None (no opinion: leave it alone).

    The default (no flag: the question was answered ahead, or nothing was at stake)
    keeps it wanted unless the user declined it earlier (a "no", --no-statusline);
    `exists` False (the agent's config file is absent and the agent
    is not Claude) leaves it alone rather than create that file.
    """
    if mode == "on":
        return True
    if mode == "off" or agent in optout:
        return False
    return True if exists else None


def reasons(agent: str, st: str, want: bool | None, path: str) -> list[str]:
    if want is True and st == STALE:
        return [f"{agent}: the statusline shim in {path} is stale (tma moved or changed); "
                "reinstall to repoint it"]
    if want is True and st == FOREIGN:
        return [f"{agent}: the statusLine in {path} is not wrapped by the tma shim "
                "(no context gauge)"]
    if want is True and st == NONE:
        return [f"{agent}: no statusline shim in {path} (no context gauge)"]
    if want is False and st in (WIRED, STALE):
        return [f"{agent}: the statusline shim is still in {path} although it was "
                "declined (at init, or with --no-statusline)"]
    return []


# ---------------------------------------------------------------- the recorded opt-outs

STATE_FILE = "statusline-state.toml"
STATE_HEADER = ("# tma: agents whose statusline shim was declined (a \"no\" to init's question,\n"
                "# or --no-statusline; a later --statusline clears the choice). Managed by tma.\n")


def state_path(config_dir: str) -> str:
    return os.path.join(config_dir, STATE_FILE)


def read_optout(config_dir: str) -> tuple[set[str], str | None]:
    """The recorded opt-outs and the file's text (None when absent or unreadable)."""
    try:
        text = read_text(state_path(config_dir))
    except InstallError:
        return set(), None
    if text is None:
        return set(), None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return set(), text
    names = doc.get("declined")
    return {n for n in names if isinstance(n, str)} if isinstance(names, list) else set(), text


def optout_change(config_dir: str, optout: set[str], text: str | None):
    body = STATE_HEADER + "declined = [" + ", ".join(f'"{n}"' for n in sorted(optout)) + "]\n"
    if text == body or (text is None and not optout):
        return None
    return Change(state_path(config_dir), text, body, "statusline choices")
