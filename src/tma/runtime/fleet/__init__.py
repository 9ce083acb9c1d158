"""The fleet: other machines' agents, over a link that speaks the public protocol.

- `hosts`: hosts.toml (`tma host add|set|list|remove`);
- `link`: one conversation with a host (ssh or a `--via` argv), every read bounded and
  every frame made data (tma.core.inbound);
- `links`: the probes of every host (`ls --hosts`, `host check`) and the jump's login;
- `view`, `read`: the hosts' rows for the surfaces (from the daemon's links or a
  probe), `act`: an action fired at a host's pane (`dispatch`, its outbox);
- `serve`, `ledger`: the host's side (`tma serve --stdio` and its dispatch ledger).

Who may import it: the commands, the daemon and the surfaces' feeds. It may use the
actions (serve fires through the broker and builds cards) and the notifications; neither
imports it back (import-linter: "runtime rooms"). A host feature goes here.
"""
