"""doctor: detection and safe repair of drift, tampering, permissions and stale locks."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, head, sample

Run = Callable[..., Result]
ID = "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56"


def codes(result: Result) -> set[str]:
    return {problem["code"] for problem in result.json["problems"]}


NEWER = sample(text="A newer body.", updatedAt="2027-01-01T00:00:00.000Z")
BATCH_ZH = "resource_86fa98108f4ccaaaa79518d7488c849aca9ecb938de1d9862b0360f1fd42f655"


def test_clean_store_is_ok(xb: Run) -> None:
    xb("put", str(EXAMPLES / "batch.json"))
    result = xb("doctor")
    assert result.code == 0 and result.json["ok"] is True
    assert result.json["checked"]["resources"] == 2


def test_new_empty_store_is_ok(xb: Run) -> None:
    assert xb("init").code == 0
    assert xb("doctor").json["ok"] is True


def test_missing_store(xb: Run) -> None:
    assert xb("doctor").code == 3


def test_hand_edit_reported_then_repaired_without_loss(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    path = store_dir / "resources" / "e6" / f"{ID}.yaml"
    edited = path.read_text().replace("Fictional accessible", "Hand edited")
    path.write_text(edited)
    report = xb("doctor")
    assert report.code == 7 and "worktree_drift" in codes(report)
    assert xb("get", ID).json["title"] == "Fictional accessible dialog guide"  # edit not trusted
    repaired = xb("doctor", "--repair")
    assert repaired.code == 0, repaired.stdout
    assert "Fictional accessible" in path.read_text()
    rescued = list((store_dir / ".git" / "xbrain" / "rescued").rglob(f"{ID}.yaml"))
    assert [p.read_text() for p in rescued] == [edited]


def test_repairs_in_the_same_second_keep_every_copy(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """Each repair named its folder of kept copies by the second it ran in, so a second
    repair in that second wrote over the first one's copy of a file edited twice: the
    first edit was gone, and the report still named the folder it was said to be in."""
    import datetime

    xb("put", json_file(sample()))
    path = store_dir / "resources" / "e6" / f"{ID}.yaml"
    rescued = store_dir / ".git" / "xbrain" / "rescued"
    now = datetime.datetime.now()
    for ahead in range(5):  # an earlier repair's copy in every second this test may run in
        stamp = (now + datetime.timedelta(seconds=ahead)).strftime("%Y%m%dT%H%M%S")
        (rescued / stamp / "resources" / "e6").mkdir(parents=True)
        (rescued / stamp / "resources" / "e6" / f"{ID}.yaml").write_text("first edit\n")
    edited = path.read_text() + "# second edit\n"
    path.write_text(edited)
    repaired = xb("doctor", "--repair")
    assert repaired.code == 0, repaired.stdout
    copies = sorted(p.read_text() for p in rescued.rglob(f"{ID}.yaml"))
    assert copies == sorted(["first edit\n"] * 5 + [edited])
    folder = repaired.json["repaired"][0]["message"].split("old copy in ")[1].rstrip(".")
    assert (Path(folder) / "resources" / "e6" / f"{ID}.yaml").read_text() == edited


def test_a_file_too_large_to_copy_is_not_replaced(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """A repair keeps a copy of each hand-edited file before restoring it, but it reads
    no file past the largest a store holds (64 MiB): such a file was replaced with no
    copy kept. It is left in place and named now."""
    xb("put", json_file(sample()))
    path = store_dir / "resources" / "e6" / f"{ID}.yaml"
    with path.open("ab") as handle:
        handle.truncate((64 << 20) + 1)  # sparse: no 64 MiB written
    repaired = xb("doctor", "--repair")
    assert repaired.code == 7
    [kept] = [p for p in repaired.json["problems"] if p["code"] == "worktree_drift"]
    assert kept["path"] == f"resources/e6/{ID}.yaml" and "move it out" in kept["message"]
    assert path.stat().st_size == (64 << 20) + 1
    path.unlink()
    assert xb("doctor", "--repair").json["ok"] is True
    assert "Fictional accessible" in path.read_text()


def test_deleted_worktree_file_is_restored(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    (store_dir / "index" / "summary.json").unlink()
    assert "worktree_drift" in codes(xb("doctor"))
    assert xb("doctor", "--repair").json["ok"] is True
    assert (store_dir / "index" / "summary.json").exists()


def test_tampered_catalog_is_rebuilt_by_commit(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    from xbrain.git import GitStore

    xb("put", json_file(sample()))
    with GitStore(store_dir) as git:
        parent = git.head()
        git.commit(parent, {"index/catalog/e6.json": b"{}\n"}, "tamper\n", "t <t@t>", 0)
        commit = git.head()
        assert commit is not None
        git.refresh_worktree(commit, ["index/catalog/e6.json"])
    report = xb("doctor")
    assert "catalog_drift" in codes(report)
    repaired = xb("doctor", "--repair")
    assert repaired.json["ok"] is True
    assert head(store_dir) != commit
    assert xb("doctor").json["ok"] is True


def test_writes_refuse_a_catalog_a_plain_git_commit_removed_until_repaired(
    xb: Run, store_dir: Path
) -> None:
    """``git rm -r index`` (it looks like a cache) left status at 0 resources, and every
    later write built its counts on nothing (a delete: 0 live, 1 tombstone)."""
    from xbrain.git import GitStore

    xb("put", str(EXAMPLES / "batch.json"))
    for gone in (["index/catalog/86.json"], ["index/summary.json", "index/catalog/86.json"]):
        with GitStore(store_dir) as git:
            parent = git.head()
            assert parent is not None
            git.commit(parent, dict.fromkeys(gone), "outside: tidy\n", "t <t@t>", 0)
        before = head(store_dir)
        refused = xb("delete", BATCH_ZH)
        assert refused.code == 7 and f"{gone[0]} is missing" in refused.stderr, refused.stderr
        assert "run xbrain doctor --repair" in refused.stderr and head(store_dir) == before
        for reader in (["status"], ["list"]):  # not "0 resources"
            assert xb(*reader).code == 7 and f"{gone[0]} is missing" in xb(*reader).stderr
        assert xb("doctor", "--repair").json["ok"] is True
        assert xb("doctor").json["ok"] is True
    assert xb("delete", BATCH_ZH).json["deleted"] is True
    status = xb("status").json
    assert (status["resources"], status["tombstones"]) == (1, 1)


def test_an_entry_a_plain_git_commit_broke_is_put_right_with_adopt(
    xb: Run, store_dir: Path
) -> None:
    """recall fails whole on it (exit 7); doctor says how; adopt of the fixed file
    commits it (it read the damaged copy first and failed)."""
    from xbrain.git import GitStore

    xb("entry", "import", str(EXAMPLES / "memex"))
    path = next(str(p.relative_to(store_dir)) for p in (store_dir / "entries").rglob("*.yaml"))
    good = (store_dir / path).read_bytes()
    with GitStore(store_dir) as git:
        parent = git.head()
        assert parent is not None
        git.commit(parent, {path: b"kind: rule\nname: 5\n"}, "hand edit\n", "t <t@t>", 0)
        commit = git.head()
        assert commit is not None
        git.refresh_worktree(commit, [path])
    assert xb("recall", "-", input="rules").code == 7
    problem = next(p for p in xb("doctor").json["problems"] if p["code"] == "invalid_record")
    assert problem["path"] == path and "xbrain adopt" in problem["message"]
    (store_dir / path).write_bytes(good)
    adopted = xb("adopt").json
    assert [a["path"] for a in adopted["adopted"]] == [path] and adopted["commit"]
    assert xb("recall", "-", input="rules").code == 0
    assert [p["code"] for p in xb("doctor").json["problems"]] == []


def test_untracked_files_are_reported_not_deleted(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    stray = store_dir / "resources" / "zz-notes.txt"
    stray.write_text("mine")
    os.chmod(stray, 0o600)
    assert "untracked_file" in codes(xb("doctor"))
    xb("doctor", "--repair")
    assert stray.read_text() == "mine"


def test_permissions_reported_and_fixed(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    os.chmod(store_dir / "xbrain.yaml", 0o644)
    os.chmod(store_dir / "resources", 0o755)
    assert "permissions" in codes(xb("doctor"))
    assert xb("doctor", "--repair").json["ok"] is True
    assert (store_dir / "xbrain.yaml").stat().st_mode & 0o077 == 0


def test_stale_git_lock_removed_only_when_old(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    lock = store_dir / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    os.chmod(lock, 0o600)
    fresh = xb("doctor", "--repair")
    assert "git_lock" in codes(fresh) and lock.exists()
    old = time.time() - 3600
    os.utime(lock, (old, old))
    assert "git_lock" in codes(xb("doctor"))
    assert xb("doctor", "--repair").json["ok"] is True
    assert not lock.exists()
    assert xb("put", json_file(sample(title="after", updatedAt="2027-01-01T00:00:00Z"))).code == 0


def test_corrupted_object_detected(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    objects = [
        p
        for p in (store_dir / ".git" / "objects").rglob("*")
        if p.is_file() and len(p.parent.name) == 2
    ]
    victim = objects[0]
    os.chmod(victim, 0o600)
    victim.write_bytes(b"garbage")
    result = xb("doctor")
    assert result.code == 7
    assert "git_object" in codes(result)


def test_adopt_commits_valid_hand_edits_and_reports_invalid(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb(
        "put",
        json_file(
            [
                sample(),
                {
                    **sample(),
                    "source": {"provider": "web", "id": "second", "url": "https://example.com/2"},
                },
            ]
        ),
    )
    path = store_dir / "resources" / "e6" / f"{ID}.yaml"
    path.write_text(
        path.read_text().replace(
            "title: Fictional accessible dialog guide", "title: 'Hand edited: title'"
        )
    )
    second = next(p for p in (store_dir / "resources").rglob("*.yaml") if p != path)
    second.write_text(
        second.read_text().replace("url: https://example.com/2", "url: http://insecure.example/")
    )
    (store_dir / "notes.txt").write_text("mine")
    (store_dir / "resources" / "todo.txt").write_text("x")  # a stray file among records
    (store_dir / "resources" / "e6" / "misnamed.yaml").write_text("x")
    before = head(store_dir)
    result = xb("adopt")
    assert result.code == 1
    assert [a["id"] for a in result.json["adopted"]] == [ID]
    errors = {r["path"]: r["error"] for r in result.json["rejected"]}
    assert (
        errors[str(second.relative_to(store_dir))]
        == "Source URLs must use HTTPS without embedded credentials."
    )
    assert "notes.txt" in errors
    assert errors["resources/todo.txt"] == "Not a record file; left alone."
    assert errors["resources/e6/misnamed.yaml"] == "Invalid resource/source."  # named like one
    assert head(store_dir) != before
    assert xb("get", ID).json["title"] == "Hand edited: title"
    assert "insecure" in second.read_text()  # the invalid edit is left for the user
    report = xb("doctor").json  # the rejected edit and the stray file remain visible
    codes_left = {p["code"] for p in report["problems"]} - {"permissions"}  # files the test wrote
    assert codes_left == {"worktree_drift", "untracked_file"}


def test_a_write_never_replaces_a_hand_edit(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """An update of a record whose file was edited by hand replaced the edit silently.
    Like git's "your local changes would be overwritten", the write is refused (exit 5,
    nothing written) until the edit is adopted or dropped; other records stay writable."""
    xb("put", str(EXAMPLES / "batch.json"))
    xb("put", json_file(sample()))
    first = head(store_dir)
    assert first is not None
    second = sample(text="Second body.", updatedAt="2026-11-01T00:00:00.000Z")
    assert xb("put", json_file(second)).json["results"][0]["status"] == "updated"
    path = store_dir / "resources" / "e6" / f"{ID}.yaml"
    edited = path.read_text().replace("Fictional accessible", "Hand edited")
    path.write_text(edited)
    before = head(store_dir)
    for write in (["put", json_file(NEWER)], ["delete", ID], ["restore", ID, "--at", first]):
        refused = xb(*write)
        assert refused.code == 5, (write, refused.stderr)
        assert refused.stderr.count("\n") == 1 and f"{ID}.yaml" in refused.stderr
        assert "xbrain adopt" in refused.stderr and "xbrain doctor --repair" in refused.stderr
        assert head(store_dir) == before and path.read_text() == edited
    assert xb("delete", BATCH_ZH).json["deleted"] is True  # another record: not held up
    assert xb("adopt").json["adopted"][0]["id"] == ID
    assert xb("get", ID).json["title"].startswith("Hand edited")  # kept, in history
    assert xb("put", json_file(NEWER)).json["results"][0]["status"] == "updated"
    assert "A newer body." in path.read_text()


def test_a_deleted_or_identical_file_is_not_a_hand_edit(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    path = store_dir / "resources" / "e6" / f"{ID}.yaml"
    path.unlink()  # nothing to lose: the write puts the file back
    assert xb("put", json_file(NEWER)).code == 0
    assert "A newer body." in path.read_text()
    assert xb("doctor").json["ok"] is True


def test_adopt_says_what_changes_a_file_that_is_no_record(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """A hand edit of a skill, the settings or a derived file is left alone, and the
    rejection names the command that changes it and the repair that restores it."""
    xb("put", str(EXAMPLES / "batch.json"))
    (tmp_path / "triage").mkdir()
    (tmp_path / "triage" / "SKILL.md").write_text(
        "---\nname: triage\ndescription: Incident triage\n---\nPage the on-call.\n"
    )
    xb("skill", "save", str(tmp_path / "triage"))
    skill_md = next((store_dir / "skills").rglob("SKILL.md"))
    skill_md.write_text(skill_md.read_text() + "Edited.\n")
    settings = store_dir / "xbrain.yaml"
    settings.write_text(settings.read_text() + "# mine\n")
    summary = store_dir / "index" / "summary.json"
    summary.write_text(summary.read_text() + "\n")
    before = head(store_dir)
    result = xb("adopt")
    assert result.code == 1 and result.json["adopted"] == [] and head(store_dir) == before
    errors = {r["path"]: r["error"] for r in result.json["rejected"]}
    assert errors[str(skill_md.relative_to(store_dir))].startswith(
        "A skill changes through xbrain skill save"
    )
    assert errors["xbrain.yaml"].startswith("Settings change through xbrain config")
    assert errors["index/summary.json"].startswith("xbrain keeps this file itself")
    assert all("doctor --repair restores this file" in e for e in errors.values())


def test_a_hand_edited_derived_or_settings_file_names_repair_not_adopt(
    xb: Run, store_dir: Path
) -> None:
    xb("put", str(EXAMPLES / "batch.json"))
    summary = store_dir / "index" / "summary.json"
    summary.write_text("{}\n")
    refused = xb("delete", BATCH_ZH)
    assert refused.code == 5 and "index/summary.json" in refused.stderr
    assert "doctor --repair" in refused.stderr and "adopt" not in refused.stderr
    assert xb("doctor", "--repair").json["ok"] is True
    assert list((store_dir / ".git" / "xbrain" / "rescued").rglob("summary.json"))
    assert xb("delete", BATCH_ZH).json["deleted"] is True
    settings = store_dir / "xbrain.yaml"
    settings.write_text(settings.read_text() + "recall: {topK: 9}\n")
    refused = xb("config", "recall.topK", "5")
    assert refused.code == 5 and "xbrain.yaml" in refused.stderr
    assert "adopt" not in refused.stderr and "restores the committed file" in refused.stderr


def _directory_at_file(store: Path) -> tuple[Path, str]:
    path = store / "resources" / "e6" / f"{ID}.yaml"
    path.unlink()
    path.mkdir()
    (path / "mine.txt").write_text("kept")
    return path, f"resources/e6/{ID}.yaml in the working tree is a directory where xbrain"


def _file_at_directory(store: Path) -> tuple[Path, str]:
    path = store / "resources" / "e6"
    shutil.rmtree(path)
    path.write_text("kept")
    return path, "resources/e6 in the working tree is a file where xbrain keeps a directory"


@pytest.mark.parametrize("in_the_way", [_directory_at_file, _file_at_directory])
def test_something_in_the_way_stops_the_write_before_its_commit(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path, in_the_way: Any
) -> None:
    """A directory where a record file belongs made a write commit, then fail "Is a
    directory: 4" on every later write (doctor crashed). A file where a record directory
    belongs said "run xbrain doctor --repair", which failed with the same words. Now
    nothing is written, the message says what to move, and it is left as it was."""
    xb("put", json_file(sample()))
    path, message = in_the_way(store_dir)
    before = head(store_dir)
    for write in (["put", json_file(NEWER)], ["doctor", "--repair"]):
        refused = xb(*write)
        assert refused.code == 5 and refused.stderr.count("\n") == 1, (write, refused.stderr)
        assert message in refused.stderr and "move it out of the store" in refused.stderr
    assert head(store_dir) == before
    assert (path / "mine.txt" if path.is_dir() else path).read_text() == "kept"
    assert "worktree_drift" in codes(xb("doctor"))
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    assert xb("put", json_file(NEWER)).json["results"][0]["status"] == "updated"
    assert xb("doctor").json["ok"] is True


def test_a_file_name_that_is_not_utf8_prints_as_valid_json(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """doctor and adopt printed such a name's raw bytes: the JSON was not UTF-8, and an
    agent's parser failed on it. Lone surrogates are escaped as JSON.stringify does."""
    import json
    import subprocess
    import sys

    xb("put", json_file(sample()))
    odd = os.fsencode(store_dir / "resources") + b"/bad\xff\xfename.yaml"
    with open(odd, "wb") as handle:
        handle.write(b"x: 1\n")
    for args in (["doctor"], ["adopt"]):
        run = [sys.executable, "-m", "xbrain", *args, "--store", str(store_dir)]
        out = subprocess.run(run, capture_output=True, check=False).stdout
        assert b"\xff" not in out and b"\\udcff\\udcfe" in out
        paths = json.dumps(json.loads(out.decode("utf-8")), ensure_ascii=False)
        assert "bad\udcff\udcfename.yaml" in paths  # the name, as the file system gave it


def test_a_plain_git_clone_is_repaired_to_stay_private(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path, tmp_path: Path
) -> None:
    """A store made with ``git clone`` (umask 022): doctor reports its root folder open to
    others, and --repair closes it and sets the private settings a store is made with, so
    git's own later writes (its index, a gc's pack) stay 0600; a value the user chose is
    kept."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    assert xb_proc("put", json_file(sample())).code == 0
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", str(store_dir), str(clone)],
        check=True,
        preexec_fn=lambda: os.umask(0o022),
    )
    subprocess.run(["git", "-C", str(clone), "config", "gc.auto", "50"], check=True)
    os.chmod(clone, 0o755)
    found = xb_proc("doctor", store=clone).json["problems"]
    assert any(p["code"] == "permissions" and p.get("path") == "." for p in found), found
    repaired = xb_proc("doctor", "--repair", store=clone)
    assert repaired.code == 0, repaired.stderr
    said = [p["message"] for p in repaired.json["repaired"] if p["code"] == "git_config"]
    assert any("core.sharedRepository" in m and "gc.auto" not in m for m in said), said
    config = subprocess.run(
        ["git", "-C", str(clone), "config", "--get", "core.sharedRepository"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert config.stdout.strip() == "0600"
    gc_auto = ["git", "-C", str(clone), "config", "--get", "gc.auto"]
    assert subprocess.run(gc_auto, capture_output=True, text=True).stdout.strip() == "50"
    assert clone.stat().st_mode & 0o077 == 0
    (clone / "resources").touch()
    subprocess.run(
        ["git", "-C", str(clone), "update-index", "--refresh", "-q"],
        check=False,
        preexec_fn=lambda: os.umask(0o022),
    )
    subprocess.run(
        ["git", "-C", str(clone), "add", "-A"], check=True, preexec_fn=lambda: os.umask(0o022)
    )
    assert (clone / ".git" / "index").stat().st_mode & 0o077 == 0
