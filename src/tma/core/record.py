"""A minimal record base class for the hot paths.

`dataclasses` imports `inspect` and `re` (~16 ms here) and `typing` costs more;
`tma status` and `tma event` run on every status line and every hook, so the
types they touch are plain slotted classes built from a field table instead.
"""

from __future__ import annotations


class Record:
    """Subclasses set `_fields = (("name", default), ...)`; defaults must be immutable."""

    __slots__ = ()
    _fields: tuple[tuple[str, object], ...] = ()

    def __init__(self, *args, **kwargs):
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(fields)} arguments")
        for i, (name, default) in enumerate(fields):
            if i < len(args):
                if name in kwargs:
                    raise TypeError(f"{type(self).__name__} got {name!r} twice")
                value = args[i]
            else:
                value = kwargs.pop(name, default)
            object.__setattr__(self, name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unknown fields {sorted(kwargs)}")

    def _values(self) -> tuple:
        return tuple(getattr(self, n) for n, _ in self._fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self._fields)
        return f"{type(self).__name__}({inner})"

    def replace(self, **changes):
        values = {n: getattr(self, n) for n, _ in self._fields}
        values.update(changes)
        return type(self)(**values)
