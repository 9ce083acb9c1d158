"""hosts.toml: names a pane can carry, a person's comments kept, 0600, bad files named."""

from __future__ import annotations

import pytest

from tma.runtime.fleet import hosts
from tma.runtime.session import Session


@pytest.fixture
def session(tmp_path):
    return Session(env={"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")})


def test_add_list_remove_keeps_comments_and_is_private(session, tmp_path):
    file = tmp_path / "cfg" / "tma" / "hosts.toml"
    file.parent.mkdir(parents=True)
    file.write_text("# my machines\n[hosts.old]  # the first one\ntarget = \"me@old\"\n")
    hosts.add(session, hosts.Host("box", "box", ("docker", "exec", "-i", "box"), "answer"))
    assert [(h.name, h.via, h.act) for h in hosts.load(session)] == [
        ("old", None, None), ("box", ("docker", "exec", "-i", "box"), "answer")]
    text = file.read_text()
    assert text.startswith("# my machines\n[hosts.old]  # the first one\n")
    assert file.stat().st_mode & 0o777 == 0o600
    with pytest.raises(hosts.HostError, match="exists already"):
        hosts.add(session, hosts.Host("box", "x"))
    hosts.remove(session, "box")
    # the person's lines come back as they were (tomlkit leaves the blank separator)
    assert file.read_text() == "# my machines\n[hosts.old]  # the first one\n" \
        "target = \"me@old\"\n\n"
    assert [h.name for h in hosts.load(session)] == ["old"]
    with pytest.raises(hosts.HostError, match="no host named 'box'"):
        hosts.remove(session, "box")


@pytest.mark.parametrize("name", ["a:b", "", "x y", "..", "é"])
def test_a_name_a_pane_cannot_carry_is_refused(name):
    with pytest.raises(hosts.HostError, match="bad host name"):
        hosts.check_name(name)


def test_via_is_split_like_a_shell_line():
    assert hosts.parse_via("docker exec -i 'my box' tma serve --stdio") == (
        "docker", "exec", "-i", "my box", "tma", "serve", "--stdio")
    with pytest.raises(hosts.HostError, match="--via"):
        hosts.parse_via("ssh 'unclosed")
    with pytest.raises(hosts.HostError):
        hosts.parse_via("  ")


def test_a_bad_file_is_named(session, tmp_path):
    file = tmp_path / "cfg" / "tma" / "hosts.toml"
    file.parent.mkdir(parents=True)
    file.write_text("[hosts.box]\nvia = 3\ntarget = \"b\"\n")
    with pytest.raises(hosts.HostError, match="hosts.box.via must be a list of strings"):
        hosts.load(session)
    file.write_text("[hosts.box\n")
    with pytest.raises(hosts.HostError, match="hosts.toml"):
        hosts.load(session)


def test_a_login_is_kept_and_checked(session, tmp_path):
    hosts.add(session, hosts.Host("dev", "dev-fleet", None, "answer", "me@dev"))
    assert hosts.get(session, "dev").login == "me@dev"
    assert 'login = "me@dev"' in (tmp_path / "cfg" / "tma" / "hosts.toml").read_text()
    file = tmp_path / "cfg" / "tma" / "hosts.toml"
    file.write_text('[hosts.dev]\ntarget = "x"\nlogin = 3\n')
    with pytest.raises(hosts.HostError, match="login must be a non-empty string"):
        hosts.load(session)
