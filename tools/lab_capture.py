#!/usr/bin/env python3
"""Turn agentlab screens into tma capture fixtures (stdlib only).

Fixture format (the same shape tma's capture tests load):

    # agent: claude
    # title: ✳ Claude Code
    # command: claude
    # version: 2.1.332
    # height: 30
    # width: 100
    # source: agentlab
    # captured_at: 1796052369000
    # ...more `# key: value` lines...
    ---
    <raw body bytes, escapes kept, exactly as tmux printed them>

Split on the first line that is exactly `---`; everything after it is the body.
Header values are single-line (CR/LF/TAB in a title are replaced by spaces) and
trailing spaces of the title are trimmed (gemini pads its title to 80 columns).

Modes
-----
convert   lab `.ansi` (+ `.info`) pair -> fixture.  The lab captured the visible
          screen only (`capture-pane -p -e`, no -S), so `height` = body line count
          and `scrollback: 0`.

              lab_capture.py convert --agent claude --version 2.1.197 \
                  --step blocked X_blocked.ansi -o OUT.txt
              lab_capture.py convert --versions claude=2.1.197,codex=0.171.0 \
                  --out-dir DIR /tmp/agentlab/captures/*.ansi
                  # batch: agent and step come from `<agent>_<step>.ansi`,
                  # output is DIR/<agent>-<version>_<step>.txt

capture   read a live pane of a tmux server the way tma reads one:
          `tmux -u -L SOCK capture-pane -p -e -S -50 -t TARGET` for the body and
          `display-message -p` for title / command / height / width.  `height` is
          the pane height, so the visible screen is the last `height` body lines;
          the lines above it (up to 50) are scrollback.

              lab_capture.py capture --target claude --agent claude \
                  --version 2.1.332 -o tests/fixtures/captures/claude-2.1.332_idle.txt

          Optional wait-then-capture (polls every 0.1 s, never a blind sleep):
              --wait-re REGEX        the visible screen (escapes stripped) must match
              --absent-re REGEX      ... and must not match
              --title-re REGEX       the pane title must match
              --timeout SECS         give up (exit 3) after SECS (default 30)
          --screen-class CLASS writes `screen_class: CLASS` for a screen past the happy
          path (trust-dialog, overlay, api-retry, api-error, shell-foreground, tool-dialog,
          compaction, narrow).
          The condition is checked again on the very body that is written, so a
          fixture never shows a screen that failed its own condition.

wait      the same polling without writing anything (exit 0 on match, 3 on timeout):
              lab_capture.py wait --target claude --wait-re 'Do you want to proceed'
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS/SOS/PM/APC
    r"|\x1b[@-Z\\-_]"  # other 2-byte escapes
)

LAB_WIDTH = 100  # run-agent.sh starts every session with `-x 100 -y 30`


def strip_ansi(text: str) -> str:
    return ANSI_RE.sub("", text)


def clean_value(v: str) -> str:
    return re.sub(r"[\r\n\t]", " ", v).rstrip(" ")


def render(header: list[tuple[str, str]], body: bytes) -> bytes:
    lines = []
    for k, v in header:
        lines.append(f"# {k}: {clean_value(str(v))}".rstrip(" "))
    return ("\n".join(lines) + "\n---\n").encode("utf-8") + body


def body_line_count(body: bytes) -> int:
    if not body:
        return 0
    n = body.count(b"\n")
    return n if body.endswith(b"\n") else n + 1


def visible_lines(body: bytes, height: int) -> list[str]:
    text = body.decode("utf-8", "replace")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    return lines[-height:] if height > 0 else lines


# ------------------------------------------------------------------ convert
def parse_info(path: Path) -> dict[str, str]:
    info: dict[str, str] = {}
    if not path.exists():
        return info
    for line in path.read_text("utf-8", "replace").splitlines():
        if line.startswith("---"):
            break
        if "=" in line:
            k, v = line.split("=", 1)
            info[k.strip()] = v
    return info


def convert_one(
    ansi: Path, agent: str, version: str, step: str | None, width: int, out: Path
) -> Path:
    body = ansi.read_bytes()
    info = parse_info(ansi.with_suffix(".info"))
    header = [
        ("agent", agent),
        ("title", info.get("pane_title", "")),
        ("command", info.get("pane_current_command", "")),
        ("version", version),
        ("height", str(body_line_count(body))),
        ("width", str(width)),
        ("source", "agentlab"),
        ("captured_at", str(int(ansi.stat().st_mtime * 1000))),
        ("capture", "capture-pane -p -e (visible screen only)"),
        ("scrollback", "0"),
    ]
    if step:
        header.append(("lab_step", step))
    header.append(("origin", f"{ansi.name} + {ansi.with_suffix('.info').name}"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(render(header, body))
    return out


def cmd_convert(a: argparse.Namespace) -> int:
    versions = {}
    for item in (a.versions or "").split(","):
        if "=" in item:
            k, v = item.split("=", 1)
            versions[k.strip()] = v.strip()
    skip = set((a.skip or "").split(",")) - {""}
    rc = 0
    for f in a.files:
        ansi = Path(f)
        if ansi.suffix != ".ansi":
            print(f"skip {ansi}: not a .ansi file", file=sys.stderr)
            continue
        agent, _, step = ansi.stem.partition("_")
        agent = a.agent or agent
        step = a.step or step or None
        if step in skip:
            continue
        version = a.version or versions.get(agent)
        if not version:
            print(f"no version for agent {agent!r} ({ansi})", file=sys.stderr)
            rc = 2
            continue
        if a.output:
            out = Path(a.output)
        else:
            out = Path(a.out_dir or ".") / f"{agent}-{version}_{step}.txt"
        convert_one(ansi, agent, version, step, a.width, out)
        print(out)
    return rc


# ------------------------------------------------------------------ capture
FIELDS = [
    "pane_height",
    "pane_width",
    "pane_current_command",
    "pane_pid",
    "history_size",
    "cursor_x",
    "cursor_y",
    "alternate_on",
    "pane_title",
]


def tmux(sock: str, *args: str) -> bytes:
    return subprocess.run(["tmux", "-u", "-L", sock, *args], check=True, capture_output=True).stdout


def read_pane(sock: str, target: str, scrollback: int) -> tuple[dict[str, str], bytes]:
    body = tmux(sock, "capture-pane", "-p", "-e", "-S", f"-{scrollback}", "-t", target)
    fmt = "\t".join("#{" + f + "}" for f in FIELDS)  # title last: it may contain tabs
    raw = tmux(sock, "display-message", "-p", "-t", target, fmt).decode("utf-8", "replace")
    parts = raw.rstrip("\n").split("\t", len(FIELDS) - 1)
    meta = dict(zip(FIELDS, parts + [""] * (len(FIELDS) - len(parts)), strict=True))
    return meta, body


def condition(a: argparse.Namespace, meta: dict[str, str], body: bytes) -> bool:
    screen = "\n".join(strip_ansi(x) for x in visible_lines(body, int(meta["pane_height"] or 0)))
    if a.wait_re and not re.search(a.wait_re, screen, re.M):
        return False
    if a.absent_re and re.search(a.absent_re, screen, re.M):
        return False
    if a.title_re and not re.search(a.title_re, meta.get("pane_title", "")):
        return False
    return True


def poll(a: argparse.Namespace) -> tuple[dict[str, str], bytes] | None:
    deadline = time.monotonic() + a.timeout
    while True:
        meta, body = read_pane(a.socket, a.target, a.scrollback)
        if condition(a, meta, body):
            return meta, body
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)


def cmd_wait(a: argparse.Namespace) -> int:
    got = poll(a)
    if got is None:
        print(f"timeout after {a.timeout}s waiting on {a.target}", file=sys.stderr)
        return 3
    return 0


def cmd_capture(a: argparse.Namespace) -> int:
    got = poll(a)
    if got is None:
        meta, body = read_pane(a.socket, a.target, a.scrollback)
        print(
            f"timeout after {a.timeout}s waiting on {a.target}; screen was:\n"
            + "\n".join(strip_ansi(x) for x in visible_lines(body, int(meta["pane_height"]))),
            file=sys.stderr,
        )
        return 3
    meta, body = got
    header = [
        ("agent", a.agent),
        ("title", meta["pane_title"]),
        ("command", meta["pane_current_command"]),
        ("version", a.version),
        ("height", meta["pane_height"]),
        ("width", meta["pane_width"]),
        ("source", "agentlab"),
        ("captured_at", str(int(time.time() * 1000))),
        ("capture", f"capture-pane -p -e -S -{a.scrollback}"),
        ("scrollback", str(a.scrollback)),
        ("history_size", meta["history_size"]),
        ("cursor", f"{meta['cursor_x']},{meta['cursor_y']}"),
        ("alternate_on", meta["alternate_on"]),
    ]
    if a.step:
        header.append(("lab_step", a.step))
    if a.screen_class:
        header.append(("screen_class", a.screen_class))
    out = Path(a.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(render(header, body))
    n = body_line_count(body)
    print(
        f"{out}: {n} body lines ({n - int(meta['pane_height'])} scrollback), "
        f"title={meta['pane_title'].rstrip()!r} command={meta['pane_current_command']}"
    )
    return 0


# ------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n", 1)[1],
    )
    sub = ap.add_subparsers(dest="mode", required=True)

    c = sub.add_parser("convert", help="lab .ansi/.info pair(s) -> fixture(s)")
    c.add_argument("files", nargs="+", help="<agent>_<step>.ansi files (the .info beside each)")
    c.add_argument("--agent")
    c.add_argument("--version")
    c.add_argument("--versions", help="agent=version,... for batch conversion")
    c.add_argument("--step", help="lab step name (default: from the file name)")
    c.add_argument("--skip", default="exited", help="comma list of steps to skip")
    c.add_argument("--width", type=int, default=LAB_WIDTH)
    c.add_argument("-o", "--output")
    c.add_argument("--out-dir")
    c.set_defaults(fn=cmd_convert)

    for name, fn in (("capture", cmd_capture), ("wait", cmd_wait)):
        p = sub.add_parser(name)
        p.add_argument("--target", "-t", required=True)
        p.add_argument("--socket", "-L", default="agentlab")
        p.add_argument("--scrollback", type=int, default=50)
        p.add_argument("--wait-re")
        p.add_argument("--absent-re")
        p.add_argument("--title-re")
        p.add_argument("--timeout", type=float, default=30.0)
        if name == "capture":
            p.add_argument("--agent", required=True)
            p.add_argument("--version", required=True)
            p.add_argument("--step")
            p.add_argument(
                "--screen-class",
                help="a screen past the happy path the live suite never drives: "
                "trust-dialog, overlay, api-retry, api-error, shell-foreground, tool-dialog, "
                "compaction, narrow",
            )
            p.add_argument("-o", "--output", required=True)
        p.set_defaults(fn=fn)

    a = ap.parse_args(argv)
    if a.mode == "convert" and a.output and len(a.files) != 1:
        ap.error("-o takes exactly one input file")
    return a.fn(a)


if __name__ == "__main__":
    sys.exit(main())
