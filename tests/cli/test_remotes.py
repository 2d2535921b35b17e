"""Remotes: backup, restore on a new machine, two devices converging, git interop."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES, Result, head, make, merged_tree, sample
from xbrain.core import View
from xbrain.git import GitStore
from xbrain.kinds.model import resource_id
from xbrain.remote.merge import merge_files
from xbrain.timestamps import format_timestamp

Run = Callable[..., Result]
ID = resource_id("web", "fictional-dialog-guide")
needs_git = pytest.mark.skipif(
    shutil.which("git") is None, reason="the git binary is not installed"
)


def bare(tmp_path: Path) -> Path:
    from dulwich.repo import Repo

    path = tmp_path / "backup.git"
    Repo.init_bare(str(path), mkdir=True, default_branch=b"main").close()
    return path


def tree(store: Path) -> str:
    with GitStore(store) as git:
        commit = git.head()
        assert commit is not None
        snap = git.snapshot(commit)
        return str(snap.tree_id)


@pytest.fixture
def devices(xb: Run, tmp_path: Path) -> tuple[Path, Path, Path]:
    remote = bare(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    assert xb("put", str(EXAMPLES / "batch.json"), store=a).code == 0
    assert xb("remote", "add", "origin", str(remote), store=a).code == 0
    assert xb("remote", "push", store=a).code == 0
    cloned = xb("clone", str(remote), str(b), store=None)
    assert cloned.code == 0, cloned.stderr
    return a, b, remote


def test_remote_add_list_remove_and_url_rules(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    xb("init")
    assert xb("remote", "add", "backup", str(tmp_path / "x.git")).json["remotes"] == [
        {"name": "backup", "url": str(tmp_path / "x.git")}
    ]
    assert xb("remote", "add", "backup", "/elsewhere").code == 5
    for url in (
        "https://user:pw@example.com/repo.git",
        "https://token@example.com/r.git",
        "https://example.com/r.git?access_token=x",
    ):
        result = xb("remote", "add", "other", url)
        assert result.code == 4 and "pw" not in result.stderr
    assert xb("remote", "add", "bad name", "/x").code == 4
    # git runs a remote helper for "transport::address" (ext:: any command): refused
    for url in ("ext::sh -c touch% /tmp/x", "fd::17", "gcrypt::https://example.com/r"):
        helper = xb("remote", "add", "other", url)
        assert helper.code == 4 and "Remote helper URLs" in helper.stderr, url
        cloned = xb("clone", url, str(tmp_path / "copy"), store=None)  # clone checks too
        assert cloned.code == 4 and not (tmp_path / "copy").exists(), url
    # an option where ssh or git expect a host or a place (dulwich refuses at fetch time)
    for url in (
        "ssh://-oProxyCommand=touch%20x/repo",
        "git@-oProxyCommand=touch:repo",
        "-oProxyCommand=touch x:repo",
        "--upload-pack=touch x",
    ):
        option = xb("remote", "add", "--store", str(store_dir), "other", "--", url, store=None)
        assert option.code == 4 and "'-'" in option.stderr, (url, option.stderr)
    assert xb("remote", "add", "colons", str(tmp_path / "a::b")).code == 0  # a path
    assert xb("remote", "remove", "colons").code == 0
    assert xb("remote", "add", "ssh", "ssh://git@example.com/me/memory.git").code == 0
    assert [r["name"] for r in xb("remote", "list").json["remotes"]] == ["backup", "ssh"]
    assert xb("remote", "remove", "backup").json["remotes"] == [
        {"name": "ssh", "url": "ssh://git@example.com/me/memory.git"}
    ]
    assert xb("remote", "remove", "nope").code == 3
    assert xb("remote", "push", "nope").code == 3


def test_a_relative_remote_path_is_kept_absolute(
    xb: Run, tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path is read from where the command runs: kept as given, `remote push` from
    another folder went elsewhere (exit 8). add and clone keep it absolute."""
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    added = xb("remote", "add", "backup", "../backup.git").json["remotes"]
    assert added == [{"name": "backup", "url": str(tmp_path / "backup.git")}]
    monkeypatch.chdir(tmp_path)  # another folder: the push still finds the backup
    assert xb("remote", "push", "backup").code == 0
    monkeypatch.chdir(tmp_path / "work")
    assert xb("clone", "../backup.git", "../restored", store=None).code == 0
    monkeypatch.chdir("/")
    restored = tmp_path / "restored"
    origin = xb("remote", "list", store=restored).json["remotes"]
    assert origin == [{"name": "origin", "url": str(tmp_path / "backup.git")}]
    assert xb("remote", "pull", store=restored).json["state"] == "up_to_date"


def test_a_push_into_an_empty_folder_starts_the_backup_there(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    """A folder made for the backup (or an empty mount point) was "No git repository was
    found"; only a path that did not exist yet was started. A folder holding anything is
    still not touched."""
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    empty = tmp_path / "usb"
    empty.mkdir()
    assert xb("remote", "add", "usb", str(empty)).code == 0
    pushed = xb("remote", "push", "usb")
    assert pushed.code == 0 and pushed.json["commit"] == head(store_dir), pushed.stderr
    restored = tmp_path / "restored"
    assert xb("clone", str(empty), str(restored), store=None).code == 0
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    assert xb("remote", "add", "taken", str(taken)).code == 0
    refused = xb("remote", "push", "taken")
    assert refused.code == 8 and [p.name for p in taken.iterdir()] == ["notes.txt"]


def test_a_held_git_config_lock_is_busy_not_an_internal_error(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    """``.git/config.lock``: a git command changing the settings, or one killed while it
    did (a full disk left it too). Every later remote add was "Internal error
    (FileLocked)"."""
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    lock = store_dir / ".git" / "config.lock"
    lock.write_text("")
    config = (store_dir / ".git" / "config").read_bytes()
    result = xb("remote", "add", "backup", str(tmp_path / "b.git"))
    assert result.code == 6 and result.stderr.count("\n") == 1, result.stderr
    assert "(.git/config.lock); retry" in result.stderr
    limit = xb("config", "limits.maxEntries", "20000")
    assert limit.code == 6 and "(.git/config.lock)" in limit.stderr, limit.stderr
    assert (store_dir / ".git" / "config").read_bytes() == config
    lock.unlink()
    assert xb("remote", "add", "backup", str(tmp_path / "b.git")).code == 0
    assert xb("config", "limits.maxEntries", "20000").code == 0
    assert b"20000" in (store_dir / ".git" / "config").read_bytes()


def test_a_remote_inside_the_store_is_refused(xb: Run, store_dir: Path) -> None:
    """It is no backup, and a push would start a repository among the records."""
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    for url in (
        str(store_dir),
        str(store_dir / "resources" / "backup.git"),
        f"file://{store_dir}/.git",
    ):
        result = xb("remote", "add", "self", url)
        assert (result.code, result.stderr) == (
            4,
            f"A remote inside the store is no backup; choose a folder outside {store_dir}.\n",
        ), url
    assert xb("remote", "list").json["remotes"] == []


def test_clone_reproduces_status_search_and_get(xb: Run, devices: tuple[Path, Path, Path]) -> None:
    a, b, _ = devices
    assert xb("status", store=b).json["resources"] == xb("status", store=a).json["resources"] == 2
    x_id = resource_id("x", "123456789")
    assert xb("get", x_id, store=b).json == xb("get", x_id, store=a).json
    assert xb("search", "卡片", store=b).json == xb("search", "卡片", store=a).json
    assert xb("doctor", store=b).json["ok"] is True
    for path in [b, *b.rglob("*")]:
        assert path.lstat().st_mode & 0o077 == 0, path
    # the clone's index was built with the user's compiled dictionary ($XBRAIN_CACHE_DIR),
    # not with a second copy (10 MB, a second to compile) inside the new store
    assert not (b / ".git" / "xbrain" / "cache").exists()


def test_two_devices_converge(
    xb: Run, json_file: Callable[[Any], str], devices: tuple[Path, Path, Path]
) -> None:
    a, b, _ = devices
    x_id = resource_id("x", "123456789")
    a11y = resource_id("web", "fictional-accessibility-guide")
    # a: edits a11y (older), deletes x; b: edits a11y later, adds a new one
    assert (
        xb(
            "put",
            json_file(
                make(
                    "fictional-accessibility-guide",
                    title="Edited on A",
                    updatedAt="2026-11-01T00:00:00Z",
                )
            ),
            store=a,
        ).code
        == 0
    )
    assert xb("delete", x_id, store=a).code == 0
    assert (
        xb(
            "put",
            json_file(
                make(
                    "fictional-accessibility-guide",
                    title="Edited on B",
                    updatedAt="2026-11-15T00:00:00Z",
                )
            ),
            store=b,
        ).code
        == 0
    )
    assert xb("put", json_file(sample()), store=b).code == 0
    assert xb("remote", "push", store=a).code == 0
    diverged = xb("remote", "push", store=b)
    assert diverged.code == 5  # b must pull first
    pulled = xb("remote", "pull", store=b).json
    assert pulled["state"] == "merged"
    pushed = xb("remote", "push", store=b)
    assert pushed.code == 0, (pushed.stderr, pulled, _graph(b), _graph(remote_of(b)))
    assert xb("remote", "pull", store=a).json["state"] == "fast_forward"
    assert tree(a) == tree(b)
    for store in (a, b):
        assert xb("get", a11y, store=store).json["title"] == "Edited on B"  # newer wins
        assert xb("get", x_id, store=store).code == 3  # the deletion travelled
        assert xb("get", ID, store=store).code == 0
        report = xb("doctor", store=store).json
        assert report["ok"] is True, report["problems"]
    # restore on one side after the deletion: a newer edit beats the tombstone
    restored = json.loads((EXAMPLES / "batch.json").read_text())[1]
    # (a minute ahead: a pull refuses a record dated more than a day ahead of its clock)
    restored["updatedAt"] = format_timestamp(datetime.now(timezone.utc) + timedelta(minutes=1))
    assert xb("put", json_file(restored), store=b).code == 0
    assert xb("put", json_file(make("only-on-a")), store=a).code == 0
    xb("remote", "push", store=a)
    assert xb("remote", "pull", store=b).json["state"] == "merged"
    xb("remote", "push", store=b)
    xb("remote", "pull", store=a)
    assert tree(a) == tree(b)
    assert xb("get", x_id, store=a).code == 0
    assert xb("remote", "pull", store=a).json["state"] == "up_to_date"


def _graph(path: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(path), "log", "--all", "--oneline", "--graph", "--format=%h %s %ct"],
        capture_output=True,
        text=True,
    ).stdout


def remote_of(store: Path) -> Path:
    return store.parent / "backup.git"


def test_verify_detects_corruption_and_tampering(xb: Run, devices: tuple[Path, Path, Path]) -> None:
    a, _, remote = devices
    assert xb("remote", "verify", store=a).json["ok"] is True
    with GitStore(a) as git:  # a commit whose catalog lies, pushed to the backup
        parent = git.head()
        commit = git.commit(parent, {"index/catalog/b9.json": b"{}\n"}, "tamper\n", "t <t@t>", 0)
        git.refresh_worktree(commit, ["index/catalog/b9.json"])
    xb("remote", "push", store=a)
    report = xb("remote", "verify", store=a)
    assert report.code == 7 and {p["code"] for p in report.json["problems"]} == {"catalog_drift"}
    packs = list((remote / "objects").rglob("*.pack"))
    loose = [p for p in (remote / "objects").rglob("*") if p.is_file() and len(p.parent.name) == 2]
    victim = (loose or packs)[0]
    os.chmod(victim, 0o600)
    victim.write_bytes(b"garbage")
    broken = xb("remote", "verify", store=a)
    assert broken.code != 0


@needs_git
def test_git_interop_clone_log_and_commits_from_git(
    xb: Run, devices: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    a, _, remote = devices
    work = tmp_path / "git-clone"
    subprocess.run(["git", "clone", "-q", str(remote), str(work)], check=True)
    log = subprocess.run(
        ["git", "-C", str(work), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout
    assert "put: add 2" in log
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Git User",
        "GIT_AUTHOR_EMAIL": "g@example.invalid",
        "GIT_COMMITTER_NAME": "Git User",
        "GIT_COMMITTER_EMAIL": "g@example.invalid",
    }
    x_path = next(work.glob("resources/b9/*.yaml"))
    text = (
        x_path.read_text()
        .replace("title: 一条虚构的设计推文", "title: 改过的标题")
        .replace("2026-10-08T12:00:00.000Z", "2026-11-01T00:00:00.000Z")
    )
    x_path.write_text(text)
    subprocess.run(["git", "-C", str(work), "commit", "-qam", "hand edit"], check=True, env=env)
    subprocess.run(["git", "-C", str(work), "push", "-q", "origin", "main"], check=True, env=env)
    pulled = xb("remote", "pull", store=a)
    assert pulled.json["state"] == "fast_forward"
    assert xb("get", resource_id("x", "123456789"), store=a).json["title"] == "改过的标题"
    assert xb("doctor", store=a).json["ok"] is True  # the catalog was re-derived
    assert xb("search", "改过", store=a).json["results"]
    # an invalid edit is refused and nothing is merged
    x_path.write_text(
        x_path.read_text().replace(
            "https://x.com/i/web/status/123456789", "http://insecure.example/"
        )
    )
    subprocess.run(["git", "-C", str(work), "commit", "-qam", "bad edit"], check=True, env=env)
    subprocess.run(["git", "-C", str(work), "push", "-q", "origin", "main"], check=True, env=env)
    before = head(a)
    refused = xb("remote", "pull", store=a)
    assert refused.code == 4 and "nothing changed" in refused.stderr
    assert head(a) == before


# -- merge laws ----------------------------------------------------------------------------

ops = st.lists(
    st.tuples(
        st.sampled_from(["put", "delete"]),
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["2027-01-01T00:00:00Z", "2027-06-01T00:00:00Z", "2028-01-01T00:00:00Z"]),
        st.sampled_from(["one", "two"]),
    ),
    max_size=5,
)


def apply_ops(store: Any, sequence: list[tuple[str, str, str, str]]) -> None:
    from xbrain.errors import XbrainError

    for op, source, when, title in sequence:
        try:
            if op == "put":
                store.put([make(source, title=title, updatedAt=when)])
            else:
                store.delete(resource_id("web", source))
        except XbrainError:
            pass


@settings(max_examples=15)
@given(ops, ops)
def test_merge_is_commutative_and_idempotent(
    tmp_path_factory: pytest.TempPathFactory, left: list[Any], right: list[Any]
) -> None:
    from xbrain.store import Store

    root = tmp_path_factory.mktemp("merge")
    base = Store(root / "base")
    base.put([make("a"), make("b")])
    stores = []
    for name, sequence in (("left", left), ("right", right)):
        shutil.copytree(root / "base", root / name, symlinks=True)
        store = Store(root / name)
        apply_ops(store, sequence)
        stores.append(root / name)

    left_first = merged_tree(stores[0], stores[1])
    right_first = merged_tree(stores[1], stores[0])
    assert left_first == right_first
    with GitStore(stores[0]) as git:
        view = View(git.snapshot())
        assert merge_files(view, view) == {}


def test_git_protocol_through_a_local_dulwich_daemon(xb: Run, tmp_path: Path) -> None:
    """git:// against dulwich's own server on 127.0.0.1 (no other network)."""
    import threading

    from dulwich.repo import Repo
    from dulwich.server import DictBackend, TCPGitServer

    remote = bare(tmp_path)
    repo = Repo(str(remote))
    server = TCPGitServer(DictBackend({b"/": repo}), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"git://127.0.0.1:{server.server_address[1]}/"
        a, b = tmp_path / "a", tmp_path / "b"
        assert xb("put", str(EXAMPLES / "batch.json"), store=a).code == 0
        assert xb("remote", "add", "origin", url, store=a).code == 0
        pushed = xb("remote", "push", store=a)
        assert pushed.code == 0, pushed.stderr
        cloned = xb("clone", url, str(b), store=None)
        assert cloned.code == 0, cloned.stderr
        assert cloned.json["status"]["resources"] == 2
        assert xb("remote", "verify", store=a).json["ok"] is True
        assert tree(a) == tree(b)
    finally:
        server.shutdown()
        server.server_close()
        repo.close()


def test_a_refused_push_is_an_error_not_silence(
    xb: Run, json_file: Callable[[Any], str], devices: tuple[Path, Path, Path]
) -> None:
    a, _, remote = devices
    xb("put", json_file(sample()), store=a)
    before = (remote / "refs" / "heads" / "main").read_text()
    (remote / "refs" / "heads" / "main.lock").write_text("")  # another writer holds the ref
    refused = xb("remote", "push", store=a)
    assert refused.code == 8 and "refused refs/heads/main" in refused.stderr
    assert (remote / "refs" / "heads" / "main").read_text() == before
    (remote / "refs" / "heads" / "main.lock").unlink()
    assert xb("remote", "push", store=a).code == 0


def test_a_pull_never_replaces_a_hand_edit(
    xb: Run, json_file: Callable[[Any], str], devices: tuple[Path, Path, Path]
) -> None:
    a, b, _ = devices
    a11y = resource_id("web", "fictional-accessibility-guide")
    later = make(
        "fictional-accessibility-guide", text="Edited on a.", updatedAt="2026-11-01T00:00:00.000Z"
    )
    assert xb("put", json_file(later), store=a).code == 0
    assert xb("remote", "push", store=a).code == 0
    path = next((b / "resources").rglob(f"{a11y}.yaml"))
    edited = path.read_text().replace("title:", "title: Hand edited", 1)
    path.write_text(edited)
    before = head(b)
    refused = xb("remote", "pull", store=b)
    assert refused.code == 5 and f"{a11y}.yaml" in refused.stderr
    assert head(b) == before and path.read_text() == edited
    assert xb("doctor", "--repair", store=b).json["ok"] is True  # drop it (kept in rescued/)
    assert xb("remote", "pull", store=b).json["state"] == "fast_forward"
    assert "Edited on a." in path.read_text()


def test_a_remote_path_that_is_not_utf8_is_refused_in_one_line(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """remote add crashed ("Internal error (UnicodeEncodeError)"); clone said it could
    not fetch, quoting a codec error."""
    xb("put", str(EXAMPLES / "batch.json"))
    odd = os.fsdecode(os.fsencode(tmp_path) + b"/backup\xff.git")
    for args, store in ((("remote", "add", "origin", odd), store_dir), (("clone", odd, "x"), None)):
        refused = xb(*args, store=store)
        assert refused.code == 4, refused.stderr
        assert refused.stderr == "Remote URLs and paths must be valid UTF-8.\n"
    assert xb("remote", "list").json["remotes"] == []


def test_a_push_into_a_store_with_main_checked_out_is_refused(
    xb: Run, json_file: Callable[[Any], str], devices: tuple[Path, Path, Path]
) -> None:
    """It moved the other store's main under its working tree (git refuses the same, by
    receive.denyCurrentBranch): that store's files fell behind, and its next write saw
    hand edits everywhere."""
    a, b, _ = devices
    assert xb("put", json_file(sample(text="Newer on a.")), store=a).code == 0
    assert xb("remote", "add", "b", f"file://{b}", store=a).code == 0
    before = head(b)
    refused = xb("remote", "push", "b", store=a)
    assert refused.code == 5 and "main is checked out there" in refused.stderr
    assert head(b) == before
    assert xb("remote", "add", "a", str(a), store=b).code == 0  # the way it goes
    assert xb("remote", "pull", "a", store=b).json["state"] == "fast_forward"
    assert xb("doctor", store=b).json["ok"] is True


@pytest.mark.parametrize("age", [0.0, 60.0])
def test_a_push_gets_past_a_tracking_ref_lock_a_killed_push_left(
    xb_proc: Callable[..., Result], tmp_path: Path, store_dir: Path, age: float
) -> None:
    """A push killed while it recorded what the remote holds leaves
    ``refs/remotes/origin/main.lock``; every later push then failed ("Internal error
    (FileLocked)") after the remote had taken its commits, so the automatic push never
    finished. The next push removes a lock no live writer holds and records the head."""
    assert xb_proc("init").code == 0
    assert xb_proc("remote", "add", "origin", str(tmp_path / "origin.git")).code == 0
    assert xb_proc("remote", "push", "origin").code == 0
    assert xb_proc("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    lock = store_dir / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    lock.write_text("")
    os.utime(lock, (lock.stat().st_atime - age, lock.stat().st_mtime - age))
    pushed = xb_proc("remote", "push", "origin")
    assert pushed.code == 0, pushed.stderr
    assert not lock.exists()
    tracked = (store_dir / ".git" / "refs" / "remotes" / "origin" / "main").read_text().strip()
    assert tracked == head(store_dir) == pushed.json["commit"]
