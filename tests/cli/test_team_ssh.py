"""Team memory over ssh, for real (issue 47): an unprivileged ``sshd`` of the test's own
(127.0.0.1, its own host key, config and ``authorized_keys`` in a temporary folder),
and the members' ``ssh`` chosen as git chooses it (``GIT_SSH_COMMAND``). The same
two-member flow as the other transports; the hostile-URL checks still refuse an ssh
"host" that is an option. Skipped when no ``sshd`` is installed (``make test`` installs
it when it can)."""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli.test_team_share import Member, team_remote
from tests.cli.test_team_transports import two_members
from tests.conftest import Result

Run = Callable[..., Result]
SSHD = shutil.which("sshd") or next(
    (p for p in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if os.access(p, os.X_OK)), None
)
needs_sshd = pytest.mark.skipif(
    SSHD is None or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None,
    reason="no OpenSSH server (sshd) or client here; make test installs it when root",
)
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path.with_suffix(".pub").read_text().strip()


@contextlib.contextmanager
def sshd(folder: Path) -> Iterator[tuple[int, str]]:
    """A running sshd on 127.0.0.1 that lets this user in with a key generated here;
    (its port, the ``GIT_SSH_COMMAND`` that reaches it and trusts only its host key)."""
    assert SSHD is not None
    folder.mkdir(mode=0o700)
    host_pub = keygen(folder / "host_key")
    (folder / "authorized_keys").write_text(keygen(folder / "id_member") + "\n")
    os.chmod(folder / "authorized_keys", 0o600)
    if os.geteuid() == 0:  # sshd run by root wants its privilege-separation folder
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    port = free_port()
    config = folder / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'host_key'}\n"
        f"PidFile {folder / 'sshd.pid'}\nAuthorizedKeysFile {folder / 'authorized_keys'}\n"
        f"AllowUsers {getpass.getuser()}\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "StrictModes no\nPermitUserEnvironment no\nLogLevel ERROR\n"
    )
    (folder / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub}\n")
    client = folder / "ssh_config"
    client.write_text(
        f"Host 127.0.0.1\n  Port {port}\n  IdentityFile {folder / 'id_member'}\n"
        f"  IdentitiesOnly yes\n  UserKnownHostsFile {folder / 'known_hosts'}\n"
        "  StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n"
    )
    log = folder / "sshd.log"
    with log.open("wb") as errors:
        server = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if server.poll() is not None:
                pytest.skip(f"sshd did not start: {log.read_text()[:300]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert time.monotonic() < deadline, "sshd never listened"
            time.sleep(0.1)
        yield port, f"ssh -F {client}"
    finally:
        server.terminate()
        server.wait(timeout=30)


@needs_git
@needs_sshd
def test_two_members_share_review_and_recall_over_ssh(
    xb_proc: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, _ = team_remote(xb_proc, tmp_path)
    with sshd(tmp_path / "ssh") as (port, command):
        # every xbrain process (and its background sync) runs this ssh, as git would
        monkeypatch.setenv("GIT_SSH_COMMAND", command)
        url = f"ssh://127.0.0.1:{port}{bare}"
        reached = subprocess.run(
            [*command.split(), "127.0.0.1", "git-upload-pack", str(bare)],
            input=b"0000",
            capture_output=True,
            timeout=60,
        )
        assert reached.returncode == 0, reached.stderr  # the server and key work at all
        two_members(xb_proc, tmp_path, bare, url)


@needs_sshd
def test_without_the_ssh_command_the_team_is_not_reached_and_nothing_is_added(
    xb_proc: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ssh the test configures is what reached the server above: the user's plain
    ``ssh`` (no key for it, host unknown, no prompt) fails, one line, exit 8."""
    bare, _ = team_remote(xb_proc, tmp_path)
    with sshd(tmp_path / "ssh") as (port, _command):
        monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=10")
        ann = Member(xb_proc, tmp_path / "ann", "ann")
        added = ann("team", "add", "eng", f"ssh://127.0.0.1:{port}{bare}", store=False)
        assert added.code == 8, added.stderr
        assert len(added.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "ann" / "data" / "xbrain" / "teams" / "eng").exists()


@pytest.mark.parametrize(
    "url",
    [
        "ssh://-oProxyCommand=touch${IFS}{mark}/127.0.0.1/team.git",
        "ssh://-oProxyCommand=touch${IFS}mark@127.0.0.1/team.git",
        "-oProxyCommand=touch {mark}:team.git",
    ],
)
def test_an_ssh_option_in_place_of_a_host_or_user_is_refused(
    xb_proc: Run, tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mark = tmp_path / "ran"
    monkeypatch.chdir(tmp_path)  # where a relative ``mark`` would be made
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    added = ann("team", "add", "eng", "--", url.replace("{mark}", str(mark)), store=False)
    assert added.code == 4, added.stderr
    assert len(added.stderr.strip().splitlines()) == 1
    assert not mark.exists() and not (tmp_path / "mark").exists()
    assert not (tmp_path / "ann" / "data" / "xbrain" / "teams" / "eng").exists()
