"""A scripted fake coding agent for `tma demo`.

Run as `<name> demo_agent.py <agent> [--scale F] [--loop] [--pid-dir DIR] [--cwd PATH]`
where `<name>` is a symlink to a Python interpreter named like the real agent
(`claude`, `codex`, `opencode`, `pi`), so the kernel's comm and tmux's
#{pane_current_command} carry the agent's name. It draws that agent's chrome on the
alternate screen and walks a fixed script of idle / working / blocked screens, the
way the real CLI looks at each step (strings taken from recorded screens of claude
2.1.332, codex 0.171.0, opencode 1.18.33 and pi 0.73.1). A key press answers a
permission dialog early; otherwise the script moves on by itself.

Standalone on purpose: the interpreter runs it through a symlink outside any
virtualenv, so it imports nothing but the standard library (and nothing from tma).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
import unicodedata

ESC = "\x1b"
FRAME_S = 0.1
# A phase after the first lasts at least this long, whatever the scale: a poller
# re-reads a pane once its stamp is older than the freshness window (3 s by
# default), so a shorter phase could come and go unseen.
MIN_PHASE_S = 4.5

# -------------------------------------------------------------------- drawing


def _cell_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def fit(line: list, width: int) -> str:
    """One screen row: spans (`"text"` or `(sgr, "text")`) cut to width, SGR reset at the end."""
    out = []
    used = 0
    for span in line:
        style, text = span if isinstance(span, tuple) else ("", span)
        take = []
        for ch in text:
            w = _cell_width(ch)
            if used + w > width:
                break
            take.append(ch)
            used += w
        if take:
            out.append(f"{ESC}[0;{style}m" if style else f"{ESC}[0m")
            out.append("".join(take))
        if used >= width:
            break
    out.append(f"{ESC}[0m")
    return "".join(out)


def compose(top: list, bottom: list, width: int, height: int) -> list[str]:
    """Top block (header + transcript) scrolled so the bottom block sits on the last rows."""
    room = max(height - len(bottom), 0)
    top = top[-room:] if room and len(top) > room else (top if room else [])
    rows = top + [[]] * (room - len(top)) + bottom
    rows = rows[-height:] if height > 0 else []
    return [fit(r, width) for r in rows]


def right(left: list, tail: list, width: int) -> list:
    """left … tail with tail pushed against the right edge."""
    def plain(spans):
        return "".join(s[1] if isinstance(s, tuple) else s for s in spans)

    gap = width - sum(_cell_width(c) for c in plain(left) + plain(tail))
    return left + [" " * max(gap, 2)] + tail


BRAILLE = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
CLAUDE_GLYPHS = "·✢✳✶✻✽✻✶✳✢"
DIM = "38;5;246"


def clock_label() -> str:
    return time.strftime("%I:%M %p").lstrip("0")


# -------------------------------------------------------------------- the agents
#
# Each agent is a script (phase name, seconds; None = hold) and a `screen(phase, t, s)`
# giving (title, top rows, bottom rows) for the phase at t seconds into it; `s` holds
# the terminal width and a few per-turn facts.


class Agent:
    script: list[tuple[str, float | None]] = []
    blocked_phases: tuple[str, ...] = ("blocked",)

    def __init__(self, cwd: str):
        self.cwd = cwd
        self.base = os.path.basename(cwd.rstrip("/")) or cwd

    def screen(self, phase: str, t: float, width: int) -> tuple[str, list, list]:
        raise NotImplementedError


class Claude(Agent):
    script = [("idle", 3), ("working", 5), ("blocked", 7), ("working2", 3), ("done", None)]
    prompt = "fix the flaky retry test in tests/test_client.py"
    verb = "Seasoning"

    def screen(self, phase, t, width):
        logo = "38;5;174"
        top = [
            [(logo, " ▐▛███▜▌"), "   ", ("1", "Claude Code"), " ", (DIM, "v2.1.332")],
            [(logo, "▝▜█████▛▘"), "  ", (DIM, "Opus 4.8 · API Usage Billing")],
            [(logo, "  ▘▘ ▝▝  "), "  ", (DIM, self.cwd)],
            [],
        ]
        rule = [("38;5;244", "─" * width)]
        footer_idle = [["  ", (DIM, "⏸ manual mode on · ? for shortcuts")]]
        footer_busy = [["  ", (DIM, "⏸ manual mode on · esc to interrupt · ← for agents")]]
        composer = [rule, ["❯ ", ("7", " ")], rule]
        idle_title = "✳ Claude Code"
        if phase == "idle":
            return idle_title, top, composer + footer_idle
        turn = [
            [("48;5;237;38;5;246", "❯ "), ("48;5;237;38;5;231", self.prompt + " ")],
            [],
        ]
        step1 = [["● I'll run the failing test first to see how it breaks."], []]
        read = [["● ", ("1", "Read"), "(tests/test_client.py)"], ["  ⎿  Read 84 lines"], []]
        bash = [["● ", ("1", "Bash"), "(python -m pytest tests/test_client.py -x -q)"]]

        def spinner(t0):
            glyph = CLAUDE_GLYPHS[int(t * 8) % len(CLAUDE_GLYPHS)]
            secs = int(t0)
            return [[("38;5;174", glyph), " ", ("38;5;174", f"{self.verb}… "),
                     (DIM, f"({secs}s · ↓ {secs * 37 + 9} tokens)")], []]

        braille = BRAILLE[int(t * 10) % len(BRAILLE)] + " Claude Code"
        if phase == "working":
            body = turn + (step1 if t >= 1.2 else [["●"], []]) + (read if t >= 2.5 else [])
            return braille, top + body + spinner(t), composer + footer_busy
        if phase == "blocked":
            body = turn + step1 + read + bash + [["  ⎿  ", (DIM, "Waiting…")]]
            accent = "38;5;153"
            dialog = [
                [(accent, "─" * width)],
                [" ", ("1;" + accent, "Bash command")],
                [],
                ["   python -m pytest tests/test_client.py -x -q"],
                ["   ", (DIM, "Run the client tests to reproduce the flaky failure")],
                [],
                [" Do you want to proceed?"],
                [" ", (accent, "❯"), " ", (DIM, "1. "), (accent, "Yes")],
                ["   ", (DIM, "2. "), "Yes, and don't ask again for ", ("1", "python -m pytest"),
                 " commands in ", ("1", self.cwd)],
                ["   ", (DIM, "3. "), "No"],
                [],
                [" ", (DIM, "Esc to cancel · Tab to amend")],
            ]
            return idle_title, top + body, dialog
        ran = bash + [["  ⎿  1 failed, 11 passed in 0.42s"], [],
                      ["● The retry test sleeps on the wall clock; patching time.monotonic "
                       "makes it deterministic."], [],
                      ["● ", ("1", "Update"), "(tests/test_client.py)"],
                      ["  ⎿  Updated tests/test_client.py with 3 additions and 1 removal"], []]
        if phase == "working2":
            return braille, top + turn + step1 + read + ran + spinner(9 + t), \
                composer + footer_busy
        done = [["● Fixed: the test now patches the clock instead of sleeping; all 12 client "
                 "tests pass."], [],
                [(DIM, "✻"), " ", (DIM, f"Worked for 17s · done {clock_label()}")], []]
        return idle_title, top + turn + step1 + read + ran + done, composer + footer_idle


class Codex(Agent):
    script = [("idle", 5), ("working", 7), ("blocked", 5), ("working2", 2), ("done", None)]
    prompt = "add exponential backoff to the http client"
    thread = "add backoff to client"

    def screen(self, phase, t, width):
        top = [[], ["  ", ("1", ">_ OpenAI Codex"), " (v0.171.0)"], ["     ", (DIM, self.cwd)], []]
        footer = [[],
                  ["  ", (DIM, f"gpt-5.1-codex medium · {self.cwd}")],
                  right(["  ", (DIM, "← for agents · ? for shortcuts")], [], width)]
        composer = [["› ", (DIM, "Ask Codex to do anything")]]
        if phase == "idle":
            return self.base, top, [[]] + composer + footer
        turn = [[" "], ["› ", self.prompt], [" "], []]
        look = [["• I'll check how the client retries today, then add capped exponential "
                 "backoff with jitter."], [],
                ["• ", ("1", "Explored")], ["  └ Read client.py, retry.py"], []]
        spin = BRAILLE[int(t * 10) % len(BRAILLE)]

        def status(secs):
            return [[("1", "• Working"), (DIM, f" ({int(secs)}s • esc to interrupt)")], []]

        if phase == "working":
            body = turn + (look if t >= 1.5 else [])
            return (f"{spin} {self.thread} | {self.base}", top + body,
                    status(t) + composer + footer)
        if phase == "blocked":
            dialog = [
                [],
                ["  ", ("1", "Would you like to run the following command?")],
                [],
                ["  Reason: run the client tests after the change"],
                [],
                ["  $ python -m pytest tests/test_client.py -q"],
                [],
                [("38;5;81", "› 1. Yes, proceed "), (DIM, "(y)")],
                ["  2. Yes, and don't ask again for commands that start with "
                 "`python -m pytest` ", (DIM, "(p)")],
                ["  3. No, and tell Codex what to do differently ", (DIM, "(esc)")],
                [],
                ["  ", (DIM, "Press enter to confirm or esc to cancel")],
            ]
            return (f"[ ! ] Action Required | {self.thread} | {self.base}",
                    top + turn + look, dialog)
        ran = [[("32", "✔ "), "You approved codex to run ",
                ("1", "python -m pytest tests/test_client.py -q"), " this time"], [],
               ["• Ran python -m pytest tests/test_client.py -q"], ["  └ 12 passed in 0.81s"], []]
        if phase == "working2":
            return (f"{spin} {self.thread} | {self.base}", top + turn + look + ran,
                    status(12 + t) + composer + footer)
        done = [["• Added exponential backoff (base 0.2 s, capped at 5 s, full jitter) to "
                 "Client.request; tests pass."], [],
                ["  ", (DIM, f"Worked for 14s • {time.strftime('%H:%M')}")], []]
        return (f"{self.thread} | {self.base}", top + turn + look + ran + done,
                [[]] + composer + footer)


class OpenCode(Agent):
    script = [("working", 6), ("blocked", 4), ("working2", 4), ("done", None)]
    prompt = "add a --dry-run flag to deploy.sh"
    title = "OC | Add a --dry-run flag to deploy.sh"
    bar = "38;5;141"

    def _user(self, text, width):
        pad = " " * max(width - 6 - len(text), 0)
        return [["  ", (self.bar, "┃"), ""], ["  ", (self.bar, "┃"), "  " + text + pad],
                ["  ", (self.bar, "┃"), ""], []]

    def screen(self, phase, t, width):
        model = "claude-sonnet-4.5"
        composer = [["  ", (self.bar, "┃")], ["  ", (self.bar, "┃")], ["  ", (self.bar, "┃")],
                    ["  ", (self.bar, "┃"), "  ", (self.bar, "Build"), (DIM, f" · {model} "),
                     "Anthropic"],
                    ["  ", (self.bar, "╹" + "▀" * max(width - 5, 0))]]
        ctx = [(DIM, "12.4K (6%)  "), "ctrl+p ", (DIM, "commands")]

        def busy_footer():
            pos = int(t * 8) % 8
            cells = "".join("■" if (i - pos) % 8 < 6 else "⬝" for i in range(8))
            return [right(["   ", (self.bar, cells), "  esc ", (DIM, "interrupt")], ctx, width)]

        idle_footer = [right(["   ", (DIM, self.cwd)], ctx, width)]
        user = self._user(self.prompt, width)
        read = [["     I'll read deploy.sh and add a flag that prints each step instead of "
                 "running it."], [],
                ["     ", (DIM, "→ Read deploy.sh")], []]
        build = [["     ", (self.bar, "▣"), "  Build", (DIM, f" · {model}")], []]
        if phase == "working":
            return self.title, [[]] + user + read + build, composer + busy_footer()
        edit = [["  ", (self.bar, "┃"), "  ", ("38;5;214", "△"), " Permission required"],
                ["  ", (self.bar, "┃"), "    # Edit deploy.sh"],
                ["  ", (self.bar, "┃")],
                ["  ", (self.bar, "┃"), "  ", ("32", "+ if [ \"$1\" = \"--dry-run\" ]; then "
                                                     "DRY_RUN=1; shift; fi")],
                ["  ", (self.bar, "┃")],
                ["  ", (self.bar, "┃")],
                right(["  ", (self.bar, "┃"), "   ", ("7", " Allow once "), "   Allow always   "
                       "Reject"], [(DIM, "ctrl+f fullscreen  ⇆ select  enter confirm   ")], width),
                ["  ", (self.bar, "┃")],
                []]
        if phase == "blocked":
            return self.title, [[]] + user + read, edit
        edited = [["     ", (DIM, "← Edit deploy.sh")], [],
                  ["     Added --dry-run: every command goes through run(), which echoes "
                   "instead of executing."], []]
        if phase == "working2":
            return self.title, [[]] + user + read + edited + build, composer + busy_footer()
        done_build = [["     ", (self.bar, "▣"), "  Build", (DIM, f" · {model} · 11.3s")], []]
        return self.title, [[]] + user + read + edited + done_build, composer + idle_footer


class Pi(Agent):
    script = [("idle", 4), ("working", 8), ("done", 5), ("working2", 4), ("done2", None)]
    prompts = ("summarise the open TODOs in src/", "open an issue draft for the oldest one")

    def screen(self, phase, t, width):
        top = [[(DIM, " pi v0.73.1")],
               [(DIM, " escape to interrupt · ctrl+c to clear · / for commands")], []]
        rule = ["─" * width]
        gauge = "0.4%/200k" if phase in ("idle", "working") else "1.2%/200k"
        footer = [rule, [" ", ("7", " ")], rule, [(DIM, f"{self.cwd} (main)")],
                  right([(DIM, f"↑1.2k ↓310 {gauge} (auto)")], [(DIM, "claude-sonnet-4-5")],
                        width)]
        title = f"π - {self.base}"
        if phase == "idle":
            return title, top, footer
        first = [[("48;5;236", " " + self.prompts[0] + " ")], [],
                 [" I'll grep for TODO markers and group them by file."], [],
                 [(DIM, " $ grep -rn TODO src/ | cut -d: -f1 | sort | uniq -c")],
                 [(DIM, "      9 src/client.py")], [(DIM, "      5 src/deploy.py")],
                 [(DIM, "      3 src/cli.py")], [(DIM, " Took 0.2s")], []]
        spin = [[("38;5;81", BRAILLE[int(t * 10) % len(BRAILLE)]), " Working..."], []]
        if phase == "working":
            return title, top + (first if t >= 1.5 else first[:2]) + spin, footer
        answer = [[" 17 TODOs: 9 in client.py (mostly retry edge cases), 5 in deploy.py, 3 in "
                   "cli.py."], []]
        if phase == "done":
            return title, top + first + answer, footer
        second = [[("48;5;236", " " + self.prompts[1] + " ")], []]
        if phase == "working2":
            return title, top + first + answer + second + spin, footer
        draft = [[" Drafted: \"client: retry on 502 never gives up\" with repro steps."], []]
        return title, top + first + answer + second + draft, footer


AGENTS = {"claude": Claude, "codex": Codex, "opencode": OpenCode, "pi": Pi}

# -------------------------------------------------------------------- the loop


class Terminal:
    def __init__(self) -> None:
        self.fd = sys.stdout.fileno()
        self.last: tuple | None = None
        self.saved = None

    def enter(self) -> None:
        try:
            import termios
            import tty

            self.saved = termios.tcgetattr(0)
            tty.setcbreak(0)
        except Exception:  # no tty on stdin: keys just don't work
            self.saved = None
        self.write(f"{ESC}[?1049h{ESC}[?25l{ESC}[2J")

    def leave(self) -> None:
        try:
            self.write(f"{ESC}[?25h{ESC}[?1049l")
        except OSError:
            pass
        if self.saved is not None:
            import termios

            try:
                termios.tcsetattr(0, termios.TCSADRAIN, self.saved)
            except Exception:
                pass

    def write(self, data: str) -> None:
        raw = data.encode("utf-8")
        while raw:
            n = os.write(self.fd, raw)
            raw = raw[n:]

    def size(self) -> tuple[int, int]:
        try:
            sz = os.get_terminal_size(self.fd)
            return sz.columns, sz.lines
        except OSError:
            return 100, 30

    def draw(self, title: str, rows: list[str]) -> None:
        key = (title, tuple(rows))
        if key == self.last:
            return
        self.last = key
        self.write(f"{ESC}]2;{title}\x07{ESC}[H" + "\r\n".join(r + f"{ESC}[K" for r in rows)
                   + f"{ESC}[J")


def key_pressed(timeout: float) -> bool:
    try:
        ready, _, _ = select.select([0], [], [], timeout)
    except (OSError, ValueError):
        time.sleep(timeout)
        return False
    if not ready:
        return False
    try:
        data = os.read(0, 64)
    except OSError:
        time.sleep(timeout)
        return False
    return bool(data)


def run(agent: Agent, scale: float, loop: bool, max_seconds: float) -> None:
    term = Terminal()
    term.enter()
    began = time.monotonic()
    try:
        while True:
            for index, (phase, seconds) in enumerate(agent.script):
                started = time.monotonic()
                hold = None
                if seconds is not None:
                    hold = seconds * scale if index == 0 else max(seconds * scale, MIN_PHASE_S)
                if hold is None and loop:
                    hold = max(20.0 * scale, 8.0)  # rest, then the script starts over
                while True:
                    now = time.monotonic()
                    if now - began > max_seconds:
                        return
                    t = now - started
                    if hold is not None and t >= hold:
                        break
                    width, height = term.size()
                    title, top, bottom = agent.screen(phase, t, width)
                    term.draw(title, compose(top, bottom, width, height))
                    if key_pressed(FRAME_S) and phase in agent.blocked_phases:
                        break  # the human answered the dialog
            if not loop:
                return
    finally:
        term.leave()


def main(argv: list[str]) -> int:
    name = argv[0] if argv else ""
    opts = {"--scale": "1", "--pid-dir": "", "--cwd": os.getcwd(), "--max-seconds": "3600"}
    loop = False
    i = 1
    while i < len(argv):
        if argv[i] == "--loop":
            loop = True
        elif argv[i] in opts and i + 1 < len(argv):
            opts[argv[i]] = argv[i + 1]
            i += 1
        i += 1
    cls = AGENTS.get(name)
    if cls is None:
        sys.stderr.write(f"demo_agent: unknown agent {name!r}\n")
        return 2
    if opts["--pid-dir"]:
        try:
            with open(os.path.join(opts["--pid-dir"], str(os.getpid())), "w"):
                pass
        except OSError:
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # like the real TUIs: ^C alone won't quit
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        run(cls(opts["--cwd"]), float(opts["--scale"]), loop, float(opts["--max-seconds"]))
    except (OSError, SystemExit):  # the pane went away (EIO) or we were told to stop
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
