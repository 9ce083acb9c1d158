"""Races and faults against a real tmux: concurrent writers, the answered-prompt race,
and panes or the whole server dying in the middle of a cycle.

The writers are real `tma debug stamp` processes (one guarded chain per repetition,
rendered by tma.tmux.write); the reader takes the whole tuple in one display-message.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from tma.core import plan as P
from tma.tmux import write

FMT = ("#{@agent_state}|#{@agent_detail}|#{@agent_source}|#{@agent_name}|#{@agent_since}|"
       "#{@agent_stamped_at}|#{@agent_evidence_at}")
FIELDS = ("state", "detail", "source", "name", "since", "stamped", "evidence")
CLOCK_STEP_MS = 2000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def stamp_argv(srv, pane: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), "debug", "stamp", pane, *args]


def popen(srv, argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen(argv, env=srv.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(proc: subprocess.Popen, timeout: float = 120) -> None:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    assert err == "" and out == ""


class Reader(threading.Thread):
    """Polls the whole tuple in one display-message until stopped."""

    def __init__(self, srv, pane: str, pause: float = 0.0) -> None:
        super().__init__(daemon=True)
        self.argv = [srv.tmux_bin, "-u", "-L", srv.name, "display-message", "-p", "-t", pane,
                     FMT]
        self.env = srv.env
        self.pause = pause
        self.stop = threading.Event()
        self.reads: list[dict[str, str]] = []
        self.errors = 0

    def run(self) -> None:
        while not self.stop.is_set():
            res = subprocess.run(self.argv, capture_output=True, text=True, env=self.env)
            if res.returncode != 0:
                self.errors += 1
            else:
                parts = res.stdout.rstrip("\n").split("|")
                if len(parts) == len(FIELDS):
                    self.reads.append(dict(zip(FIELDS, parts, strict=True)))
                else:
                    self.errors += 1
            if self.pause:
                time.sleep(self.pause)

    def halt(self) -> list[dict[str, str]]:
        self.stop.set()
        self.join(timeout=30)
        return self.reads


def settled(r: dict[str, str]) -> bool:
    """The reader's rule (behaviour 4): stamped_at last; since far ahead = clock step."""
    if not r["state"] or not r["stamped"]:
        return False
    stamped = int(r["stamped"])
    since = int(r["since"] or 0)
    evidence = int(r["evidence"] or 0)
    if stamped < evidence:
        return False
    return stamped >= since or since > stamped + CLOCK_STEP_MS


# ---------------------------------------------------------------- torn tuples


WRITERS = 8
CHAINS = 500


def test_eight_writers_never_tear_a_tuple(srv):
    pane = srv.shell_pane()
    base = now_ms()
    procs_argv = [
        stamp_argv(srv, pane, "--state", "blocked", "--detail", f"d{k}a", "--alternate",
                   f"working/d{k}b", "--count", str(CHAINS), "--name", f"w{k}", "--source",
                   "capture", "--guard", "unconditional", "--evidence-at", str(base),
                   "--stamped-at", str(base))
        for k in range(WRITERS)]
    reader = Reader(srv, pane)
    reader.start()
    t0 = time.monotonic()
    procs = [popen(srv, argv) for argv in procs_argv]
    for p in procs:
        finish(p)
    elapsed = time.monotonic() - t0
    reads = reader.halt()

    # Settled reads must never mix (the contract). Reads in flight (stamped_at behind
    # another writer's held since) are checked too: tmux runs a `;` chain without
    # interleaving another client's command, so no read at all may be torn.
    mixed, in_flight, n_settled, seen = [], [], 0, set()
    for r in reads:
        if not r["state"]:
            continue  # before the first chain landed
        is_settled = settled(r)
        n_settled += is_settled
        name, detail, state = r["name"], r["detail"], r["state"]
        k = name[1:]
        i = int(r["stamped"]) - base
        ok = (name.startswith("w") and k.isdigit() and int(k) < WRITERS
              and 0 <= i < CHAINS and r["source"] == "capture"
              # evidence and stamped_at come from the same repetition of one chain
              and r["evidence"] == r["stamped"]
              and (state, detail) == (("blocked", f"d{k}a") if i % 2 == 0
                                      else ("working", f"d{k}b")))
        if not ok:
            (mixed if is_settled else in_flight).append(r)
        else:
            seen.add(name)
    assert reader.errors == 0
    assert len(reads) > 200, f"only {len(reads)} reads in {elapsed:.1f}s"
    assert n_settled > 100, f"only {n_settled} settled reads of {len(reads)}"
    assert mixed == [], f"{len(mixed)} mixed tuples of {n_settled} settled, e.g. {mixed[:3]}"
    assert in_flight == [], f"{len(in_flight)} torn reads in flight, e.g. {in_flight[:3]}"
    assert len(seen) >= 2  # the writers really did interleave
    # every chain ran: the last tuple is some writer's final (odd) repetition
    final = dict(zip(FIELDS, srv.display(pane, FMT).split("|"), strict=True))
    assert final["stamped"] == final["evidence"] == str(base + CHAINS - 1)
    assert final["state"] == "working" and final["detail"] == f"d{final['name'][1:]}b"


@pytest.mark.tmux_contract
def test_capture_and_hook_writers_never_mix(srv):
    """Upstream's cross-chain tear: 400 capture chains against 400 hook chains."""
    pane = srv.shell_pane()
    rounds, per = 8, 50
    # hook events from the recent past, one process per round, each round's times
    # well clear of the last one's (hook:<ms> moves with each repetition's evidence)
    hook_bases = [now_ms() - 60_000 + j * 1000 for j in range(rounds)]
    errors: list[str] = []

    def run(argv: list[str]) -> None:
        res = subprocess.run(argv, capture_output=True, text=True, env=srv.env)
        if res.returncode != 0 or res.stderr:
            errors.append(res.stderr or f"exit {res.returncode}")

    def hook_writer() -> None:
        for base in hook_bases:
            run(stamp_argv(srv, pane, "--source", "hook", "--state", "blocked", "--detail",
                           "permission", "--alternate", "working/thinking", "--guard", "hook",
                           "--count", str(per), "--name", "hookw", "--evidence-at", str(base),
                           "--stamped-at", str(base)))

    def capture_writer() -> None:
        # capture idle under protect-hook (held while the hook claim stands), re-seeding
        # with an unconditional write each round; real-clock times
        for _ in range(rounds):
            for guard, count in (("unconditional", 1), ("protect-hook", per - 1)):
                run(stamp_argv(srv, pane, "--source", "capture", "--state", "idle",
                               "--guard", guard, "--count", str(count), "--name", "capw"))

    reader = Reader(srv, pane)
    reader.start()
    writers = [threading.Thread(target=f, daemon=True) for f in (hook_writer, capture_writer)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(timeout=120)
    reads = reader.halt()
    assert not any(w.is_alive() for w in writers) and errors == []

    allowed = {("idle", "", "capture", "capw"), ("blocked", "permission", "hook", "hookw"),
               ("working", "thinking", "hook", "hookw")}
    # a held chain changes nothing, @agent_name included, so the writer's name belongs
    # to the tuple it wrote; as above, in-flight reads may not tear either.
    mixed, counts, n_settled = [], {"hook": 0, "capture": 0}, 0
    for r in reads:
        if not r["state"]:
            continue
        n_settled += settled(r)
        key = (r["state"], r["detail"], r["source"], r["name"])
        if key not in allowed:
            mixed.append(r)
            continue
        counts[r["source"]] += 1
        if r["source"] == "hook":
            # a hook tuple's state and evidence come from one repetition of one round
            ev = int(r["evidence"])
            if not any(0 <= ev - b < per and (r["state"] == "blocked") == ((ev - b) % 2 == 0)
                       for b in hook_bases):
                mixed.append(r)
    assert reader.errors == 0
    assert len(reads) > 200 and n_settled > 100
    assert mixed == [], f"{len(mixed)} mixed tuples, e.g. {mixed[:3]}"
    assert counts["hook"] > 0 and counts["capture"] > 0, counts


# ---------------------------------------------------------------- answered prompt


def _seed_hook_working(srv, pane: str, at: int) -> None:
    res = srv.tma("debug", "stamp", pane, "--source", "hook", "--state", "working",
                  "--guard", "unconditional", "--episode-reset", "--evidence-at", str(at),
                  "--stamped-at", str(at))
    assert res.returncode == 0, res.stderr


def _capture_blocker(srv, pane: str, t0: int) -> list[str]:
    return stamp_argv(srv, pane, "--source", "capture", "--state", "blocked", "--detail",
                      "permission", "--attention", "--guard", f"carveout:{t0}",
                      "--evidence-at", str(t0), "--stamped-at", str(t0))


def _hook_working(srv, pane: str, t1: int) -> list[str]:
    return stamp_argv(srv, pane, "--source", "hook", "--state", "working", "--guard",
                      f"hook:{t1}", "--evidence-at", str(t1), "--stamped-at", str(t1))


def _run(srv, *argvs: list[str]) -> None:
    """Run the writers one after the other (a forced finish order)."""
    for argv in argvs:
        res = subprocess.run(argv, capture_output=True, text=True, env=srv.env)
        assert res.returncode == 0 and res.stderr == "", res.stderr


def _race(srv, *argvs: list[str]) -> None:
    """Start the writers together and let the scheduler pick the finish order."""
    for p in [popen(srv, a) for a in argvs]:
        finish(p)


def _tuple(srv, pane: str) -> tuple[str, str, str, str]:
    o = srv.options(pane)
    return (o.get("@agent_state", ""), o.get("@agent_detail", "").strip("'"),
            o.get("@agent_source", ""), o.get("@agent_evidence_at", ""))


@pytest.mark.tmux_contract
def test_answered_prompt_race_ends_hook_working_in_both_orders(srv):
    pane = srv.shell_pane()
    t0 = 1_800_000_000_000  # the blocker chrome was on screen at T0 ...
    t1 = t0 + 400  # ... and the user's answer produced the hook event at T1 > T0
    for order in ("capture-first", "hook-first"):
        _seed_hook_working(srv, pane, t0 - 1000)
        cap, hook = _capture_blocker(srv, pane, t0), _hook_working(srv, pane, t1)
        _run(srv, *((cap, hook) if order == "capture-first" else (hook, cap)))
        assert _tuple(srv, pane) == ("working", "", "hook", str(t1)), order
        if order == "hook-first":  # the suppressed capture raised nothing either
            assert srv.options(pane).get("@agent_attention", "") in ("", "''")
    for trial in range(6):
        _seed_hook_working(srv, pane, t0 - 1000)
        _race(srv, _capture_blocker(srv, pane, t0), _hook_working(srv, pane, t1))
        assert _tuple(srv, pane) == ("working", "", "hook", str(t1)), trial


def test_answered_prompt_race_reversed_times(srv):
    """The hook event (T1) predates the blocker chrome (T0): the prompt is still open.

    Hook first, then the capture: the carve-out commits blocked. Capture first, then
    the hook: hook arbitration defers only to a stored HOOK claim (the guarded-write contract), so the
    older event still lands over the capture's blocked; the next cycle's capture (the
    chrome is still on screen, newer than the hook's evidence) carves it back, which
    the last step replays.
    """
    pane = srv.shell_pane()
    t0 = 1_800_000_000_000
    t1 = t0 - 400
    _seed_hook_working(srv, pane, t0 - 1000)
    _run(srv, _hook_working(srv, pane, t1), _capture_blocker(srv, pane, t0))
    assert _tuple(srv, pane) == ("blocked", "permission", "capture", str(t0))
    assert srv.option(pane, "@agent_attention") == "1"

    _seed_hook_working(srv, pane, t0 - 1000)
    _run(srv, _capture_blocker(srv, pane, t0), _hook_working(srv, pane, t1))
    assert _tuple(srv, pane) == ("working", "", "hook", str(t1))
    _run(srv, _capture_blocker(srv, pane, t0 + 1000))
    assert _tuple(srv, pane) == ("blocked", "permission", "capture", str(t0 + 1000))


# ---------------------------------------------------------------- faults mid-cycle


def _in_process_cycle(srv, monkeypatch):
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMA_CONFIG"):
        monkeypatch.setenv(key, srv.env[key])
    for key in ("TMA_SOCKET_PATH", "TMA_TMUX_BIN", "TMUX", "TMUX_PANE"):
        monkeypatch.delenv(key, raising=False)
    from tma.runtime.config import Config
    from tma.runtime.cycle import Cycle
    from tma.tmux.adapter import Server

    return Cycle(Server(srv.tmux_bin, socket_name=srv.name), Config(), manifest_dir=str(srv.manifests))


def _agents(srv, n: int) -> list[str]:
    panes = [srv.agent_pane() for _ in range(n)]
    for p in panes:
        srv.draw(p, "FAKE-IDLE composer\n")
    return panes


@pytest.mark.tmux_contract
def test_pane_killed_between_read_and_capture(srv, monkeypatch):
    a, victim, c = _agents(srv, 3)
    cycle = _in_process_cycle(srv, monkeypatch)
    from tma.tmux import read

    real = read.capture_many
    calls = []

    def killing(server, pane_ids, *args, **kw):
        calls.append([e[0] if isinstance(e, tuple) else e for e in pane_ids])
        srv.tmux("kill-pane", "-t", victim)
        return real(server, pane_ids, *args, **kw)

    monkeypatch.setattr(read, "capture_many", killing)
    result = cycle.run()
    assert calls and set(calls[0]) == {a, victim, c}
    assert sorted(r.pane.pane_id for r in result.rows) == sorted([a, c])
    assert result.stats.captures == 2 and result.stats.produced == 2
    for pane in (a, c):
        o = srv.options(pane)
        assert (o["@agent_state"], o["@agent_source"], o["@agent_name"]) == (
            "idle", "capture", "fake")
        assert o["@agent_stamped_at"] == o["@agent_since"] == o["@agent_evidence_at"]
        assert len(o["@agent_stamped_at"]) == 13
    assert victim not in srv.tmux("list-panes", "-a", "-F", "#{pane_id}").split()


def _wait_refused(srv) -> None:
    """Until the dying server refuses new clients (its process may linger a moment)."""
    srv.wait_for(srv.refuses, interval=0.01)


def test_server_killed_mid_cycle_raises_no_server(srv, monkeypatch):
    _agents(srv, 2)
    cycle = _in_process_cycle(srv, monkeypatch)
    from tma.tmux import read
    from tma.tmux.adapter import NoServer

    real = read.capture_many

    def killing(server, pane_ids, *args, **kw):
        srv.tmux("kill-server")
        _wait_refused(srv)
        return real(server, pane_ids, *args, **kw)

    monkeypatch.setattr(read, "capture_many", killing)
    with pytest.raises(NoServer) as info:
        cycle.run()
    assert type(info.value) is NoServer
    res = srv.tma("ls")
    assert (res.returncode, res.stdout, res.stderr) == (1, "", "tma: no tmux server running\n")


def test_server_dying_under_a_running_ls_ends_cleanly(srv):
    """`tma ls` racing kill-server: either a normal listing or the one-line exit 1."""
    outcomes = set()
    # the kill lands before, during and after the one-shot cycle (~0.1 s in)
    for delay in (0.0, 0.04, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12, 0.15, 0.3):
        srv.started = False
        pane = srv.agent_pane()
        srv.draw(pane, "FAKE-BLOCKED do you want to proceed\n")
        proc = popen(srv, [sys.executable, "-m", "tma", "--socket-name", srv.name,
                           "--manifest-dir", str(srv.manifests), "ls"])
        time.sleep(delay)
        srv.tmux("kill-server", check=False)
        out, err = proc.communicate(timeout=30)
        assert "Traceback" not in err
        if proc.returncode == 1:
            assert (out, err) == ("", "tma: no tmux server running\n")
        else:
            assert proc.returncode == 0, err
        outcomes.add(proc.returncode)
        _wait_refused(srv)
    assert 1 in outcomes


@pytest.mark.tmux_contract
def test_dead_pane_in_a_batched_write_costs_only_its_line(srv):
    from tma.tmux.adapter import Server

    panes = [srv.shell_pane() for _ in range(3)]
    srv.tmux("kill-pane", "-t", panes[1])
    now = now_ms()
    plan = P.Plan(P.PUBLISH, state="blocked", detail="permission", source="capture",
                  evidence_at=now, guard=P.Guard(P.CARVE_OUT, at=now), set_attention=True)
    server = Server(srv.tmux_bin, socket_name=srv.name)
    _out, err = server.source([write.render(p, plan, now, name="fake", pid=7, hash="ab")
                               for p in panes])
    assert panes[1] in err
    for pane in (panes[0], panes[2]):
        o = srv.options(pane)
        assert {k: o.get(k) for k in ("@agent_state", "@agent_detail", "@agent_source",
                                      "@agent_since", "@agent_evidence_at",
                                      "@agent_stamped_at", "@agent_attention", "@agent_name",
                                      "@agent_pid", "@agent_hash")} == {
            "@agent_state": "blocked", "@agent_detail": "permission",
            "@agent_source": "capture", "@agent_since": str(now),
            "@agent_evidence_at": str(now), "@agent_stamped_at": str(now),
            "@agent_attention": "1", "@agent_name": "fake", "@agent_pid": "7",
            "@agent_hash": "ab"}
