"""The agents' transcripts read for a pane: which file is the pane's, a page of it read
backwards under the budgets, one event by its cursor, the last answer.

- `stores`: the one registry, agent name -> store module (tma.core.transcript's pure
  record stores, imported lazily; a module not there yet is "no reader"), the shape of
  a store that pages itself (`PagedStore`: OpenCode's SQLite), a page as data (`Page`,
  `Entry`) and the errors a read raises;
- `page`: a JSONL store read backwards from its end in 64 KiB chunks, each record parsed
  once, its events numbered (the cursor's part); the last page cached per file state;
- `locate`: which file is a pane's (the hook's path, else the session id and the pane's
  directory, else a scan by session id; never a guess);
- `read`: what the surfaces call (`window`, `event`, `last_answer`): a pane's row in, the
  protocol's frames out;
- a store that pages itself lives here too, beside the registry that names it (OpenCode's
  SQLite reader, `opencode_db`: one read-only connection held per database).

Who may import it: the commands (`tma transcript`, `tma last`), doctor, the surfaces'
feeds and the other rooms (the fleet serves `window` and `event` from it). It imports
none of them (import-linter: "runtime rooms"), and the everyday commands (`status`,
`event`, `ls`) never load it.
"""
