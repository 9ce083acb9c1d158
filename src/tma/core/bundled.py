"""The agent manifests that ship inside the package (`tma/core/manifests/*.toml`).

They are package data, read through `importlib.resources`. That keeps `tma.core` free of
file-system modules (this module is the one agreed exception, and it only ever reads its
own package). A bundled manifest that fails to load is a build bug, not user input, so
`load_all` raises instead of skipping the file. Skipping bad files is what the user-manifest
loader in `tma.runtime` does.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable

from tma.core import manifest as _manifest
from tma.core.manifest import Manifest, ManifestError

PACKAGE = "tma.core.manifests"
SUFFIX = ".toml"


class BundledManifestError(ManifestError):
    """A bundled manifest failed to load: the package itself is broken."""


def _files() -> Traversable:
    return resources.files(PACKAGE)


@cache
def _names() -> tuple[str, ...]:
    stems = {
        entry.name[: -len(SUFFIX)]
        for entry in _files().iterdir()
        if entry.name.endswith(SUFFIX) and entry.is_file()
    }
    return tuple(sorted(stems))


def names() -> list[str]:
    """The bundled agent names (manifest stems), sorted."""
    return list(_names())


def text(name: str) -> str:
    """The TOML source of one bundled manifest. KeyError for a name that is not bundled."""
    if name not in _names():
        raise KeyError(f"no bundled manifest named {name!r}")
    return _files().joinpath(name + SUFFIX).read_text(encoding="utf-8")


@cache
def _load_all() -> tuple[tuple[str, Manifest], ...]:
    loaded = []
    for name in _names():
        try:
            loaded.append((name, _manifest.loads(name, text(name))))
        except ManifestError as exc:
            raise BundledManifestError(f"bundled manifest {name}{SUFFIX}: {exc}") from None
    return tuple(loaded)


def load_all() -> dict[str, Manifest]:
    """Every bundled manifest by name. Raises BundledManifestError if any is broken."""
    return dict(_load_all())


def load(name: str) -> Manifest:
    """One bundled manifest. KeyError for a name that is not bundled."""
    manifests = load_all()
    if name not in manifests:
        raise KeyError(f"no bundled manifest named {name!r}")
    return manifests[name]
