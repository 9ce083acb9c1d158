"""An argv of plain switches (`tma ls --json`) is parsed from the declarations without
argparse (issue 29: argparse, gettext and locale were ~3 ms of every everyday command).
Over every command and every pair of its switches, the result is argparse's own, and
whatever argparse would refuse or read differently goes to argparse."""

from __future__ import annotations

import itertools

import pytest

from tma.cli import spec
from tma.core import cmdparse
from tma.core.errors import UsageError

COMMANDS = sorted(spec.COMMANDS)


def _switch_names(cmd) -> list[str]:
    return [n for f in cmd.flags if not f.takes_value and f.const is None for n in f.names]


def _argvs(cmd):
    names = _switch_names(cmd)
    yield []
    for n in names:
        yield [n]
    for a, b in itertools.combinations(names, 2):
        yield [a, b]
    yield names[:1] * 2


@pytest.mark.parametrize("name", COMMANDS)
def test_switches_parse_as_argparse_does(name):
    cmd = spec.COMMANDS[name]
    parser = spec.parser(name)
    fast_taken = 0
    for argv in _argvs(cmd):
        fast = cmdparse.switches(cmd, argv)
        try:
            slow = parser.parse_args(argv)
        except UsageError:
            assert fast is None, (name, argv)  # argparse's refusal stays argparse's
            continue
        if fast is not None:
            assert vars(fast) == vars(slow), (name, argv)
            fast_taken += 1
    if not cmd.subcommands and not any(f.required for f in cmd.flags) \
            and all(a.optional for a in cmd.args):
        assert fast_taken >= 1, name  # at least the bare command takes the fast path


def test_anything_but_switches_goes_to_argparse():
    ls = spec.COMMANDS["ls"]
    for argv in (["--json", "x"], ["--timeout", "3"], ["--timeout=3"], ["--jso"], ["-"],
                 ["--"], ["--json", "--bogus"]):
        assert cmdparse.switches(ls, argv) is None, argv


def test_ls_json_imports_no_argparse():
    import subprocess
    import sys

    code = ("import sys; from tma.cli import spec; spec.parse('ls', ['--json']);"
            "print('argparse' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
