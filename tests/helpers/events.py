"""tma event run the way an agent's hook runs it."""

from __future__ import annotations


def event(srv, kind, pane, payload="{}", agent="fake", manifests=True, env=None,
          timeout=30, **kw):
    extra = {"TMA_HOOK_STRICT": "1"}
    extra.update(env or {})
    return srv.tma("event", "--agent", agent, "--kind", kind, "--pane", pane,
                   input=payload, manifests=manifests, env=extra, timeout=timeout, **kw)
