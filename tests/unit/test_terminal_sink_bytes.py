"""The terminal sink's bytes: the body, the OSC sequences, tmux's wrapping, the probe's parse."""

from __future__ import annotations

from tma.runtime.notify import terminal as nt
from tma.runtime.notify.note import Note
from tma.tmux import passthrough


def note(**kw) -> Note:
    values = dict(trigger="blocked", agent="claude", pane="%1", title="SECRET",
                  summary="Bash: ls")
    values.update(kw)
    return Note(**values)


def test_the_body_says_what_is_asked_and_never_the_title():
    assert nt.body(note()) == "claude blocked: Bash: ls"
    assert nt.body(note(summary="")) == "claude blocked"
    assert nt.body(note(trigger="done", summary="")) == "claude done"
    assert "SECRET" not in nt.body(note(summary=""))


def test_the_body_has_no_control_byte_and_is_bounded_on_a_character():
    text = nt.body(note(summary="a\x1b]9;x\x07b\x9bc" + "é" * 300))
    assert text.startswith("claude blocked: a]9;xbc")
    assert not any(c < " " or "\x7f" <= c <= "\x9f" for c in text)
    raw = text.encode()
    assert len(raw) <= nt.BODY_MAX and len(raw) >= nt.BODY_MAX - 1  # é is 2 bytes


def test_each_code_its_sequence_in_the_configured_order():
    assert nt.sequences(note(), (9,)) == b"\x1b]9;claude blocked: Bash: ls\x07"
    assert nt.sequences(note(), (777,)) == b"\x1b]777;notify;tma;claude blocked: Bash: ls\x07"
    assert nt.sequences(note(), (99,)) == (b"\x1b]99;i=tma:d=0;tma\x1b\\"
                                           b"\x1b]99;i=tma:d=1:p=body;claude blocked: Bash: ls"
                                           b"\x1b\\")
    both = nt.sequences(note(), (9, 777))
    assert both.index(b"]9;") < both.index(b"]777;")


def test_wrap_doubles_every_escape():
    assert passthrough.wrap(b"\x1b]99;x\x1b\\") == b"\x1bPtmux;\x1b\x1b]99;x\x1b\x1b\\\x1b\\"
    inner = passthrough.wrap(b"\x1b]9;hi\x07")[len(b"\x1bPtmux;"):-2]
    assert b"\x1b\\" not in inner.replace(b"\x1b\x1b", b"")  # nothing ends the DCS early


def test_views_parse_every_release_spelling_and_skip_control_clients():
    f = passthrough.FRAME

    def rec(name, control, setting):
        return f.record("P", [name, control, name, "%1", "/dev/pts/9", setting]) + "\n"

    out = (rec("/dev/pts/1", "0", "on") + rec("/dev/pts/2", "0", "1")
           + rec("/dev/pts/3", "0", "all") + rec("/dev/pts/4", "0", "off")
           + rec("/dev/pts/5", "0", "0") + rec("/dev/pts/6", "0", "")
           + rec("/dev/pts/7", "1", "on"))
    got = [(v.client, v.passthrough) for v in passthrough.parse_views(out)]
    assert got == [("/dev/pts/1", True), ("/dev/pts/2", True), ("/dev/pts/3", True),
                   ("/dev/pts/4", False), ("/dev/pts/5", False), ("/dev/pts/6", False)]
