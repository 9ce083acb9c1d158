"""The slotted record base: fields declared as annotations, as a dataclass would."""

from __future__ import annotations

from typing import ClassVar

import pytest

from tma.core.record import Record


class Point(Record):
    x: int
    y: int = 0
    label: str = ""
    KIND: ClassVar[str] = "point"  # a class attribute, not a field

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)


class Labelled(Point):
    colour: str = "red"


def test_fields_become_slots_and_the_field_table():
    assert vars(Point)["__slots__"] == ("x", "y", "label")
    assert [n for n, _ in Point._fields] == ["x", "y", "label"]
    assert dict(Point._fields)["y"] == 0 and dict(Point._fields)["label"] == ""
    assert "y" not in Point.__dict__ or not isinstance(Point.__dict__["y"], int)  # moved out
    assert Point.KIND == "point"
    p = Point(1)
    with pytest.raises(AttributeError):
        p.z = 3  # type: ignore[attr-defined]  # slotted: no instance dict
    assert not hasattr(p, "__dict__")


def test_positional_keyword_defaults_and_required():
    assert Point(1, 2, "a") == Point(x=1, y=2, label="a")
    p = Point(3)
    assert (p.x, p.y, p.label, p.norm1) == (3, 0, "", 3)
    with pytest.raises(TypeError, match="needs 'x'"):
        Point()  # type: ignore[call-arg]  # the point of the test: x is required
    with pytest.raises(TypeError, match="unknown fields"):
        Point(1, z=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="twice"):
        Point(1, x=2)  # type: ignore[misc]
    with pytest.raises(TypeError, match="at most 3"):
        Point(1, 2, "a", 4)  # type: ignore[call-arg]


def test_value_semantics_repr_and_replace():
    p = Point(1, 2)
    assert p == Point(1, 2) and p != Point(1, 3)
    assert hash(p) == hash(Point(1, 2))
    assert {p, Point(1, 2)} == {p}
    assert repr(p) == "Point(x=1, y=2, label='')"
    q = p.replace(label="b")
    assert q == Point(1, 2, "b") and p.label == ""
    assert type(q) is Point


def test_a_subclass_record_extends_its_base_fields():
    c = Labelled(1, 2, "l", "blue")
    assert [n for n, _ in Labelled._fields] == ["x", "y", "label", "colour"]
    assert vars(Labelled)["__slots__"] == ("colour",)
    assert (c.x, c.colour) == (1, "blue")
    assert c != Point(1, 2, "l")  # different record types never compare equal


def test_declaration_errors_are_caught_at_class_creation():
    with pytest.raises(TypeError, match="has no default but follows a field that has"):
        class _Bad(Record):
            a: int = 0
            b: int  # type: ignore[misc]  # the declaration under test

    with pytest.raises(TypeError, match="or else both __slots__ and _fields"):
        class _Half(Record):
            _fields = (("a", 0),)

    with pytest.raises(TypeError, match="or else both __slots__ and _fields"):
        class _Mixed(Record):
            __slots__ = ("a",)
            _fields = (("a", 0),)
            b: int = 0

    with pytest.raises(TypeError, match="already a field"):
        class _Again(Point):
            x: int = 5


class Spelled(Record):
    """The older spelling: slots and the field table written out (opaque to mypy)."""

    __slots__ = ("a", "b")
    _fields = (("a", 1), ("b", ""))


def test_the_older_spelling_is_taken_as_written():
    s = Spelled(b="x")
    assert (s.a, s.b) == (1, "x")  # type: ignore[attr-defined]  # invisible to mypy
    assert s == Spelled(1, "x")
    assert vars(Spelled)["__slots__"] == ("a", "b")


class Fixed(Record, frozen=True):
    """A frozen record, as tma.core.proto's wire records are."""

    a: int
    b: str = ""


class FixedMore(Fixed, frozen=True):
    c: int = 0


def test_a_frozen_record_refuses_assignment_and_deletion_after_it_is_built():
    f = Fixed(1, "x")
    with pytest.raises(AttributeError, match="frozen: cannot assign to 'a'"):
        f.a = 2  # type: ignore[misc]  # the assignment under test
    with pytest.raises(AttributeError, match="frozen: cannot delete 'b'"):
        del f.b
    with pytest.raises(AttributeError, match="frozen"):
        FixedMore(1).c = 3  # type: ignore[misc]  # a frozen record's subclass too
    assert (f.a, f.b) == (1, "x")
    assert f.replace(a=2) == Fixed(2, "x") and f.a == 1  # replace builds a new one
    assert hash(f) == hash(Fixed(1, "x"))
    p = Point(1)
    p.x = 4  # a record not declared frozen stays assignable
    assert p.x == 4
