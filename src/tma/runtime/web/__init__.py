"""`tma web`: this machine's agents in a browser, over HTTP on loopback.

- `devices`: the paired browsers (`tma web pair`, `tma device list|grant|revoke`): a
  one-time code traded for a random token whose hash alone is kept, with the scopes of
  `tma serve` (read, act:answer, act:steer, act:always);
- `server`: the HTTP server itself (the standard library's ThreadingHTTPServer, hand-written
  server-sent events): the gates every request passes (Host, Origin, cookie, scope), one
  reader of the rows shared by every stream, and the requests answered by serve's own
  machinery (tma.runtime.fleet.serve's Conn: the dispatch ledger, the episode binder,
  cards, transcripts).

Who may import it: the `web` and `device` commands only (tests/arch/test_command_imports
pins every other command's imports). It sits above the fleet (import-linter: "runtime
rooms"); nothing below imports it. The page it serves is package data in tma/web/static.
"""
