// tma web: the browser page. One ES module, no dependencies, no build step.
//
// It talks to `tma web` on the same origin (cookie auth); every body is a schema-1
// protocol frame (src/tma/core/proto.py). Agent text is only ever inserted as text
// (textContent, never parsed as HTML): whatever an agent prints stays inert here.

const SCHEMA = 1;
const STATE_ORDER = { blocked: 0, working: 1, idle: 2, unknown: 3 };
const OPTION_ACTION = { "allow-once": "approve", "reject-once": "deny",
                        "allow-always": "approve_always" };
const ACTION_WORD = { approve: "Approve", deny: "Deny", approve_always: "Always allow",
                      question_reply: "Answer", question_reject: "Dismiss",
                      steer: "Message", interrupt: "Interrupt" };

const $ = (id) => document.getElementById(id);

const app = {
  hello: null,          // the hello frame: host, scopes
  rows: new Map(),      // key -> FleetRow
  hosts: new Map(),     // name -> {state, ...} when the server says
  selected: null,       // {host, pane} of the open card
  card: null,           // the open card's frame
  conv: [],             // the open card's window events, newest first
  older: null,          // the window's `older` cursor
  receipts: [],         // receipts of this page's dispatches, newest first
  inflight: false,      // a dispatch is waiting for its receipt
  stream: null,
  live: false,
  seq: 0,
};

// --- small helpers ------------------------------------------------------------------------

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

function rowKey(host, pane) {
  return `${host}\u0000${pane}`;
}

function isLocal(host) {
  return !host || (app.hello && host === app.hello.host);
}

// The pane as the API names it: `%N` on this machine, `HOST:%N` on a fleet host.
function apiPane(host, pane) {
  return isLocal(host) ? pane : `${host}:${pane}`;
}

function slot() {
  // a fresh random slot per dispatch (crypto.randomUUID needs a secure context)
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function age(ms) {
  if (!ms) return "";
  const s = Math.max(0, Math.floor((Date.now() - ms) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 ? ` ${m % 60}m` : ""}`;
  return `${Math.floor(h / 24)}d`;
}

function asks(row) {
  if (row.state !== "blocked") return row.detail || "";
  if (row.pending_summary) return row.pending_summary;
  if (row.pending_tool) return `${row.detail || "blocked"}: ${row.pending_tool}`;
  return row.detail || "blocked";
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code;
  }
}

async function api(path, body) {
  const init = { credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  let frame = null;
  try {
    frame = await res.json();
  } catch (_e) {
    frame = null;
  }
  if (res.status === 401) {
    showUnpaired(frame && frame.message);
    throw new ApiError(401, frame && frame.code, frame && frame.message);
  }
  if (!res.ok || !frame || frame.t === "error") {
    throw new ApiError(res.status, frame && frame.code, frame && frame.message);
  }
  return frame;
}

function q(params) {
  return Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
}

// --- the location's fragment: #pair=CODE, #pane=HOST:%N --------------------------------

function fragment() {
  const raw = location.hash.replace(/^#/, "");
  const out = {};
  for (const part of raw.split("&")) {
    const eq = part.indexOf("=");
    if (eq > 0) out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}

// `HOST:%N` or `%N` (the pane's % is taken as it stands: a notification writes it raw)
function parsePaneRef(raw) {
  if (!raw) return null;
  const m = /^(?:(.*):)?(%\d+|%25\d+)$/.exec(raw);
  if (!m) return null;
  let host = m[1] || "";
  try {
    host = decodeURIComponent(host);
  } catch (_e) { /* kept raw */ }
  const pane = m[2].startsWith("%25") ? `%${m[2].slice(3)}` : m[2];
  return { host: host || (app.hello ? app.hello.host : ""), pane };
}

function paneRef(host, pane) {
  return `${encodeURIComponent(host)}:${pane}`;
}

// --- connection ---------------------------------------------------------------------------

function setLink(state, text) {
  const link = $("link");
  link.dataset.state = state;
  link.textContent = text;
  document.body.dataset.link = state;
}

function showUnpaired(message) {
  $("unpaired").hidden = false;
  $("fleet").hidden = true;
  $("card").hidden = true;
  $("unpaired-note").textContent = message || "";
  setLink("unpaired", "not paired");
  if (app.stream) {
    app.stream.close();
    app.stream = null;
  }
}

async function pairFromFragment() {
  const code = fragment().pair;
  if (!code) return;
  // the code leaves the address bar (and history) before anything else happens
  history.replaceState(null, "", location.pathname + location.search);
  try {
    await api("/api/pair", { code: decodeURIComponent(code) });
  } catch (e) {
    if (e.status !== 401) showUnpaired(`pairing failed: ${e.message}`);
  }
}

async function start() {
  await pairFromFragment();
  try {
    app.hello = await api("/api/hello");
  } catch (e) {
    if (e.status !== 401) setLink("down", `no server: ${e.message}`);
    return;
  }
  $("unpaired").hidden = true;
  $("fleet").hidden = false;
  $("card").hidden = false;
  await refreshSnapshot();
  openStream();
  route();
  setInterval(tickAges, 5000);
}

function openStream() {
  if (app.stream) app.stream.close();
  const es = new EventSource("/api/stream");
  app.stream = es;
  es.onopen = () => {
    app.live = true;
    setLink("live", "live");
    refreshSnapshot();  // what changed while the stream was away
  };
  es.onerror = () => {
    app.live = false;
    if (es.readyState === EventSource.CLOSED) {
      setLink("down", "disconnected");
      // a closed stream may be a lost pairing: hello says which
      setTimeout(async () => {
        try {
          await api("/api/hello");
          openStream();
        } catch (_e) { /* unpaired, or still down: shown */ }
      }, 3000);
    } else {
      setLink("stale", "reconnecting…");
    }
    renderFleet();
  };
  const onFrame = (ev) => {
    let frame;
    try {
      frame = JSON.parse(ev.data);
    } catch (_e) {
      return;
    }
    handleFrame(frame);
  };
  es.onmessage = onFrame;
  for (const name of ["edge", "snapshot", "hosts"]) es.addEventListener(name, onFrame);
}

let snapshotTimer = null;
function soonSnapshot() {
  if (snapshotTimer) return;
  snapshotTimer = setTimeout(() => {
    snapshotTimer = null;
    refreshSnapshot();
  }, 250);
}

function handleFrame(frame) {
  if (!frame || frame.schema !== SCHEMA) return;
  if (frame.t === "snapshot") {
    applySnapshot(frame);
  } else if (frame.t === "edge") {
    const host = frame.host || (app.hello && app.hello.host) || "";
    const key = rowKey(host, frame.pane);
    const row = app.rows.get(key);
    if (frame.to === "") {
      app.rows.delete(key);
    } else if (row) {
      row.state = frame.to;
      row.detail = frame.detail;
      row.since_ms = frame.at_ms;
    }
    renderFleet();
    soonSnapshot();  // an edge carries the change; the snapshot the rest of the row
    if (app.selected && app.selected.host === host && app.selected.pane === frame.pane) {
      renderCardHead();
      loadCard();
    }
  }
}

async function refreshSnapshot() {
  try {
    applySnapshot(await api("/api/snapshot"));
  } catch (e) {
    if (e.status !== 401) setLink("stale", `snapshot failed: ${e.message}`);
  }
}

function applySnapshot(frame) {
  const before = selectedRow();
  const wasStale = isStale(before);
  app.rows = new Map();
  for (const row of frame.agents || []) app.rows.set(rowKey(row.host, row.pane), row);
  if (Array.isArray(frame.hosts)) {
    app.hosts = new Map(frame.hosts.map((h) => [h.name || h.host, h]));
  }
  renderFleet();
  if (app.selected) {
    renderCardHead();
    // the open agent's host went offline (its buttons go) or came back (its card again)
    const now = selectedRow();
    const nowStale = isStale(now);
    if (nowStale && !wasStale) renderAsk();
    else if (wasStale && !nowStale) loadCard();
    // another prompt in the same blocked state (a new episode, no edge): its card again
    else if (before && now && !nowStale && (before.episode_ms !== now.episode_ms
             || before.pending_summary !== now.pending_summary)) loadCard();
  }
}

// a fleet host's row kept while its host is offline: what was last heard, no action
function isStale(row) {
  return Boolean(row && row.stale);
}

// --- the fleet list -----------------------------------------------------------------------

function hostStatus(name, rows) {
  const h = app.hosts.get(name);
  if (h && h.state && h.state !== "online") return h.state;
  if (rows.length && rows.every((r) => r.stale)) return "stale";
  return isLocal(name) ? "this machine" : "online";
}

function renderFleet() {
  const hostsNode = $("hosts");
  clear(hostsNode);
  const groups = new Map();
  // this machine's heading stays (saying it has none) once any host has an agent
  if (app.hello && app.rows.size) groups.set(app.hello.host, []);
  for (const name of app.hosts.keys()) groups.set(name, []);
  for (const row of app.rows.values()) {
    if (!groups.has(row.host)) groups.set(row.host, []);
    groups.get(row.host).push(row);
  }
  const names = [...groups.keys()].sort((a, b) =>
    (isLocal(b) - isLocal(a)) || a.localeCompare(b));
  const counts = { blocked: 0, working: 0, idle: 0, unknown: 0 };
  for (const name of names) {
    const rows = groups.get(name).sort((a, b) =>
      ((STATE_ORDER[a.state] ?? 9) - (STATE_ORDER[b.state] ?? 9))
      || (a.since_ms - b.since_ms) || a.pane.localeCompare(b.pane));
    const status = hostStatus(name, rows);
    const group = el("section", "host");
    group.dataset.host = name;
    group.dataset.status = status;
    const head = el("h2", "host-head");
    head.append(el("span", "host-name", name || "this machine"), el("span", "host-status", status));
    group.append(head);
    if (!rows.length) {
      group.append(el("p", "note", status === "online" || isLocal(name) ? "no agents"
        : `${status}: no rows`));
    }
    const list = el("ul", "rows");
    for (const row of rows) {
      if (counts[row.state] !== undefined) counts[row.state] += 1;
      list.append(renderRow(row));
    }
    group.append(list);
    hostsNode.append(group);
  }
  $("fleet-empty").hidden = app.rows.size > 0 || names.length > 0;
  const counter = $("counts");
  clear(counter);
  for (const [state, n] of Object.entries(counts)) {
    if (!n) continue;
    const c = el("span", "count", `${n} ${state}`);
    c.dataset.state = state;
    counter.append(c);
  }
}

function renderRow(row) {
  const li = el("li");
  const btn = el("button", "row");
  btn.type = "button";
  btn.dataset.state = row.state;
  btn.dataset.pane = row.pane;
  btn.dataset.host = row.host;
  // a host gone offline keeps its last rows (stale); so does every row while the stream
  // to this server is down: what they say is what was last heard
  const stale = Boolean(row.stale) || !app.live;
  if (stale) btn.classList.add("stale");
  if (app.selected && app.selected.host === row.host && app.selected.pane === row.pane) {
    btn.setAttribute("aria-current", "true");
  }
  const top = el("span", "row-top");
  top.append(el("span", "badge", row.state), el("span", "agent", row.agent),
             el("span", "where", row.repo ? `${row.repo}${row.branch ? `@${row.branch}` : ""}` : row.locator));
  const ageNode = el("span", "age", age(row.since_ms));
  ageNode.dataset.since = String(row.since_ms || "");
  top.append(ageNode);
  btn.append(top);
  const what = asks(row);
  if (what || stale) {
    btn.append(el("span", "asks", stale ? `stale: ${what || row.state} (last heard)` : what));
  }
  btn.addEventListener("click", () => openPane(row.host, row.pane));
  li.append(btn);
  return li;
}

function tickAges() {
  for (const node of document.querySelectorAll("[data-since]")) {
    const since = Number(node.dataset.since);
    if (since) node.textContent = `${node.dataset.prefix || ""}${age(since)}`;
  }
}

// --- routing ------------------------------------------------------------------------------

function route() {
  const ref = parsePaneRef(fragment().pane);
  if (ref) {
    showCard(ref.host, ref.pane);
  } else {
    app.selected = null;
    document.body.dataset.view = "list";
    $("card-body").hidden = true;
    $("card-placeholder").hidden = false;
    renderFleet();
  }
}

function openPane(host, pane) {
  const want = `#pane=${paneRef(host, pane)}`;
  if (location.hash !== want) {
    // from the list, the phone's own back gesture returns to it: one entry per card
    if (fragment().pane) history.replaceState({ fromList: true }, "", want);
    else history.pushState({ fromList: true }, "", want);
  }
  route();
}

function toList() {
  if (history.state && history.state.fromList) {
    history.back();  // popstate routes
  } else {
    history.pushState(null, "", location.pathname + location.search);
    route();
  }
}

window.addEventListener("popstate", route);
window.addEventListener("hashchange", () => {
  if (fragment().pair) {
    pairFromFragment().then(start);
  } else {
    route();
  }
});

// --- the card view ------------------------------------------------------------------------

function selectedRow() {
  if (!app.selected) return null;
  return app.rows.get(rowKey(app.selected.host, app.selected.pane)) || null;
}

function showCard(host, pane) {
  const same = app.selected && app.selected.host === host && app.selected.pane === pane;
  app.selected = { host, pane };
  document.body.dataset.view = "card";
  $("card-placeholder").hidden = true;
  $("card-body").hidden = false;
  if (!same) {
    app.card = null;
    app.conv = [];
    app.older = null;
    clear($("card-ask"));
    clear($("conv-list"));
    $("conv-older").hidden = true;
    $("conv-note").textContent = "reading…";
    $("steer-text").value = "";
    renderOutcomes();
  }
  renderFleet();
  renderCardHead();
  renderAttach();
  loadCard();
  if (!same) {
    loadWindow();
    loadReceipts();
  }
  window.scrollTo(0, 0);
}

function renderCardHead() {
  const head = $("card-head");
  clear(head);
  const sel = app.selected;
  if (!sel) return;
  const row = selectedRow();
  const title = el("h1", "card-title");
  title.append(el("span", "agent", row ? row.agent : "agent"),
               el("span", "where", `${sel.host || "this machine"} ${sel.pane}`));
  head.append(title);
  const line = el("p", "card-state");
  if (row) {
    const badge = el("span", "badge", row.state);
    badge.dataset.state = row.state;
    const ageNode = el("span", "age", `for ${age(row.since_ms)}`);
    ageNode.dataset.since = String(row.since_ms || "");
    ageNode.dataset.prefix = "for ";
    line.append(badge, ageNode);
    if (row.stale) line.append(el("span", "tag", "stale"));
    if (row.repo) line.append(el("span", "where", `${row.repo}${row.branch ? `@${row.branch}` : ""}`));
    head.dataset.state = row.state;
  } else {
    line.append(el("span", "note", "this pane is not in the fleet right now"));
    head.dataset.state = "gone";
  }
  head.append(line);
  const steerable = app.hello && (app.hello.scopes || []).includes("act:steer");
  $("steer-form").hidden = !steerable || !row || isStale(row);
}

// A word as a POSIX shell reads it back: plain when it is only safe characters, else in
// single quotes (the link's host is whatever the URL says: it is never typed as code).
function shellWord(text) {
  return /^[A-Za-z0-9_.@%+=:,\/-]+$/.test(text) && !text.startsWith("-")
    ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

function renderAttach() {
  const sel = app.selected;
  const known = isLocal(sel.host) || [...app.rows.values()].some((r) => r.host === sel.host);
  const cmd = isLocal(sel.host)
    ? `tma attach --pane ${shellWord(sel.pane)}`
    : `ssh -t ${shellWord(sel.host)} tma attach --pane ${shellWord(sel.pane)}`;
  // a host no row names came from the link alone: nothing to copy and run
  $("attach-cmd").textContent = known ? cmd : "";
}

let cardSeq = 0;
async function loadCard() {
  const sel = app.selected;
  if (!sel) return;
  const mine = ++cardSeq;
  let card;
  try {
    card = await api(`/api/card?${q({ pane: apiPane(sel.host, sel.pane) })}`);
  } catch (e) {
    if (mine !== cardSeq) return;
    const ask = $("card-ask");
    clear(ask);
    ask.append(el("p", "note", e.code === "not-found"
      ? `This pane runs no agent now (${e.message}).`
      : e.code === "host-down" ? `${sel.host} is offline: ${e.message}`
        : `The card could not be read: ${e.message}`));
    return;
  }
  if (mine !== cardSeq || !app.selected || app.selected !== sel) return;
  app.card = card;
  renderAsk();
}

function actionButton(label, action, extra, cls) {
  const b = el("button", `btn act ${cls || ""}`, label);
  b.type = "button";
  b.dataset.action = action;
  b.disabled = app.inflight || !canAct(action);
  b.addEventListener("click", () => dispatch(action, extra || {}, b));
  return b;
}

const SCOPE_OF = { approve: "act:answer", deny: "act:answer", question_reply: "act:answer",
                   question_reject: "act:answer", steer: "act:steer", interrupt: "act:steer",
                   approve_always: "act:always" };

function canAct(action) {
  const scopes = (app.hello && app.hello.scopes) || [];
  const need = SCOPE_OF[action];
  return !need || scopes.includes(need);
}

function renderAsk() {
  const ask = $("card-ask");
  clear(ask);
  const card = app.card;
  const stale = selectedRow();
  if (isStale(stale)) {
    // its host is offline: nothing is offered to fire (the server refuses it too)
    const box = el("div", "ask-box quiet");
    box.append(el("p", "note", `${stale.host} is offline: this is what was last heard `
                  + `(${stale.state}); its actions come back with it.`));
    ask.append(box);
    return;
  }
  if (!card) return;
  if (card.card === "permission") {
    const box = el("div", "ask-box");
    box.append(el("h2", null, card.pending_call ? `${card.agent} asks to run ${card.pending_call.tool}` : `${card.agent} asks for permission`));
    if (card.pending_call) {
      const input = card.pending_call.input || {};
      const text = Object.keys(input).length === 1 && typeof Object.values(input)[0] === "string"
        ? Object.values(input)[0] : JSON.stringify(input, null, 2);
      box.append(el("pre", "call", text));
    }
    const exact = card.extraction === "exact";
    const buttons = el("div", "options dialog");
    for (const opt of card.options || []) {
      const action = OPTION_ACTION[opt.kind];
      if (exact && action && opt.option_id !== undefined && opt.option_id !== null
          && !canAct(action)) {
        // the device was not granted it (approve_always needs act:always)
        const t = el("span", "option-text", opt.name);
        t.append(el("small", null, ` (this browser may not: ${SCOPE_OF[action]})`));
        buttons.append(t);
      } else if (exact && action && opt.option_id !== undefined && opt.option_id !== null) {
        buttons.append(actionButton(opt.name || ACTION_WORD[action], action, {},
                                    opt.kind.startsWith("reject") ? "deny" : "primary"));
      } else {
        // no control: an option with no id, a kind this page cannot fire, or a dialog
        // not read exactly is shown as text only
        buttons.append(el("span", "option-text", opt.name));
      }
    }
    box.append(buttons);
    if (!exact) {
      box.append(el("p", "note", "This dialog could not be read exactly: answer it in the terminal (the command is below)."));
    }
    ask.append(box);
  } else if (card.card === "question") {
    const box = el("div", "ask-box");
    box.append(el("h2", null, `${card.agent} asks`));
    const chosen = (card.questions || []).map(() => []);
    const single = (card.questions || []).length === 1;
    (card.questions || []).forEach((question, qi) => {
      const fs = el("fieldset", "question");
      fs.append(el("legend", null, question.header || `Question ${qi + 1}`));
      fs.append(el("p", "question-text", question.question));
      const opts = el("div", "options");
      for (const option of question.options || []) {
        if (single && !question.multiple) {
          const b = actionButton(option.label, "question_reply", { answers: [[option.label]] });
          if (option.description) b.title = option.description;
          opts.append(b);
        } else {
          const lab = el("label", "choice");
          const input = el("input");
          input.type = question.multiple ? "checkbox" : "radio";
          input.name = `q${qi}`;
          input.addEventListener("change", () => {
            const set = question.multiple ? chosen[qi].filter((l) => l !== option.label) : [];
            if (input.checked) set.push(option.label);
            chosen[qi] = set;
          });
          lab.append(input, el("span", null, option.label));
          if (option.description) lab.append(el("small", null, option.description));
          opts.append(lab);
        }
      }
      fs.append(opts);
      if (question.custom) {
        const own = el("input", "own");
        own.type = "text";
        own.placeholder = "Your own answer";
        own.maxLength = 4096;
        const b = el("button", "btn act", "Send answer");
        b.type = "button";
        b.dataset.action = "question_reply";
        b.disabled = app.inflight || !canAct("question_reply");
        b.addEventListener("click", () => {
          if (!own.value.trim()) return;
          const answers = chosen.map((c) => c.slice());
          answers[qi] = [own.value.trim()];
          dispatch("question_reply", { answers }, b);
        });
        const row = el("div", "own-row");
        row.append(own, b);
        fs.append(row);
      }
      box.append(fs);
    });
    const footer = el("div", "options");
    if (!single || (card.questions[0] && card.questions[0].multiple)) {
      const b = el("button", "btn act primary", "Send answers");
      b.type = "button";
      b.dataset.action = "question_reply";
      b.disabled = app.inflight || !canAct("question_reply");
      b.addEventListener("click", () => dispatch("question_reply", { answers: chosen.map((c) => c.slice()) }, b));
      footer.append(b);
    }
    footer.append(actionButton("Dismiss", "question_reject", {}, "deny"));
    box.append(footer);
    ask.append(box);
  } else if (card.card === "informational") {
    const box = el("div", "ask-box");
    box.append(el("h2", null, card.headline || card.detail));
    box.append(el("p", "note", `Blocked (${card.detail}): answer it in the terminal.`));
    ask.append(box);
  } else {
    const row = selectedRow();
    const box = el("div", "ask-box quiet");
    box.append(el("p", "note", row ? `Nothing to answer: the agent is ${row.state}.` : "Nothing to answer."));
    ask.append(box);
  }
}

// --- dispatch and receipts ----------------------------------------------------------------

function setInflight(on) {
  app.inflight = on;
  for (const b of document.querySelectorAll("#card-body button.act, #steer-send, #interrupt")) {
    b.disabled = on || !canAct(b.dataset.action || "steer");
  }
}

async function dispatch(action, extra, button) {
  const sel = app.selected;
  if (!sel || app.inflight) return;  // no double fire
  const card = app.card;
  const row = selectedRow();
  if (isStale(row)) return;  // its host is offline: nothing to fire
  const binder = { expect_episode_ms: (card && card.binder && card.binder.expect_episode_ms)
                   || (row && row.episode_ms) || 0 };
  const request = card && card.binder && card.binder.expect_permission_request;
  if (request) binder.expect_permission_request = request;
  if (action === "steer" || action === "interrupt") binder.expect_episode_ms = 0;
  const frame = { schema: SCHEMA, id: String(++app.seq), t: "dispatch", slot: slot(),
                  host: sel.host, pane: sel.pane, action, binder };
  if (extra.text !== undefined) frame.text = extra.text;
  if (extra.answers !== undefined) frame.answers = extra.answers;
  setInflight(true);
  if (button) button.classList.add("busy");
  const pending = { slot: frame.slot, host: sel.host, pane: sel.pane, action,
                    outcome: "sending", reason: null, at_ms: Date.now() };
  app.receipts.unshift(pending);
  renderOutcomes();
  let receipt = null;
  try {
    receipt = await api("/api/dispatch", frame);
  } catch (e) {
    if (e.status !== 401) receipt = await recoverReceipt(frame.slot, e);
  }
  const got = receipt || { outcome: "unknown", reason: "no receipt" };
  for (const k of ["outcome", "reason", "message", "cached", "exit_code"]) {
    if (got[k] !== undefined) pending[k] = got[k];
  }
  if (button) button.classList.remove("busy");
  setInflight(false);
  renderOutcomes();
  if (receipt && receipt.outcome === "sent" && action === "steer") $("steer-text").value = "";
  await refreshSnapshot();
  await loadCard();
  loadWindow();
}

// A dispatch whose answer was lost (the network, a suspended phone) is never sent again:
// its receipt is asked for by its slot.
async function recoverReceipt(s, err) {
  if (err.status && err.status < 500 && err.code) {
    // refused before any slot was claimed (a scope short, a bad frame): nothing fired
    return { outcome: "refused", reason: err.code, message: err.message };
  }
  for (let i = 0; i < 5; i += 1) {
    await new Promise((r) => setTimeout(r, 1000));
    try {
      const got = await api(`/api/receipts?${q({ slot: s })}`);
      const found = (got.receipts || []).find((r) => r.slot === s);
      if (found) return found;
    } catch (_e) { /* keep asking a little */ }
  }
  return { outcome: "unknown", reason: "no receipt", message: err.message };
}

// The pane's recent receipts from the host's ledger (this browser's, from before a reload
// too): a phone that slept through a tap's answer learns its outcome here.
const RECEIPTS_MS = 30 * 60 * 1000;
async function loadReceipts() {
  const sel = app.selected;
  let got;
  try {
    got = await api(`/api/receipts?${q({ since_ms: Date.now() - RECEIPTS_MS })}`);
  } catch (_e) {
    return;
  }
  if (app.selected !== sel) return;
  const known = new Set(app.receipts.map((r) => r.slot));
  for (const r of got.receipts || []) {
    const ref = parsePaneRef(r.pane);  // `%N` (this machine's) or `HOST:%N`
    if (known.has(r.slot) || !ref || ref.pane !== sel.pane || ref.host !== sel.host) continue;
    app.receipts.push({ ...r, host: sel.host, pane: sel.pane });
  }
  app.receipts.sort((a, b) => (b.at_ms || 0) - (a.at_ms || 0));
  renderOutcomes();
}

function renderOutcomes() {
  const list = $("card-outcome");
  clear(list);
  const sel = app.selected;
  const mine = sel ? app.receipts.filter((r) => r.host === sel.host && r.pane === sel.pane) : [];
  for (const r of mine.slice(0, 5)) {
    const li = el("li", "receipt");
    li.dataset.outcome = r.outcome;
    const word = ACTION_WORD[r.action] || r.action;
    let text = `${word}: ${r.outcome}`;
    if (r.reason) text += ` (${r.reason})`;
    if (r.cached) text += ", already done";
    li.append(el("strong", null, text));
    if (r.message) li.append(el("span", "note", ` ${r.message}`));
    list.append(li);
  }
}

$("steer-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("steer-text").value;
  if (!text.trim()) return;
  dispatch("steer", { text }, $("steer-send"));
});
$("steer-send").dataset.action = "steer";
$("interrupt").dataset.action = "interrupt";
$("interrupt").addEventListener("click", () => dispatch("interrupt", {}, $("interrupt")));

$("back").addEventListener("click", (ev) => {
  ev.preventDefault();
  toList();
});
$("home").addEventListener("click", (ev) => {
  ev.preventDefault();
  toList();
});

$("attach-copy").addEventListener("click", async () => {
  const text = $("attach-cmd").textContent;
  const btn = $("attach-copy");
  try {
    await navigator.clipboard.writeText(text);
    btn.textContent = "Copied";
  } catch (_e) {
    const range = document.createRange();
    range.selectNodeContents($("attach-cmd"));
    const s = window.getSelection();
    s.removeAllRanges();
    s.addRange(range);
    btn.textContent = "Selected: copy it";
  }
  setTimeout(() => { btn.textContent = "Copy"; }, 2000);
});

// --- the conversation ---------------------------------------------------------------------

const KIND_WORD = { user_message: "you", assistant_text: "agent", thinking: "thinking",
                    tool_call: "tool", tool_result: "result", permission_request: "asks",
                    turn_boundary: "turn", usage: "usage", compaction: "compacted",
                    subagent_ref: "subagent", attachment: "attachment", session_meta: "session" };

let windowSeq = 0;
async function loadWindow(before) {
  const sel = app.selected;
  if (!sel) return;
  const mine = ++windowSeq;
  const note = $("conv-note");
  let win;
  try {
    win = await api(`/api/window?${q({ pane: apiPane(sel.host, sel.pane), before })}`);
  } catch (e) {
    if (mine !== windowSeq) return;
    if (!before) clear($("conv-list"));
    note.textContent = e.code === "not-found" ? "No conversation for this pane."
      : e.code === "unsupported" ? `The conversation cannot be read here: ${e.message}`
        : `The conversation could not be read: ${e.message}`;
    $("conv-older").hidden = true;
    return;
  }
  if (mine !== windowSeq || app.selected !== sel) return;
  note.textContent = "";
  app.conv = before ? app.conv.concat(win.events || []) : (win.events || []);
  app.older = win.older || null;
  renderConversation();
}

function renderConversation() {
  const list = $("conv-list");
  clear(list);
  for (const ev of app.conv) {
    if (ev.kind === "bookkeeping" || ev.kind === "usage" || ev.kind === "turn_boundary") continue;
    const li = el("li", "event");
    li.dataset.kind = ev.kind;
    const head = el("div", "event-head");
    let label = KIND_WORD[ev.kind] || ev.kind;
    if (ev.kind === "tool_call" && ev.name) label = `tool ${ev.name}`;
    if (ev.kind === "tool_result" && ev.status) label = `result ${ev.status}`;
    head.append(el("span", "kind", label));
    if (ev.ts) head.append(el("time", "ts", ev.ts.replace("T", " ").replace(/\.\d+Z?$|Z$/, "")));
    const more = el("button", "btn ghost more", "Show all");
    more.type = "button";
    more.setAttribute("aria-label", `show all of this ${label}`);
    more.addEventListener("click", () => loadBody(ev, li, more));
    head.append(more);
    li.append(head);
    if (ev.preview) li.append(el("p", "preview", ev.preview));
    list.append(li);
  }
  if (!list.firstChild) $("conv-note").textContent = "Nothing said yet.";
  $("conv-older").hidden = !app.older;
}

async function loadBody(ev, li, more) {
  const sel = app.selected;
  more.disabled = true;
  try {
    const got = await api(`/api/event?${q({ pane: apiPane(sel.host, sel.pane), cursor: ev.cursor })}`);
    const body = got.body;
    const text = body ? (body.kind === "json" ? prettyJson(body.text) : body.text) : "(no body)";
    li.append(el("pre", "body", text));
    more.remove();
  } catch (e) {
    more.disabled = false;
    more.textContent = e.code === "cursor-invalid" ? "Gone: refresh" : `Failed: ${e.message}`;
    if (e.code === "cursor-invalid") loadWindow();
  }
}

function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch (_e) {
    return text;
  }
}

$("conv-refresh").addEventListener("click", () => loadWindow());
$("conv-older").addEventListener("click", () => loadWindow(app.older));

start();
