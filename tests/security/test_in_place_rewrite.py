"""A derived file a write changes (a catalog shard, the summary) is rewritten in place
when it is a private regular file of one link: no inode made and freed for each of a
batch's thousand shards. Anything else planted there (a hard link to a file outside the
store, a symbolic link, a FIFO, a file others can read) is replaced, never written
through; record files are always replaced whole."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.conftest import make
from tests.unit.test_refresh_threads import assert_refreshed
from xbrain.core.layout import SUMMARY, is_derived
from xbrain.git.wtfiles import rewrite_in_place
from xbrain.store import Store


def _store(tmp_path: Path, segment_cache: Path) -> Store:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make(f"first-{i}") for i in range(3)])
    return store


def test_the_summary_is_rewritten_in_place_and_a_record_is_replaced(
    tmp_path: Path, segment_cache: Path
) -> None:
    store = _store(tmp_path, segment_cache)
    summary = store.path / SUMMARY
    before = summary.read_bytes()
    inode = summary.stat().st_ino
    (record,) = [
        p for p in (store.path / "resources").rglob("*.yaml") if "first-0" in p.read_text()
    ]
    record_inode = record.stat().st_ino
    store.put(make("first-0", title="Changed", updatedAt="2030-01-01T00:00:00.000Z"))
    store.put(make("second"))
    assert summary.read_bytes() != before
    assert summary.stat().st_ino == inode  # the same file, rewritten
    assert record.stat().st_ino != record_inode  # a record: replaced whole
    assert_refreshed(store.path)


def test_a_shard_that_shrinks_is_cut_to_its_new_length(tmp_path: Path, segment_cache: Path) -> None:
    store = _store(tmp_path, segment_cache)
    store.put(make("big", text="word " * 4000))
    shards = {p: p.read_bytes() for p in (store.path / "index/catalog").glob("*.json")}
    store.put(make("big", text="word", updatedAt="2030-01-01T00:00:00.000Z"))
    shrunk = [p for p, data in shards.items() if len(p.read_bytes()) < len(data)]
    assert shrunk  # its "bytes" went from five digits to three
    assert_refreshed(store.path)


def _linked_outside(tmp_path: Path, segment_cache: Path, link: str) -> tuple[Path, Path]:
    """A store whose summary is a hard or symbolic link (``link``) to a private file of
    ours outside it, holding what the store has there (what the hand-edit check expects):
    only the link check keeps it safe. The summary and that file, after a put."""
    store = _store(tmp_path, segment_cache)
    summary = store.path / SUMMARY
    outside = tmp_path / "outside.json"
    outside.write_bytes(summary.read_bytes())
    outside.chmod(0o600)
    summary.unlink()
    if link == "hard":
        os.link(outside, summary)
    else:
        summary.symlink_to(outside)
    kept = outside.read_bytes()
    store.put(make("second"))
    assert outside.read_bytes() == kept  # never written through
    assert_refreshed(store.path)
    return summary, outside


def test_a_hard_link_to_a_file_outside_is_replaced_not_written_through(
    tmp_path: Path, segment_cache: Path
) -> None:
    summary, outside = _linked_outside(tmp_path, segment_cache, "hard")
    assert summary.stat().st_nlink == 1 and not os.path.samefile(summary, outside)


def test_a_symbolic_link_is_replaced_and_its_target_left_alone(
    tmp_path: Path, segment_cache: Path
) -> None:
    summary, _ = _linked_outside(tmp_path, segment_cache, "symbolic")
    assert not summary.is_symlink()


def test_a_fifo_is_replaced_without_waiting_on_it(tmp_path: Path, segment_cache: Path) -> None:
    store = _store(tmp_path, segment_cache)
    summary = store.path / SUMMARY
    summary.unlink()
    os.mkfifo(summary, 0o600)
    store.put(make("second"))
    assert stat.S_ISREG(os.lstat(summary).st_mode)
    assert_refreshed(store.path)


def test_a_file_others_can_read_is_replaced_by_a_private_one(
    tmp_path: Path, segment_cache: Path
) -> None:
    store = _store(tmp_path, segment_cache)
    summary = store.path / SUMMARY
    summary.chmod(0o644)
    inode = summary.stat().st_ino
    store.put(make("second"))
    assert summary.stat().st_ino != inode
    assert_refreshed(store.path)  # (every file 0600)


def test_rewrite_in_place_itself(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_bytes(b"a longer first version\n")
    target.chmod(0o600)
    inode = target.stat().st_ino
    info = rewrite_in_place(target, b"short\n")
    assert info is not None and info.st_ino == inode and info.st_size == 6
    assert target.read_bytes() == b"short\n"
    same = rewrite_in_place(target, b"short\n")  # unchanged: nothing written
    assert same is not None and same.st_mtime_ns == info.st_mtime_ns
    os.link(target, tmp_path / "second name")
    assert rewrite_in_place(target, b"other\n") is None
    assert target.read_bytes() == b"short\n"
    (tmp_path / "second name").unlink()
    target.chmod(0o640)
    assert rewrite_in_place(target, b"other\n") is None
    target.chmod(0o400)
    assert rewrite_in_place(target, b"other\n") is None  # not writable: replaced instead
    assert rewrite_in_place(tmp_path / "missing", b"x") is None
    link = tmp_path / "link"
    link.symlink_to(target)
    assert rewrite_in_place(link, b"other\n") is None
    assert target.read_bytes() == b"short\n"
    assert is_derived("index/catalog/ab.json") and not is_derived("resources/ab/x.yaml")


def test_a_file_of_another_owner_or_with_special_bits_is_replaced(
    tmp_path: Path, segment_cache: Path
) -> None:
    store = _store(tmp_path, segment_cache)
    summary = store.path / SUMMARY
    summary.chmod(0o4600)  # set-user-id: not the 0600 xbrain writes
    inode = summary.stat().st_ino
    store.put(make("second"))
    assert summary.stat().st_ino != inode and stat.S_IMODE(summary.stat().st_mode) == 0o600
    if os.geteuid() == 0:  # only root can hand a file to another user
        os.chown(summary, 65534, 65534)
        inode = summary.stat().st_ino
        store.put(make("third"))
        assert summary.stat().st_ino != inode and summary.stat().st_uid == 0
    assert_refreshed(store.path)


def test_doctor_repair_gives_a_derived_file_open_to_others_a_new_inode(
    tmp_path: Path, segment_cache: Path
) -> None:
    """A descriptor opened while others could read a derived file must not see what is
    written into it later: ``doctor --repair`` replaces such a file (a record's mode is
    only changed), so the in-place rewrites go to a file no one else holds."""
    store = _store(tmp_path, segment_cache)
    summary = store.path / SUMMARY
    summary.chmod(0o644)
    with open(summary, "rb") as held:  # opened while readable by others
        before = held.read()
        store.doctor(repair=True)
        assert stat.S_IMODE(summary.stat().st_mode) == 0o600
        assert not os.path.samestat(os.fstat(held.fileno()), summary.stat())
        store.put(make("second"))
        held.seek(0)
        assert held.read() == before  # the old file: none of the new content
    assert summary.read_bytes() != before
    assert_refreshed(store.path)
