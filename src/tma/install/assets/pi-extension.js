// tma pi bridge
//
// Written by `tma install-hooks pi` and removed by `tma install-hooks pi --uninstall`,
// which recognise this file by the marker on the first line. It tells tma (the tmux
// "whose move is it?" monitor) what the pi session in this pane is doing:
//
//   session_start, before_agent_start, tool_execution_start,
//   agent_settled, agent_end, session_shutdown  -> tma-hook pi <event>  {session_id}
//   agent_settled, agent_end                    -> tma-hook pi context  {session_id, context_usage}
//
// pi's events carry no session id, so it is read from ctx.sessionManager.getSessionId().
// context_usage is ctx.getContextUsage() ({tokens, contextWindow, percent}, or null when pi
// has no model or window to measure against). agent_settled is the turn-settled event of
// newer pi releases; older ones (0.73) end a turn with agent_end only, so both are
// forwarded and tma keeps one completion when a release fires both.
//
// Signals are delivered one at a time, in order: the next tma-hook starts when the previous
// one has exited (or after a few seconds, whichever comes first), so a quick
// working -> idle pair can never land the wrong way round. session_shutdown jumps the
// queue (whatever is still pending belongs to the session that is ending) because pi may
// exit right after it. Nothing here ever waits for tma: children are detached and unref'd,
// every error is swallowed, and outside tmux ($TMUX_PANE unset) nothing is registered.

import { spawn } from "node:child_process";

const TMA_HOOK = @@TMA_HOOK@@;
const AGENT = "pi";
const SETTLE_MS = 4000; // the longest one hook may hold up the next
const MAX_PENDING = 64; // a stuck tma drops the oldest pending signals, never grows memory

const STATE_EVENTS = ["session_start", "before_agent_start", "tool_execution_start"];
const SETTLED_EVENTS = ["agent_settled", "agent_end"];

const pending = [];
let running = null;

function noop() {}

function launch(item) {
  const token = {};
  running = token;
  let timer = null;
  const release = () => {
    if (running !== token) return;
    running = null;
    if (timer !== null) clearTimeout(timer);
    pump();
  };
  try {
    timer = setTimeout(release, SETTLE_MS);
    if (timer && typeof timer.unref === "function") timer.unref();
    const child = spawn(TMA_HOOK, [AGENT, item.kind], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
    });
    child.on("error", release);
    child.on("exit", release);
    if (child.stdin) {
      child.stdin.on("error", noop);
      child.stdin.end(item.body);
    }
    child.unref();
  } catch {
    release();
  }
}

function pump() {
  try {
    if (running !== null || pending.length === 0) return;
    launch(pending.shift());
  } catch {
    running = null;
  }
}

function send(kind, payload, urgent) {
  try {
    const item = { kind, body: JSON.stringify(payload) };
    if (urgent) {
      pending.length = 0;
      launch(item);
      return;
    }
    const last = pending[pending.length - 1];
    if (last && last.kind === item.kind && last.body === item.body) return; // adds nothing
    if (pending.length >= MAX_PENDING) pending.shift();
    pending.push(item);
    pump();
  } catch {
    // never break pi
  }
}

function sessionId(ctx) {
  try {
    const manager = ctx ? ctx.sessionManager : undefined;
    if (!manager || typeof manager.getSessionId !== "function") return "";
    const id = manager.getSessionId();
    return typeof id === "string" ? id : "";
  } catch {
    return "";
  }
}

function contextUsage(ctx) {
  try {
    if (!ctx || typeof ctx.getContextUsage !== "function") return null;
    const usage = ctx.getContextUsage();
    if (!usage || typeof usage !== "object") return null;
    const out = {};
    for (const key of ["tokens", "contextWindow", "percent"]) {
      const value = usage[key];
      if (value === null || (typeof value === "number" && Number.isFinite(value))) out[key] = value;
    }
    return out;
  } catch {
    return null;
  }
}

function subscribe(pi, name, handler) {
  try {
    pi.on(name, (_event, ctx) => {
      try {
        handler(ctx);
      } catch {
        // never break pi
      }
      return undefined;
    });
  } catch {
    // an API change must not stop pi from loading
  }
}

export default function (pi) {
  try {
    if (!process.env.TMUX_PANE || !pi || typeof pi.on !== "function") return;
    for (const name of STATE_EVENTS) {
      subscribe(pi, name, (ctx) => send(name, { session_id: sessionId(ctx) }));
    }
    for (const name of SETTLED_EVENTS) {
      subscribe(pi, name, (ctx) => {
        const sid = sessionId(ctx);
        send(name, { session_id: sid });
        send("context", { session_id: sid, context_usage: contextUsage(ctx) });
      });
    }
    subscribe(pi, "session_shutdown", (ctx) =>
      send("session_shutdown", { session_id: sessionId(ctx) }, true));
  } catch {
    // never break pi
  }
}
