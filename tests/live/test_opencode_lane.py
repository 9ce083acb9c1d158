"""OpenCode's HTTP lane on the real pinned OpenCode (1.18.33), no keystroke sent.

OpenCode's TUI serves HTTP only when started with `--port` (or `--hostname` / `--mdns`);
tma's plugin then stamps the server's real URL into @agent_api_endpoint. Without a port
nothing listens, and the plugin reports the SDK's default `http://localhost:4096`.

  * with `--port N`: the stamp is http://127.0.0.1:N, the health probe answers, and a real
    pending permission is answered over HTTP: `once` runs the tool, `reject` refuses it,
    and a second reply to an answered request is `vanished` (404); `tma doctor`'s `api:`
    line says the endpoint answers.
  * without a port: the stamp is the fallback, nothing listens on the opencode process,
    and a reply is an `error` that names the endpoint and says to start with `--port`;
    `tma doctor` says the endpoint does not answer and the pending request cannot be
    answered.

Both run in hooked mode (the plugin is what stamps the endpoint and the request id).
"""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.helpers.live import agents as agents_mod
from tests.helpers.live.harness import Scenario
from tests.helpers.live.opencode import BASE, free_port, opencode, wait_option
from tma.runtime.act import opencode_api as api

pytestmark = pytest.mark.live

REPLY_TIMEOUT_S = 10.0  # the first v1 read boots the project instance: ~1 s, more under load


def listening_ports(sc: Scenario) -> list[str]:
    """The TCP ports the agent's processes listen on (ss), as `addr:port` strings."""
    pids = sc.server.token_pids(sc.token)
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, timeout=10).stdout
    return [line.split()[3] for line in out.splitlines()
            if any(f"pid={p}," in line for p in pids)]


def pending_permission(sc: Scenario) -> str:
    """Ask for the fake LLM's shell tool call and wait for OpenCode's permission dialog and
    the plugin's request id; returns the id."""
    (sc.work / "fakellm-hi.txt").unlink(missing_ok=True)
    t = sc.type_line("RUNTOOL now")
    sc.wait_regex(sc.agent.approve_ready, 60, since=t)
    return wait_option(sc, "@agent_permission_request", bool)


def doctor_api_line(sc: Scenario) -> str:
    """The `api:` line `tma doctor` prints under the agent's pane."""
    res = sc.server.tma("doctor", timeout=60)
    assert res.returncode == 0, f"tma doctor -> {res.returncode}: {res.stderr}"
    lines = res.stdout.splitlines()
    [start] = [i for i, ln in enumerate(lines) if ln.strip().startswith(f"{sc.pane} opencode")]
    block = []
    for ln in lines[start + 1:]:
        if not ln.startswith("      "):
            break
        block.append(ln.strip())
    [line] = [ln for ln in block if ln.startswith("api:")]
    return line


def quit_agent(sc: Scenario) -> None:
    for key, _ in sc.agent.exit_steps:
        sc.keys(key)
    sc.wait_screen(lambda s: not agents_mod.screen_has_agent(sc.agent, s.screen, s.title), 30,
                   "the shell back")


def test_a_real_pending_permission_is_answered_over_http(scenario_factory):
    port = free_port()
    sc: Scenario = scenario_factory(opencode(f"--port {port}"), "hooked")
    sc.start()
    sc.wait_regex(r"ctrl\+p commands", 90)
    endpoint = wait_option(sc, "@agent_api_endpoint", bool)
    assert endpoint == f"http://127.0.0.1:{port}", endpoint
    assert f"127.0.0.1:{port}" in listening_ports(sc)
    resolved = api.resolve_endpoint({"@agent_api_endpoint": endpoint}, None)
    assert resolved == endpoint and resolved.source == "pane"
    health = api.probe(resolved, 5.0)
    assert health.outcome == "replied", health.message
    assert health.body.get("version") == BASE.version
    line = doctor_api_line(sc)
    assert line.startswith(f"api: {endpoint} (from the pane) answers (OpenCode {BASE.version})"), line

    # approve: `once` over HTTP, no key sent; the tool runs and the turn finishes
    rid = pending_permission(sc)
    assert sc.pane_option("@agent_state") == "blocked"
    res = api.reply_permission(resolved, rid, "once", REPLY_TIMEOUT_S)
    assert (res.outcome, res.status, res.body) == ("replied", 200, True), res.message
    sc.wait_regex(r"TOOL RESULT SEEN", 60)
    assert (sc.work / "fakellm-hi.txt").exists(), "the approved tool call did not run"
    assert "Permission required" not in sc.screen()
    wait_option(sc, "@agent_permission_request", lambda v: v == "")
    again = api.reply_permission(resolved, rid, "once", REPLY_TIMEOUT_S)
    assert (again.outcome, again.status) == ("vanished", 404), again.message

    # deny: `reject` over HTTP; the tool does not run and the dialog goes away
    sc.wait_regex(r"ctrl\+p commands", 30)
    rid2 = pending_permission(sc)
    assert rid2 != rid
    res = api.reply_permission(resolved, rid2, "reject", REPLY_TIMEOUT_S)
    assert res.outcome == "replied", res.message
    wait_option(sc, "@agent_permission_request", lambda v: v == "")
    sc.wait_screen(lambda s: "Permission required" not in s.screen, 30, "the dialog gone")
    time.sleep(1.0)
    assert not (sc.work / "fakellm-hi.txt").exists(), "the rejected tool call ran"

    # the question route exists on this plane: an unknown id is 404 (vanished), not an error
    q = api.reject_question(resolved, "que_0000000000000000000000", REPLY_TIMEOUT_S)
    assert (q.outcome, q.status) == ("vanished", 404), q.message
    quit_agent(sc)


def test_without_a_port_nothing_listens_and_the_reply_says_how_to_fix_it(scenario_factory):
    sc: Scenario = scenario_factory(opencode(""), "hooked")
    sc.start()
    sc.wait_regex(r"ctrl\+p commands", 90)
    endpoint = wait_option(sc, "@agent_api_endpoint", bool)
    assert endpoint == api.SDK_FALLBACK, endpoint
    assert listening_ports(sc) == []
    rid = pending_permission(sc)
    resolved = api.resolve_endpoint({"@agent_api_endpoint": endpoint}, None)
    res = api.reply_permission(resolved, rid, "once", REPLY_TIMEOUT_S)
    if res.outcome != "error":  # something else owns 127.0.0.1:4096 on this machine
        assert res.outcome == "vanished", res.message  # ...and it is not this opencode
        pytest.skip(f"another server answers at {api.SDK_FALLBACK}: {res.message}")
    assert api.SDK_FALLBACK in res.message and "--port" in res.message
    line = doctor_api_line(sc)
    assert line.startswith(f"api: {api.SDK_FALLBACK} does not answer: nothing answers at "
                           f"{api.SDK_FALLBACK} (connection refused)"), line
    assert line.endswith(f"permission request {rid} is pending and tma act cannot answer it")
    # nothing was answered: the dialog is still up and tma still says blocked
    time.sleep(1.0)
    assert "Permission required" in sc.screen()
    assert sc.pane_option("@agent_state") == "blocked"
    quit_agent(sc)
