"""Nothing tma sends tmux depends on what one release prints differently.

tmux 3.4 and 3.5a print a control byte in a format's output as octal text, and the
other releases print it as is: a separator or marker made of a control byte reads on
some releases and not on others (the read path that saw no agent on 3.4). So:

* in the modules that build what tmux reads or prints (tma.tmux, tma.runtime,
  tma.daemon), no string literal holds a control byte, except the few listed here,
  each with why it never reaches tmux;
* every format operator tma's source writes (`#{e|<:`, `#{m:`, ...) has samples in
  tests/helpers/tmux_formats.py, which the tmux contract suite expands on every release.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import tmux_formats

SRC = Path(__file__).resolve().parents[2] / "src" / "tma"
CONTROL = {chr(c) for c in range(0x20)} - {"\n", "\t"} | {"\x7f"}
TMUX_FACING = ("tmux", "runtime", "daemon")

#: (module, literal) -> why the control bytes in it never reach a tmux format.
ALLOWED = {
    ("tmux/adapter.py", "\0"): "quote() removes NUL from a value before tmux sees it",
    ("tmux/adapter.py", "\r"): "quote() removes CR from a value before tmux sees it",
    ("runtime/notify/post.py", "\r"): "an HTTP header's line-break check, on a socket",
    ("runtime/notify/post.py", "\r\n"): "HTTP's line ends, on a socket to a web server",
    ("tmux/notify.py", "\x7f"): "strip_controls' range end: removes controls from a message",
    ("runtime/hook.py", "\x7f"): "the range end of a character filter on agent text",
    ("tmux/frame.py", "\a"): "untext's table: decodes what 3.4/3.5a print",
    ("tmux/frame.py", "\b"): "untext's table: decodes what 3.4/3.5a print",
    ("tmux/frame.py", "\v"): "untext's table: decodes what 3.4/3.5a print",
    ("tmux/frame.py", "\f"): "untext's table: decodes what 3.4/3.5a print",
    ("tmux/frame.py", "\r"): "untext's table: decodes what 3.4/3.5a print",
}


def test_no_control_byte_in_what_tmux_reads():
    found = {}
    for package in TMUX_FACING:
        for path in sorted((SRC / package).rglob("*.py")):
            rel = str(path.relative_to(SRC))
            for line, text in tmux_formats.string_literals(path):
                if CONTROL & set(text) and (rel, text) not in ALLOWED:
                    found[f"{rel}:{line}"] = text
    assert found == {}, ("a control byte in a string literal of a tmux-facing module: "
                         "use tma.tmux.frame for separators, or list it in ALLOWED with "
                         f"why it never reaches tmux: {found}")


def test_the_allow_list_names_literals_that_exist():
    present = set()
    for package in TMUX_FACING:
        for path in (SRC / package).rglob("*.py"):
            rel = str(path.relative_to(SRC))
            present |= {(rel, text) for _line, text in tmux_formats.string_literals(path)}
    assert set(ALLOWED) <= present


def test_every_format_operator_has_samples_every_release_expands():
    used = tmux_formats.constructs_in_source()
    missing = {op: sorted(where) for op, where in used.items()
               if op not in tmux_formats.CONSTRUCTS}
    assert missing == {}, ("a format operator with no sample in tests/helpers/tmux_formats.py "
                           f"(add one; the tmux contract suite runs it on every release): "
                           f"{missing}")
    assert {"?", "==:", "e|<:", "s/"} <= set(used)  # the scan sees the code
