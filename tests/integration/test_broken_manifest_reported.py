"""A broken user manifest is named by every surface that loads manifests: one
`tma: skipping manifest <path>: <error>` line per file on stderr, also when the command
never needed the full set (a cycle over fresh stamps, a refused act). Never from
`tma event` (a hook prints nothing), nor from `status` under `#()` (nobody reads it)."""

from __future__ import annotations

import sys

from tests.helpers.ptyclient import run_on_pty


def _break(srv) -> list[str]:
    (srv.manifests / "broken.toml").write_text("this is [ not toml\n")
    (srv.manifests / "typo.toml").write_text(
        'min_engine_version = "0.1"\n[identity]\nprocess_names = 5\n')
    return [f"tma: skipping manifest {srv.manifests / 'broken.toml'}: TOML: ",
            f"tma: skipping manifest {srv.manifests / 'typo.toml'}: "
            "[identity].process_names: must be a list of strings"]


def _reported(stderr: str, expected: list[str]) -> bool:
    lines = [line for line in stderr.splitlines() if line.startswith("tma: skipping manifest")]
    return len(lines) == len(expected) and all(
        line.startswith(want) for line, want in zip(lines, expected, strict=True))


def test_every_surface_names_a_broken_manifest_once(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE\n")
    srv.ls()  # stamps fresh, caches warm: the next cycles need no full manifest set
    expected = _break(srv)
    shell = srv.shell_pane()
    for args in (("ls",), ("ls",), ("ls", "--json"), ("jump", "--next"),
                 ("wait", "--pane", pane, "--until", "blocked", "--timeout", "1.5"),
                 ("act", "approve", "--pane", pane), ("act", "approve", "--pane", shell),
                 ("doctor",), ("doctor", "--json"), ("debug", "explain", pane),
                 ("debug", "explain", shell), ("debug", "capture", shell)):
        res = srv.tma(*args)
        assert _reported(res.stderr, expected), (args, res.stderr)
        assert "Traceback" not in res.stderr, res.stderr


def test_status_names_it_on_a_terminal_but_not_under_the_status_line(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE\n")
    srv.ls()
    before = srv.tma("status", check=True).stdout
    expected = _break(srv)
    res = srv.tma("status", check=True)
    assert res.stderr == "" and res.stdout == before  # #(): byte-for-byte, no validation
    rc, out = run_on_pty([sys.executable, "-m", "tma", "--socket-name", srv.name,
                          "--manifest-dir", str(srv.manifests), "status"], srv.env)
    assert rc == 0 and _reported(out, expected), out
    assert out.endswith("○1\n")


def test_a_hook_event_never_prints_it(srv):
    pane = srv.agent_pane()
    _break(srv)
    res = srv.tma("event", "--agent", "fake", "--kind", "Work",
                  env={"TMUX_PANE": pane}, input="{}")
    assert res.returncode == 0 and res.stdout == "" and res.stderr == ""
    assert srv.option(pane, "@agent_state") == "working"
