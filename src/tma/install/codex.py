"""Codex: `notify` plus `[features] hooks` in config.toml, and hooks.json.

Paths: `--codex-config` > `TMA_CODEX_CONFIG` > `$CODEX_HOME/config.toml` >
`~/.codex/config.toml`; `--codex-hooks` > `TMA_CODEX_HOOKS` > `$CODEX_HOME/hooks.json` >
`~/.codex/hooks.json`.

config.toml gets two lines, and nothing else in it moves:

* top-level `notify = ["<tma-hook>", "codex", "notify"]` (codex execs it without a
  shell, the JSON appended as a last argument; the wrapper turns it into stdin). It is
  "ours" when its first element's basename is `tma-hook`.
* `hooks = true # added by tma install-hooks` in `[features]` (the table is created at
  the end of the file when absent). The comment is how uninstall knows the line is
  tma's: an unmarked `hooks = true` the user wrote is never removed; a marked one is
  removed even when hooks.json still holds other hooks (uninstall restores what tma
  changed, and says so; delete the comment to keep the line).

A FOREIGN `notify` (any program whose first element is not `tma-hook`) makes the codex
install refuse, naming it, and write nothing: codex runs exactly one notify program, and
replacing the user's would silently break whatever it does. Chain instead: have that
program also run `tma-hook codex notify "$1"`, or remove it and re-run. Uninstall and
--check leave a foreign notify alone (check reports it). Likewise an explicit
`[features] hooks = false` refuses rather than being overridden.

The edit is format-preserving: the TOML is parsed (tomllib, with tomlkit as a fallback
editor for unusual shapes such as an inline `features = {…}` table) and the lines are
spliced into the original text, so comments, blank lines and every unrelated key
survive byte for byte and an uninstall after an install gives back the original bytes.
(tomlkit alone adds blank lines around what it inserts, which an uninstall cannot undo.)
A file without a final newline gets one. An inline `features = {…}` table cannot carry
the marker comment, so there uninstall leaves `hooks = true` in place.

hooks.json is Claude's nested shape with `command` a string; its events are the
manifest's hook events except `notify`, plus SubagentStart/SubagentStop. Codex asks once,
in its TUI ("Hooks need review"), to trust hooks.json; until then those entries are
inert (notify is not gated). The trust is keyed to the exact definition, so moving the
wrapper needs a re-trust; --check cannot see trust.
"""

from __future__ import annotations

import json
import os
import tomllib

import tomlkit

from tma.install import common
from tma.install.common import FileOption

AGENT = "codex"


def _codex_home(p) -> str:
    return p.get("CODEX_HOME") or os.path.join(p.home, ".codex")


FILES = (
    FileOption("codex_config", "--codex-config", "TMA_CODEX_CONFIG", "Codex config.toml",
               lambda p: os.path.join(_codex_home(p), "config.toml")),
    FileOption("codex_hooks", "--codex-hooks", "TMA_CODEX_HOOKS", "Codex hooks.json",
               lambda p: os.path.join(_codex_home(p), "hooks.json")),
)
STATUSLINE = False
SHAPE = common.Shape(AGENT, nested=True, sync_events=("PermissionRequest",))
MARK = "added by tma install-hooks"
CAVEAT = ("codex: the first codex start after this asks once to trust hooks.json (\"Hooks "
          "need review\": review or trust them). Until trusted those hooks are inert; notify "
          "works regardless. Moving the tma-hook wrapper changes the definition and needs a "
          "re-trust; `tma install-hooks --check` cannot see trust")


def paths(ctx: common.Ctx) -> tuple[str, str]:
    return ctx.paths["codex_config"], ctx.paths["codex_hooks"]


def hook_events(manifest) -> list[str]:
    return [ev for ev in common.wired_events(manifest) if ev != "notify"]


def want_notify(ctx: common.Ctx) -> list[str]:
    return [ctx.ref, AGENT, "notify"]


def notify_ours(value) -> bool:
    return (isinstance(value, list) and bool(value) and isinstance(value[0], str)
            and os.path.basename(value[0]) == common.WRAPPER_NAME)


# ---------------------------------------------------------------- a line-level TOML lexer


class Stmt:
    """One statement of a TOML document: a `key = value` or a `[table]` header.

    start is the offset of its line start, end the offset after its final newline; table
    is the header path a key/value belongs to (() for the root).
    """

    __slots__ = ("kind", "key", "table", "start", "end")

    def __init__(self, kind, key, table, start, end):
        self.kind, self.key, self.table, self.start, self.end = kind, key, table, start, end

    def text(self, src: str) -> str:
        return src[self.start:self.end]


_BARE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _string_end(s: str, i: int) -> int:
    """s[i] opens a string; the index after it closes."""
    for delim in ('"""', "'''"):
        if s.startswith(delim, i):
            j = i + 3
            while True:
                k = s.find(delim, j)
                if k < 0:
                    return len(s)
                if delim == '"""':
                    bs = 0
                    while k - 1 - bs >= j and s[k - 1 - bs] == "\\":
                        bs += 1
                    if bs % 2:
                        j = k + 1
                        continue
                k += 3
                extra = 0
                while extra < 2 and k < len(s) and s[k] == delim[0]:
                    k += 1
                    extra += 1
                return k
    q = s[i]
    j = i + 1
    while j < len(s) and s[j] != q and s[j] != "\n":
        j += 2 if q == '"' and s[j] == "\\" else 1
    return j + 1


def _key(s: str, i: int, stop: str) -> tuple[tuple[str, ...], int]:
    parts: list[str] = []
    while i < len(s) and s[i] not in stop:
        c = s[i]
        if c in " \t.":
            i += 1
        elif c in "\"'":
            j = _string_end(s, i)
            raw = s[i:j]
            try:
                parts.append(json.loads(raw) if c == '"' else raw[1:-1])
            except ValueError:
                parts.append(raw[1:-1])
            i = j
        else:
            j = i
            while j < len(s) and s[j] in _BARE:
                j += 1
            parts.append(s[i:j])
            i = max(j, i + 1)
    return tuple(parts), i


def _line_end(s: str, i: int) -> int:
    j = s.find("\n", i)
    return len(s) if j < 0 else j + 1


def _value_end(s: str, i: int) -> int:
    depth = 0
    while i < len(s):
        c = s[i]
        if c in "\"'":
            i = _string_end(s, i)
        elif c in "[{":
            depth += 1
            i += 1
        elif c in "]}":
            depth -= 1
            i += 1
        elif c == "#":
            i = s.find("\n", i)
            if i < 0:
                return len(s)
        elif c == "\n":
            if depth <= 0:
                return i + 1
            i += 1
        else:
            i += 1
    return len(s)


def statements(s: str) -> list[Stmt]:
    out: list[Stmt] = []
    table: tuple[str, ...] = ()
    i = 0
    while i < len(s):
        start = i
        while i < len(s) and s[i] in " \t\r":
            i += 1
        if i >= len(s):
            break
        c = s[i]
        if c in "\n#":
            i = _line_end(s, i)
            continue
        if c == "[":
            aot = s.startswith("[[", i)
            key, j = _key(s, i + (2 if aot else 1), "]")
            table = key
            i = _line_end(s, j)
            out.append(Stmt("aot" if aot else "table", key, (), start, i))
            continue
        key, j = _key(s, i, "=\n")
        i = _value_end(s, j + 1)
        out.append(Stmt("kv", key, table, start, i))
    return out


# ---------------------------------------------------------------- config.toml


def _parse(path: str, text: str | None) -> dict:
    try:
        return tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as exc:
        raise common.InstallError(f"cannot parse {path}: malformed TOML ({exc}); "
                                  "not touching it") from None


def _features(doc: dict) -> dict:
    f = doc.get("features")
    return f if isinstance(f, dict) else {}


def _hooks_stmt(stmts: list[Stmt]) -> Stmt | None:
    for st in stmts:
        if st.kind == "kv" and ((st.table == ("features",) and st.key == ("hooks",))
                                or (st.table == () and st.key == ("features", "hooks"))):
            return st
    return None


def _render_notify(value: list[str]) -> str:
    return "notify = [" + ", ".join(json.dumps(v) for v in value) + "]"


def _edit_text(text: str, edits: list[tuple[int, int, int, str]]) -> str:
    """Apply (start, end, order, replacement) edits, later offsets first.

    Overlapping deletions (two removals claiming the same blank line) merge into one.
    """
    merged: list[tuple[int, int, int, str]] = []
    for e in sorted(edits):
        if merged and e[0] < merged[-1][1] and not e[3] and not merged[-1][3]:
            last = merged.pop()
            e = (last[0], max(last[1], e[1]), last[2], "")
        merged.append(e)
    for start, end, _order, repl in sorted(merged, key=lambda e: (e[0], e[2]), reverse=True):
        text = text[:start] + repl + text[end:]
    return text


def _install_text(text: str, doc: dict, ctx: common.Ctx) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    stmts = statements(text)
    want = want_notify(ctx)
    edits: list[tuple[int, int, int, str]] = []
    line = _render_notify(want) + "\n"
    top = [st for st in stmts if st.kind == "kv" and st.table == ()]
    cur = next((st for st in top if st.key == ("notify",)), None)
    if cur is not None:
        if doc.get("notify") != want:
            edits.append((cur.start, cur.end, 0, line))
    elif top:
        edits.append((top[-1].end, top[-1].end, 0, line))
    else:
        header = next((st for st in stmts if st.kind != "kv"), None)
        if header is None:
            edits.append((len(text), len(text), 0, line))
        else:
            pos = header.start
            while True:  # keep the comment lines directly above the header with it
                prev = text.rfind("\n", 0, max(pos - 1, 0))
                above = text[prev + 1:pos]
                if pos == 0 or not above.lstrip(" \t").startswith("#"):
                    break
                pos = prev + 1
            edits.append((pos, pos, 0, line + "\n"))
    if _features(doc).get("hooks") is not True:
        ours = f"hooks = true # {MARK}\n"
        header = next((st for st in stmts if st.kind == "table" and st.key == ("features",)),
                      None)
        if header is not None:
            body = [st for st in stmts if st.kind == "kv" and st.table == ("features",)]
            pos = body[-1].end if body else header.end
            edits.append((pos, pos, 1, ours))
        elif "features" in doc:
            raise _Fallback  # dotted keys, an inline table, or only [features.x] subtables
        else:
            block = ("\n" if text or edits else "") + "[features]\n" + ours
            edits.append((len(text), len(text), 1, block))
    return _edit_text(text, edits)


def _uninstall_text(text: str, doc: dict) -> str:
    stmts = statements(text)
    edits: list[tuple[int, int, int, str]] = []
    top = [st for st in stmts if st.kind == "kv" and st.table == ()]
    cur = next((st for st in top if st.key == ("notify",)), None)
    if cur is not None and notify_ours(doc.get("notify")):
        end = cur.end
        if len(top) == 1 and text.startswith("\n", end):
            end += 1  # the blank line the install put between it and the first table
        edits.append((cur.start, end, 0, ""))
    hk = _hooks_stmt(stmts)
    if hk is not None and MARK in hk.text(text):
        start, end = hk.start, hk.end
        if hk.table == ("features",):
            header = next(st for st in stmts if st.kind == "table" and st.key == ("features",))
            nxt = next((st for st in stmts if st.start > header.start and st.kind != "kv"),
                       None)
            rest = text[header.end:nxt.start if nxt else len(text)]
            if rest.replace(hk.text(text), "", 1).strip() == "":
                start = header.start  # the table holds nothing else: it goes too
                end = hk.end
                if start >= 2 and text[start - 2:start] == "\n\n":
                    start -= 1
                elif start == 1 and text[0] == "\n":
                    start = 0
        edits.append((start, end, 1, ""))
    return _edit_text(text, edits)


class _Fallback(Exception):
    pass


def _tomlkit_edit(text: str, ctx: common.Ctx, uninstall: bool) -> str:
    d = tomlkit.parse(text)
    if uninstall:
        if notify_ours(d.get("notify")):
            del d["notify"]
        f = d.get("features")
        if f is not None and "hooks" in f:
            item = f.item("hooks") if hasattr(f, "item") else None
            comment = getattr(getattr(item, "trivia", None), "comment", "") or ""
            if MARK in comment:
                del f["hooks"]
                if not f:
                    del d["features"]
        return tomlkit.dumps(d)
    d["notify"] = want_notify(ctx)
    flag = tomlkit.item(True)
    flag.comment(MARK)
    f = d.get("features")
    if f is None:
        t = tomlkit.table()
        t.add("hooks", flag)
        d["features"] = t
    elif f.get("hooks") is not True:
        f["hooks"] = flag
    return tomlkit.dumps(d)


def _config_new(path: str, text: str | None, doc: dict, ctx: common.Ctx,
                uninstall: bool) -> str | None:
    """The new config.toml text (None: no change)."""
    src = text or ""
    try:
        new = _uninstall_text(src, doc) if uninstall else _install_text(src, doc, ctx)
        ok = _verify(new, doc, ctx, uninstall)
    except _Fallback:
        ok = False
    if not ok:
        new = _tomlkit_edit(src, ctx, uninstall)
        if not _verify(new, doc, ctx, uninstall):
            raise common.InstallError(f"cannot edit {path} without disturbing it; add "
                                      f"notify = {json.dumps(want_notify(ctx))} and "
                                      "[features] hooks = true by hand")
    return None if new == src else new


def _verify(new: str, old: dict, ctx: common.Ctx, uninstall: bool) -> bool:
    try:
        doc = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        return False
    expect = json.loads(json.dumps(old, default=str))
    if uninstall:
        if notify_ours(expect.get("notify")):
            del expect["notify"]
        f = expect.get("features")
        if isinstance(f, dict) and "hooks" in f and "hooks" not in _features(doc):
            del f["hooks"]
            if not f and "features" not in doc:
                del expect["features"]
    else:
        expect["notify"] = want_notify(ctx)
        expect.setdefault("features", {})["hooks"] = True
    return json.loads(json.dumps(doc, default=str)) == expect


# ---------------------------------------------------------------- the adapter


def status(ctx: common.Ctx, manifest) -> common.Status:
    cp, hp = paths(ctx)

    def load():
        text = common.read_text(cp)
        return _parse(cp, text), common.JsonDoc.load(hp)

    st, loaded = common.load_status(AGENT, load)
    if loaded is None:
        return st
    doc, hooks = loaded
    notify = doc.get("notify")
    where = common.tilde(cp)
    if notify_ours(notify):
        st.ours = True
        if notify != want_notify(ctx):
            st.reasons.append(f"codex: notify in {where} runs another tma-hook ({notify[0]})")
    elif notify is not None:
        st.reasons.append(f"codex: notify in {where} is a foreign program "
                          f"({json.dumps(notify)}); codex runs only one, so tma's is not set")
    else:
        st.reasons.append(f"codex: no notify in {where}")
    if _features(doc).get("hooks") is not True:
        st.reasons.append(f"codex: [features] hooks is not true in {where} (hooks.json is "
                          "ignored)")
    common.json_hooks_check(st, hooks, SHAPE, hook_events(manifest), ctx)
    return st


def plan(ctx: common.Ctx, manifest, uninstall: bool) -> common.Plan:
    cp, hp = paths(ctx)
    text = common.read_text(cp)
    doc = _parse(cp, text)
    hooks = common.JsonDoc.load(hp)
    notify = doc.get("notify")
    if not uninstall and notify is not None and not notify_ours(notify):
        raise common.InstallError(
            f"{cp} already sets notify = {json.dumps(notify)}; codex runs only one notify "
            "program, so tma will not replace it. Remove it, or have it also run "
            f"`{ctx.cmd_ref} codex notify \"$1\"` (the JSON argument), then install again")
    if not uninstall and _features(doc).get("hooks") not in (None, True):
        raise common.InstallError(
            f"{cp} sets [features] hooks = {json.dumps(_features(doc).get('hooks'))}; codex "
            "ignores hooks.json unless it is true. Set it to true (or remove it) and install "
            "again")
    out = common.Plan(AGENT)

    new_hooks = hooks.copy()
    common.json_hooks_edit(new_hooks, SHAPE, hook_events(manifest), ctx, hp,
                           uninstall=uninstall)
    if not (uninstall and text is None):
        new_text = _config_new(cp, text, doc, ctx, uninstall)
        if new_text is not None:
            out.changes.append(common.Change(cp, text, new_text, "Codex config"))
            others = new_hooks.get("hooks")
            if uninstall and others and _features(tomllib.loads(new_text)).get("hooks") is not True:
                out.notes.append(f"codex: the [features] hooks = true line tma added is removed; "
                                 f"{common.tilde(hp)} still holds other hooks, which codex now "
                                 "ignores: set it yourself to keep them")
    out.add(hooks.change(new_hooks, "Codex hooks", uninstall=uninstall))
    return out.caveat(CAVEAT, uninstall)
