"""A real daemon over a user manifest directory with broken files in it: it logs one
`tma: skipping manifest <path>: <error>` line per broken file, once, and starts on what
loaded (the manifest schema: "the daemon logs it and starts on what loaded"), so the
bundled agents and the user's good manifests are still stamped."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.daemon import Daemon, _claude, _draw, _until, watched
from tests.helpers.manifests import TEST_MANIFEST


class LoggedDaemon(Daemon):
    """What the daemon logs goes to a file the test reads."""

    def start(self) -> LoggedDaemon:
        self.log_path = self.runtime.parent / "daemon.log"
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(self.argv(), env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=log)
        self.srv.wait_for(lambda: self.status() is not None, timeout=10)
        return self

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path, LoggedDaemon) as d:
        yield d


def test_a_broken_user_manifest_is_logged_once_and_the_rest_still_stamps(srv, daemon):
    agents = Path(srv.env["XDG_CONFIG_HOME"]) / "tma" / "agents"  # ~/.config/tma/agents
    agents.mkdir(parents=True)
    (agents / "fake.toml").write_text(TEST_MANIFEST)  # a good user manifest
    broken = agents / "broken.toml"
    broken.write_text("this is [ not toml\n")
    typo = agents / "typo.toml"
    typo.write_text('min_engine_version = "0.1"\n[identity]\nprocess_names = 5\n')
    claude, _pid = _claude(srv)  # a bundled agent
    _draw(srv, claude, "blocked")
    fake = srv.agent_pane()  # the user's good manifest (fakeagent)
    srv.draw(fake, "FAKE-WORKING")

    daemon.start()
    _until(srv, claude, "@agent_state", "blocked", timeout=10)
    assert srv.option(claude, "@agent_detail") == "permission"
    _until(srv, fake, "@agent_state", "working", timeout=10)
    time.sleep(1.5)  # more sweeps and edges: a skip is still said only once
    _draw(srv, claude, "idle")
    _until(srv, claude, "@agent_state", "idle", timeout=10)

    daemon.stop()
    log = daemon.log()
    skipped = re.findall(r"^\S+ tma: skipping manifest (\S+): (.*)$", log, re.M)
    assert sorted(path for path, _err in skipped) == sorted([str(broken), str(typo)]), log
    errors = dict(skipped)
    assert errors[str(broken)].startswith("TOML: "), log
    assert errors[str(typo)] == "[identity].process_names: must be a list of strings", log
    assert "Traceback" not in log, log
