"""A small on-disk cache for derived data the hot paths must not recompute.

Entries are marshal files under $XDG_CACHE_HOME/tma (or ~/.cache/tma), each holding
(key, value); a key mismatch is a miss. Writes are atomic (temp file + rename) and
every failure is a silent miss: the cache is an optimisation, never a dependency.
"""

from __future__ import annotations

import marshal
import os

from tma import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def directory() -> str:
    from tma.core.paths import here

    return here().cache_dir


def _path(name: str) -> str:
    return os.path.join(directory(), f"{name}.marshal")


def get(name: str, key: Any) -> Any:
    """The value stored under `key` (marshal data: its shape is the caller's), or None."""
    try:
        with open(_path(name), "rb") as fh:
            # loads(read()), not load(fh): load pulls a file object item by item through
            # its read methods, ~15x slower (about 1 ms for the 8 KB manifest documents)
            stored_key, value = marshal.loads(fh.read())
    except Exception:  # a missing, torn or foreign cache file is a miss
        return None
    return value if stored_key == (__version__, key) else None


def put(name: str, key: Any, value: Any) -> None:
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


def clear() -> list[str]:
    """Remove tma's own cache entries, and the cache folder once it is empty (uninstall).

    Only `*.marshal` entries and stray temp files go: anything else in the folder was
    not written here and stays, and so does the folder then."""
    from tma.runtime.daemon_files import remove

    base = directory()
    try:
        names = os.listdir(base)
    except OSError:
        return []
    return remove(base, [n for n in names if n.endswith(".marshal")
                         or (".marshal." in n and n.endswith(".tmp"))])
