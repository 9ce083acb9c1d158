"""The notifications: who is told what, and how it reaches them.

- `gate`: the `[notify]` config read (which triggers ring, which sinks, mutes);
- `note`: one notification as data (`Note`), its payload and environment;
- `dispatch`: ring every sink for one Note (the message line, bell, OSC, log, command or
  desktop, then the registered sinks);
- `sinks` (the registry), `terminal`, `push` (ntfy and the webhook), `http` and `post`
  (delivering a push, bounded), `backends` (the desktop and command processes), `log`
  (the log sink and the failure record), `secret_file` (a sink's secret, refused when
  others may read it).

Who may import it: the hook intake, the daemon, the actions, the fleet, doctor and the
commands. It imports neither the fleet nor the actions (an Approve button runs `tma act`
as a process; import-linter: "runtime rooms"), so a new sink goes here and nowhere else.
"""
