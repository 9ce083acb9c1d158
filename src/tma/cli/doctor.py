"""`tma doctor`: what tma can see, at which tier, and what silently disables it.

tma.runtime.doctor gathers and judges the document (`--json` prints it), tma.ui.doctor
renders it as text; `--exit-code` returns the status the document's verdict names.
"""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime import doctor
from tma.runtime.session import Session


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("doctor", argv, session)

    # no server, a tmux error, a broken bundled manifest: reported by cli/main.py (exit 1)
    doc = doctor.check(session)
    if args.json:
        from tma.ui import text

        sys.stdout.write(text.dumps(doc) + "\n")
    else:
        from tma.ui import doctor as report

        sys.stdout.write(report.render(doc))
    sys.stdout.flush()
    verdict = doc["verdict"]
    if args.exit_code and verdict["exit_code"]:
        common.err(f"tma: doctor: {verdict['summary']}")
        return verdict["exit_code"]
    return 0
