"""Write docs/man/tma.1 from the command declarations (src/tma/cli/spec.py)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tma.cli import spec  # noqa: E402
from tma.ui import manpage  # noqa: E402

PAGE = ROOT / "docs" / "man" / "tma.1"

if __name__ == "__main__":
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(manpage.render(spec.TABLE), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
