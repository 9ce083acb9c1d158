"""The modules a lean hot path must not import, and the probe that lists what it imported."""

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
