"""The action broker: firing one action at one pane, in the one safe order.

load -> resolve the target (a producing poll cycle: a stale stamp is re-verified by
fresh detection) -> gate (`when` unless --force, `requires`, applicability, coverage)
-> the single-flight lock `@agent_action` -> re-check under the lock against a freshly
read pane (keys: a capture folded with the manifest, and the agent in the foreground)
-> for keys answering a blocked screen, the episode's answer claim `@agent_answered`
-> effect -> release. A caller that pins the episode it saw (`expect_episode_ms`, the
binder: a desktop notification's button) is refused `episode-changed` before the lock
and again under it, against the same fresh read, and also when the screen read under the
lock shows another prompt than the one recorded for that episode (tma.core.prompt: the
next prompt, drawn before any reader stamped it). Keys never reach a screen that no
longer asks for them, and a prompt's answer is typed at most once, however many acts
race for it.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace

from tma.core import codec, options, states
from tma.core.actions import answers as A, gate as G, menu as M
from tma.core.actions.schema import ANSWER_OPS, Action
from tma.core.fold import Facts, evidence_from, verdict
from tma.core.prompt import changed as prompt_changed, of_screen as prompt_of
from tma.core.record import Record
from tma.core.rules import Screen, evaluate, raw_lines, strip_ansi
from tma.runtime.act import exec as X
from tma.runtime.cycle import CONFIRM_MS, settle
from tma.runtime.notify import gate as notify_gate
from tma.runtime.procs import alive
from tma.tmux import action_lock, keys as keys_mod, read, write
from tma.tmux.adapter import NoServer, PaneGone, TmuxError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

LOCK_SLACK_MS = 5000
ANSWER_SETTLE_MS = 1000  # agents redraw within 100-300 ms of the key (lab)
API_NOT_INSTALLED = "the OpenCode API lane is not installed"


class Request(Record):
    """What the caller asked for, beyond the action."""

    text: str | None = None
    args: tuple[str, ...] = ()
    force: bool = False
    yes: bool = False
    dry_run: bool = False
    confirm_prompt: Callable[..., bool] | None = None  # (action, pane) -> the person's yes
    stdout_fd: int = 1
    answers: tuple[str, ...] = ()  # `--answer [Q=]LABEL` texts (tma.core.actions.answers)
    expect_episode_ms: int = 0  # the binder: the pane's episode_ms the caller saw (0: any)


class Result(Record):
    action: str = ""
    pane: str = ""
    outcome: str = ""
    reason: str | None = None
    exit_code: int = 0
    message: str = ""
    agent: str = ""

    def as_json(self) -> dict:
        return {"schema": 1, "action": self.action, "pane": self.pane, "outcome": self.outcome,
                "exit_code": self.exit_code, "reason": self.reason, "message": self.message}


def result(action: str, pane: str, outcome: str, message: str, reason: str | None = None,
           child_code: int | None = None, agent: str = "") -> Result:
    return Result(action, pane, outcome, reason, G.exit_code(outcome, reason, child_code),
                  message, agent)


def refused(action: str, pane: str, refusal: G.Refusal, agent: str = "") -> Result:
    return result(action, pane, G.REFUSED, refusal.message, refusal.reason, agent=agent)


def gone(action: str, pane: str) -> Result:
    return result(action, pane, G.VANISHED,
                  f"no pane {pane} (it closed, or never existed): nothing to {action}")


def _int_or_none(value: str) -> int | None:
    return int(value) if value.isdigit() else None


def target_of(pane, stamp: codec.Stamp | None, agent: str, manifest) -> G.Target:
    """The gate's view of a pane: its stamp, telemetry and context."""
    opts = pane.options
    if stamp is None:
        return G.Target(pane.pane_id, agent=agent)
    return G.Target(
        pane=pane.pane_id, agent=agent, state=stamp.state, detail=stamp.detail,
        attention=stamp.attention,
        context_pct=_int_or_none(opts.get("@agent_context_pct", "")),
        has_context_channel=manifest is not None and manifest.context is not None,
        session=opts.get("@agent_session", ""), cwd=pane.current_path,
        pid=stamp.pid, title=pane.title)


class Broker:
    """One invocation's broker: a server, the config, the manifest cycle, the actions."""

    def __init__(self, server, cfg, cycle, clock) -> None:
        self.server = server
        self.cfg = cfg
        self.cycle = cycle  # tma.runtime.cycle.Cycle: identity, manifests
        self.clock = clock

    # -- the effect chosen for a pane
    def lane(self, action: Action, agent: str, pane) -> str:
        """hook | api | keys | exec for this action on this agent's pane."""
        if action.kind == "exec":
            return "exec"
        if action.hook_reply and _reply_holder_alive(pane.options):
            return "hook"
        return "api" if agent in action.api else "keys"

    # -- firing
    def fire(self, action: Action, pane, stamp, agent: str, req: Request) -> Result:
        manifest = self.cycle.manifests().get(agent) if agent else None
        refusal = binder_of(action, pane.pane_id, req, stamp) or \
            G.gate(action, target_of(pane, stamp, agent, manifest), force=req.force)
        if refusal is not None:
            return refused(action.name, pane.pane_id, refusal, agent)
        if action.confirm and not req.yes:
            ok = req.confirm_prompt(action, pane) if req.confirm_prompt is not None else False
            if not ok:
                return refused(action.name, pane.pane_id, G.Refusal(
                    G.REQUIRES_UNMET, f"`{action.name}` asks for confirmation: pass --yes "
                    "(no terminal to ask on)" if req.confirm_prompt is None else
                    f"`{action.name}` on {pane.pane_id} not confirmed: nothing done"), agent)
        return self._locked(action, pane, agent, req)

    def _locked(self, action: Action, pane, agent: str, req: Request) -> Result:
        now = self.clock()
        span = action.detach_timeout_ms if action.detach else action.timeout_ms
        mine = action_lock.Lock(now + span + LOCK_SLACK_MS, os.urandom(16).hex(),
                                os.getpid(), action.name).value
        held = pane.options.get(action_lock.OPTION, "")
        observed = ""
        if held:
            lock = action_lock.parse(held)
            if lock is not None and (lock.expiry_ms > now or _alive(lock.pid)):
                return self._busy(action, pane.pane_id, lock, agent)
            observed = held  # expired, and its holder is dead (or unreadable): reclaim it
        try:
            won = action_lock.acquire(self.server, pane.pane_id, mine, observed)
        except PaneGone:
            return gone(action.name, pane.pane_id)
        if won != mine:
            return self._busy(action, pane.pane_id, action_lock.parse(won), agent)
        try:
            return self._under_lock(action, pane.pane_id, agent, req, mine)
        finally:  # a no-op once a detached action's supervisor took the lock over
            action_lock.release(self.server, pane.pane_id, mine)

    def _busy(self, action: Action, pane_id: str, lock, agent: str) -> Result:
        who = f"`{lock.name}` (pid {lock.pid})" if lock is not None else "another action"
        return refused(action.name, pane_id, G.Refusal(
            G.LOCKED, f"{pane_id} is busy with {who} from another tma act: `{action.name}` "
                      "not fired"), agent)

    def _under_lock(self, action: Action, pane_id: str, agent: str, req: Request,
                    mine: str) -> Result:
        panes = read.session_panes(self.server, pane_id)
        pane = next((p for p in panes if p.pane_id == pane_id), None)
        if pane is None:
            return gone(action.name, pane_id)
        refusal = binder_of(action, pane_id, req, _decode(pane))
        if refusal is not None:
            return refused(action.name, pane_id, refusal, agent)
        lane = self.lane(action, agent, pane)
        if lane == "keys":
            return self._keys(action, pane, agent, req)
        stamp = _decode(pane)
        manifest = self.cycle.manifests().get(agent)
        refusal = G.gate(action, target_of(pane, stamp, agent, manifest), force=req.force)
        if refusal is not None:
            return refused(action.name, pane_id, refusal, agent)
        if lane == "hook":
            return self._hook_reply(action, pane, agent)
        if lane == "exec":
            return self._exec(action, pane, stamp, agent, req, mine)
        return self._api(action, pane, agent, req)

    # -- keys: only into a pane whose foreground is the agent and whose screen still asks
    def _keys(self, action: Action, pane, agent: str, req: Request) -> Result:
        reading = self._read_screen(pane, agent)
        if isinstance(reading, G.Refusal):
            return refused(action.name, pane.pane_id, reading, agent)
        state, detail, prompt, lines = reading
        stamp = _decode(pane)
        if (req.expect_episode_ms and state == states.BLOCKED and stamp is not None
                and G.prompt_refusal(action, pane.pane_id, stamp.prompt, prompt)):
            # A repaint caught half-way (the agent redrawing after a resize) reads as
            # another prompt for a few milliseconds: the refusal stands on a second look.
            settle(CONFIRM_MS)
            reading = self._read_screen(pane, agent)
            if isinstance(reading, G.Refusal):
                return refused(action.name, pane.pane_id, reading, agent)
            state, detail, prompt, lines = reading
        manifest = self.cycle.manifests().get(agent)
        now_target = replace(target_of(pane, stamp, agent, manifest), state=state,
                             detail=detail)
        refusal = G.gate(action, now_target, force=req.force)
        if refusal is not None:
            return refused(action.name, pane.pane_id, G.Refusal(
                refusal.reason, refusal.message + " (the screen read just now)"), agent)
        if req.expect_episode_ms and state == states.BLOCKED and stamp is not None:
            # The stamp still names the bound episode, and no reader may have seen the
            # next prompt yet (one answered by hand, the next drawn within a poll): the
            # screen read just now says whether it is still the episode's prompt.
            refusal = G.prompt_refusal(action, pane.pane_id, stamp.prompt, prompt)
            if refusal is not None:
                return refused(action.name, pane.pane_id, refusal, agent)
        # a menu with no digits (the action's [select] arm) is answered by its cursor
        sel = action.select.get(agent)
        menu = M.read(lines, sel) if sel is not None and state == states.BLOCKED else None
        why = M.unusable(menu, sel) if menu is not None and sel is not None else None
        if why is not None:
            return refused(action.name, pane.pane_id, G.Refusal(
                G.GATED, f"{pane.pane_id} asks with a menu `{action.name}` cannot answer: "
                         f"{why}; nothing typed"), agent)

        walked = ""
        episode, nonce = episode_of(pane, stamp, detail), os.urandom(8).hex()
        try:
            if state == states.BLOCKED and not action_lock.claim(
                    self.server, pane.pane_id, episode, nonce):
                return refused(action.name, pane.pane_id, G.Refusal(
                    G.ANSWERED, ANSWERED_WORDS.format(pane=pane.pane_id, name=action.name)
                    + ", nothing typed"), agent)
            if menu is not None and sel is not None:
                failed, walked = self._walk(action, pane, agent, sel, menu, prompt)
                if failed is not None:  # nothing picked: the prompt is still unanswered
                    action_lock.unclaim(self.server, pane.pane_id, episode, nonce)
                    return failed
            else:
                keys_mod.send(self.server, pane.pane_id, action.keys[agent], req.text)
        except PaneGone:
            return gone(action.name, pane.pane_id)
        if state == states.BLOCKED:
            self._follow(pane, agent, prompt)
        return result(action.name, pane.pane_id, G.SENT,
                      f"sent `{action.name}` to {pane.pane_id}{walked}", agent=agent)

    def _walk(self, action: Action, pane, agent: str, sel, menu, prompt: str):
        """Answer an unnumbered menu (the action's `[select]` arm, tma.core.actions.menu):
        press `move` until the screen shows the cursor on the option, at most once per
        row, reading the screen back after every press, then `confirm`. -> (None, words)
        once confirmed; (a Result, "") when the cursor never reached the option or the
        prompt went away, and then `confirm` was never pressed."""
        moves = 0
        unsure = False  # a press showed no effect in time: it may still land
        while True:
            if M.next_key(menu, sel) == sel.confirm:
                if not unsure:
                    break
                # a press that showed nothing within the settle time may be drawn late,
                # after `confirm` went (a wrapping menu then answers the other option):
                # the cursor must still be on the option a settle time later
                later = self._moved(pane, agent, sel, menu, prompt)
                if isinstance(later, str):
                    return result(action.name, pane.pane_id, G.ERROR, (
                        f"pressed {sel.move} {moves} times on {pane.pane_id}, then {later}: "
                        f"{sel.confirm} not pressed, nothing picked"), agent=agent), ""
                menu, moved = later
                unsure = False
                if not moved:
                    break
                continue  # a late press moved it: walk on from where it is now
            if moves >= len(menu.options):
                return result(action.name, pane.pane_id, G.ERROR, (
                    f"pressed {sel.move} {moves} times on {pane.pane_id} and its cursor "
                    f"never showed on {sel.option!r}: {sel.confirm} not pressed, nothing "
                    "picked (answer it at the pane)"), agent=agent), ""
            keys_mod.send(self.server, pane.pane_id, (sel.move,))
            moves += 1
            seen = self._moved(pane, agent, sel, menu, prompt)
            if isinstance(seen, str):
                return result(action.name, pane.pane_id, G.ERROR, (
                    f"pressed {sel.move} {moves} times on {pane.pane_id}, then {seen}: "
                    f"{sel.confirm} not pressed, nothing picked"), agent=agent), ""
            menu, moved = seen
            unsure = unsure or not moved
        keys_mod.send(self.server, pane.pane_id, (sel.confirm,))
        done = f" ({sel.move} ×{moves}, then {sel.confirm})" if moves else f" ({sel.confirm})"
        return None, f": the cursor on {sel.option!r}{done}"

    def _moved(self, pane, agent: str, sel, before, prompt: str):
        """(the menu, True) once the screen shows the cursor elsewhere than `before` (up to
        ANSWER_SETTLE_MS; after that, (the menu as it stands, False)), or why the walk
        stops: the agent left the foreground, the prompt is no longer the one being
        answered, the menu is gone."""
        deadline = time.monotonic() + ANSWER_SETTLE_MS / 1000
        latest = None
        while True:
            time.sleep(0.05)
            reading = self._read_screen(pane, agent)
            if isinstance(reading, G.Refusal):
                return "the agent left the pane's foreground"
            state, _detail, now_prompt, lines = reading
            if state == states.BLOCKED and prompt_changed(prompt, now_prompt):
                return "the pane asks another prompt"
            if state in (states.WORKING, states.IDLE):
                return f"the pane reads {state}"
            menu = M.read(lines, sel) if state == states.BLOCKED else None
            if menu is not None and menu.cursor >= 0:
                latest = menu
                if menu.cursor != before.cursor:
                    return menu, True
            if time.monotonic() >= deadline:
                return (latest, False) if latest is not None else "its menu could not be read"

    def _follow(self, pane, agent: str, answered: str) -> None:
        """After answering a prompt (`answered`: its identity, tma.core.prompt): watch the
        screen (up to ANSWER_SETTLE_MS) until it reads working or idle twice in a row, or
        another prompt twice in a row (the next tool call's, drawn with no working screen
        between), then stamp what it shows. Every surface sees the answer at once rather
        than after the freshness window, and the pane's next prompt starts a new episode
        (`since`) even when the agent draws it again within a second: with no stamp
        between the two, a second prompt would share the first's episode and its answer
        would be refused as already given. A half-drawn frame (unknown) or a screen that
        still asks the answered prompt stamps nothing here."""
        deadline = time.monotonic() + ANSWER_SETTLE_MS / 1000
        settled = 0
        try:
            while time.monotonic() < deadline and settled < 2:
                time.sleep(0.05)
                reading = self.screen_reading(pane, agent)
                if isinstance(reading, G.Refusal):
                    return  # the agent left the foreground: the next reader sees it
                moved_on = reading[0] in (states.WORKING, states.IDLE) or (
                    reading[0] == states.BLOCKED and prompt_changed(answered, reading[2]))
                settled = settled + 1 if moved_on else 0
            if settled >= 2:
                res = self.cycle.run(focus=(pane.pane_id,))
                nudge_watchers(res.snapshot.panes)
        except (PaneGone, TmuxError):
            pass  # the answer went; the next reader stamps what follows

    def screen_reading(self, pane, agent: str):
        """(state, detail, prompt) the pane's screen shows right now, folded with the
        agent's manifest and no prior claim (prompt: the identity of the prompt a blocked
        screen shows, tma.core.prompt; "" otherwise); or a Refusal when the agent is not
        in the foreground."""
        reading = self._read_screen(pane, agent)
        return reading if isinstance(reading, G.Refusal) else reading[:3]

    def _read_screen(self, pane, agent: str):
        """screen_reading's (state, detail, prompt), and the screen's visible rows."""
        ident = self.cycle.identify(pane, None)
        if ident.agent != agent:
            what = pane.current_command or "nothing"
            return G.Refusal(G.GATED, f"{agent} no longer runs in {pane.pane_id} "
                                      f"(`{what}` does): nothing typed")
        if not ident.foreground_is_agent:
            return G.Refusal(G.GATED, f"`{pane.current_command}` is in {pane.pane_id}'s "
                                      f"foreground, not {agent}: nothing typed")
        manifest = self.cycle.manifests().get(agent)
        cap = read.capture_many(self.server, [
            (pane.pane_id, manifest.scrollback_needed(pane.height))]).get(pane.pane_id)
        if cap is None:
            return G.Refusal(G.GATED, f"{pane.pane_id}'s screen could not be read: nothing typed")
        now = self.clock()
        screen = Screen(cap.body, pane.title, cap.height or pane.height or None)
        engine = evaluate(manifest, screen)
        facts = Facts(ident.pid, True, pane.scroll_position > 0, engine.history_view)
        blocker = engine.claim(states.BLOCKED)
        prompt = prompt_of(screen, blocker.detail, manifest.dialog) if blocker else ""
        plan = verdict(None, facts, evidence_from(engine, now), manifest.visible,
                       self.cfg.fold(), now, prompt)
        return plan.state or states.UNKNOWN, plan.detail or "", plan.prompt, _visible(screen)

    # -- the hook reply lane (Claude's PermissionRequest hook holding for a verdict)
    def _hook_reply(self, action: Action, pane, agent: str) -> Result:
        request = pane.options.get("@agent_permission_request", "")
        self.server.source([write.set_plain(pane.pane_id, "@tma_reply_verdict",
                                            f"{request} {action.hook_reply}")])
        return result(action.name, pane.pane_id, G.REPLIED,
                      f"replied `{action.name}` to {pane.pane_id} over the hook lane",
                      agent=agent)

    # -- an API op
    def _api(self, action: Action, pane, agent: str, req: Request) -> Result:
        op = action.api[agent]
        key = "@agent_question_request" if op.op.startswith("opencode.question_") \
            else "@agent_permission_request"
        request = pane.options.get(key, "")
        if not request:
            return refused(action.name, pane.pane_id, G.Refusal(
                G.REQUIRES_UNMET, f"{agent} on {pane.pane_id} carries no pending request id "
                f"({key}; its plugin stamps it): `{action.name}` has nothing to answer"),
                agent)
        endpoint = api_endpoint(pane, agent, self.cfg)
        if not endpoint:
            stamped = pane.options.get("@agent_api_endpoint", "")
            why = (f"the pane's @agent_api_endpoint {stamped!r} is not a loopback http URL"
                   if stamped else "its plugin stamps none in @agent_api_endpoint")
            return result(action.name, pane.pane_id, G.ERROR,
                          f"no usable API endpoint for {agent} on {pane.pane_id} ({why}): "
                          f"set [api.{agent}] api_base in config.toml", agent=agent)
        if op.op in ANSWER_OPS:
            outcome, reason, message = answer_question(endpoint, request, req.answers,
                                                       action.timeout_ms / 1000)
            if outcome == G.REFUSED:
                return refused(action.name, pane.pane_id, G.Refusal(
                    reason or G.REQUIRES_UNMET, message), agent)
        else:
            outcome, message = call_api(op, endpoint, request, action.timeout_ms / 1000)
        if outcome == G.REPLIED and not message:
            message = f"replied `{action.name}` to {pane.pane_id} over the API"
        return result(action.name, pane.pane_id, outcome, message, agent=agent)


    # -- a command
    def _exec(self, action: Action, pane, stamp, agent: str, req: Request,
              mine: str) -> Result:
        env = X.child_env(action, pane, stamp, agent, tuple(req.args))
        if action.detach:
            return self._detach(action, pane, agent, env, mine)
        outcome, code, error = X.run_sync(action.command, env, action.timeout_ms,
                                          req.stdout_fd)
        if outcome == G.TIMEOUT:
            return result(action.name, pane.pane_id, G.TIMEOUT,
                          f"`{action.name}` timed out after {action.timeout_ms} ms and was "
                          "killed", agent=agent)
        if outcome == G.ERROR:
            return result(action.name, pane.pane_id, G.ERROR, error, agent=agent)
        words = "succeeded" if code == 0 else f"exited {code}"
        return result(action.name, pane.pane_id, G.EXITED,
                      f"ran `{action.name}` for {pane.pane_id}: the command {words}",
                      child_code=code, agent=agent)

    def _detach(self, action: Action, pane, agent: str, env: dict, mine: str) -> Result:
        spec = {"action": action.name, "pane": pane.pane_id, "agent": agent,
                "locator": pane.locator, "command": action.command, "env": env,
                "timeout_ms": action.detach_timeout_ms, "tmux_bin": self.server.bin,
                "socket_name": self.server.socket_name,
                "socket_path": self.server.socket_path,
                "notify_command": notify_gate.command_for(self.cfg, "action")}
        try:
            proc = X.start_supervisor(spec)
        except OSError as exc:
            return result(action.name, pane.pane_id, G.ERROR,
                          f"cannot start `{action.name}`'s supervisor: {exc}", agent=agent)
        old = action_lock.parse(mine)
        assert old is not None  # mine is the lock value this very call built
        theirs = action_lock.Lock(old.expiry_ms, old.nonce, proc.pid, old.name).value
        held = action_lock.acquire(self.server, pane.pane_id, theirs, mine)
        spec["lock"] = held if held == theirs else mine
        X.hand_over(proc, spec)
        return result(action.name, pane.pane_id, G.SPAWNED,
                      f"started `{action.name}` for {pane.pane_id} (pid {proc.pid}); it holds "
                      "the pane's lock until it ends", agent=agent)


def api_endpoint(pane, agent: str, cfg) -> str:
    """The lane's endpoint: the pane's loopback @agent_api_endpoint, else [api.<agent>]
    api_base (the lane module decides what is usable)."""
    opencode_api = _lane_module()
    if opencode_api is None:
        return pane.options.get("@agent_api_endpoint", "") or \
            (cfg.api.get(agent) or {}).get("api_base", "")
    return opencode_api.resolve_endpoint(pane.options, cfg) or ""


def _lane_module():
    """tma.runtime.act.opencode_api, or None where it is not installed (imported late: only
    an API op needs it)."""
    try:
        from tma.runtime.act import opencode_api
    except ImportError:
        return None
    return opencode_api


def call_api(op, endpoint: str, request_id: str, timeout_s: float) -> tuple[str, str]:
    """Route one API op to its lane: (outcome, message)."""
    opencode_api = _lane_module()
    if opencode_api is None:
        return G.ERROR, API_NOT_INSTALLED
    if op.op == "opencode.permission_reply":
        res = opencode_api.reply_permission(endpoint, request_id, op.reply, timeout_s)
    elif op.op == "opencode.question_reject":
        res = opencode_api.reject_question(endpoint, request_id, timeout_s)
    else:  # pragma: no cover - the schema's closed vocabulary
        return G.ERROR, f"unknown API op {op.op!r}"
    return res.outcome, res.message


def answer_question(endpoint: str, request_id: str, texts: tuple[str, ...],
                    timeout_s: float) -> tuple[str, str | None, str]:
    """Answer question request `request_id` with the `--answer` texts: read the pending
    requests afresh (GET /question), so the labels are placed on and checked against the
    questions OpenCode holds for that very id right now, then POST the reply. (outcome,
    refusal reason, message): a request no longer pending is vanished, answers that do
    not fit it are refused requires-unmet, and nothing is sent for either."""
    api = _lane_module()
    if api is None:
        return G.ERROR, None, API_NOT_INSTALLED
    # one budget for both calls: the pane's lock outlives the action's timeout by a slack only
    deadline = time.monotonic() + timeout_s
    try:
        pending = api.questions(endpoint, timeout_s)
    except api.ApiError as exc:
        return G.ERROR, None, str(exc)
    request = api.find_question(pending, request_id)
    base = str(endpoint).rstrip("/")
    if request is None:
        return G.VANISHED, None, (f"OpenCode at {base} no longer holds question request "
                                  f"{request_id} (answered or withdrawn): nothing sent")
    try:
        chosen = A.place(A.parse(texts), [q.header for q in request.questions])
    except A.AnswerError as exc:
        return G.REFUSED, G.REQUIRES_UNMET, f"{exc}: nothing sent"
    why = api.check_answers(request, chosen)
    if why is not None:
        return G.REFUSED, G.REQUIRES_UNMET, f"{why}: nothing sent"
    res = api.reply_question(endpoint, request_id, chosen,
                             max(0.5, deadline - time.monotonic()))
    if res.outcome == api.REPLIED:
        said = "; ".join(f"{q.header or n}={', '.join(a)}" for n, (q, a) in
                         enumerate(zip(request.questions, chosen, strict=True), 1))
        return G.REPLIED, None, f"{res.message}: {said}"
    return res.outcome, None, res.message


def nudge_watchers(panes) -> None:
    """SIGUSR1 to every `tma watch` advertised in a pane's @tma_watch_pid, as the focus
    hooks' clear-attention does: a watch re-reads at once instead of on its next tick,
    so its row shows the answer act just stamped."""
    pids = {p.options.get(options.WATCH_PID, "") for p in panes}
    for pid in sorted(int(v) for v in pids if v.isdigit() and int(v) > 1):
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGUSR1)
            except OSError:
                pass


def episode_of(pane, stamp: codec.Stamp | None, detail: str) -> tuple[str, ...]:
    """The names of the blocked episode an answer is bound to, as letters and digits: when
    the pane's blocked state began (`since`), and the agent's own request id where a hook or
    plugin stamped one. Two prompts in a row that no reader saw apart, with no request id,
    share a `since`: the second is then refused `answered` rather than risk a doubled key
    (an act that answers watches for the screen to move on and stamps it: `_follow`)."""
    names = [f"s{stamp.since if stamp is not None else 0}"]
    key = "@agent_question_request" if detail == states.QUESTION else "@agent_permission_request"
    request = pane.options.get(key, "")
    if request:
        import hashlib

        names.append("r" + hashlib.sha256(request.encode()).hexdigest()[:24])
    return tuple(names)


def answered(pane, stamp: codec.Stamp | None) -> bool:
    """Whether a `tma act` already typed the answer of the blocked episode the pane shows."""
    if stamp is None or stamp.state != states.BLOCKED:
        return False
    taken = action_lock.claimed_by(pane.options.get(action_lock.ANSWERED, ""))
    return any(name in taken for name in episode_of(pane, stamp, stamp.detail))


ANSWERED_WORDS = "{pane}'s prompt was already answered by another tma act: `{name}` not fired"


def binder_of(action: Action, pane_id: str, req: Request,
            stamp: codec.Stamp | None) -> G.Refusal | None:
    if not req.expect_episode_ms:
        return None
    return G.binder_refusal(action, pane_id, req.expect_episode_ms,
                            stamp.episode_ms if stamp is not None else None,
                            stamp.state if stamp is not None else None)


def _visible(screen: Screen) -> list[str]:
    """The screen's visible rows, top to bottom, as the rules' `visible` region reads them."""
    lines = raw_lines(strip_ansi(screen.body))
    return lines[-screen.height:] if screen.height else lines


def _decode(pane) -> codec.Stamp | None:
    try:
        return codec.decode(pane.options)
    except codec.DecodeError:
        return None


def _alive(pid: int) -> bool:
    return pid > 0 and alive(pid)


def _reply_holder_alive(opts: dict) -> bool:
    raw = opts.get("@tma_reply_holder", "")
    return bool(opts.get("@agent_permission_request")) and raw.isdigit() and _alive(int(raw))


__all__ = ["Broker", "Request", "Result", "NoServer", "TmuxError"]
