"""The hook installers (the hook tier).

registry: one adapter per agent (tma.install.<agent>) behind one Protocol, each owning
its files' flags, environment variables and default paths; wiring: the orchestration
the commands call (check, install, uninstall) with typed requests; binary: which tma
is running and how tmux should name it; created: what tma created, so an uninstall
takes back exactly that; tmux_hooks / tmux_status: the tmux side; common: diff,
prompt, atomic writes, the JSON and hook-entry helpers.
"""
