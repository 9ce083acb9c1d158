"""The terminal under the picker and watch: paint styled lines, read keys, hold an error.

Two screens with one interface (size, draw, keys, close):

* CursesScreen, the normal one (curses from the standard library: it draws the first
  frame well within the picker's 150 ms budget);
* PlainScreen, for TERM=dumb (no cursor addressing): a whole frame as plain text, written
  only when it changed, keys read from the raw terminal.

Keys come back as names: "up", "down", "enter", "tab", "esc", "backspace", "ctrl-s",
"ctrl-n", "ctrl-p", "ctrl-c", "ctrl-t", or the printable character itself; the mouse as
"click:<line>", "wheel-up", "wheel-down".
"""

from __future__ import annotations

import os
import sys

from tma.ui import width as cw

CONTROL_KEYS = {"\r": "enter", "\n": "enter", "\t": "tab", "\x1b": "esc", "\x7f": "backspace",
                "\x08": "backspace", "\x13": "ctrl-s", "\x0e": "ctrl-n", "\x10": "ctrl-p",
                "\x03": "ctrl-c", "\x04": "ctrl-c", "\x14": "ctrl-t"}
SEQUENCES = {"\x1b[A": "up", "\x1b[B": "down", "\x1bOA": "up", "\x1bOB": "down"}
COLOURS = {"black": 0, "red": 1, "green": 2, "yellow": 3, "blue": 4, "magenta": 5,
           "cyan": 6, "white": 7}


def plain_wanted(env=None) -> bool:
    """NO_COLOR (any non-empty value, no-color.org) or a dumb terminal: no colour."""
    env = os.environ if env is None else env
    return bool(env.get("NO_COLOR")) or env.get("TERM", "") in ("dumb", "")


def decode(data: str) -> list[str]:
    """Raw terminal input -> key names (arrows, controls, printable characters)."""
    keys: list[str] = []
    i = 0
    while i < len(data):
        seq = next((s for s in SEQUENCES if data.startswith(s, i)), None)
        if seq:
            keys.append(SEQUENCES[seq])
            i += len(seq)
            continue
        if data.startswith("\x1b[", i) or data.startswith("\x1bO", i):
            j = i + 2  # an escape sequence tma has no use for: skip it whole
            while j < len(data) and not ("@" <= data[j] <= "~"):
                j += 1
            i = j + 1
            continue
        ch = data[i]
        if ch in CONTROL_KEYS:
            keys.append(CONTROL_KEYS[ch])
        elif ch.isprintable():
            keys.append(ch)
        i += 1
    return keys


def colour_number(name: str, colours: int) -> int:
    """A tmux colour string -> a curses colour (-1: the terminal's default)."""
    name = name.strip().lower()
    if name in COLOURS:
        return COLOURS[name]
    if name.startswith("bright") and name[6:] in COLOURS and colours >= 16:
        return COLOURS[name[6:]] + 8
    if name in ("darkgray", "darkgrey", "grey", "gray"):
        return 8 if colours >= 16 else -1
    for prefix in ("colour", "color"):
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            n = int(name[len(prefix):])
            return n if n < colours else -1
    if name.startswith("#") and len(name) == 7 and colours >= 256:
        try:
            r, g, b = (int(name[i:i + 2], 16) for i in (1, 3, 5))
        except ValueError:
            return -1
        return 16 + 36 * round(r / 255 * 5) + 6 * round(g / 255 * 5) + round(b / 255 * 5)
    return -1


class CursesScreen:
    def __init__(self, palette: dict, plain: bool) -> None:
        os.environ.setdefault("ESCDELAY", "25")  # a lone Esc quits at once
        import curses

        self.curses = curses
        self.win = curses.initscr()
        try:
            curses.noecho()
            curses.raw()  # ctrl-s and ctrl-c arrive as keys (no flow control, no SIGINT)
            self.win.keypad(True)
            self.win.nodelay(True)
            try:
                curses.curs_set(0)
            except curses.error:
                pass
            self._mouse()
            self.attrs = self._attrs(palette, plain)
        except Exception:
            curses.endwin()
            raise

    def _mouse(self) -> None:
        """Clicks and the wheel (tmux passes them on with `set -g mouse on`)."""
        c = self.curses
        self.wheel = {getattr(c, "BUTTON4_PRESSED", 0): "wheel-up",
                      getattr(c, "BUTTON5_PRESSED", 0): "wheel-down"}
        self.wheel.pop(0, None)
        self.click = c.BUTTON1_PRESSED | c.BUTTON1_CLICKED
        mask = self.click
        for bit in self.wheel:
            mask |= bit
        try:
            c.mousemask(mask)
            c.mouseinterval(0)  # a press is a click at once, no double-click wait
        except c.error:
            pass

    def mouse_key(self) -> str | None:
        try:
            _id, _x, y, _z, state = self.curses.getmouse()
        except self.curses.error:
            return None
        if state & self.click:
            return f"click:{y}"
        return next((name for bit, name in self.wheel.items() if state & bit), None)

    def _attrs(self, palette: dict, plain: bool) -> dict[str, int]:
        c = self.curses
        attrs = {"dim": c.A_DIM, "bold": c.A_BOLD, "sel": c.A_REVERSE, "head": c.A_BOLD}
        if plain or not c.has_colors():
            return attrs
        try:
            c.start_color()
            c.use_default_colors()
        except c.error:
            return attrs
        for i, (cls, (_glyph, colour)) in enumerate(sorted(palette.items()), start=1):
            num = colour_number(colour, c.COLORS)
            if i < c.COLOR_PAIRS and num != -1:
                c.init_pair(i, num, -1)
                attrs[f"state:{cls}"] = c.color_pair(i)
        return attrs

    def size(self) -> tuple[int, int]:
        h, w = self.win.getmaxyx()
        return w, h

    def resize(self) -> None:
        try:
            size = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
        except (OSError, AttributeError, ValueError):
            return
        self.curses.resizeterm(size.lines, size.columns)

    def draw(self, lines) -> None:
        w, h = self.size()
        self.win.erase()
        for y, line in enumerate(lines[:h]):
            x = 0
            for text, style in line:
                if x >= w:
                    break
                attr = 0
                for token in style.split():
                    attr |= self.attrs.get(token, 0)
                text = cw.clip(text, w - x)  # by cells: a wide character takes two
                try:
                    self.win.addstr(y, x, text, attr)
                except self.curses.error:
                    pass  # the bottom-right cell: curses cannot move past it
                x += cw.cells(text)
        self.win.refresh()

    def keys(self) -> list[str]:
        c = self.curses
        out: list[str] = []
        named = {c.KEY_UP: "up", c.KEY_DOWN: "down", c.KEY_ENTER: "enter",
                 c.KEY_BACKSPACE: "backspace", c.KEY_RESIZE: "resize"}
        while True:
            try:
                key = self.win.get_wch()
            except c.error:
                return out
            if isinstance(key, int):
                if key == c.KEY_MOUSE:
                    name = self.mouse_key()
                    if name:
                        out.append(name)
                elif key in named:
                    out.append(named[key])
            else:
                out.extend(decode(key))

    def close(self) -> None:
        self.curses.endwin()


class PlainScreen:
    """TERM=dumb: frames as plain text, only when they change; keys from the raw tty."""

    def __init__(self, fd_in: int = 0, out=None) -> None:
        import termios
        import tty

        self.fd = fd_in
        self.out = out or sys.stdout
        self.saved = termios.tcgetattr(fd_in)
        tty.setraw(fd_in)
        os.set_blocking(fd_in, False)
        self.last: str | None = None

    def size(self) -> tuple[int, int]:
        try:
            s = os.get_terminal_size(self.fd)
            return s.columns or 80, s.lines or 24
        except OSError:
            return 80, 24

    def resize(self) -> None:
        self.last = None

    def draw(self, lines) -> None:
        frame = "\r\n".join("".join(t for t, _ in ln).rstrip() for ln in lines)
        if frame != self.last:
            self.last = frame
            self.out.write(frame + "\r\n")
            self.out.flush()

    def keys(self) -> list[str]:
        try:
            data = os.read(self.fd, 1024)
        except (BlockingIOError, OSError):
            return []
        return decode(data.decode("utf-8", "replace"))

    def close(self) -> None:
        import termios

        os.set_blocking(self.fd, True)
        termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)


def open_screen(palette: dict):
    """Curses, or the plain screen on a dumb terminal or one terminfo does not know."""
    if os.environ.get("TERM", "") not in ("dumb", ""):
        import curses

        try:
            return CursesScreen(palette, plain_wanted())
        except curses.error:
            pass  # "could not find terminal": the plain frames still work
    return PlainScreen()


def hold(why: str) -> None:
    """Say why, then wait for one key (only on a terminal: a script is not held). In a
    popup or a split the pane closes with the process, and the error would go with it."""
    try:
        if not (os.isatty(0) and os.isatty(2)):
            return
    except OSError:
        return
    import termios
    import tty

    sys.stderr.write(f"{why}\n\npress any key to close\n")
    sys.stderr.flush()
    try:
        old = termios.tcgetattr(0)
    except termios.error:
        return
    try:
        tty.setcbreak(0)
        os.read(0, 1)
    except (OSError, KeyboardInterrupt):
        pass
    finally:
        termios.tcsetattr(0, termios.TCSADRAIN, old)
