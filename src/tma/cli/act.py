"""`tma act NAME`: fire an action (approve, deny, interrupt, compact, steer, ...) at a pane.

The broker (tma.runtime.act.fire) decides; this module parses, resolves the
targets, and reports: one sentence per result on stderr, `--json` on stdout. The
flags are declared in tma.cli.spec.

The broker's machinery (the cycle, actions_fire and actions_describe, the navigator:
~25 modules) is imported where an action fires, is described or is offered on a menu:
`tma act --list` without a pane reads the action set alone.
"""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.core.actions import answers
from tma.core.actions.gate import worst_exit
from tma.runtime.act import registry as actions


def _usage(args, sel) -> None:
    """The flag combinations that are usage errors (exit 2)."""
    if args.list or args.menu:
        bad = [f for f, on in (("--all", args.all), ("--dry-run", args.dry_run),
                               # a host's pane's menu pins the episode its entries answer
                               ("--expect-episode", args.expect_episode is not None
                                and not (args.menu and ":" in (args.pane or ""))),
                               ("--arg", args.arg), ("--force", args.force),
                               ("--yes", args.yes), ("--answer", args.answer),
                               ("NAME", args.action),
                               ("--message-line", args.message_line and args.list),
                               ("--agent", sel.agent)) if on]
        if bad:
            raise common.UsageError(f"--list/--menu take no {bad[0]}")
        if args.menu and args.json:
            raise common.UsageError("--menu and --json are mutually exclusive")
        _episode_usage(args)  # a host's pane's menu: checked like an act's
        return
    if not args.action:
        raise common.UsageError("which action? name one (tma act --list shows them)")
    if args.pane and (args.all or not sel.empty):
        raise common.UsageError("--pane names one target: it takes no --all or selectors")
    if args.all and sel.empty:
        raise common.UsageError("--all fans out over the selector matches: pass at least one "
                                "selector (--session --repo --branch --agent --state)")
    _episode_usage(args)
    if args.message_line and (args.all or args.dry_run):
        raise common.UsageError("--message-line says one action's result (an action "
                                "menu's entry): it takes no --all or --dry-run")
    if args.expect_episode is not None and args.all:
        raise common.UsageError("--expect-episode pins one pane's episode: it takes no --all")
    if args.text is not None and any(ord(c) < 32 or ord(c) == 127 for c in args.text):
        raise common.UsageError("--text is typed as one line: it may hold no line break or "
                                "control character")


def _episode_usage(args) -> None:
    if args.expect_episode is not None and not (args.expect_episode.isdigit()
                                                and int(args.expect_episode) > 0):
        raise common.UsageError("--expect-episode takes the episode's start in epoch ms "
                                "(a positive integer, the pane's episode_ms in ls --json)")


def main(session: common.Session, argv: list[str]) -> int:
    sel, args = spec.parse("act", argv, session)
    args.action = args.name
    args.arg = args.arg or []
    args.answer = args.answer or []
    _usage(args, sel)
    cfg = session.config

    try:
        aset = actions.load()
    except actions.BundledActionError as exc:
        common.err(str(exc))
        return common.FAIL
    actions.report_skipped(aset, sys.stderr.write)
    if args.list and not args.pane:
        return _list(args, aset, None)
    action = None
    if args.action:
        action = aset.get(args.action)
        if action is None:
            raise common.UsageError(f"unknown action {args.action!r} (expected one of: "
                                    f"{', '.join(aset.names())})")
        _action_usage(args, action)
    if args.pane and ":" in args.pane:
        if args.menu:
            return _remote_menu(session, args, aset)
        return _remote(session, args)
    job = _Act(session, cfg, args, sel, aset)
    return job.run(action)


def _action_usage(args, action) -> None:
    if action.text and not args.text:
        raise common.UsageError(f"`{action.name}` types a message: pass --text MESSAGE")
    if not action.text and args.text is not None:
        raise common.UsageError(f"`{action.name}` takes no --text (only a text action does)")
    if action.takes_answers and not args.answer:
        raise common.UsageError(f"`{action.name}` answers a question with chosen labels: pass "
                                "--answer [Q=]LABEL (Q: the question's number or header; one "
                                "--answer per label)")
    if args.answer and not action.takes_answers:
        raise common.UsageError(f"`{action.name}` takes no --answer (only question_reply "
                                "does)")
    if args.answer:
        try:
            answers.parse(args.answer)
        except answers.AnswerError as exc:
            raise common.UsageError(str(exc)) from None
    if args.arg and action.kind != "exec":
        raise common.UsageError(f"`{action.name}` is a keys action: --arg is for command "
                                "actions only")


class _Act:
    def __init__(self, session, cfg, args, sel, aset) -> None:
        self.session, self.g = session, session.g
        self.cfg, self.args, self.sel, self.aset = cfg, args, sel, aset

    def run(self, action) -> int:
        from tma.runtime.act.fire import Broker
        from tma.runtime.cycle import Cycle

        # the broker re-reads the screen of the pane it acts on (its gate check)
        server, res = self.session.server, self.session.cycle(current=False)
        self.server, self.res = server, res
        self.broker = Broker(server, self.cfg, Cycle(server, self.cfg, self.g.manifest_dir),
                             common.now_ms)
        if self.args.all:
            return self._fan_out(action)
        target = self._single()
        if isinstance(target, int):
            return target
        if self.args.list:
            return _list(self.args, self.aset, (self, target))
        if self.args.menu:
            return self._menu(target)
        if self.args.dry_run:
            return self._dry_run(action, target)
        return self._report(self._fire(action, target))

    # -- targets
    def _rows(self):
        git = None
        if self.sel.needs_git:
            from tma.runtime.git import GitInfo

            git = GitInfo()
        return self.session.select(self.res.rows, self.sel, git)

    def _single(self):
        """(pane, stamp, agent) for the one target; an int is an exit code."""
        if not self.sel.empty:
            rows = self._rows()
            if len(rows) != 1:
                return self._not_one(rows)
            r = rows[0]
            return r.pane, r.stamp, r.agent
        pane_id = self.args.pane or common.env_pane()
        if not pane_id:
            raise common.UsageError("no pane to act on: pass --pane %N, or run tma act inside "
                                    "a tmux pane")
        row = next((r for r in self.res.rows if r.pane.pane_id == pane_id), None)
        if row is not None:
            return row.pane, row.stamp, row.agent
        pane = next((p for p in self.res.snapshot.panes if p.pane_id == pane_id), None)
        return (pane, None, "") if pane is not None else (None, None, pane_id)

    def _not_one(self, rows) -> int:
        if not rows:
            common.err("tma: no agent pane matches the selectors: nothing to act on (exit 3)")
            return 3
        names = ", ".join(f"{r.pane.pane_id} ({r.agent})" for r in rows[:8])
        common.err(f"tma: the selectors match {len(rows)} panes ({names}): narrow them, or "
                   "pass --all to fire at every one (exit 1)")
        return common.FAIL

    # -- firing
    def _request(self, yes: bool | None = None, prompt: bool = True):
        from tma.runtime.act.fire import Request

        ask = _ask if prompt and common.on_terminal(0) and common.on_terminal(2) else None
        return Request(self.args.text, tuple(self.args.arg), self.args.force,
                       self.args.yes if yes is None else yes, self.args.dry_run, ask,
                       2 if self.args.json else 1,  # --json: a command's stdout to stderr
                       tuple(self.args.answer),
                       int(self.args.expect_episode or 0))

    def _fire(self, action, target, req=None):
        from tma.runtime.act import fire as F
        from tma.tmux.adapter import NoServer, PaneGone, TmuxError

        pane, stamp, agent = target
        if pane is None:
            return F.gone(action.name, agent)
        try:
            return self.broker.fire(action, pane, stamp, agent, req or self._request())
        except NoServer:
            return F.result(action.name, pane.pane_id, "error", "no tmux server running")
        except PaneGone:
            return F.gone(action.name, pane.pane_id)
        except TmuxError as exc:
            return F.result(action.name, pane.pane_id, "error", f"tmux refused: {exc}")

    def _fan_out(self, action) -> int:
        rows = self._rows()
        if not rows:
            raise common.UsageError("no agent pane matches the selectors: nothing to fire at")
        if self.args.dry_run:
            return self._dry_run_many(action, rows)
        yes = self.args.yes
        if action.confirm and not yes and common.on_terminal(0) and common.on_terminal(2):
            yes = _ask_batch(action, len(rows))  # one prompt for the whole batch
        req = self._request(yes=yes, prompt=False)
        results = [self._fire(action, (r.pane, r.stamp, r.agent), req) for r in rows]
        for r in results:
            _note(r)
        if self.args.json:
            from tma.ui.text import dumps

            sys.stdout.write(dumps({"schema": 1, "results": [
                {k: v for k, v in r.as_json().items() if k != "schema"} for r in results]})
                + "\n")
        return worst_exit([(r.outcome, r.reason, r.exit_code) for r in results])

    def _report(self, res) -> int:
        if self.args.json:
            from tma.ui.text import dumps

            sys.stdout.write(dumps(res.as_json()) + "\n")
        return _noted(self.session, self.args, res)

    # -- dry run
    def _dry_run(self, action, target) -> int:
        from tma.runtime.act import describe as D

        pane, stamp, agent = target
        if pane is None:
            return self._report(_gone(action.name, agent))
        doc = D.describe(self.broker, action, pane, stamp, agent, self._request(),
                         common.now_ms())
        if self.args.json:
            from tma.ui.text import dumps

            sys.stdout.write(dumps(doc) + "\n")
        else:
            sys.stdout.write(D.render(doc))
        return 0

    def _dry_run_many(self, action, rows) -> int:
        from tma.runtime.act import describe as D

        now = common.now_ms()
        docs = [D.describe(self.broker, action, r.pane, r.stamp, r.agent, self._request(), now)
                for r in rows]
        if self.args.json:
            from tma.ui.text import dumps

            sys.stdout.write(dumps({"schema": 1, "targets": len(docs), "results": docs}) + "\n")
            return 0
        sys.stdout.write(f"targets: {len(docs)}\n")
        for d in docs:
            verdict = "would fire" if d["fireable"] else f"refused: {d['reason']}"
            sys.stdout.write(f"  {d['pane']}  {d['agent'] or '-'}  {verdict}\n")
        return 0

    # -- the menu
    def _menu(self, target) -> int:
        from tma.runtime.act import describe as D
        from tma.runtime.navigate import Navigator, NoClient

        pane, stamp, agent = target
        if pane is None:
            return self._report(_gone("menu", agent))

        fireable = D.menu_actions(self.broker, self.aset, pane, stamp, agent)
        if not fireable:
            return _said(self.session, self.args,
                         f"tma: no actions are fireable on {pane.pane_id} right now", 0)
        nav = Navigator(self.session, self.res)
        try:
            client = nav.client()
        except NoClient as exc:
            return _said(self.session, self.args,
                         f"tma: {exc}; the menu needs one to show on", common.FAIL)
        nav.action_menu(client, pane.pane_id, f" {agent or 'tma'} {pane.pane_id} ", fireable)
        return 0


def _remote(session, args) -> int:
    """--pane HOST:%N: the action goes to the host as a dispatch (tma.runtime.fleet.act);
    the host's own tma act decides, and its receipt maps onto this command's exits."""
    bad = [f for f, on in (("--list", args.list), ("--menu", args.menu),
                           ("--dry-run", args.dry_run), ("--force", args.force),
                           ("--arg", args.arg)) if on]
    if bad:
        raise common.UsageError(f"{bad[0]} does not go over the link: it takes a local pane")
    # the link's modules (link, serve, proto) cost a local act ~100 ms: only over the link
    from tma.runtime.fleet import act as fleet_act, hosts as store

    try:
        fired = fleet_act.fire(session, args.pane, args.action, text=args.text,
                               answers=_numbered(args.answer),
                               expect_episode=int(args.expect_episode or 0))
    except store.HostError as exc:
        return _said(session, args, f"tma: {exc}", common.FAIL)
    return _report_remote(session, args, fired)


def _remote_menu(session, args, aset) -> int:
    """--menu --pane HOST:%N (the picker's and watch's Tab on a host's row): one entry per
    action the host would fire there now (tma.runtime.fleet.act.menu: the link carries
    it, both ends grant it, the row's state admits it), each `tma act NAME --pane HOST:%N
    --expect-episode E` (the binder: the answer is for the prompt the person saw, or
    nothing fires). The row and the grants come from the daemon's link (no SSH), else
    one probe of the host; the host still decides when an entry fires."""
    from tma.runtime.fleet import act as fleet_act, hosts as store
    from tma.runtime.navigate import Navigator, NoClient

    episode = args.expect_episode
    try:
        host = store.get(session, args.pane.rpartition(":")[0])
    except store.HostError as exc:
        return _said(session, args, f"tma: {exc}", common.FAIL)
    fireable, why = fleet_act.menu(session, host, args.pane, aset.actions.values())
    if not fireable:
        return _said(session, args, f"tma: {why}", 0)
    nav = Navigator(session, session.cycle(current=False))
    try:
        client = nav.client()
    except NoClient as exc:
        return _said(session, args, f"tma: {exc}; the menu needs one to show on",
                     common.FAIL)
    extra = ("--expect-episode", episode) if episode else ()
    nav.action_menu(client, args.pane, f" {args.pane} ", fireable, extra)
    return 0


def _numbered(values: list[str]) -> tuple[tuple[str, ...], ...] | None:
    """--answer over the link: questions by number (the host knows their headers)."""
    if not values:
        return None
    by: dict[int, list[str]] = {}
    for key, label in answers.parse(values):
        if key is not None and not key.strip().isdigit():
            raise common.UsageError(f"--answer {key}={label}: over the link name the "
                                    "question by its number (1, 2, ...)")
        n = int(key) if key is not None else 1
        if n < 1:
            raise common.UsageError(f"--answer {key}={label}: questions count from 1")
        by.setdefault(n, []).append(label)
    if sorted(by) != list(range(1, len(by) + 1)):
        raise common.UsageError("--answer: answer every question from 1 up, none skipped")
    return tuple(tuple(by[n]) for n in sorted(by))


def _report_remote(session, args, fired) -> int:
    if args.json:
        from tma.ui import text

        sys.stdout.write(text.dumps(fired.as_json()) + "\n")
    return _noted(session, args, fired)


def _gone(name: str, pane_id: str):
    from tma.runtime.act.fire import gone

    return gone(name, pane_id)


def _ask(action, pane) -> bool:
    sys.stderr.write(f"tma: fire `{action.name}` ({action.label}) on {pane.pane_id}? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _ask_batch(action, n: int) -> bool:
    sys.stderr.write(f"tma: fire `{action.name}` ({action.label}) on {n} panes? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _note(res) -> None:
    """The stderr sentence; a delivered action says what it did, a refusal why not."""
    code = res.exit_code
    common.err(f"tma: {res.message}" + (f" (exit {code})" if code else ""))


def _noted(session, args, res) -> int:
    """A result's sentence (_note) and its exit status, or with --message-line the
    sentence on the client too and 0 (_said)."""
    if not args.message_line:
        _note(res)
        return res.exit_code
    return _said(session, args, f"tma: {res.message}", res.exit_code)


#: How long --message-line's sentence stays: long enough to read a refusal's reason.
MESSAGE_MS = 6000


def _said(session, args, text: str, code: int) -> int:
    """A sentence for the person on stderr, and with --message-line on the tmux client's
    message line as well, then exit 0: an action menu's entry runs under tmux's
    run-shell, which drops stderr and shows any other exit as a raw, truncated
    `'…tma act …' returned 4` in place of the reason. `code` when it could not be said."""
    common.err(text)
    if not args.message_line:
        return code
    from tma.tmux import notify as tnotify

    try:
        tnotify.say(session.server, session.g.client or None, text, MESSAGE_MS)
    except Exception:  # no server to say it on: the exit status says it is not done
        return code
    return 0


def _lane(action, agent: str) -> str:
    """How the action answers: its kind, or `api` where an agent is answered over its
    own API (OpenCode) and never by keys; with a pane, for that pane's agent."""
    if agent:
        return "api" if agent in action.api else action.kind
    if action.api:
        return "api" if not action.keys else f"{action.kind}/api"
    return action.kind


def _list(args, aset, ctx) -> int:
    if ctx is None:  # no pane: what each action is, nothing to gate
        entries = aset.listing()
    else:
        from tma.runtime.act import describe as D

        entries = D.listing(aset, ctx)
    if args.json:
        from tma.ui.text import dumps

        for e in entries:
            e.pop("message", None)
        sys.stdout.write(dumps({"schema": 1, "actions": entries}) + "\n")
        return 0
    agent = ctx[1][2] if ctx is not None else ""
    rows = [[e["name"], _lane(aset.actions[e["name"]], agent),
             ",".join(f"{n} (api)" if n in aset.actions[e["name"]].api else n
                      for n in e["agents"]) or "(all)"] for e in entries]
    widths = [max(len(r[i]) for r in rows) for i in range(3)] if rows else [0, 0, 0]
    for e, r in zip(entries, rows, strict=True):
        cols = [v.ljust(w) for v, w in zip(r, widths, strict=True)]
        if "fireable" in e:  # with --pane: whether it would fire there, and if not why
            cols.append("fireable" if e["fireable"] else f"refused: {e['message']}")
        sys.stdout.write("  ".join(cols).rstrip() + "\n")
    return 0
