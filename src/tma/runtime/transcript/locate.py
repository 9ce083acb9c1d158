"""Which transcript is a pane's: the host alone decides (a device names a pane, never a
path).

In order, the first that finds one:

1. the path the agent's own hook payload named (`transcript_path`, stamped on the pane as
   @agent_transcript by the hook intake for every hooked agent);
2. the agent's session id (@agent_session) and the pane's directory, where the store
   keeps that session's file: the store module's `candidates(session_id, cwd, env)` when
   it has one, else the agent's rule here (RULES, from each agent's documented layout);
3. a scan of the store's directories for the session id.

Never a guess by directory alone or by process: without a session id (and no hook path)
there is no transcript. A file is taken only when it is a regular file the user owns
(tma.runtime.transcript.page checks it again at every read; a symlink to another user's
file is refused). A name that holds only part of the session id (Gemini's) is taken
only when the file's first records name the session.

A store that pages itself (tma.runtime.transcript.stores.PagedStore) locates its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re

from tma.core.paths import here
from tma.core.record import Record
from tma.runtime.transcript import page, stores

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

#: The most names one directory is listed for (a scan never walks a huge tree whole).
LIST_MAX = 20_000
CACHE_MAX = 256

HOOK, SESSION, SCAN = "hook", "session", "scan"


class Target(Record, frozen=True):
    """What a pane says about its transcript (a cycle row's, or a fleet host's own)."""

    pane: str
    agent: str
    session_id: str = ""
    cwd: str = ""
    hook_path: str = ""


def target_of(row: Any) -> Target:
    """A cycle row's Target: its agent, @agent_session, directory and @agent_transcript."""
    opts = row.pane.options
    return Target(row.pane.pane_id, row.agent, row.stamp.session or opts.get("@agent_session", ""),
                  row.pane.current_path, opts.get("@agent_transcript", ""))


class Located(Record, frozen=True):
    """Where a pane's transcript is: the store and the file (for a paged store, its own
    source), how it was found (hook, session, scan); without one, why not."""

    store: Any
    path: str | None
    how: str = ""
    why: str = ""


# --- each agent's layout (used when its store module names no candidates) -------------------

def _home(env: Mapping[str, str]) -> str:
    return here(env).home


def _glob_literal(text: str) -> str:
    """A literal path part inside a candidate (no `*` of its own)."""
    return text.replace("*", "?")


def _claude(sid: str, cwd: str, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    base = env.get("CLAUDE_CONFIG_DIR") or os.path.join(_home(env), ".claude")
    slugs = dict.fromkeys([re.sub(r"[/.]", "-", cwd), re.sub(r"[^A-Za-z0-9]", "-", cwd)])
    near = [f"{base}/projects/{_glob_literal(s)}/{sid}.jsonl" for s in slugs if cwd]
    return near, [f"{base}/projects/*/{sid}.jsonl"]


def _codex(sid: str, cwd: str, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    base = env.get("CODEX_HOME") or os.path.join(_home(env), ".codex")
    return [f"{base}/sessions/*/*/*/rollout-*-{sid}.jsonl"], []


def _gemini(sid: str, cwd: str, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    base = os.path.join(_home(env), ".gemini", "tmp")
    name = f"session-*-{sid[:8]}.jsonl"  # the file names the session's first 8 characters
    near = []
    if cwd:
        digest = hashlib.sha256(cwd.encode()).hexdigest()
        near = [f"{base}/{digest}/chats/{name}",
                f"{base}/{_glob_literal(os.path.basename(cwd.rstrip('/')))}/chats/{name}"]
    return near, [f"{base}/*/chats/{name}"]


def _pi(sid: str, cwd: str, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    base = os.path.join(env.get("PI_CODING_AGENT_DIR") or os.path.join(_home(env), ".pi", "agent"),
                        "sessions")
    slug = "--" + cwd.strip("/").replace("/", "-") + "--"
    near = [f"{base}/{_glob_literal(slug)}/*_{sid}.jsonl"] if cwd else []
    return near, [f"{base}/*/*_{sid}.jsonl"]


#: agent -> (session id, cwd, env) -> (near, scan): the paths a session's file has given
#: the pane's directory, most likely first, and where a scan by session id looks. A `*`
#: matches any run of characters within one path part.
RULES: dict[str, Callable[[str, str, Mapping[str, str]], tuple[list[str], list[str]]]] = {
    "claude": _claude, "codex": _codex, "gemini": _gemini, "pi": _pi,
}

#: A session id is a name, never a path: these are all it may hold.
_SID_OK = re.compile(r"[A-Za-z0-9_.:-]{1,200}")

_found: dict[tuple, str] = {}


def locate(t: Target, env: Mapping[str, str], *, skip_hook: bool = False,
           fresh: bool = False) -> Located:
    """Where `t`'s transcript is, or why there is none. `skip_hook`: the hook's path did
    not read (look by session); `fresh`: not from what an earlier call found."""
    found = stores.store_for(t.agent, env)
    store = found.store
    if store is None:
        return Located(None, None, why=found.why)
    sid = t.session_id if _SID_OK.fullmatch(t.session_id or "") else ""
    if stores.is_paged(store):
        if not sid:
            return Located(store, None, why=_no_session(t))
        source = store.locate(sid, t.cwd, env)
        if source is None:
            return Located(store, None, why=f"{t.agent} has no transcript for session {sid}")
        return Located(store, source, SESSION)
    note = ""
    if t.hook_path and not skip_hook:
        if os.path.isabs(t.hook_path):
            return Located(store, t.hook_path, HOOK)
        note = f"the hook's path {t.hook_path!r} is not absolute; "
    elif t.hook_path:
        note = f"the hook's path {t.hook_path} does not read; "
    if not sid:
        return Located(store, None, why=note + _no_session(t))
    key = (t.agent, sid, t.cwd, stores.module_name(t.agent, env), _home(env))
    if not fresh and key in _found:
        return Located(store, _found[key], SESSION)
    near, scan = _paths(store, t.agent, sid, t.cwd, env)
    for how, patterns in ((SESSION, near), (SCAN, scan)):
        for pattern in patterns:
            path = _pick(pattern, sid, store)
            if path is not None:
                _found.pop(key, None)
                _found[key] = path
                while len(_found) > CACHE_MAX:
                    del _found[next(iter(_found))]
                return Located(store, path, how)
    return Located(store, None, why=note + f"no {t.agent} transcript for session {sid} "
                                           f"(looked in {_where(near + scan)})")


def forget(t: Target, env: Mapping[str, str]) -> None:
    """Drop what was found for `t` (its file went away)."""
    for key in [k for k in _found if k[:3] == (t.agent, t.session_id, t.cwd)]:
        del _found[key]


def _no_session(t: Target) -> str:
    return (f"{t.agent} has named no session on this pane yet (its hooks name it; without "
            "hooks tma does not guess)")


def _where(patterns: list[str]) -> str:
    dirs = list(dict.fromkeys(os.path.dirname(p) for p in patterns))
    return ", ".join(dirs[:3]) + (" …" if len(dirs) > 3 else "") if dirs else "nowhere"


def _paths(store: Any, agent: str, sid: str, cwd: str,
           env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    rule = RULES.get(agent)
    near, scan = rule(sid, cwd, env) if rule is not None else ([], [])
    own = getattr(store, "candidates", None)
    if callable(own):
        try:
            near = [str(p) for p in own(sid, cwd, env)]
        except Exception:  # noqa: BLE001 - a store's bug: its rule still looks
            pass
    return near, scan


def _pick(pattern: str, sid: str, store: Any) -> str | None:
    """The newest usable file `pattern` matches that is the session's."""
    best: tuple[int, str] | None = None
    for path in _match(pattern):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if page.usable(st) is not None:
            continue
        if sid not in os.path.basename(path) and not _names(path, sid, store):
            continue
        if best is None or st.st_mtime_ns > best[0]:
            best = (st.st_mtime_ns, path)
    return best[1] if best is not None else None


def _names(path: str, sid: str, store: Any) -> bool:
    """Do the file's first records name the session (a name with part of its id)?"""
    try:
        with open(path, "rb") as fh:
            head = fh.read(page.HEAD_BYTES)
    except OSError:
        return False
    for line in head.split(b"\n")[:16]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if sid in (record.get("sessionId"), record.get("session_id")):
            return True
        try:
            meta = store.session(record)
        except Exception:  # noqa: BLE001
            meta = None
        if meta is not None:
            return meta.data.get("session_id") == sid
    return False


def _match(pattern: str) -> list[str]:
    """The paths `pattern` names: `*` in a part matches any run of characters in it."""
    parts = pattern.split("/")
    paths = ["/" if pattern.startswith("/") else "."]
    for i, part in enumerate(parts):
        if not part:
            continue
        last = i == len(parts) - 1
        if "*" not in part:
            paths = [os.path.join(p, part) for p in paths]
            continue
        rx = re.compile(".*".join(re.escape(x) for x in part.split("*")), re.DOTALL)
        nxt = []
        for p in paths:
            try:
                with os.scandir(p) as it:
                    for n, entry in enumerate(it):
                        if n >= LIST_MAX:
                            break
                        if rx.fullmatch(entry.name) and (last or entry.is_dir()):
                            nxt.append(entry.path)
            except OSError:
                continue
        paths = nxt
    return paths
