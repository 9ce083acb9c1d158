"""The pre-3.2 fallback (issue 22): a tmux that does not expand `set-option -F` stores
the literal format, so tma probes once per server, caches the answer in @tma_setpf_ok,
and on "0" writes plain, unguarded values with write-once `since` decided client-side.

No supported tmux answers "0", so the answer is forced here, and every command the cycle
sends is recorded by a tmux wrapper (TMA_TMUX_BIN) that logs argv and the `source-file -`
script before running the real tmux."""

from __future__ import annotations

import os
import stat

import pytest


def _wrapper(srv, tmp_path):
    log = tmp_path / "tmux.log"
    real = srv.tmux_bin
    script = tmp_path / "tmux-rec"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "ARGV $*" >> {log}\n'
        'for last in "$@"; do :; done\n'
        f'if [ "$last" = "-" ]; then tee -a {log} | {real} "$@"; exit $?; fi\n'
        f'exec {real} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script), log


def _cycle(srv, wrapper: str) -> None:
    srv.tma("ls", "--json", check=True, env={"TMA_TMUX_BIN": wrapper})


def _pane_writes(log, pane: str) -> list[str]:
    text = log.read_text() if log.exists() else ""
    log.write_text("")
    return [c.strip().lstrip("{ ") for line in text.splitlines() for c in line.split(" ; ")
            if f"-t {pane} " in c and ("set-option -p" in c or "if-shell" in c)]


def _conditional(write: str) -> bool:
    """A form a tmux without -F expansion would get wrong: a -F set, an if-shell -F."""
    return write.startswith(("set-option -p -F", "if-shell -F"))


@pytest.mark.tmux_contract
@pytest.mark.parametrize("answer", ["0", "1"])
def test_the_cached_probe_answer_picks_the_write_form(srv, tmp_path, answer):
    wrapper, log = _wrapper(srv, tmp_path)
    pane = srv.agent_pane()
    srv.tmux("set-option", "-s", "@tma_setpf_ok", answer)
    srv.draw(pane, "FAKE-BLOCKED\n")
    _cycle(srv, wrapper)
    writes = _pane_writes(log, pane)
    assert any("@agent_state" in w for w in writes), writes
    guarded = [w for w in writes if _conditional(w)]
    if answer == "1":
        assert guarded  # the tuple is a server-side conditional
        return
    assert guarded == [], guarded  # nothing that a pre-3.2 tmux would store literally
    opts = srv.options(pane)
    assert (opts["@agent_state"], opts["@agent_source"]) == ("blocked", "capture")
    assert all("#{" not in v for v in opts.values()), opts
    since = opts["@agent_since"]
    assert since.isdigit()
    # write-once since, decided client-side: the same state keeps it, a change moves it
    srv.next_second()
    srv.draw(pane, "FAKE-BLOCKED again\n")
    _cycle(srv, wrapper)
    assert srv.option(pane, "@agent_since") == since
    assert srv.option(pane, "@agent_stamped_at") > since
    srv.next_second()
    srv.draw(pane, "FAKE-WORKING\n")
    _cycle(srv, wrapper)
    assert srv.option(pane, "@agent_state") == "working"
    assert int(srv.option(pane, "@agent_since")) > int(since)
    assert [w for w in _pane_writes(log, pane) if _conditional(w)] == []
    assert os.environ.get("TMA_TMUX_BIN") != wrapper  # only tma ran through the wrapper
