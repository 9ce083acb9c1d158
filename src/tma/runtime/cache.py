"""A small on-disk cache for derived data the hot paths must not recompute.

Entries are marshal files under $XDG_CACHE_HOME/tma (or ~/.cache/tma), each holding
(key, value); a key mismatch is a miss. Writes are atomic (temp file + rename) and
every failure is a silent miss: the cache is an optimisation, never a dependency.
"""

from __future__ import annotations

import marshal
import os

from tma import __version__


def directory() -> str:
    from tma.core.paths import Paths

    return Paths(os.environ).cache_dir


def _path(name: str) -> str:
    return os.path.join(directory(), f"{name}.marshal")


def get(name: str, key: object) -> object | None:
    try:
        with open(_path(name), "rb") as fh:
            stored_key, value = marshal.load(fh)
    except Exception:  # a missing, torn or foreign cache file is a miss
        return None
    return value if stored_key == (__version__, key) else None


def put(name: str, key: object, value: object) -> None:
    path = _path(name)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            marshal.dump(((__version__, key), value), fh)
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
