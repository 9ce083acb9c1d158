"""The modules a lean hot path must not import, and the probes that list what a command
imported: PROBE runs one command line through tma's own entry (tma.cli.main.main) and
prints the sorted names of sys.modules after its output; FIRST_FRAME opens the picker on
a terminal and writes them the moment its first frame is drawn."""

from __future__ import annotations

FORBIDDEN = (
    "tomllib", "subprocess", "re", "json", "argparse", "dataclasses", "typing", "inspect",
    "signal", "enum", "tma.core.manifest", "tma.core.rules", "tma.core.fold",
    "tma.core.telemetry", "tma.tmux.write", "tma.core.plan", "zlib", "tma.cli.spec",
    "textwrap", "collections",
)

PROBE = """
import sys
sys.argv = ["tma"] + %r
from tma.cli.main import main
rc = main(sys.argv[1:])
sys.stdout.write("\\n@@" + repr(sorted(sys.modules)))
raise SystemExit(rc)
"""

# argv: the file to write the names to, then tma's global options. The picker draws its
# first frame when tma.ui.app's App.draw first returns (straight from the stamps: the
# refresh that follows at once may capture and read the hosts' rows, which is not the
# first frame's cost); a profile hook sees that return without a line of tma changed.
FIRST_FRAME = """
import os, sys
out = sys.argv[1]
sys.argv = ["tma"] + sys.argv[2:]

def watch(frame, event, arg):
    if (event == "return" and frame.f_code.co_name == "draw"
            and frame.f_globals.get("__name__") == "tma.ui.app"):
        with open(out, "w") as fh:
            fh.write(repr(sorted(sys.modules)))
        os._exit(0)

sys.setprofile(watch)
from tma.cli.main import main
main(sys.argv[1:])
os._exit(3)  # the picker ended without drawing a frame
"""


def tma_modules(names) -> set[str]:
    """The names of tma's own modules among `names`."""
    return {n for n in names if n == "tma" or n.startswith("tma.")}
