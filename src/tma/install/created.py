"""What tma created: the record that lets an uninstall take back exactly that.

An install that writes a file that was not there, or a folder that was not there,
notes it in `<config dir>/created.json`. An uninstall then removes such a file when
tma's entries were all it held (a `{}` settings.json, a config.toml with nothing but
an empty table header), and removes such a folder when it is empty. A file or folder
that existed before tma wrote to it is never in the record, so it is never removed;
a recorded file the user has since added to is kept (it is not empty).
"""

from __future__ import annotations

import json
import os

from tma.install import common

RECORD = "created.json"


def holds_nothing(text: str) -> bool:
    """Is this file content empty apart from structure (`{}`, blank, bare TOML headers)?"""
    stripped = text.strip()
    if not stripped:
        return True
    if stripped.startswith("{"):
        try:
            return json.loads(stripped) == {}
        except ValueError:
            return False
    for line in stripped.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and not (line.startswith("[") and
                                                      line.endswith("]")):
            return False
    return True


class Created:
    """The files and folders tma created, as recorded under one config dir."""

    def __init__(self, config_dir: str, files: set[str], dirs: set[str]) -> None:
        self.config_dir = config_dir
        self.path = os.path.join(config_dir, RECORD)
        self.files = files
        self.dirs = dirs
        # the config dir and its missing parents, made by this run (or its record)
        self._config_made = _missing_dirs(config_dir)
        self._saved = (set(files), set(dirs))

    @classmethod
    def load(cls, config_dir: str) -> Created:
        try:
            with open(os.path.join(config_dir, RECORD), encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError):
            doc = {}
        if not isinstance(doc, dict):
            doc = {}

        def strings(key: str) -> set[str]:
            value = doc.get(key)
            return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()

        return cls(config_dir, strings("files"), strings("dirs"))

    # ---------------------------------------------------------------- install side

    @staticmethod
    def missing(change: common.Change) -> list[str]:
        """What applying this change will create: the file, then its missing folders."""
        if change.new is None or os.path.lexists(change.path):
            return []
        return [change.path] + _missing_dirs(os.path.dirname(os.path.abspath(change.path)))

    def note(self, made: list[str], change: common.Change) -> None:
        """Record what an applied change created (or forget a file it deleted)."""
        if change.new is None:
            self.files.discard(change.path)
            return
        if made:
            self.files.add(made[0])
            self.dirs.update(made[1:])

    # ---------------------------------------------------------------- uninstall side

    def removal(self, change: common.Change) -> common.Change:
        """An uninstall's change, turned into a deletion when tma created the file and
        the change leaves nothing else in it."""
        if (change.path in self.files and isinstance(change.new, str)
                and holds_nothing(change.new)):
            return common.Change(change.path, change.old, None, change.label,
                                 summary=f"remove {change.path} (tma created it and nothing "
                                         "else is in it)")
        return change

    def remove_wrapper(self, path: str, io) -> None:
        """The tma-hook wrapper goes when tma created it and it is still tma's."""
        if path not in self.files:
            return
        try:
            with open(path, "rb") as fh:
                if fh.read() != common.asset_bytes(common.WRAPPER_NAME):
                    return  # edited or replaced since: not tma's to remove any more
            os.unlink(path)
        except (OSError, common.InstallError):
            return
        self.files.discard(path)
        io.say(f"tma: removed the hook wrapper {common.tilde(path)} (tma wrote it)")

    def prune(self, io) -> None:
        """Remove every recorded folder that is empty now, deepest first."""
        self.files = {f for f in self.files if os.path.lexists(f)}
        for d in sorted(self.dirs, key=len, reverse=True):
            if d == self.config_dir:
                continue
            try:
                os.rmdir(d)
            except FileNotFoundError:
                pass
            except OSError:
                continue  # not empty (something else lives there now): it stays
            else:
                io.say(f"tma: removed the empty folder {common.tilde(d)} (tma created it)")
            self.dirs.discard(d)

    def forget_config_dir(self, io) -> None:
        """The full uninstall's last step: the record goes, and tma's config dir with it
        when tma created it and nothing is left in it."""
        made = sorted({d for d in self.dirs if d == self.config_dir
                       or self.config_dir.startswith(d + os.sep)} | set(self._config_made),
                      key=len, reverse=True)
        self.files.clear()
        self.dirs.clear()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        except OSError:
            return
        self._saved = (set(), set())
        for d in made:  # the config dir first, then the parents tma made for it
            try:
                os.rmdir(d)
            except OSError:
                return
            io.say(f"tma: removed the empty folder {common.tilde(d)} (tma created it)")

    # ---------------------------------------------------------------- the record

    def save(self) -> None:
        """Write the record when it changed; silent on failure (it only helps uninstall)."""
        if (self.files, self.dirs) == self._saved:
            return
        self.dirs.update(self._config_made)  # this run (or this record) made them
        doc = {"files": sorted(self.files), "dirs": sorted(self.dirs)}
        try:
            common.write_atomic(self.path, (json.dumps(doc, indent=2) + "\n").encode())
        except OSError:
            return
        self._saved = (set(self.files), set(self.dirs))


def _missing_dirs(directory: str) -> list[str]:
    """directory and each parent of it that does not exist yet, deepest first."""
    out = []
    d = os.path.abspath(directory)
    while d and not os.path.exists(d):
        out.append(d)
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
    return out
