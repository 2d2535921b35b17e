"""Secrets never appear in messages, and one rule keeps them out of configs (items 4, 6)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Result, write_json
from xbrain.urls import is_secret_name, redact_url

Run = Callable[..., Result]
ADAPTER = str(EXAMPLES / "mock_adapter.py")


@pytest.mark.parametrize(
    "url",
    [
        "https://user:PASSWORD@exa mple.com/r.git",  # unparsable: was echoed whole
        "https://user:PASSWORD@example.com/r.git",
        "ssh://git:PASSWORD@example.com/r.git",
        "user:PASSWORD@example.com:r.git",  # scp-style with a password
        "https://example.com/r.git?a=1;token=PASSWORD",
        "https://example.com/r.git;token=PASSWORD",
        "https://example.com/r.git?X-Amz-Security-Token=PASSWORD",
        "https://example.com/r.git?key[]=PASSWORD",
        "https://example.com/r.git?access-token=PASSWORD",
    ],
)
def test_remote_urls_with_credentials_are_refused_and_never_echoed(
    xb: Run, tmp_path: Path, url: str
) -> None:
    xb("init")
    for args, store in (
        (("remote", "add", "origin", url), True),
        (("clone", url, str(tmp_path / "c")), False),
    ):
        result = xb(*args) if store else xb(*args, store=None)
        assert result.code == 4, (url, result.stderr)
        assert "PASSWORD" not in result.stderr + result.stdout
    assert not (tmp_path / "c").exists()


def test_a_failing_remote_never_echoes_a_credential_git_config_holds(
    xb: Run, store_dir: Path
) -> None:
    """A URL put into .git/config by hand (bypassing remote add) is redacted in errors."""
    xb("init")
    subprocess.run(
        [
            "git",
            "-C",
            str(store_dir),
            "remote",
            "add",
            "hand",
            "http://u:PASSWORD@127.0.0.1:9/r.git",
        ],
        check=True,
    )
    for verb in ("push", "pull"):
        result = xb("remote", verb, "hand")
        assert result.code == 8, result.stderr
        assert "PASSWORD" not in result.stderr and "hand" in result.stderr


def test_redaction_covers_userinfo_scp_and_parameters() -> None:
    text = "a https://u:p@h/x?y=1&token=t; b u:pw@host:r.git c git@host:r.git d https://h/?q=ok"
    assert redact_url(text) == (
        "a https://***@h/x?y=1&token=***; b ***@host:r.git c git@host:r.git d https://h/?q=ok"
    )


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("token", True),
        ("access-token", True),
        ("X-Amz-Security-Token", True),
        ("key[]", True),
        ("API_KEY", True),
        ("apiKey", True),
        ("client.secret", True),
        ("privateKey", True),
        ("author", False),
        ("keyword", False),
        ("monkey", False),
        ("namespace", False),
        ("timeoutMs", False),
        ("cursor", False),
        ("authority", False),
    ],
)
def test_one_secret_name_rule(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def _provider(tmp_path: Path, **extra: object) -> str:
    config = {
        "kind": "command",
        "scope": "personal",
        "namespace": "n",
        "command": [sys.executable, ADAPTER],
        **extra,
    }
    return str(write_json(tmp_path / "provider.json", config))


@pytest.mark.parametrize(
    "extra",
    [
        {"options": {"token": "abc"}},
        {"token": "abc"},
        {"headers": [{"X-Api-Key": "abc"}]},
        {"command": [sys.executable, ADAPTER, "--token", "abc"]},
        {"command": [sys.executable, ADAPTER, "--access-token=abc"]},
        {"command": [sys.executable, ADAPTER, "AWS_SECRET_ACCESS_KEY=abc"]},
        {"command": [sys.executable, ADAPTER, "--url=https://h/x;sig=abc"]},
    ],
)
def test_provider_configs_refuse_every_credential_shape(
    xb: Run, tmp_path: Path, extra: dict[str, object]
) -> None:
    result = xb("status", "--provider-config", _provider(tmp_path, **extra))
    assert result.code == 4, result.stderr
    assert "abc" not in result.stderr and "credential" in result.stderr


def test_source_config_top_level_token_is_refused(xb: Run, tmp_path: Path) -> None:
    config = {
        "kind": "command",
        "scope": "personal",
        "provider": "web",
        "account": "me",
        "pagination": "single",
        "incremental": "rescan",
        "command": [sys.executable, ADAPTER],
        "token": "abc",
    }
    result = xb("pull", "--source-config", str(write_json(tmp_path / "s.json", config)))
    assert result.code == 4 and "abc" not in result.stderr, result.stderr


def test_ordinary_flags_stay_allowed(xb: Run, tmp_path: Path) -> None:
    extra = {
        "command": [sys.executable, ADAPTER, "--state", str(tmp_path / "state.json"), "--mode", "x"]
    }
    assert xb("status", "--provider-config", _provider(tmp_path, **extra)).code == 0


def test_local_backups_are_private(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    """Item 5: a bare repo the user made 0755 got packs 0444 and refs 0644 from a push."""
    remote = tmp_path / "backup.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, env={**os.environ})
    os.chmod(remote, 0o755)
    xb("put", str(EXAMPLES / "batch.json"))
    xb("put", "-", input=json.loads((EXAMPLES / "batch.json").read_text())[:1])
    assert xb("remote", "add", "origin", str(remote)).code == 0
    before = {p: p.stat().st_mode for p in remote.rglob("*")}
    assert xb("remote", "push").code == 0
    written = [
        p
        for p in remote.rglob("*")
        if p not in before or (p.stat().st_mtime > 0 and p.is_relative_to(remote / "objects"))
    ]
    leaky = [
        str(p)
        for p in written
        if p.stat().st_mode & 0o077 and not stat.S_ISDIR(p.stat().st_mode) and p not in before
    ]
    assert leaky == []
    assert (remote / "refs" / "heads" / "main").stat().st_mode & 0o077 == 0
    packs = list((remote / "objects" / "pack").glob("*.pack"))
    assert packs and all(p.stat().st_mode & 0o077 == 0 for p in packs)
    # the unborn HEAD (master) now names main, so plain git clones it too
    assert (remote / "HEAD").read_text().strip() == "ref: refs/heads/main"
    clone = tmp_path / "plain"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    assert (clone / "xbrain.yaml").exists()


@pytest.mark.parametrize(
    "url",
    [
        "https://alice@example.com/page",  # a user name alone is a credential too
        "https://alice:@example.com/page",
        "https://:secret@example.com/page",
    ],
)
def test_a_source_url_with_a_user_name_is_refused_and_nothing_written(
    xb: Run, tmp_path: Path, store_dir: Path, url: str
) -> None:
    resource = json.loads((EXAMPLES / "synthetic-resource.json").read_text())
    resource["source"]["url"] = url
    refused = xb("put", str(write_json(tmp_path / "r.json", resource)))
    assert refused.code == 4, refused.stderr
    assert "Source URLs must use HTTPS without embedded credentials." in refused.stderr
    assert "alice" not in refused.stderr and "secret" not in refused.stderr
    assert not store_dir.exists()  # the first write would have created it
