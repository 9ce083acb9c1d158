// tma OpenCode bridge
//
// Written by `tma install-hooks opencode` and removed by `tma install-hooks opencode
// --uninstall`, which recognise this file by the marker on the first line. It tells tma
// (the tmux "whose move is it?" monitor) what the OpenCode session in this pane is doing:
//
//   plugin load                     -> session-start        {session_id: "", api_endpoint}
//   session.created                 -> session-start        {session_id, api_endpoint}
//   session.status busy             -> user-prompt-submit   {session_id}
//   session.status idle             -> stop                 {session_id}
//   session.idle                    -> stop                 {session_id}
//   permission.asked / .updated     -> permission-required  {session_id, permission, request_id}
//   permission.replied              -> permission-replied   {session_id, request_id, reply}
//   question.asked / .updated       -> question-required    {session_id, question_id[, header]}
//   question.replied / .answered /
//   question.rejected               -> question-replied     {session_id, question_id}
//   hooks chat.message and
//   tool.execute.before             -> user-prompt-submit   {session_id}
//
// Each signal runs `tma-hook opencode <kind>` with its JSON object on stdin. The load-time
// session-start exists because OpenCode announces session.created for brand-new sessions
// only; a TUI idling at its prompt or a --continue'd session would otherwise stay unknown.
// Synonyms (permission.updated, question.updated, question.answered) are accepted so that a
// rename between releases lands inert instead of silently dropping a signal.
//
// Subagent (task tool) sessions run inside the pane's own turn: their busy/idle edges are
// not forwarded (a child settling is not the pane settling), and their permission and
// question prompts are forwarded under the root session's id, since the human answers
// them in this pane.
//
// Signals are delivered one at a time, in order: the next tma-hook starts when the previous
// one has exited (or after a few seconds, whichever comes first). OpenCode fires busy and
// idle a couple of milliseconds apart, and two hooks racing could otherwise land out of
// order. Nothing here ever waits for tma: children are detached and unref'd, every error
// is swallowed, and outside tmux ($TMUX_PANE unset) the plugin registers nothing at all.
//
// OpenCode calls every export of a plugin module as a plugin factory, so this module
// exports the one factory below and nothing else.

import { spawn } from "node:child_process";

const TMA_HOOK = @@TMA_HOOK@@;
const AGENT = "opencode";
const SETTLE_MS = 4000; // the longest one hook may hold up the next
const MAX_PENDING = 64; // a stuck tma drops the oldest pending signals, never grows memory
const MAX_SESSIONS = 512;

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

function send(kind, payload) {
  try {
    const body = JSON.stringify(payload);
    const last = pending[pending.length - 1];
    if (last && last.kind === kind && last.body === body) return; // adds nothing
    if (pending.length >= MAX_PENDING) pending.shift();
    pending.push({ kind, body });
    pump();
  } catch {
    // never break OpenCode
  }
}

function text(value) {
  return typeof value === "string" ? value : "";
}

// child session id -> parent session id, learnt from session.created / session.updated
const parents = new Map();

function learn(info) {
  const id = text(info && info.id);
  const parent = text(info && info.parentID);
  if (!id || !parent) return;
  if (parents.size >= MAX_SESSIONS) parents.clear();
  parents.set(id, parent);
}

function rootOf(sessionID) {
  let id = sessionID;
  for (let hops = 0; hops < 16 && parents.has(id); hops++) id = parents.get(id);
  return id;
}

function endpointOf(input) {
  try {
    const url = input ? input.serverUrl : undefined; // a URL object in 1.18
    return url ? String(url).replace(/\/+$/, "") : "";
  } catch {
    return "";
  }
}

function onEvent(event, apiEndpoint) {
  if (!event || typeof event !== "object") return;
  const props = event.properties && typeof event.properties === "object" ? event.properties : {};
  const sid = text(props.sessionID);
  switch (event.type) {
    case "session.created": {
      const info = props.info && typeof props.info === "object" ? props.info : {};
      learn(info);
      const id = text(info.id) || sid;
      if (text(info.parentID) || parents.has(id)) return;
      send("session-start", { session_id: id, api_endpoint: apiEndpoint });
      return;
    }
    case "session.updated":
      learn(props.info);
      return;
    case "session.status": {
      if (parents.has(sid)) return;
      const status = props.status && typeof props.status === "object" ? props.status.type : "";
      if (status === "busy") send("user-prompt-submit", { session_id: sid });
      else if (status === "idle") send("stop", { session_id: sid });
      return;
    }
    case "session.idle":
      if (!parents.has(sid)) send("stop", { session_id: sid });
      return;
    case "permission.asked":
    case "permission.updated":
      send("permission-required", {
        session_id: rootOf(sid),
        permission: text(props.permission) || text(props.type),
        request_id: text(props.id) || text(props.requestID),
      });
      return;
    case "permission.replied":
      send("permission-replied", {
        session_id: rootOf(sid),
        request_id: text(props.requestID) || text(props.permissionID) || text(props.id),
        reply: text(props.reply) || text(props.response),
      });
      return;
    case "question.asked":
    case "question.updated": {
      const asked = {
        session_id: rootOf(sid),
        question_id: text(props.id) || text(props.requestID),
      };
      // the first question's header: "Build Agent" is the plan agent's plan_exit approval
      const first = Array.isArray(props.questions) ? props.questions[0] : undefined;
      const header = text(first && first.header);
      if (header) asked.header = header;
      send("question-required", asked);
      return;
    }
    case "question.replied":
    case "question.answered":
    case "question.rejected":
      send("question-replied", {
        session_id: rootOf(sid),
        question_id: text(props.requestID) || text(props.id),
      });
      return;
    default:
      return;
  }
}

function onWorking(input) {
  const sid = text(input && input.sessionID);
  if (!parents.has(sid)) send("user-prompt-submit", { session_id: sid });
}

export const TmaBridge = async (input) => {
  try {
    if (!process.env.TMUX_PANE) return {};
    const apiEndpoint = endpointOf(input);
    send("session-start", { session_id: "", api_endpoint: apiEndpoint });
    return {
      event: async (arg) => {
        try {
          onEvent(arg ? arg.event : undefined, apiEndpoint);
        } catch {
          // never break OpenCode
        }
      },
      "chat.message": async (hookInput) => {
        try {
          onWorking(hookInput);
        } catch {
          // never break OpenCode
        }
      },
      "tool.execute.before": async (hookInput) => {
        try {
          onWorking(hookInput);
        } catch {
          // never break OpenCode
        }
      },
    };
  } catch {
    return {};
  }
};
