"""Edit a JSON text by splicing only the bytes that change (stdlib only).

`splice(text, new)` turns the JSON document `text` into one whose value is `new` by the
smallest local edits: a member or element tma adds is inserted after its neighbour in the
container's own layout (indent unit and depth, line ending, `": "` or `":"`, inline or one
per line), one it drops is cut out with exactly the separator that came with it, a value
that changed is re-rendered in place, and everything else is left byte for byte: a
hand-formatted file keeps its spacing, its `2.50`, its key order and its escapes. So an
insertion followed by the removal of the same entry gives back the original bytes.

A tiny scanner finds every value's span; the edit loop makes one change at a time and
re-scans (settings files are small), which keeps every edit simple and never overlapping.
Values are compared as JSON (1 is not true, 2.50 is 2.5); object key order is not
compared (a kept key is never moved).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field

_WS = " \t\r\n"


@dataclass
class Node:
    kind: str  # object | array | scalar
    start: int
    end: int
    keys: list[str] = field(default_factory=list)  # object: the member keys, in order
    key_starts: list[int] = field(default_factory=list)  # object: where each key begins
    key_ends: list[int] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)  # object: member values; array: items


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _string_end(text: str, i: int) -> int:
    i += 1
    while True:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        else:
            i += 1


def _value(text: str, i: int) -> Node:
    c = text[i]
    if c == "{":
        node = Node("object", i, 0)
        i = _skip(text, i + 1)
        if text[i] == "}":
            node.end = i + 1
            return node
        while True:
            ks = i
            ke = _string_end(text, i)
            i = _skip(text, ke)  # the colon
            child = _value(text, _skip(text, i + 1))
            node.keys.append(json.loads(text[ks:ke]))
            node.key_starts.append(ks)
            node.key_ends.append(ke)
            node.items.append(child)
            i = _skip(text, child.end)
            if text[i] == "}":
                node.end = i + 1
                return node
            i = _skip(text, i + 1)  # past the comma
    if c == "[":
        node = Node("array", i, 0)
        i = _skip(text, i + 1)
        if text[i] == "]":
            node.end = i + 1
            return node
        while True:
            child = _value(text, i)
            node.items.append(child)
            i = _skip(text, child.end)
            if text[i] == "]":
                node.end = i + 1
                return node
            i = _skip(text, i + 1)
    if c == '"':
        return Node("scalar", i, _string_end(text, i))
    j = i
    while j < len(text) and text[j] not in _WS + ",]}":
        j += 1
    return Node("scalar", i, j)


def scan(text: str) -> Node:
    """The span tree of a valid JSON text (validate with json.loads first)."""
    return _value(text, _skip(text, 0))


# ---------------------------------------------------------------- comparing


def same(a, b) -> bool:
    """JSON equality: types matter (1 is not true, 1 is 1.0), object key order does not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (a != a and b != b)  # NaN is NaN here
    return type(a) is type(b) and a == b


def _canon(v) -> str:
    """One string per value as same() sees it: an array's items are matched by this, and
    a pair same() calls equal but this told apart (1 and 1.0, 0.0 and -0.0) was neither
    matched nor edited, so the splice stopped short or grew the array forever."""
    return json.dumps(_number_free(v), sort_keys=True)


def _number_free(v):
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, dict):
        return {k: _number_free(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_number_free(x) for x in v]
    return v


# ---------------------------------------------------------------- style


@dataclass
class Style:
    newline: str = "\n"
    unit: str = "  "
    key_sep: str = ": "
    item_sep: str = ", "  # between items of an inline container
    ascii: bool = False

    @classmethod
    def of(cls, text: str, root: Node) -> Style:
        st = cls(newline="\r\n" if "\r\n" in text else "\n",
                 ascii=text.isascii() and "\\u" in text)
        seen_unit = seen_key = seen_item = False

        def walk(node: Node, depth: int) -> None:
            nonlocal seen_unit, seen_key, seen_item
            if node.kind == "scalar" or not node.items:
                return
            first = node.key_starts[0] if node.kind == "object" else node.items[0].start
            lead = text[node.start + 1:first]
            if "\n" in lead and not seen_unit and depth == 0:
                ws = lead.rsplit("\n", 1)[1]
                if ws:
                    st.unit, seen_unit = ws, True
            if node.kind == "object" and not seen_key:
                st.key_sep, seen_key = text[node.key_ends[0]:node.items[0].start], True
            if len(node.items) > 1 and not seen_item:
                gap = text[node.items[0].end:(node.key_starts[1] if node.kind == "object"
                                              else node.items[1].start)]
                if "\n" not in gap:
                    st.item_sep, seen_item = gap, True
            for child in node.items:
                walk(child, depth + 1)

        walk(root, 0)
        if not seen_item and not any(c in text for c in "\r\n"):
            st.item_sep = "," if st.key_sep == ":" else ", "
        return st

    def render(self, value, indent: str | None) -> str:
        """value as JSON text; indent None: inline, else one per line at this indent."""
        if indent is None:
            return json.dumps(value, separators=(self.item_sep, self.key_sep),
                              ensure_ascii=self.ascii)
        body = json.dumps(value, indent=self.unit, separators=(",", self.key_sep),
                          ensure_ascii=self.ascii)
        return body.replace("\n", self.newline + indent)


# ---------------------------------------------------------------- layout helpers


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    j = start
    while j < pos and text[j] in " \t":
        j += 1
    return text[start:j]


def _entry_start(node: Node, i: int) -> int:
    return node.key_starts[i] if node.kind == "object" else node.items[i].start


def _multiline(text: str, node: Node, root: Node) -> bool:
    if node.items:
        return "\n" in text[node.start:_entry_start(node, 0)]
    inner = text[root.start:root.end]
    return node is root or "\n" in inner


def _entry_text(style: Style, node: Node, key: str | None, value, indent: str | None) -> str:
    rendered = style.render(value, indent)
    if node.kind == "object":
        return json.dumps(key, ensure_ascii=style.ascii) + style.key_sep + rendered
    return rendered


def _insert(text: str, root: Node, node: Node, pos: int, key: str | None, value,
            style: Style) -> str:
    """Insert an entry at index pos of node (object member or array item)."""
    n = len(node.items)
    if n == 0:
        if _multiline(text, node, root):
            outer = _line_indent(text, node.start)
            inner = outer + style.unit
            entry = _entry_text(style, node, key, value, inner)
            mid = style.newline + inner + entry + style.newline + outer
        else:
            mid = _entry_text(style, node, key, value, None)
        return text[:node.start + 1] + mid + text[node.end - 1:]
    first = _entry_start(node, 0)
    lead = text[node.start + 1:first]
    multi = "\n" in lead
    if multi:
        indent = lead.rsplit("\n", 1)[1]
        gap = "," + style.newline + indent
    else:
        indent = None
        gap = style.item_sep if n < 2 else text[node.items[0].end:_entry_start(node, 1)]
    entry = _entry_text(style, node, key, value, indent)
    if pos >= n:  # after the last entry
        at = node.items[n - 1].end
        return text[:at] + gap + entry + text[at:]
    at = _entry_start(node, pos)  # before entry pos: the entry, then a gap to entry pos
    return text[:at] + entry + gap + text[at:]


def _remove(text: str, node: Node, i: int) -> str:
    n = len(node.items)
    if n == 1:
        return text[:node.start + 1] + text[node.end - 1:]
    if i == n - 1:
        return text[:node.items[i - 1].end] + text[node.items[i].end:]
    return text[:_entry_start(node, i)] + text[_entry_start(node, i + 1):]


def _replace(text: str, node: Node, value, style: Style, root: Node) -> str:
    multi = "\n" in text[root.start:root.end]
    indent = _line_indent(text, node.start) if multi else None
    return text[:node.start] + style.render(value, indent) + text[node.end:]


# ---------------------------------------------------------------- one edit


def _one_edit(text: str, root: Node, node: Node, new, style: Style) -> str | None:
    """The text after one edit bringing node closer to new; None when node equals new."""
    old = json.loads(text[node.start:node.end])
    if same(old, new):
        return None
    if node.kind == "object" and isinstance(new, dict):
        last = {k: i for i, k in enumerate(node.keys)}  # a duplicate key: the last one counts
        for i, k in enumerate(node.keys):
            if k not in new:  # every occurrence goes; an earlier duplicate is left alone
                return _remove(text, node, i)
        for k, i in last.items():
            out = _one_edit(text, root, node.items[i], new[k], style)
            if out is not None:
                return out
        order = list(new)
        for j, k in enumerate(order):
            if k in last:
                continue
            before = [last[p] for p in order[:j] if p in last]
            pos = max(before) + 1 if before else 0
            return _insert(text, root, node, pos, k, new[k], style)
        return None  # pragma: no cover - same() said they differ
    if node.kind == "array" and isinstance(new, list):
        sm = difflib.SequenceMatcher(None, [_canon(json.loads(text[c.start:c.end]))
                                            for c in node.items],
                                     [_canon(v) for v in new], autojunk=False)
        for tag, i1, _i2, j1, _j2 in sm.get_opcodes():
            if tag == "equal":
                continue
            if tag == "replace":
                a, b = node.items[i1], new[j1]
                if (a.kind == "object" and isinstance(b, dict)) or \
                        (a.kind == "array" and isinstance(b, list)):
                    return _one_edit(text, root, a, b, style)
                return _replace(text, a, b, style, root)
            if tag == "delete":
                return _remove(text, node, i1)
            return _insert(text, root, node, i1, None, new[j1], style)
        return None  # pragma: no cover
    return _replace(text, node, new, style, root)


def splice(text: str, new) -> str:
    """text (a valid JSON document) edited so that it parses to new."""
    for _ in range(100_000):
        root = scan(text)
        style = Style.of(text, root)
        out = _one_edit(text, root, root, new, style)
        if out is None:
            return text
        text = out
    raise RuntimeError("splice did not converge")  # pragma: no cover
