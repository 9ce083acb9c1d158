"""A real OpenSSH server for fleet tests: Debian's sshd on 127.0.0.1, its own host key,
an `authorized_keys` whose forced command the test sets (and may change between
connections: sshd reads the file on every login), and a client key and ssh_config that
pin the host key. `kill()` takes the server and every session it forked (an `sshd -D`
session child outlives its listener), so a link cut is a real cut.

Skips with the reason when sshd or ssh is absent (CI installs openssh-server).
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

SSHD = "/usr/sbin/sshd"


def require() -> None:
    if not os.access(SSHD, os.X_OK) or shutil.which("ssh") is None:
        pytest.skip("needs OpenSSH (apt-get install openssh-server openssh-client)")


#: What a login on the host keeps of the test's environment (sshd clears it): its HOME,
#: config, tmux build, and its runtime and state dirs, so the host's serve seats, ledger
#: and daemon files are the test's own, never shared with another test or worker.
_KEEP = ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
         "TMA_CONFIG", "TMA_TMUX_BIN", "PATH", "LANG", "PYTHONPATH", "TMUX_TMPDIR",
         "TMA_TRANSCRIPT_STORES")


def _env_words(srv) -> str:
    keep = {k: srv.env.get(k) or os.environ.get(k, "") for k in _KEEP}
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in keep.items() if v)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) < 2:  # the process ended between listing /proc and reading it
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += _children(p)
    return found


class Sshd:
    """`address` and `wrap`: where it listens and what it runs under (a network
    namespace: tests/helpers/netns.py); loopback and nothing by default."""

    def __init__(self, root: Path, *, address: str = "127.0.0.1",
                 wrap: tuple[str, ...] = ()) -> None:
        require()
        self.root = root
        self.address, self.wrap = address, tuple(wrap)
        root.mkdir(parents=True, exist_ok=True)
        # ssh's ControlPath must fit a unix socket path: a short private dir for it
        self.control = Path(tempfile.mkdtemp(prefix="tma-ssh-", dir="/tmp"))
        self.port = _free_port()
        self.host_key = root / "host_ed25519"
        self.client_key = root / "client_ed25519"
        for key in (self.host_key, self.client_key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                           check=True, capture_output=True)
        self.authorized = root / "authorized_keys"
        self.log = root / "sshd.log"
        self.config = root / "sshd_config"
        self.config.write_text(
            f"Port {self.port}\nListenAddress {address}\nHostKey {self.host_key}\n"
            f"PidFile none\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n"
            f"AuthorizedKeysFile {self.authorized}\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPrintMotd no\nPrintLastLog no\n"
            f"AllowUsers {_user()}\nLogLevel ERROR\n"
            # sshd runs the forced command through the user's login shell, and a bash
            # that sshd starts reads the person's real ~/.bashrc (Debian builds bash
            # with SSH_SOURCE_BASHRC) unless SHLVL says it is nested: a test's login
            # must not run the person's shell start-up. Here that was pyenv's rehash,
            # which takes a lock file in the real home; a session killed in a test
            # (kill() below) left it behind, and every login after it, in every test
            # of every run on the machine, waited out the 60 s lock timeout.
            "SetEnv SHLVL=1\n")
        host_pub = (root / "host_ed25519.pub").read_text().split()
        (root / "known_hosts").write_text(f"[{address}]:{self.port} {host_pub[0]} "
                                          f"{host_pub[1]}\n")
        self.client_config = root / "ssh_config"
        self.client_config.write_text(
            f"Host tma-test\n  HostName {address}\n  Port {self.port}\n  User {_user()}\n"
            f"  IdentityFile {self.client_key}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {root / 'known_hosts'}\n  GlobalKnownHostsFile /dev/null\n"
            "  StrictHostKeyChecking yes\n  LogLevel ERROR\n")
        self.proc: subprocess.Popen | None = None

    # -- the forced command
    def set_command(self, command: str, *, pty: bool = False) -> None:
        """What every login runs, whatever the client asks (sshd re-reads it per login);
        with `pty`, a client's `ssh -t` gets its terminal (restrict refuses one)."""
        pub = (self.root / "client_ed25519.pub").read_text().strip()
        quoted = command.replace("\\", "\\\\").replace('"', '\\"')
        opts = "restrict,pty" if pty else "restrict"
        self.authorized.write_text(f'command="{quoted}",{opts} {pub}\n')
        self.authorized.chmod(0o600)

    @staticmethod
    def serve_command(srv, *flags: str, python: str = sys.executable,
                      tma: str | None = None) -> str:
        """The forced command that runs `tma serve --stdio` in front of the test's tmux
        server `srv` (its HOME, config and tmux build: sshd clears the environment)."""
        env = _env_words(srv)
        run = shlex.quote(tma) if tma else f"{shlex.quote(python)} -m tma"
        args = " ".join(shlex.quote(f) for f in flags)
        return f"exec env {env} {run} --socket-name {srv.name} serve --stdio {args}".strip()

    # -- the server
    def start(self) -> Sshd:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # its privilege separation dir
        self.proc = subprocess.Popen([*self.wrap, SSHD, "-D", "-e", "-f", str(self.config)],
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(self.log, "ab"))  # noqa: SIM115
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex((self.address, self.port)) == 0:
                    return self
            if self.proc.poll() is not None:
                raise AssertionError(f"sshd exited: {self.log.read_text()}")
            time.sleep(0.05)
        raise AssertionError("sshd did not listen in time")

    def ssh_argv(self) -> list[str]:
        """The client argv tma's default transport builds, with this test's ssh_config."""
        from tma.runtime.fleet.link import ssh_argv

        return ssh_argv("tma-test", str(self.control), config=str(self.client_config))

    @staticmethod
    def login_command(srv, python: str = sys.executable) -> str:
        """A forced command standing in for a person's login shell on the host: it runs
        the client's own `tma ARGS...` (SSH_ORIGINAL_COMMAND) as the test's tma, in front
        of the test's tmux server `srv` (what `ssh -t HOST tma attach --pane %N` does on
        a host whose PATH has tma)."""
        env = _env_words(srv)
        return ('eval "set -- $SSH_ORIGINAL_COMMAND"; [ "$1" = tma ] || exit 126; shift; '
                f"exec env {env} {shlex.quote(python)} -m tma --socket-name {srv.name} "
                '"$@"')

    def via(self) -> str:
        return shlex.join(self.ssh_argv())

    def kill(self) -> None:
        """sshd and every session it forked, now (SIGKILL)."""
        if self.proc is None:
            return
        for pid in _tree(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=10)
        self.proc = None

    def signal(self, signo: int) -> None:
        """Send signo to sshd and every process under it (SIGSTOP: a host that hangs with
        its connections open; SIGCONT: it answers again)."""
        for pid in _tree(self.proc.pid) if self.proc is not None else []:
            try:
                os.kill(pid, signo)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        self.signal(signal.SIGCONT)  # a stopped sshd would not die of the kill
        self.kill()
        # the ControlMaster processes our clients left (their server side is gone now)
        for sock in self.control.rglob("ssh-*"):
            subprocess.run(["ssh", "-F", str(self.client_config), "-o",
                            f"ControlPath={sock}", "-O", "exit", "tma-test"],
                           capture_output=True, timeout=5)
        shutil.rmtree(self.control, ignore_errors=True)


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name
