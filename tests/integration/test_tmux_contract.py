"""What every tmux release must give tma back unchanged: the read path, end to end.

Part of the tmux contract suite: under TMA_TMUX_MATRIX each test runs once per build
(`[tmux-3.4]` ...). Releases differ in how they print a format's output (3.4 and 3.5a
escape control bytes and `$`, every release breaks a line at a newline in a value), so
the values here are the hostile ones: a directory named with a newline, the old field
separator, backslashes and octal-looking text; a title with format syntax and the
framing's own marker characters; another writer's option with control bytes.

The reference screens (../shared/reference/captures, real screens of the agents that
tma was never tuned on) are drawn one per pane with a process named like the agent, and
one `tma ls --json` must read every pane as the pure engine reads the file.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from tma.core import bundled, fixture, states
from tma.core.explain import detect
from tma.core.fold import Facts
from tma.core.rules import Screen
from tma.tmux import read
from tma.tmux.adapter import Server

pytestmark = pytest.mark.tmux_contract

HOSTILE_DIRS = [
    "dir with\nnewline",
    "sep\x1fin\x1fpath",
    "octal \\037 and \\\\ slashes",
    "$HOME ${x} $_ dollar",
    "#{pane_id} #[fg=red] #(true)",
    "ctrl \x01\x07\x1b[31m\x7f end",
    "|^ marker chars ^| ~tilde",
    "unicode ✳ é 中文",
    "trailing space ",
]
HOSTILE_TITLES = [
    "✳ Claude Code",
    "title \\037 \\\\ \\n #(true)",
    "$HOME ${x} $_",
    "#{pane_id},}| ^ |",
    "^deadbeef |deadbeef",
    "",
]
#: Free-text options another writer (or an agent's payload) may put on a pane.
HOSTILE_OPTIONS = {
    "@agent_pending_summary": "Bash: rm -rf $HOME/build \\037 #{x}",
    "@agent_model": "model\x01with\x1fcontrols\nand newline",
    "@agent_transcript": "/tmp/a b/\\x/$y.jsonl",
}


@pytest.fixture
def server(srv):
    return Server(srv.tmux_bin, socket_name=srv.name)


def _pane_in(srv, directory: Path) -> str:
    """A pane whose foreground process sits in `directory` (any name: it is read from a
    file, never passed through a shell word or a tmux format)."""
    name_file = directory.parent / f"{directory.name.encode().hex()[:40]}.name"
    name_file.write_bytes(os.fsencode(str(directory)))
    return srv.new_pane(f"cd \"$(cat '{name_file}')\" && exec sleep 100000")


def _stored_title(srv, pane: str, title: str) -> str:
    """The title as this release stores it. 3.7c and later store what a program sets
    through vis(3) (a backslash doubled, `#(` made `_(`): tma reads what tmux holds, as
    tmux's own status line shows it. Where the release prints format output as is, its
    own display-message says what it holds; 3.4 and 3.5a print escaped but store the
    title as set."""
    raw = srv.tmux("display-message", "-p", "\x1f") == "\x1f\n"
    return srv.display(pane, "#{pane_title}") if raw else title


def _osc_title(srv, pane: str, title: str) -> None:
    """Set a pane's title the way an agent does (OSC 2 on its tty)."""
    tty = srv.display(pane, "#{pane_tty}")
    with open(tty, "w", encoding="utf-8") as fh:
        fh.write(f"\x1b]2;{title}\x07")


def test_the_read_path_round_trips_hostile_paths_titles_and_options(srv, server, tmp_path):
    base = tmp_path / "hostile"
    base.mkdir()
    panes = {}
    for i, name in enumerate(HOSTILE_DIRS):
        d = base / name
        d.mkdir()
        panes[_pane_in(srv, d)] = (str(d), HOSTILE_TITLES[i % len(HOSTILE_TITLES)])
    for pane, (_path, title) in panes.items():
        _osc_title(srv, pane, title)
    first = next(iter(panes))
    for key, value in HOSTILE_OPTIONS.items():
        srv.tmux("set-option", "-p", "-t", first, key, value)
    srv.wait_for(lambda: all(srv.display(p, "#{pane_current_command}") == "sleep"
                             for p in panes))
    srv.wait_for(lambda: all(srv.display(p, "#{pane_title}") != "" or not t
                             for p, (_d, t) in panes.items()), timeout=5)
    time.sleep(0.2)  # every title has been drawn
    panes = {p: (d, _stored_title(srv, p, t)) for p, (d, t) in panes.items()}

    for lean in (False, True):
        snap = read.list_panes(server, lean=lean)
        got = {p.pane_id: p for p in snap.panes}
        assert set(got) == set(panes), f"lean={lean}: every pane is read, no pane is split"
        for pane_id, (path, title) in panes.items():
            p = got[pane_id]
            assert p.title == title
            assert p.current_path == ("" if lean else path)
            assert p.current_command == "sleep" and p.session_name == "s"
            assert p.tty.startswith("/dev/") and p.height == 30 and p.width == 100
        opts = got[first].options
        want = {k: v for k, v in HOSTILE_OPTIONS.items()
                if not lean or k in read.CYCLE_OPTIONS}  # a lean read skips the lanes
        assert {k: v for k, v in opts.items() if k in HOSTILE_OPTIONS} == want
        assert snap.version and snap.socket_path.endswith(srv.name) and snap.server_pid

    # the hook's read, and a few values read back in one pane
    hook = read.hook_panes(server, first)
    assert hook[0].pane_id == first and hook[0].current_path == panes[first][0]
    assert {p.pane_id for p in hook} == set(panes)
    values = read.Values(first, ("pane_current_path", "@agent_model", "pane_id"))
    assert values.read(server) == [panes[first][0], HOSTILE_OPTIONS["@agent_model"], first]
    assert read.Values("%999", ("pane_id",)).parse("") is None


def test_ls_json_carries_hostile_text_unchanged(srv, tmp_path):
    d = tmp_path / "repo $HOME \\037"
    d.mkdir()
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-BLOCKED\n")
    model = "opus $HOME \\037 #{x}"
    srv.tmux("set-option", "-p", "-t", pane, "@agent_model", model)
    _osc_title(srv, pane, HOSTILE_TITLES[3])
    srv.wait_for(lambda: srv.display(pane, "#{pane_title}") == HOSTILE_TITLES[3])
    row = srv.row(pane)
    assert row is not None, "tma ls lists the pane"
    assert (row["state"], row["detail"]) == ("blocked", "permission")
    assert row["title"] == HOSTILE_TITLES[3]
    assert row["model"] == model
    counts = json.loads(srv.tma("status", "--format", "json", check=True).stdout)
    assert counts["counts"]["blocked"] == 1


def test_a_blocked_fake_claude_is_read_blocked(srv):
    """The report that opened this suite: on 3.4 and 3.5a `tma ls --json` listed no agent."""
    pane = srv.agent_pane("claude")
    srv.tmux("select-pane", "-t", pane, "-T", "✳ Claude Code")
    screen = fixture.parse((Path(__file__).resolve().parents[1] / "fixtures" / "captures"
                            / "claude-2.1.332_blocked.txt").read_text(encoding="utf-8"))
    _draw_raw(srv, pane, "\n".join(screen.body.rstrip("\n").split("\n")[-30:]))
    time.sleep(0.2)
    doc = json.loads(srv.tma("ls", "--json", manifests=False, check=True).stdout)
    assert [(a["pane"], a["agent"], a["state"], a["detail"]) for a in doc["agents"]] == \
        [(pane, "claude", "blocked", "permission")]


def _draw_raw(srv, pane: str, body: str, title: str | None = None) -> None:
    """Write a screen (colours and all) to the pane's tty, as the agent would."""
    tty = srv.display(pane, "#{pane_tty}")
    with open(tty, "w", encoding="utf-8") as fh:
        fh.write(f"\x1b]2;{title}\x07" if title else "")
        fh.write("\x1b[2J\x1b[H" + body.replace("\n", "\r\n"))


# ---------------------------------------------------------------- the reference screens

REFERENCE = Path(os.environ.get("TMA_REFERENCE_CAPTURES",
                                Path(__file__).resolve().parents[3] / "shared" / "reference"
                                / "captures"))
WIDTH, HEIGHT = 200, 60


def _reference_screens() -> list[tuple[str, fixture.Capture]]:
    if not (REFERENCE / "expectations.tsv").is_file():
        return []
    rows = (REFERENCE / "expectations.tsv").read_text(encoding="utf-8").splitlines()[1:]
    found = []
    for row in rows:
        name, agent = row.split("\t")[:2]
        if not name.endswith(".txt") or agent == "example":
            continue
        cap = fixture.parse((REFERENCE / name).read_bytes().decode("utf-8"))
        lines = cap.body.rstrip("\n").split("\n")
        title = _identifying_title(cap)
        # a screen that fits the pane, drawn by a process named like the agent, under a
        # title that lets a cold read identify it
        if len(lines) <= HEIGHT and cap.foreground_is_agent and title is not None:
            found.append((name, fixture.Capture(dict(cap.headers, title=title), cap.body)))
    return found


def _identifying_title(cap: fixture.Capture) -> str | None:
    """The capture's title, or the same with the trailing space gemini pads it with (the
    capture header lost it); None when neither identifies the agent on a cold read (a
    cursor pane after a turn is carried by the pid anchor of an earlier read)."""
    identity = bundled.load(cap.agent).identity
    if not identity.title_patterns:
        return cap.title
    for title in (cap.title, cap.title + " "):
        if identity.title_matches(title):
            return title
    return None


def _engine(cap: fixture.Capture, body: str) -> tuple[str, str]:
    now = int(time.time() * 1000)
    det = detect(bundled.load(cap.agent), Screen(body, cap.title, HEIGHT), captured_at=now,
                 now=now, prev=None, facts=Facts(foreground_is_agent=True))
    return det.state, det.detail


def test_every_reference_screen_reads_as_the_engine_reads_it(srv):
    screens = _reference_screens()
    if not screens:
        pytest.skip(f"reference captures not found at {REFERENCE}")
    expected, panes = {}, {}
    for name, cap in screens:
        command = cap.command or cap.agent
        pane = srv.new_pane(f"exec {srv.fake(command)} 100000", width=WIDTH, height=HEIGHT)
        panes[pane] = (name, cap, command)
    for pane, (name, cap, command) in panes.items():
        srv.wait_for(lambda p=pane, c=command: srv.display(p, "#{pane_current_command}") == c)
        lines = cap.body.rstrip("\n").split("\n")
        # bottom-aligned, as an agent draws its chrome: the screen is the pane's last rows
        body = "\n".join([""] * (HEIGHT - len(lines)) + lines)
        _draw_raw(srv, pane, body, cap.title)
        expected[pane] = (name, *_engine(cap, body))
    time.sleep(0.5)  # every pane has drawn
    rows = {r["pane"]: r for r in srv.ls(manifests=False)}
    wrong = []
    for pane, (name, state, detail) in expected.items():
        row = rows.get(pane)
        got = (row["state"], row["detail"] or "") if row else ("not listed", "")
        if got != (state, detail or ""):
            wrong.append(f"{name}: tma ls {got}, engine {(state, detail)}")
    assert not wrong, "\n".join(wrong)
    assert len(expected) >= 30 and {s for _n, s, _d in expected.values()} >= {
        states.BLOCKED, states.WORKING, states.IDLE}


# ---------------------------------------------------------------- format constructs


def test_every_format_construct_tma_uses_expands_alike(srv, server):
    """tests/helpers/tmux_formats.py: every operator tma's source writes, with its samples."""
    from tests.helpers.tmux_formats import CONSTRUCTS

    pane = srv.shell_pane()
    srv.tmux("set-option", "-p", "-t", pane, "@t", "7", ";",
             "set-option", "-p", "-t", pane, "@b", "a\\b\\\\c")
    wrong = {}
    for samples in CONSTRUCTS.values():
        for fmt, want in samples:
            got = srv.display(pane, fmt)
            if got != want:
                wrong[fmt] = (got, want)
    assert wrong == {}, f"(printed, expected) per format: {wrong}"
    # and through set-option -F, as the guarded writes use them
    srv.tmux("set-option", "-p", "-F", "-t", pane, "@g",
             "#{?#{e|<:1700000000000,#{@t}},old,new}")
    assert srv.option(pane, "@g") == "new"


# ---------------------------------------------------------------- keys into a real pane


def test_act_approve_types_into_a_blocked_claude_and_nothing_once_answered_by_hand(srv):
    from tests.helpers.keyrecorder import KeyRecorder, key_bytes
    from tma.runtime.act import registry as actions

    captures = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
    blocked = fixture.parse((captures / "claude-2.1.332_blocked.txt").read_text("utf-8"))
    idle = fixture.parse((captures / "claude-2.1.332_idle.txt").read_text("utf-8"))
    keys = key_bytes(actions.load("/nonexistent").get("approve").keys["claude"])

    # the prompt is up: approve types exactly the manifest's keys
    rec = KeyRecorder.start(srv, "claude", blocked)
    row = srv.row(rec.pane, manifests=False)
    assert row is not None and (row["state"], row["detail"]) == ("blocked", "permission")
    res = srv.tma("act", "approve", "--pane", rec.pane, manifests=False)
    assert res.returncode == 0, res.stderr
    assert rec.settle(expect=len(keys)) == keys

    # another prompt, stamped blocked; the person answers it at the keyboard (the agent
    # redraws its composer) and an approve fired a moment later, on the still-fresh
    # blocked stamp, reads the screen again and types nothing
    rec = KeyRecorder.start(srv, "claude", blocked)
    srv.next_second()  # past the stampede guard: this ls reads the new pane's screen
    row = srv.row(rec.pane, manifests=False)
    assert row is not None and row["state"] == "blocked"
    lines = idle.body.rstrip("\n").split("\n")[-30:]
    _draw_raw(srv, rec.pane, "\n".join(lines))
    plain = [ln for ln in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", "\n".join(lines)).split("\n")
             if ln.strip()]
    srv.wait_for(lambda: plain[-1].strip()[:20] in srv.tmux("capture-pane", "-p", "-t",
                                                            rec.pane))
    assert srv.option(rec.pane, "@agent_state") == "blocked"  # tma has not looked since
    res = srv.tma("act", "approve", "--pane", rec.pane, manifests=False)
    assert res.returncode == 4, res.stderr
    assert rec.settle() == b""
