"""A remote is hostile input: what a push to the user's backup can and cannot do.

Hostile commits are made with the real git binary (``git mktree`` / ``commit-tree`` /
``update-ref``) where the issue reproduced them, and with dulwich in the fuzz test
(thousands of trees; same objects, no process per example).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES, Result, head, make, snapshot_files
from tests.security.mallory import GIT_ENV, git
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is needed")


def blob(repo: Path, text: str) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input=text)


def mktree(repo: Path, entries: list[tuple[str, str, str, str]]) -> str:
    """entries: (mode, type, sha, name)."""
    lines = "".join(f"{mode} {kind} {sha}\t{name}\n" for mode, kind, sha, name in entries)
    return git(repo, "mktree", input=lines)


def hostile_push(remote: Path, extra: list[tuple[str, str, str, str]]) -> str:
    """Add ``extra`` entries to the root tree of the remote's main, as a new commit."""
    parent = git(remote, "rev-parse", "main")
    listing = git(remote, "ls-tree", "main")
    entries = []
    for line in listing.splitlines():
        meta, name = line.split("\t", 1)
        mode, kind, sha = meta.split()
        entries.append((mode, kind, sha, name))
    tree = mktree(remote, entries + extra)
    commit = git(remote, "commit-tree", tree, "-p", parent, "-m", "innocent")
    git(remote, "update-ref", "refs/heads/main", commit)
    return commit


def outside_and_git(tmp_path: Path, store: Path) -> dict[str, bytes]:
    """Everything under tmp_path except the remote and the store's working tree/objects/refs."""
    out = {}
    for path in sorted(tmp_path.rglob("*")):
        rel = path.relative_to(tmp_path)
        parts = rel.parts
        if parts[0] in ("backup.git", "home") or not path.is_file() or path.is_symlink():
            continue
        if path.is_relative_to(store) and not path.is_relative_to(store / ".git"):
            continue
        if path.is_relative_to(store / ".git") and (
            path.is_relative_to(store / ".git" / "objects")
            or path.is_relative_to(store / ".git" / "refs")
            or path.name.endswith(".lock")
            or path.is_relative_to(store / ".git" / "xbrain")
            or path.name in ("index", "FETCH_HEAD")
            or path.is_relative_to(store / ".git" / "logs")
        ):
            continue
        out[str(rel)] = path.read_bytes()
    return out


@pytest.fixture
def backed_up(xb: Run, tmp_path: Path, store_dir: Path) -> Path:
    """A store with a few resources pushed to a bare repository made by git."""
    remote = tmp_path / "backup.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert xb("put", str(EXAMPLES / "batch.json")).code == 0
    assert xb("remote", "add", "origin", str(remote)).code == 0
    assert xb("remote", "push").code == 0
    return remote


def test_pull_refuses_dotdot_and_dotgit_entries(
    xb: Run, backed_up: Path, store_dir: Path, tmp_path: Path
) -> None:
    """Item 1, the reproduction: before the fix escape.txt appeared and .git/config was replaced."""
    remote = backed_up
    escape = mktree(remote, [("100644", "blob", blob(remote, "pwned\n"), "escape.txt")])
    config = blob(remote, "[core]\n\tfsmonitor = touch /tmp/xbrain-pwned\n")
    dotgit = mktree(remote, [("100644", "blob", config, "config")])
    hostile_push(remote, [("040000", "tree", escape, ".."), ("040000", "tree", dotgit, ".git")])
    before_head, before_files = head(store_dir), snapshot_files(store_dir)
    result = xb("remote", "pull")
    assert result.code == 4, result.stderr
    assert "Refused remote origin" in result.stderr and (
        '".."' in result.stderr or '".git' in result.stderr
    )
    assert not (tmp_path / "escape.txt").exists()
    assert head(store_dir) == before_head
    after = snapshot_files(store_dir)
    assert {
        k: v
        for k, v in after.items()
        if not k.startswith((".git/objects", ".git/refs", ".git/logs", ".git/FETCH_HEAD"))
    } == {
        k: v
        for k, v in before_files.items()
        if not k.startswith((".git/objects", ".git/refs", ".git/logs"))
    }
    assert b"fsmonitor" not in (store_dir / ".git" / "config").read_bytes()
    assert xb("doctor").json["ok"] is True


@pytest.mark.parametrize(
    ("name", "mode", "kind", "why"),
    [
        (".GIT", "040000", "tree", "git's own directory"),
        ("git~1", "040000", "tree", "git's own directory"),
        (".git\u200c", "040000", "tree", "git's own directory"),
        (".git. ", "040000", "tree", "git's own directory"),
        ("README.md", "100644", "blob", "layout"),
        ("notes", "040000", "tree", "layout"),
        ("xbrain.yaml.bak", "100755", "blob", "not a regular file"),
        ("link", "120000", "blob", "symbolic link"),
    ],
)
def test_pull_refuses_foreign_names_and_modes(
    xb: Run, backed_up: Path, store_dir: Path, name: str, mode: str, kind: str, why: str
) -> None:
    remote = backed_up
    inner = mktree(remote, [("100644", "blob", blob(remote, "x\n"), "config")])
    sha = inner if kind == "tree" else blob(remote, "/etc/passwd")
    hostile_push(remote, [(mode, kind, sha, name)])
    before = head(store_dir)
    result = xb("remote", "pull")
    assert result.code == 4 and why in result.stderr, result.stderr
    assert head(store_dir) == before


def test_pull_refuses_symlinked_records_dir_and_gitlinks(
    xb: Run, backed_up: Path, store_dir: Path, tmp_path: Path
) -> None:
    """Item 3: a remote whose resources entry is a symlink; and a submodule entry."""
    remote = backed_up
    target = tmp_path / "attacker"
    target.mkdir()
    listing = [line.split("\t", 1) for line in git(remote, "ls-tree", "main").splitlines()]
    entries = []
    for meta, name in listing:
        mode, kind, sha = meta.split()
        if name == "resources":
            mode, kind, sha = "120000", "blob", blob(remote, str(target))
        entries.append((mode, kind, sha, name))
    commit = git(
        remote,
        "commit-tree",
        mktree(remote, entries),
        "-p",
        git(remote, "rev-parse", "main"),
        "-m",
        "x",
    )
    git(remote, "update-ref", "refs/heads/main", commit)
    assert xb("remote", "pull").code == 4
    clone = xb("clone", str(remote), str(tmp_path / "restored"), store=None)
    assert clone.code == 4 and "symbolic link" in clone.stderr
    assert not (tmp_path / "restored").exists()
    # a put afterwards writes into the store, never into the attacker's directory
    assert xb("put", "-", input=make("after-attack")).code == 0
    assert list(target.iterdir()) == []


def test_an_object_larger_than_any_store_file_is_refused_before_it_is_indexed(
    xb: Run, backed_up: Path, store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """65 MiB of zeros (≈ 65 KB compressed) at a record's path: over the largest file a
    store can hold (64 MiB), so pull, verify and clone refuse it from the pack's header,
    before dulwich inflates it to index it."""
    from dulwich.object_store import DiskObjectStore

    remote = backed_up
    zeros = (
        subprocess.run(
            ["git", "-C", str(remote), "hash-object", "-w", "--stdin"],
            input=bytes(65 << 20),
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    path = "resources/aa/resource_" + "a" * 64 + ".yaml"
    inner = mktree(remote, [("100644", "blob", zeros, path.rsplit("/", 1)[1])])
    outer = mktree(remote, [("040000", "tree", inner, "aa")])
    hostile_push(remote, [("040000", "tree", outer, "zz-extra")])

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a refused pack reached dulwich's indexer")

    monkeypatch.setattr(DiskObjectStore, "add_thin_pack", never)
    before = head(store_dir)
    message = "holds an object of 68,157,440 bytes; the limit is 64 MiB."
    pulled = xb("remote", "pull")
    assert pulled.code == 4 and message in pulled.stderr, pulled.stderr
    assert head(store_dir) == before
    assert not list((store_dir / ".git" / "xbrain" / "incoming").iterdir())
    verified = xb("remote", "verify")
    assert verified.code == 7 and message in verified.json["problems"][0]["message"]
    cloned = xb("clone", str(remote), str(tmp_path / "copy"), store=None)
    assert cloned.code == 4 and message in cloned.stderr
    assert not (tmp_path / "copy").exists()


def test_failed_clone_removes_what_it_created_and_keeps_an_existing_dir(
    xb: Run, backed_up: Path, tmp_path: Path
) -> None:
    """Item 2: before the fix the directory stayed, with main on the hostile commit."""
    remote = backed_up
    hostile_push(remote, [("100644", "blob", blob(remote, "x"), "evil.sh")])
    missing = tmp_path / "new" / "deeper" / "store"
    result = xb("clone", str(remote), str(missing), store=None)
    assert result.code == 4 and "evil.sh" in result.stderr
    assert not (tmp_path / "new").exists()
    existing = tmp_path / "mine"
    existing.mkdir(mode=0o755)
    assert xb("clone", str(remote), str(existing), store=None).code == 4
    assert existing.is_dir() and list(existing.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_repository_without_xbrain_yaml_is_not_cloned_as_a_store(
    xb: Run, backed_up: Path, tmp_path: Path
) -> None:
    """Every file in its place, but no marker: not an xbrain store, refused whole."""
    remote = backed_up
    entries = []
    for line in git(remote, "ls-tree", "main").splitlines():
        meta, name = line.split("\t", 1)
        mode, kind, sha = meta.split()
        if name != "xbrain.yaml":
            entries.append((mode, kind, sha, name))
    commit = git(remote, "commit-tree", mktree(remote, entries), "-m", "no marker")
    git(remote, "update-ref", "refs/heads/main", commit)
    copy = tmp_path / "copy"
    cloned = xb("clone", str(remote), str(copy), store=None)
    assert cloned.code == 4, (cloned.stdout, cloned.stderr)
    assert "it is not an xbrain store (no xbrain.yaml)" in cloned.stderr
    assert not copy.exists()


def test_verify_reports_a_hostile_remote_and_leaves_no_copy(
    xb: Run, backed_up: Path, store_dir: Path
) -> None:
    remote = backed_up
    hostile_push(remote, [("120000", "blob", blob(remote, "/dev/zero"), "xbrain.yaml.link")])
    result = xb("remote", "verify")
    assert result.code == 7
    report = result.json
    assert report["ok"] is False and report["problems"][0]["code"] == "refused"
    assert schema_errors("remote-verify-output", report) == []
    scratch = store_dir / ".git" / "xbrain" / "verify"
    assert not scratch.exists() or list(scratch.iterdir()) == []


def test_verify_sweeps_copies_left_by_a_killed_verify(
    xb: Run, backed_up: Path, store_dir: Path
) -> None:
    """Item 13: a killed verify used to leave a full copy of the backup behind."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    leftover = store_dir / ".git" / "xbrain" / "verify" / f"{dead.pid}-abc"
    (leftover / "copy").mkdir(parents=True)
    (leftover / "copy" / "big").write_bytes(b"x" * 1000)
    report = xb("remote", "verify").json
    assert report["ok"] is True and schema_errors("remote-verify-output", report) == []
    assert not leftover.exists()


def test_bad_marker_and_state_files_are_refused_before_main_moves(
    xb: Run, backed_up: Path, store_dir: Path
) -> None:
    """Item 11: a bad xbrain.yaml bricked every command; garbage receipts moved main first."""
    remote = backed_up
    listing = [line.split("\t", 1) for line in git(remote, "ls-tree", "main").splitlines()]
    for name, text in (
        ("xbrain.yaml", "format: xbrain-store/1\nlimits: {maxEntries: lots}\n"),
        ("receipts", None),
    ):
        entries = []
        for meta, entry in listing:
            mode, kind, sha = meta.split()
            if entry == name and text is not None:
                sha = blob(remote, text)
            entries.append((mode, kind, sha, entry))
        if text is None:
            bad = mktree(remote, [("100644", "blob", blob(remote, "[1, 2"), "a" * 64 + ".json")])
            entries.append(("040000", "tree", bad, "receipts"))
        parent = git(remote, "rev-parse", "main")
        commit = git(remote, "commit-tree", mktree(remote, entries), "-p", parent, "-m", "x")
        before = head(store_dir)
        git(remote, "update-ref", "refs/heads/main", commit)
        result = xb("remote", "pull")
        assert result.code == 4 and "invalid" in result.stderr, result.stderr
        assert head(store_dir) == before
        assert xb("status").code == 0 and xb("doctor").json["ok"] is True
        git(remote, "update-ref", "refs/heads/main", parent)


def test_a_bad_marker_in_the_store_itself_is_reported_not_a_crash(xb: Run, store_dir: Path) -> None:
    """Item 11: doctor must always run and report; other commands say what is wrong."""
    assert xb("put", str(EXAMPLES / "batch.json")).code == 0
    work = store_dir
    (work / "xbrain.yaml").write_text("format: xbrain-store/1\nidentity: [1]\n")
    git(work, "commit", "-qam", "hand edit")
    status = xb("status")
    assert status.code == 7 and "xbrain.yaml" in status.stderr
    report = xb("doctor")
    assert report.code == 7 and report.json["ok"] is False
    codes = {p["code"] for p in report.json["problems"]} - {"permissions"}  # git's own files
    assert codes == {"invalid_config"}


def test_fast_forward_turns_plain_git_deletions_into_tombstones(
    xb: Run, backed_up: Path, store_dir: Path, tmp_path: Path
) -> None:
    """Item 8: before the fix a git rm elsewhere left 0 resources and 0 tombstones."""
    remote = backed_up
    work = tmp_path / "work"
    subprocess.run(
        ["git", "clone", "-q", str(remote), str(work)], check=True, env={**os.environ, **GIT_ENV}
    )
    records = sorted((work / "resources").rglob("*.yaml"))
    assert len(records) == 2
    git(work, "rm", "-q", *[str(p.relative_to(work)) for p in records])
    git(work, "commit", "-qm", "remove with git")
    git(work, "push", "-q", "origin", "main")
    result = xb("remote", "pull")
    assert result.code == 0 and result.json["state"] == "fast_forward", result.stderr
    status = xb("status").json
    assert (status["resources"], status["tombstones"]) == (0, 2)
    assert xb("doctor").json["ok"] is True
    ids = [p.stem for p in records]
    for rid in ids:
        assert xb("get", rid).code == 3
    # a capture cannot resurrect them: putting the old revision back is stale
    assert xb("put", str(EXAMPLES / "batch.json")).code == 5


def test_merge_over_the_entry_limit_is_refused(
    xb: Run, json_file: Callable[[object], str], tmp_path: Path
) -> None:
    """Item 9: two devices of 6,001 each (one resource in common), merged into 12,001
    (limit 10,000). Each device is filled by one ``import-store``: 12 batches of ``put``
    cost this test a minute. Their histories are unrelated, as two devices set up apart
    and then given one remote; the limit is checked on the merged tree either way."""
    from dulwich.repo import Repo

    remote = tmp_path / "limit.git"
    Repo.init_bare(str(remote), mkdir=True, default_branch=b"main").close()
    a, b = tmp_path / "a", tmp_path / "b"
    for store, prefix in ((a, "a"), (b, "b")):
        items = [make("shared"), *(make(f"{prefix}-{i}") for i in range(6000))]
        document = {"version": 1, "resources": items, "tombstones": [], "receipts": {}}
        assert xb("import-store", json_file(document), store=store).code == 0
        assert xb("remote", "add", "origin", str(remote), store=store).code == 0
    assert xb("remote", "push", store=b).code == 0
    before = head(a)
    result = xb("remote", "pull", store=a)
    assert result.code == 4 and "limit" in result.stderr and "10,000" in result.stderr
    assert head(a) == before
    assert xb("config", "limits.maxEntries", "20000", store=a).code == 0
    assert xb("remote", "pull", store=a).json["state"] == "merged"
    assert xb("status", store=a).json["resources"] == 12001


# -- fuzz ------------------------------------------------------------------------------------

NAMES = st.sampled_from(
    [
        b"..",
        b".",
        b".git",
        b".GIT",
        b"git~1",
        b"a/b",
        b"a\x00b",
        b"x\x01",
        b"notes",
        b"README",
        b"resources",
        b"tombstones",
        b"index",
        b"xbrain.yaml",
        b".git\xe2\x80\x8c",
        b"\xff",
    ]
)
MODES = st.sampled_from([0o100644, 0o100755, 0o120000, 0o160000, 0o040000])


@st.composite
def hostile_entries(draw: st.DrawFn) -> list[tuple[bytes, int, str]]:
    """1–3 entries (name, mode, payload kind) of which at least one is refused."""
    count = draw(st.integers(1, 3))
    out = []
    for _ in range(count):
        out.append((draw(NAMES), draw(MODES), draw(st.sampled_from(["small", "big", "tree"]))))
    return out


def _hostile_commit(remote: Path, entries: list[tuple[bytes, int, str]]) -> None:
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.refs import Ref
    from dulwich.repo import Repo

    with Repo(str(remote)) as repo:
        parent = repo.refs[Ref(b"refs/heads/main")]
        old = repo[repo[parent].tree]  # type: ignore[attr-defined]
        root = Tree()
        for item in old.iteritems():  # type: ignore[attr-defined]
            root.add(item.path, item.mode, item.sha)
        for name, mode, payload in entries:
            if payload == "tree" or mode == 0o040000:
                leaf = Blob.from_string(b"x")
                repo.object_store.add_object(leaf)
                sub = Tree()
                sub.add(b"escape.txt", 0o100644, leaf.id)
                repo.object_store.add_object(sub)
                root.add(name, 0o040000, sub.id)
            else:
                data = b"x" * (3 * 1024 * 1024) if payload == "big" else b"/dev/zero"
                obj = Blob.from_string(data)
                repo.object_store.add_object(obj)
                root.add(name, mode, obj.id)
        repo.object_store.add_object(root)
        commit = Commit()
        commit.tree, commit.parents = root.id, [parent]
        commit.author = commit.committer = b"m <m@x>"
        commit.author_time = commit.commit_time = 1
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"fuzz"
        repo.object_store.add_object(commit)
        repo.refs[Ref(b"refs/heads/main")] = commit.id


def _refused_by_layout(entries: list[tuple[bytes, int, str]]) -> bool:
    """Whether this tree is one a store must refuse (most are; a few are merely odd)."""
    for name, mode, payload in entries:
        if name not in (b"resources", b"tombstones", b"index", b"xbrain.yaml"):
            return True
        if mode != 0o040000 and payload != "tree" and name != b"xbrain.yaml":
            return True
        if name == b"xbrain.yaml" and (mode != 0o100644 or payload == "tree"):
            return True
        if payload == "tree" or mode == 0o040000:
            return True  # a directory holding escape.txt has no place in the layout
        if name == b"xbrain.yaml":
            return True  # "/dev/zero" or 3 MiB of x is not a valid marker
    return False


@settings(max_examples=20)
@given(entries=hostile_entries())
def test_fuzz_hostile_trees_change_nothing_outside_objects_and_refs(
    xb: Run, tmp_path_factory: pytest.TempPathFactory, entries: list[tuple[bytes, int, str]]
) -> None:
    tmp = tmp_path_factory.mktemp("fuzz")
    store = tmp / "store"
    remote = tmp / "backup.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert xb("put", str(EXAMPLES / "synthetic-resource.json"), store=store).code == 0
    assert xb("remote", "add", "origin", str(remote), store=store).code == 0
    assert xb("remote", "push", store=store).code == 0
    _hostile_commit(remote, entries)
    assert _refused_by_layout(entries)
    before_head = head(store)
    before = outside_and_git(tmp, store)
    before_tree = {k: v for k, v in snapshot_files(store).items() if not k.startswith(".git/")}
    # a NUL cannot be encoded in a tree entry: the object itself is malformed, and the
    # fetch fails (exit 8) before there is any tree to check; either way nothing changes
    malformed = any(b"\x00" in name for name, _, _ in entries)
    pulled = xb("remote", "pull", store=store)
    assert pulled.code == (8 if malformed else 4), (entries, pulled.stderr)
    cloned = xb("clone", str(remote), str(tmp / "clone"), store=None)
    assert cloned.code == (8 if malformed else 4), (entries, cloned.stderr)
    verified = xb("remote", "verify", store=store)
    if malformed:
        assert verified.code == 8
    else:
        assert verified.code == 7 and verified.json["problems"][0]["code"] == "refused"
    assert head(store) == before_head
    assert outside_and_git(tmp, store) == before
    assert {
        k: v for k, v in snapshot_files(store).items() if not k.startswith(".git/")
    } == before_tree
    assert not (tmp / "clone").exists() and not (tmp / "escape.txt").exists()


def test_clone_of_a_valid_backup_still_restores(xb: Run, backed_up: Path, tmp_path: Path) -> None:
    restored = tmp_path / "restored"
    result = xb("clone", str(backed_up), str(restored), store=None)
    assert result.code == 0, result.stderr
    assert result.json["status"]["resources"] == 2
    assert xb("doctor", store=restored).json["ok"] is True
    modes = {oct(p.stat().st_mode & 0o777) for p in restored.rglob("*") if not p.is_symlink()}
    assert modes <= {"0o600", "0o700", "0o400"}, modes


def test_writes_never_follow_a_link_in_the_working_tree(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Item 3: with a planted link the put fails before committing; repair removes the link."""
    assert xb("put", str(EXAMPLES / "batch.json")).code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move(str(store_dir / "resources"), str(tmp_path / "moved"))
    (store_dir / "resources").symlink_to(elsewhere)
    before = head(store_dir)
    result = xb("put", "-", input=make("private"))
    assert result.code == 7 and "doctor --repair" in result.stderr, result.stderr
    assert head(store_dir) == before and list(elsewhere.iterdir()) == []
    report = xb("doctor").json
    assert "worktree_link" in {p["code"] for p in report["problems"]}
    assert schema_errors("doctor-output", report) == []
    repaired = xb("doctor", "--repair")
    assert repaired.code == 0 and schema_errors("doctor-output", repaired.json) == []
    assert not (store_dir / "resources").is_symlink() and elsewhere.is_dir()
    assert xb("put", "-", input=make("private")).code == 0
    assert list(elsewhere.iterdir()) == []
    assert xb("doctor").json["ok"] is True


def test_doctor_does_not_read_through_a_link_to_dev_zero(xb_proc: Run, store_dir: Path) -> None:
    """Item 13: doctor followed links and read /dev/zero (3-4 GB)."""
    import time

    assert xb_proc("put", str(EXAMPLES / "batch.json")).code == 0
    record = next((store_dir / "resources").rglob("*.yaml"))
    record.unlink()
    record.symlink_to("/dev/zero")
    started = time.monotonic()
    report = xb_proc("doctor")
    assert time.monotonic() - started < 30
    codes = {p["code"] for p in report.json["problems"]}
    assert {"worktree_link", "worktree_drift"} <= codes
    assert xb_proc("doctor", "--repair").code == 0
    assert not record.is_symlink() and xb_proc("doctor").json["ok"] is True


def test_a_remote_cannot_raise_the_limits_a_pull_is_held_to(
    xb: Run, backed_up: Path, store_dir: Path
) -> None:
    """Item 9, the two-step variant: a remote's xbrain.yaml that raises the limits may be
    pulled, but the next pull is still held to what the user set on this device."""
    from xbrain.git import GitStore
    from xbrain.remote.settings import device

    remote = backed_up
    listing = [line.split("\t", 1) for line in git(remote, "ls-tree", "main").splitlines()]
    entries = []
    for meta, name in listing:
        mode, kind, sha = meta.split()
        if name == "xbrain.yaml":
            sha = blob(remote, "format: xbrain-store/1\nlimits:\n  maxEntries: 1000000\n")
        entries.append((mode, kind, sha, name))
    parent = git(remote, "rev-parse", "main")
    commit = git(remote, "commit-tree", mktree(remote, entries), "-p", parent, "-m", "raise")
    git(remote, "update-ref", "refs/heads/main", commit)
    assert xb("remote", "pull").json["state"] == "fast_forward"
    assert xb("config").json["limits"]["maxEntries"] == 1_000_000  # the marker travelled
    with GitStore(store_dir) as store:
        assert device(store).max_entries == 10_000  # but this device's limit did not
    assert xb("config", "limits.maxEntries", "20000").code == 0
    with GitStore(store_dir) as store:
        assert device(store).max_entries == 20_000


def test_a_fast_forward_re_derives_a_catalog_edited_alone(
    xb: Run, backed_up: Path, store_dir: Path, tmp_path: Path
) -> None:
    """The fast-forward shortcut (xbrain-made commits need no re-derivation) must not
    trust a catalog, summary or URL index that a plain-git commit edited by itself."""
    work = tmp_path / "work"
    subprocess.run(
        ["git", "clone", "-q", str(backed_up), str(work)], check=True, env={**os.environ, **GIT_ENV}
    )
    shard = next((work / "index" / "catalog").glob("*.json"))
    shard.write_text(shard.read_text().replace('"bytes": ', '"bytes": 1'))
    summary = work / "index" / "summary.json"
    summary.write_text(summary.read_text().replace('"resources": 2', '"resources": 7'))
    git(work, "commit", "-qam", "edit derived files only")
    git(work, "push", "-q", "origin", "main")
    result = xb("remote", "pull")
    assert result.code == 0 and result.json["state"] == "fast_forward", result.stderr
    assert xb("status").json["resources"] == 2
    assert xb("doctor").json["ok"] is True
    assert "re-derive index" in xb("log", "--limit", "1").json["commits"][0]["summary"]


def test_doctor_repair_never_writes_an_unsafe_path_of_main(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Item 2: a hostile commit that reached main outside xbrain (a plain git fetch and
    update-ref) is reported by doctor, and --repair writes none of its paths."""
    assert xb("put", str(EXAMPLES / "batch.json")).code == 0
    store = store_dir
    escape = mktree(store, [("100644", "blob", blob(store, "pwned\n"), "escape.txt")])
    config = mktree(store, [("100644", "blob", blob(store, "[core]\n\tbare = true\n"), "config")])
    hostile_push(store, [("040000", "tree", escape, ".."), ("040000", "tree", config, ".git")])
    before = (store / ".git" / "config").read_bytes()
    report = xb("doctor").json
    assert "unsafe_path" in {p["code"] for p in report["problems"]}
    repaired = xb("doctor", "--repair")
    assert repaired.code == 7  # still reported: repair never rewrites history
    assert not (tmp_path / "escape.txt").exists()
    assert (store / ".git" / "config").read_bytes() == before
    assert xb("status").code == 0


def _nested(remote: Path, path: str, text: str) -> tuple[str, str, str, str]:
    """A root tree entry holding ``text`` at the slash-separated ``path``."""
    parts = path.split("/")
    entry = ("100644", "blob", blob(remote, text), parts[-1])
    for name in reversed(parts[:-1]):
        entry = ("040000", "tree", mktree(remote, [entry]), name)
    return entry


def _entry_id() -> str:
    from xbrain.kinds.entry import entry_id

    return entry_id("global", "x")


EVIL = _entry_id()


def _evil_skill_id() -> str:
    from xbrain.kinds.skillformat import skill_id

    return skill_id("evil")


@pytest.mark.parametrize(
    ("path", "text", "why"),
    [
        (  # an entry whose stored source would make an export write outside its folder
            f"entries/{EVIL[6:8]}/{EVIL}.yaml",
            f"id: {EVIL}\nkind: rule\nname: x\nupdatedAt: '2026-01-01T00:00:00.000Z'\n"
            "source: {path: ../../evil.md, section: null, order: 0, markdown: x}\n",
            "'..' part",
        ),
        (  # a skill state that lists a head it does not have
            "skills/evil/skill.yaml",
            "id: skill_" + "0" * 64 + "\nslug: evil\nstatus: active\n"
            "status_changed: '2026-01-01T00:00:00.000Z'\nhead: rev_"
            + "0" * 32
            + "\nrevisions: []\n",
            "invalid",
        ),
        (  # a well-formed skill state whose id is not its slug's: two ids for one skill
            "skills/evil/skill.yaml",
            "id: skill_" + "0" * 64 + "\nslug: evil\nstatus: active\n"
            "status_changed: '2026-01-01T00:00:00.000Z'\nhead: rev_" + "0" * 32 + "\n"
            "revisions:\n- id: rev_" + "0" * 32 + "\n  number: 1\n  parent: null\n"
            "  created: '2026-01-01T00:00:00.000Z'\n  state: draft\n"
            "  state_changed: '2026-01-01T00:00:00.000Z'\n",
            "the skill's id is not the id of its slug",
        ),
        (  # a skill state with two published revisions (SPEC §12: one at most)
            "skills/evil/skill.yaml",
            f"id: {_evil_skill_id()}\nslug: evil\nstatus: active\n"
            "status_changed: '2026-01-01T00:00:00.000Z'\nhead: rev_" + "1" * 32 + "\n"
            "revisions:\n"
            + "".join(
                f"- id: rev_{n * 32}\n  number: {number}\n  parent: {parent}\n"
                "  created: '2026-01-01T00:00:00.000Z'\n  state: published\n"
                "  state_changed: '2026-01-01T00:00:00.000Z'\n"
                "  published_at: '2026-01-01T00:00:00.000Z'\n"
                for n, number, parent in (("0", 1, "null"), ("1", 2, "rev_" + "0" * 32))
            ),
            "more than one revision is published",
        ),
        (  # a skill file over the 128 KiB bound
            "skills/evil/revisions/rev_" + "0" * 32 + "/files/big.md",
            "x" * (130 * 1024),
            "larger than",
        ),
        (  # a skill file whose name no file system holds: its checkout would fail
            "skills/evil/revisions/rev_" + "0" * 32 + "/files/" + "d" * 300 + ".md",
            "hello",
            "longer than 255 bytes",
        ),
        (  # a file in a skill's folder that has no place in the layout
            "skills/evil/notes.txt",
            "hello",
            "not part of an xbrain store's layout",
        ),
        (  # a valid entry filed under another entry's id: it would shadow that one
            f"entries/00/entry_{'0' * 64}.yaml",
            f"id: {EVIL}\nkind: rule\nname: x\nupdatedAt: '2026-01-01T00:00:00.000Z'\n",
            "the file name does not match its id",
        ),
        (  # YAML nested 30,000 deep: ruamel's C composer crashed the process on it
            f"entries/{EVIL[6:8]}/{EVIL}.yaml",
            "id: " + EVIL + "\nkind: rule\nname: " + "[" * 30_000 + "]" * 30_000 + "\n",
            "Not valid YAML",
        ),
    ],
)
def test_pull_refuses_hostile_entries_and_skill_files(
    xb: Run, backed_up: Path, store_dir: Path, path: str, text: str, why: str
) -> None:
    remote = backed_up
    hostile_push(remote, [_nested(remote, path, text)])
    before = head(store_dir)
    result = xb("remote", "pull")
    assert result.code == 4, result.stderr
    assert why in result.stderr and "Refused remote origin" in result.stderr
    assert head(store_dir) == before
    assert not (store_dir / path.split("/")[0]).exists()
    assert xb("doctor").json["ok"] is True
