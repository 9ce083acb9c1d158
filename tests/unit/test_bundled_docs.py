"""The decoded bundled manifests the hot paths read are in sync with the TOML files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_docs_match_the_toml_files():
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_bundled_docs.py"),
                          "--check"], capture_output=True)
    assert res.returncode == 0, "run: python tools/gen_bundled_docs.py"
