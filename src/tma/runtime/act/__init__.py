"""The actions: doing something to an agent's pane, once and only where it still asks.

- `registry`: the action set (bundled and the user's actions), `describe`: how one reads
  for a person;
- `fire`: the broker (gates, the episode binder, the pane's lock, keys typed only into
  the screen that still asks), `exec`: exec actions' detached child;
- `card`, `card_screen`: what a blocked pane asks (hook, API or screen lane);
- `opencode_api`: OpenCode's HTTP lane.

Who may import it: the commands, the daemon and the fleet (serve fires through the
broker and builds cards). It may use the notifications, never the fleet (import-linter:
"runtime rooms"). A new action is a TOML file (tma.core.actions); a new lane goes here.
"""
