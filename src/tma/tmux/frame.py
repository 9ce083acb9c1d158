"""Formats tma reads back, framed so that every tmux release prints them alike.

A `-F` format's output reaches tma through tmux's command-output path, and releases
treat that path differently (measured on builds of 3.2a ... next, see
docs/reference/tmux-compatibility.md):

- 3.2a, 3.3a, 3.6b, 3.7c and next print every byte as is;
- 3.4 and 3.5a pass the output through vis(3): a control byte comes out as octal text
  (0x1f as the four characters `\\037`), `\\r` as `\\r`, and 3.4 also writes `$` before
  a letter, `_` or `{` as `\\$`. A backslash is left alone, so what was escaped and what
  was typed cannot be told apart;
- on every release a newline inside a value (a directory may be named with one) ends
  the output line early.

So nothing tma reads back relies on a control byte or on the line structure:

- Records and fields are delimited by printable markers that carry a random nonce
  (`Frame`, 24 bits drawn per read, per process for the daemon's batches): a title,
  path or option value holds one only by guessing it, and a wrong guess costs one
  misread pane for one read; every release prints the markers unchanged. A record ends with one more field separator,
  so whatever tmux prints after it (a newline, another command's output) is never
  taken for part of the last field.
- A free-text value (a title, a path, a session name, an agent-supplied option) is
  expanded through `text()`, which has tmux double every backslash first; `untext()`
  then decodes both the doubled backslashes and the escapes 3.4 and 3.5a add, with no
  ambiguity, so the value round-trips on every release.

Probing is not needed for either: the same format reads the same on every release.
Kept import-light (`os` only): `tma status` and `tma event` read through it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

#: Characters a marker is made of besides its nonce: printable, not special in a tmux
#: format (not `#`, `,`, `}`), in a command line (not `~`, `$`, quotes) or in vis(3).
_RECORD_MARK = "^"
_FIELD_MARK = "|"


class Frame:
    """The markers of one read: a record starts with `rs` and its kind, and each field
    follows an `fs`. The nonce starts neither marker, so no value's tail plus a
    marker's head can form a false marker."""

    __slots__ = ("rs", "fs")

    def __init__(self, nonce: str | None = None) -> None:
        n = nonce if nonce is not None else os.urandom(3).hex()
        self.rs = _RECORD_MARK + n
        self.fs = _FIELD_MARK + n

    def record(self, kind: str, fields: Iterable[str]) -> str:
        """The format of one record: KIND, then each field format, then a closing
        separator. KIND is a short ASCII tag that names the record."""
        return self.rs + kind + self.fs + self.fs.join(fields) + self.fs

    def records(self, out: str, kind: str, width: int | None = None) -> list[list[str]]:
        """Every record of KIND in OUT, as its fields in order (raw: run a free-text
        field through `untext`). With WIDTH, a record of another width is dropped."""
        found = []
        head = kind + self.fs
        for chunk in out.split(self.rs)[1:]:
            if not chunk.startswith(head):
                continue
            fields = chunk[len(head):].split(self.fs)
            fields.pop()  # after the closing separator: the newline and anything after
            if width is None or len(fields) == width:
                found.append(fields)
        return found

    def first(self, out: str, kind: str, width: int | None = None) -> list[str] | None:
        got = self.records(out, kind, width)
        return got[0] if got else None


def text(expr: str) -> str:
    """The format of a free-text value (a variable or option name such as `pane_title`
    or `@agent_model`), with every backslash doubled by tmux itself: `untext` reads it
    back exactly on every release. An empty value costs tmux no regex."""
    return "#{s/\\\\/\\\\\\\\/:" + expr + "}"


_SIMPLE = {"\\": "\\", "$": "$", "a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v",
           "f": "\f", "r": "\r", "s": " "}
_OCTAL = "01234567"


def untext(value: str) -> str:
    """Decode a value printed through `text()`: a doubled backslash is one backslash;
    `\\$`, C-style escapes and three-digit octal escapes (what vis(3) adds on 3.4 and
    3.5a) are the characters they stand for. A byte above 0x7f that was not valid
    UTF-8 becomes U+FFFD, as it does where tmux prints the byte itself."""
    if "\\" not in value:
        return value
    out = []
    i, n = 0, len(value)
    while i < n:
        j = value.find("\\", i)
        if j < 0:
            out.append(value[i:])
            break
        out.append(value[i:j])
        c = value[j + 1:j + 2]
        if c in _SIMPLE and c:
            out.append(_SIMPLE[c])
            i = j + 2
        elif len(value) >= j + 4 and all(d in _OCTAL for d in value[j + 1:j + 4]):
            code = int(value[j + 1:j + 4], 8)
            out.append(chr(code) if code < 0x80 else "\ufffd")
            i = j + 4
        else:  # not an escape tma or tmux wrote: keep it as printed
            out.append("\\")
            i = j + 1
    return "".join(out)
