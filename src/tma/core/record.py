"""A minimal record base class for the hot paths.

`dataclasses` imports `inspect` and `re` (~16 ms here) and `typing` costs more;
`tma status` and `tma event` run on every status line and every hook, so the
types they touch are plain slotted classes instead. A subclass declares its fields
the way a dataclass does, annotated, with an immutable default or none (required,
and then before every field that has one):

    class Point(Record):
        x: int
        y: int = 0
        label: str = ""

The metaclass moves the defaults out of the class body into `_fields`, a table of
(name, default), and makes the names the `__slots__`. Under
`from __future__ import annotations` the annotations are unevaluated strings, so
reading them imports nothing; a type checker reads the same body as a dataclass
through `dataclass_transform`. (A class that writes `__slots__` and `_fields` out
itself, the older spelling, is taken as it is, but its fields are invisible to the
type checker.)

`class Frame(Record, frozen=True)` makes a record that cannot change once built, as a
frozen dataclass: assigning or deleting a field raises AttributeError (and the type
checker reports the assignment). A subclass of a frozen record says `frozen=True` too.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, Self, dataclass_transform
else:

    def dataclass_transform(**_options):
        """Read by type checkers only; at run time it leaves the class as it is."""
        return lambda cls: cls


_REQUIRED: Any = object()  # the default of a field declared without one
_CLASS_VAR = ("ClassVar", "typing.ClassVar")


class RecordType(type):
    """Builds `__slots__` and `_fields` from a Record subclass's annotated fields.

    Runs once per record class at import, on the hot paths too: one pass, no helpers.
    """

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any],
                frozen: bool = False) -> RecordType:
        if frozen:
            namespace["__setattr__"] = _refuse_set
            namespace["__delattr__"] = _refuse_del
        annotations = namespace.get("__annotations__")
        if "_fields" in namespace or "__slots__" in namespace:
            # the older spelling, taken as written: `__slots__` plus a `_fields` table. A
            # type checker cannot see those fields (tma.core and tma.tmux do not use it).
            if "_fields" not in namespace or "__slots__" not in namespace or any(
                    not str(a).startswith(_CLASS_VAR) for a in (annotations or {}).values()):
                raise TypeError(f"{name}: declare Record fields as annotated class attributes "
                                "(a dataclass's syntax), or else both __slots__ and _fields")
            return type.__new__(mcs, name, bases, namespace)
        if annotations is None:
            if "__annotate__" in namespace:  # Python 3.14 without the future import: lazy
                raise TypeError(f"{name}: a Record module needs "
                                "`from __future__ import annotations`")
            annotations = {}
        fields: list[tuple[str, Any]] = []
        for base in bases:
            fields.extend(getattr(base, "_fields", ()))
        taken = {field for field, _ in fields}
        after_default = bool(fields) and fields[-1][1] is not _REQUIRED
        slots = []
        for field, annotation in annotations.items():
            if str(annotation).startswith(_CLASS_VAR):
                continue
            if field in taken:
                raise TypeError(f"{name}.{field} is already a field of a base record")
            default = namespace.pop(field, _REQUIRED)
            if default is not _REQUIRED:
                after_default = True
            elif after_default:
                raise TypeError(f"{name}.{field} has no default but follows a field that has")
            slots.append(field)
            fields.append((field, default))
        namespace["__slots__"] = tuple(slots)
        namespace["_fields"] = tuple(fields)
        return type.__new__(mcs, name, bases, namespace)


def _refuse_set(self: object, name: str, _value: object) -> None:
    raise AttributeError(f"{type(self).__name__} is frozen: cannot assign to {name!r}")


def _refuse_del(self: object, name: str) -> None:
    raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name!r}")


@dataclass_transform(eq_default=True)
class Record(metaclass=RecordType):
    """Positional or keyword construction in field order; equality and hash by value."""

    _fields: ClassVar[tuple[tuple[str, object], ...]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if not kwargs and len(args) == len(fields):
            # every field given in order (the readers build panes and stamps this way,
            # one per pane per run): no defaults to look up, nothing to check
            set_ = object.__setattr__
            for (name, _default), value in zip(fields, args, strict=True):
                set_(self, name, value)
            return
        required = _REQUIRED  # a local: this loop runs per field of every record built
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(fields)} arguments")
        for i, (name, default) in enumerate(fields):
            if i < len(args):
                if name in kwargs:
                    raise TypeError(f"{type(self).__name__} got {name!r} twice")
                value = args[i]
            else:
                value = kwargs.pop(name, default)
                if value is required:
                    raise TypeError(f"{type(self).__name__} needs {name!r}")
            object.__setattr__(self, name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unknown fields {sorted(kwargs)}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, n) for n, _ in self._fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self._fields)
        return f"{type(self).__name__}({inner})"

    def replace(self, **changes: Any) -> Self:
        values = {n: getattr(self, n) for n, _ in self._fields}
        values.update(changes)
        return type(self)(**values)
