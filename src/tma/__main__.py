"""`python -m tma` runs the CLI."""

from tma.cli.main import entry

entry()
