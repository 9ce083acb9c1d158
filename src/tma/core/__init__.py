"""The pure detection core.

Everything here is a function over data: snapshots, evidence and times come in as
arguments, verdicts and write plans go out. No subprocess, no socket, no clock, no
file I/O (enforced by import-linter, see pyproject.toml).
"""
