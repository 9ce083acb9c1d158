"""Loading the action set: bundled actions, then user actions that add or shadow by stem.

User actions live in $XDG_CONFIG_HOME/tma/actions/<name>.toml (or ~/.config/tma/actions/).
A broken user file is skipped with one line naming the file and the error, and the rest
load; a broken bundled file is fatal (a build bug, not user input).
"""

from __future__ import annotations

import os

from tma.core.actions import schema
from tma.core.paths import here


class BundledActionError(Exception):
    pass


def user_dir() -> str:
    return here().action_dir


def bundled_dir() -> str:
    # src/tma/runtime/act/registry.py -> src/tma/core/actions
    tma = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    return os.path.join(tma, "core", "actions")


def _tomls(directory: str) -> list[tuple[str, str]]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [(n[:-5], os.path.join(directory, n)) for n in names if n.endswith(".toml")]


def _load_file(stem: str, path: str) -> schema.Action:
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise schema.ActionError(f"cannot read: {exc}") from None
    return schema.loads(stem, text)


class ActionSet:
    """name -> Action (bundled order, then user additions), plus skipped (path, error)."""

    def __init__(self, actions: dict[str, schema.Action], skipped: list[tuple[str, str]],
                 origin: dict[str, str]) -> None:
        self.actions = actions
        self.skipped = skipped
        self.origin = origin  # name -> the file it came from

    def get(self, name: str) -> schema.Action | None:
        return self.actions.get(name)

    def names(self) -> list[str]:
        return list(self.actions)

    def listing(self) -> list[dict]:
        """`tma act --list`'s entries without a pane: what each action is and covers."""
        return [{"name": a.name, "label": a.label, "kind": a.kind,
                 "agents": list(a.covered_agents()),
                 "when": None if a.when.empty else a.when.as_json()}
                for a in self.actions.values()]


def load(user: str | None = None) -> ActionSet:
    actions: dict[str, schema.Action] = {}
    origin: dict[str, str] = {}
    for stem, path in _tomls(bundled_dir()):
        try:
            actions[stem] = _load_file(stem, path)
        except schema.ActionError as exc:
            raise BundledActionError(f"tma: bundled action {path} failed to load: {exc}") \
                from None
        origin[stem] = path
    skipped: list[tuple[str, str]] = []
    for stem, path in _tomls(user if user is not None else user_dir()):
        try:
            actions[stem] = _load_file(stem, path)
        except schema.ActionError as exc:
            skipped.append((path, str(exc)))
            continue
        origin[stem] = path
    return ActionSet(actions, skipped, origin)


def report_skipped(aset: ActionSet, write) -> None:
    for path, error in aset.skipped:
        write(f"tma: skipping action {path}: {error}\n")
