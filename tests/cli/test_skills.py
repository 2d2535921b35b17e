"""Skills through the CLI: save, revisions, lifecycle, recall levels, diff, export, import."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import unicodedata
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, head, snapshot_files
from tests.unit.test_skillzip import SKILL, archive

Run = Callable[..., Result]
EXAMPLE = EXAMPLES / "skills" / "deploy-check"


def skill_dir(tmp_path: Path, name: str = "deploy-check", body: str = "Do it.\n") -> Path:
    """A copy of the example skill, its SKILL.md replaced when ``body`` is given."""
    target = tmp_path / "work" / name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(EXAMPLE, target)
    text = (EXAMPLE / "SKILL.md").read_text().replace("deploy-check", name)
    if body != "Do it.\n":
        text = text.split("---\n# ", 1)[0] + "---\n" + body
    (target / "SKILL.md").write_text(text)
    return target


def git(store: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(store), *args], capture_output=True, text=True, check=True
    ).stdout


def test_save_appends_revisions_and_unchanged_makes_no_commit(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    first = xb("skill", "save", str(EXAMPLE))
    assert first.code == 0, first.stderr
    made = first.json
    assert made["status"] == "created" and made["revision_number"] == 1
    assert made["state"] == "draft" and made["revision_id"].startswith("rev_")
    before = head(store_dir)
    again = xb("skill", "save", str(EXAMPLE))
    assert again.json["status"] == "unchanged" and again.json["commit"] is None
    assert head(store_dir) == before
    changed = skill_dir(tmp_path, body="# Deploy\n\nNew step.\n")
    second = xb("skill", "save", str(changed), "--publish")
    assert second.json["status"] == "updated" and second.json["revision_number"] == 2
    assert second.json["state"] == "published"
    log = xb("skill", "log", "deploy-check").json["revisions"]
    assert [r["revision_number"] for r in log] == [2, 1]
    assert log[0]["parent"] == made["revision_id"] and log[0]["head"] is True
    assert [r["state"] for r in log] == ["published", "draft"]
    message = git(store_dir, "log", "-1", "--format=%B")
    assert message.startswith(f"skill save: deploy-check {second.json['revision_id']}")
    assert "Xbrain-Command: skill save" in message
    assert git(store_dir, "status", "--porcelain") == ""
    # the first revision's bytes are still there, untouched
    rev1 = store_dir / "skills/deploy-check/revisions" / made["revision_id"]
    assert (rev1 / "files/SKILL.md").read_bytes() == (EXAMPLE / "SKILL.md").read_bytes()
    assert oct((rev1 / "files/SKILL.md").stat().st_mode & 0o777) == "0o600"
    # git log -p of the skill reads as its history
    assert "New step." in git(store_dir, "log", "-p", "--", "skills/deploy-check")


def test_save_from_stdin_and_a_lone_skill_md(xb: Run) -> None:
    text = (EXAMPLE / "SKILL.md").read_text()
    made = xb("skill", "save", "-", input=text)
    assert made.code == 0, made.stderr
    assert xb("skill", "recall", "--slug", "deploy-check").json["files"] == []
    same = xb("skill", "save", str(EXAMPLE / "SKILL.md"))
    assert same.json["status"] == "unchanged"


@pytest.mark.parametrize(
    ("frontmatter", "message"),
    [
        ("name: Bad_Name\ndescription: x", "name must be"),
        ("name: a--b\ndescription: x", "name must be"),
        ("name: ok\n", "description"),
        ("name: ok\ndescription: x\nallowed-tools: {Bash: 1}", "allowed-tools"),
        ("name: ok\ndescription: x\nmetadata: {a: 1}", "metadata"),
    ],
)
def test_invalid_skills_are_refused_and_change_nothing(
    xb: Run, store_dir: Path, frontmatter: str, message: str
) -> None:
    assert xb("skill", "save", str(EXAMPLE)).code == 0
    before = snapshot_files(store_dir)
    result = xb("skill", "save", "-", input=f"---\n{frontmatter}\n---\nbody\n")
    assert result.code == 4
    assert message in result.stderr and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot_files(store_dir) == before


def test_import_warns_about_unknown_keys_and_lands_as_proposed(xb: Run, tmp_path: Path) -> None:
    source = tmp_path / "x"
    source.mkdir()
    (source / "SKILL.md").write_text("---\nname: x\ndescription: y\nversion: 2\n---\nbody\n")
    result = xb("skill", "import", str(source))
    assert result.code == 0, result.stderr
    assert result.json["state"] == "proposed"
    assert "version" in result.json["warnings"][0]
    assert xb("skill", "log", "x").json["revisions"][0]["source"] == {"type": "file", "path": "x"}


CLAUDE_CODE_SKILL = (
    "---\n"
    "name: commit-helper\n"
    "description: Writes commit messages from the staged diff.\n"
    "allowed-tools: Bash(git diff:*), Bash(git status:*), Read\n"
    "model: claude-sonnet-4-5\n"
    "disable-model-invocation: true\n"
    "argument-hint: [message]\n"
    "type: workflow\n"
    "queries: [write a commit message, 提交说明]\n"
    "hooks: {PreToolUse: []}\n"
    "---\n"
    "Read the staged diff, then write the message.\n"
)


def test_save_keeps_claude_code_and_memex_keys_byte_exact_and_warns(
    xb_proc: Run, tmp_path: Path
) -> None:
    """SPEC §12 as amended: the skills people already have save as they are."""
    folder = tmp_path / "commit-helper"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(CLAUDE_CODE_SKILL.encode())
    saved = xb_proc("skill", "save", str(folder), "--publish")
    assert saved.code == 0, saved.stderr
    assert saved.stderr == ""
    warned = " ".join(saved.json["warnings"])
    for key in ("model", "disable-model-invocation", "argument-hint", "type", "queries", "hooks"):
        assert repr(key) in warned
    assert "allowed-tools" not in warned  # an Agent Skills key, validated, not warned about
    rev = saved.json["revision_id"]
    shown = xb_proc(
        "skill", "recall", "--slug", "commit-helper", "--revision", rev, "--resource", "SKILL.md"
    )
    assert shown.code == 0 and shown.json["content"] == CLAUDE_CODE_SKILL


def test_a_stale_expect_revision_is_exit_5_and_writes_nothing(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    first = xb("skill", "save", str(EXAMPLE)).json["revision_id"]
    second = xb("skill", "save", str(skill_dir(tmp_path, body="v2\n"))).json["revision_id"]
    before = snapshot_files(store_dir)
    stale = xb("skill", "save", str(skill_dir(tmp_path, body="v3\n")), "--expect-revision", first)
    assert stale.code == 5 and second in stale.stderr
    assert snapshot_files(store_dir) == before
    fresh = xb("skill", "save", str(skill_dir(tmp_path, body="v3\n")), "--expect-revision", second)
    assert fresh.code == 0 and fresh.json["revision_number"] == 3


def test_progressive_recall_levels(xb: Run, tmp_path: Path) -> None:
    draft = xb("skill", "save", str(EXAMPLE)).json["revision_id"]
    other = skill_dir(tmp_path, "release-notes", body="Write the release notes.\n")
    (other / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes for a version\n---\n"
        "Collect the merged changes and summarize them.\n"
    )
    xb("skill", "save", str(other), "--publish")
    # Level 0, Chinese and English
    zh = xb("skill", "recall", "数据库迁移 回滚").json
    assert [r["slug"] for r in zh["results"]][:1] == ["deploy-check"]
    en = xb("skill", "recall", "release notes").json["results"]
    assert en[0]["slug"] == "release-notes" and en[0]["published"] is True
    assert set(en[0]) >= {"slug", "name", "description", "published", "score"}
    # Level 1: no published revision → the latest, marked as a fallback
    level1 = xb("skill", "recall", "--slug", "deploy-check").json
    assert level1["fallback"] == "latest" and level1["revision_id"] == draft
    assert "数据库" in level1["instructions"]
    assert {f["path"] for f in level1["files"]} == {"references/rollback.md", "scripts/check.sh"}
    assert {f["type"] for f in level1["files"]} == {"reference", "script"}
    # Level 2 needs the revision; then it reads exactly that revision's file
    torn = xb("skill", "recall", "--slug", "deploy-check", "--resource", "scripts/check.sh")
    assert torn.code == 2 and "--revision" in torn.stderr
    changed = skill_dir(tmp_path)
    (changed / "scripts/check.sh").write_text("#!/bin/sh\necho v2\n")
    xb("skill", "save", str(changed), "--publish")
    old = xb(
        "skill",
        "recall",
        "--slug",
        "deploy-check",
        "--revision",
        draft,
        "--resource",
        "scripts/check.sh",
    ).json
    assert old["content"] == (EXAMPLE / "scripts/check.sh").read_text()
    assert old["encoding"] == "utf-8" and old["type"] == "script"
    assert "fallback" not in xb("skill", "recall", "--slug", "deploy-check").json
    missing = xb("skill", "recall", "--slug", "nope")
    assert missing.code == 3


def indexed_rows(store: Path) -> dict[str, tuple[int, str]]:
    """The skill index's documents: slug → (row number, what recall shows of it)."""
    with contextlib.closing(sqlite3.connect(store / ".git" / "xbrain" / "skills.sqlite")) as db:
        return {
            rid: (doc, data) for doc, rid, data in db.execute("SELECT doc, rid, resource FROM docs")
        }


def test_a_draft_beside_a_published_revision_leaves_the_index_row_alone(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Level 0 and Level 1 show the published revision, so saving a new draft of a
    published skill re-indexes nothing; publishing the draft does."""
    xb("skill", "save", str(skill_dir(tmp_path, "triage", body="Page the on-call.\n")), "--publish")
    xb("skill", "save", str(skill_dir(tmp_path, "zeta", body="Something else.\n")))
    assert xb("skill", "recall", "on-call").code == 0  # builds the skill index
    before = indexed_rows(store_dir)
    draft = skill_dir(tmp_path, "triage", body="Page the on-call, then the lead.\n")
    saved = xb("skill", "save", str(draft)).json
    assert saved["state"] == "draft"
    assert indexed_rows(store_dir) == before  # the same row, not removed and re-added
    xb("skill", "publish", "triage", saved["revision_id"])
    after = indexed_rows(store_dir)  # re-indexed: a new row (after zeta's) with the new text
    assert after["triage"][0] > before["zeta"][0] and "then the lead" in after["triage"][1]
    assert after["zeta"] == before["zeta"]
    level1 = xb("skill", "recall", "--slug", "triage").json
    assert level1["revision_id"] == saved["revision_id"] and "the lead" in level1["instructions"]


def test_binary_components_come_back_exactly(xb: Run, tmp_path: Path) -> None:
    source = skill_dir(tmp_path)
    blob = bytes(range(256))
    (source / "assets").mkdir()
    (source / "assets/logo.bin").write_bytes(blob)
    rev = xb("skill", "save", str(source)).json["revision_id"]
    got = xb(
        "skill",
        "recall",
        "--slug",
        "deploy-check",
        "--revision",
        rev,
        "--resource",
        "assets/logo.bin",
    ).json
    import base64

    assert got["encoding"] == "base64" and base64.b64decode(got["content"]) == blob
    assert got["type"] == "artifact"


def test_lifecycle_one_published_and_no_op_changes_make_no_commit(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    r1 = xb("skill", "save", str(EXAMPLE), "--publish").json["revision_id"]
    r2 = xb("skill", "save", str(skill_dir(tmp_path, body="two\n"))).json["revision_id"]
    published = xb("skill", "publish", "deploy-check", "2").json
    assert published["status"] == "published" and set(published["changed"]) == {r1, r2}
    states = {
        r["revision_id"]: r["state"] for r in xb("skill", "log", "deploy-check").json["revisions"]
    }
    assert states == {r1: "deprecated", r2: "published"}
    before = head(store_dir)
    assert xb("skill", "publish", "deploy-check", r2).json["status"] == "unchanged"
    assert head(store_dir) == before
    assert xb("skill", "deprecate", "deploy-check", r2).json["status"] == "deprecated"
    assert xb("skill", "recall", "--slug", "deploy-check").json["fallback"] == "latest"
    # archived: gone from Level 0, still readable
    assert xb("skill", "recall", "deploy").json["count"] == 1
    assert xb("skill", "archive", "deploy-check").json["status"] == "archived"
    assert xb("skill", "archive", "deploy-check").json["status"] == "unchanged"
    assert xb("skill", "recall", "deploy").json["count"] == 0
    assert xb("skill", "recall", "--slug", "deploy-check").json["status"] == "archived"
    assert xb("skill", "unarchive", "deploy-check").json["status"] == "active"
    assert xb("skill", "recall", "deploy").json["count"] == 1
    assert xb("skill", "publish", "deploy-check", "rev_" + "0" * 32).code == 3
    assert xb("skill", "archive", "no-such-skill").code == 3


def test_diff_is_word_level_and_rebuilds_both_texts(xb: Run, tmp_path: Path) -> None:
    body_a = "# 部署\n\n检查数据库迁移是否可以回滚。\nRun the tests.\n"
    body_b = "# 部署\n\n检查数据库迁移能否回滚。\nRun all the tests.\n"
    xb("skill", "save", str(skill_dir(tmp_path, body=body_a)))
    xb("skill", "save", str(skill_dir(tmp_path, body=body_b)))
    found = xb("skill", "diff", "deploy-check", "1", "2", "--format", "ops").json
    assert found["changed"] == 1
    (item,) = [f for f in found["files"] if f["status"] != "unchanged"]
    assert item["path"] == "SKILL.md"
    old = "".join(op["old"] for op in item["ops"])
    new = "".join(op["new"] for op in item["ops"])
    assert old.endswith(body_a) and new.endswith(body_b)
    changes = [op for op in item["ops"] if op["op"] != "equal"]
    # whole words change, Chinese cut like jieba (是否 可以 → 能否), never half a word
    assert changes == [
        {"op": "replace", "old": "是否可以", "new": "能否"},
        {"op": "insert", "old": "", "new": " all"},
    ]
    assert "[-是否可以-]{+能否+}" in item["rendered"] and "Run{+ all+} the" in item["rendered"]


def test_diff_of_a_one_word_change_in_a_big_skill_stays_small(xb_proc: Run, tmp_path: Path) -> None:
    """A one-word change in a 53 KB SKILL.md printed 162 KB: every equal op repeated both
    texts and the rendering a third copy. The default now lists only the change."""
    lines = [f"Step {i}: check the service {i} and write down what you saw.\n" for i in range(900)]
    old = "".join(lines)
    assert len(old) > 50_000
    new = old.replace("Step 450: check", "Step 450: verify")
    xb_proc("skill", "save", str(skill_dir(tmp_path, body=old)))
    xb_proc("skill", "save", str(skill_dir(tmp_path, body=new)))
    result = xb_proc("skill", "diff", "deploy-check", "1", "2")
    assert result.code == 0, result.stderr
    assert len(result.stdout) < 3_000
    found = result.json
    assert found["format"] == "hunks" and found["changed"] == 1
    (item,) = [f for f in found["files"] if f["status"] == "modified"]
    assert (item["removed_words"], item["added_words"]) == (1, 1)
    (hunk,) = item["hunks"]
    assert hunk["line"] == 5 + 450  # four frontmatter lines and the blank one come first
    changes = [op for op in hunk["ops"] if op["op"] != "equal"]
    assert changes == [{"op": "replace", "old": "check", "new": "verify"}]
    context = "".join(op["old"] for op in hunk["ops"])
    assert "Step 450: check the service 450" in context and len(context) < 200
    full = xb_proc("skill", "diff", "deploy-check", "1", "2", "--format", "ops").json
    (whole,) = [f for f in full["files"] if f["status"] == "modified"]
    assert "".join(op["new"] for op in whole["ops"]).endswith(new)
    people = xb_proc("skill", "diff", "deploy-check", "1", "2", "--format", "unified")
    assert people.code == 0
    assert "-Step 450: check the service 450" in people.stdout
    assert "+Step 450: verify the service 450" in people.stdout
    assert people.stdout.startswith("--- a/SKILL.md (rev_") and len(people.stdout) < 2_000


def test_diff_hunks_join_near_changes_and_bound_long_ones(xb: Run, tmp_path: Path) -> None:
    body = "alpha beta gamma delta. " * 3 + "\n" + "filler words here. " * 40 + "\n"
    near = body.replace("beta", "BETA", 1).replace("delta", "DELTA", 1)
    far = near.replace("filler words here. " * 40, "other text " * 400)
    xb("skill", "save", str(skill_dir(tmp_path, body=body)))
    xb("skill", "save", str(skill_dir(tmp_path, body=near)))
    xb("skill", "save", str(skill_dir(tmp_path, body=far)))
    (item,) = [
        f
        for f in xb("skill", "diff", "deploy-check", "1", "2").json["files"]
        if f["status"] == "modified"
    ]
    (hunk,) = item["hunks"]  # two changes three words apart: one hunk
    assert [op["new"] for op in hunk["ops"] if op["op"] != "equal"] == ["BETA", "DELTA"]
    (long,) = [
        f
        for f in xb("skill", "diff", "deploy-check", "2", "3").json["files"]
        if f["status"] == "modified"
    ]
    assert long["truncated"] is True and long["added_words"] == 800
    assert max(len(op["new"]) for h in long["hunks"] for op in h["ops"]) <= 2_003


def test_export_is_deterministic_and_imports_back_identically(xb: Run, tmp_path: Path) -> None:
    made = xb("skill", "save", str(EXAMPLE), "--publish").json
    a, b = tmp_path / "a.zip", tmp_path / "b.zip"
    assert xb("skill", "export", "deploy-check", str(a)).code == 0
    assert xb("skill", "export", "deploy-check", str(b), "--revision", "1").code == 0
    assert a.read_bytes() == b.read_bytes()
    assert oct(a.stat().st_mode & 0o777) == "0o600"
    names = zipfile.ZipFile(a).namelist()
    assert names == sorted(names) and "deploy-check/.xbrain-capsule.json" in names
    capsule = json.loads(zipfile.ZipFile(a).read("deploy-check/.xbrain-capsule.json"))
    assert capsule["canonical_hash"] == made["canonical_hash"]
    assert capsule["state"] == "published"
    other = tmp_path / "other-store"
    imported = xb("skill", "import", str(a), store=other)
    assert imported.code == 0, imported.stderr
    assert imported.json["canonical_hash"] == made["canonical_hash"]
    assert imported.json["revision_id"] == made["revision_id"]  # same chain position too
    assert imported.json["state"] == "proposed"
    assert xb("skill", "export", "deploy-check", str(tmp_path / "x.tar")).code == 4


def test_export_never_replaces_a_file_unasked_or_writes_into_the_store(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    """Like export-store: an existing OUT.zip only with --force (it was replaced
    silently), and never a target inside the store (nor for entry export)."""
    xb("skill", "save", str(EXAMPLE))
    mine = tmp_path / "mine.zip"
    mine.write_bytes(b"someone's archive")
    refused = xb("skill", "export", "deploy-check", str(mine))
    assert (refused.code, refused.stderr) == (5, f"{mine} exists; pass --force to overwrite it.\n")
    assert mine.read_bytes() == b"someone's archive"
    forced = xb("skill", "export", "deploy-check", str(mine), "--force")
    assert forced.code == 0 and zipfile.is_zipfile(mine)
    before = snapshot_files(store_dir)
    for command in (
        ("skill", "export", "deploy-check", str(store_dir / "skills" / "x.zip")),
        ("skill", "export", "deploy-check", str(store_dir / "y.zip"), "--force"),
        ("entry", "export", str(store_dir / "entries" / "copy")),
        ("export-store", str(store_dir / "z.json")),
    ):
        inside = xb(*command)
        assert (inside.code, inside.stderr) == (
            4,
            "Export target must be outside the store directory.\n",
        ), command
    assert snapshot_files(store_dir) == before


def _lying_size() -> bytes:
    import struct

    data = bytearray(archive([(SKILL_MD_NAME, SKILL), ("a.md", b"x" * 1000)], compression=0))
    where = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, where + 24, 10)
    return bytes(data)


def _encrypted() -> bytes:
    data = bytearray(archive([(SKILL_MD_NAME, SKILL), ("secret.md", b"s")], compression=0))
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := data.find(signature, start)) != -1:
            data[start + flag_at] |= 0x1
            start += 4
    return bytes(data)


SKILL_MD_NAME = "SKILL.md"
NFD = unicodedata.normalize("NFD", "café.md")
HOSTILE: dict[str, Callable[[], bytes]] = {
    "dot-dot": lambda: archive([(SKILL_MD_NAME, SKILL), ("../x", b"x")]),
    "absolute": lambda: archive([(SKILL_MD_NAME, SKILL), ("/x", b"x")]),
    "drive": lambda: archive([(SKILL_MD_NAME, SKILL), ("C:\\x", b"x")]),
    "dot-git": lambda: archive([(SKILL_MD_NAME, SKILL), (".GIT/x", b"x")]),
    "git-short-name": lambda: archive([(SKILL_MD_NAME, SKILL), ("git~1/x", b"x")]),
    # names the working tree never holds: they failed at the commit (exit 7) or after it
    "name-over-255-bytes": lambda: archive([(SKILL_MD_NAME, SKILL), ("d" * 300 + ".md", b"x")]),
    "colon": lambda: archive([(SKILL_MD_NAME, SKILL), ("notes:v2.md", b"x")]),
    # git's own files are skipped, but not when their name escapes: refused whole
    "escaping-gitignore": lambda: archive([(SKILL_MD_NAME, SKILL), ("../.gitignore", b"x")]),
    "symlink": lambda: archive(
        [(SKILL_MD_NAME, SKILL), ("link", b"/etc/passwd")], modes={"link": 0o120777}
    ),
    "duplicate": lambda: archive([(SKILL_MD_NAME, SKILL), ("a.md", b"1"), ("a.md", b"2")]),
    "case": lambda: archive([(SKILL_MD_NAME, SKILL), ("A.md", b"1"), ("a.md", b"2")]),
    "nfc": lambda: archive([(SKILL_MD_NAME, SKILL), ("café.md", b"1"), (NFD, b"2")]),
    "lying-size": _lying_size,
    "bomb": lambda: archive([(SKILL_MD_NAME, SKILL), ("zeros.bin", b"\0" * 100_000)]),
    "encrypted": _encrypted,
    "no-skill-md": lambda: archive([("README.md", b"x")]),
    "two-skill-md": lambda: archive([(SKILL_MD_NAME, SKILL), ("sub/SKILL.md", SKILL)]),
}


@pytest.mark.parametrize("attack", sorted(HOSTILE))
def test_hostile_archives_are_refused_whole(
    xb: Run, store_dir: Path, tmp_path: Path, attack: str
) -> None:
    assert xb("skill", "save", str(EXAMPLE)).code == 0
    before = snapshot_files(store_dir)
    target = tmp_path / f"{attack}.zip"
    target.write_bytes(HOSTILE[attack]())
    for verb in ("import", "save"):
        result = xb("skill", verb, str(target))
        assert result.code == 4, (verb, result.stdout, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot_files(store_dir) == before


def test_a_file_name_of_250_bytes_is_saved_and_the_store_stays_writable(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """The working tree's temporary name for it was 262 bytes: the save committed, then
    failed, and every later write and doctor --repair failed the same way."""
    source = skill_dir(tmp_path)
    long = source / "references" / ("r" * 247 + ".md")
    long.write_text("a reference with the longest name a file system takes\n")
    assert xb("skill", "save", str(source)).code == 0
    long.write_text("changed\n")
    saved = xb("skill", "save", str(source))
    assert saved.code == 0 and saved.json["status"] == "updated", saved.stderr
    assert xb("put", str(EXAMPLES / "batch.json")).code == 0
    assert xb("doctor").json["ok"] is True


def test_a_skill_kept_in_git_skips_gits_own_files(xb: Run, tmp_path: Path) -> None:
    """A skill folder that is its own repository holds .git, .gitignore, .gitattributes:
    how it is kept, not the skill. They failed the commit (exit 7, "a name git
    reserves"); they are skipped and reported, as .DS_Store is, from a folder and from a
    repository alike, and the skill is the one saved without them."""
    source = skill_dir(tmp_path)
    (source / ".git").mkdir()
    (source / ".git" / "config").write_text("[core]\n")
    (source / ".gitignore").write_text("*.tmp\n")
    (source / "references" / ".gitattributes").write_text("* text=auto\n")
    saved = xb("skill", "save", str(source))
    assert saved.code == 0, saved.stderr
    assert saved.json["skipped"] == [".git/", ".gitignore", "references/.gitattributes"]
    plain = xb("skill", "save", str(EXAMPLE), store=tmp_path / "plain").json
    assert saved.json["canonical_hash"] == plain["canonical_hash"]
    extra = {"deploy-check/.gitignore": b"*.tmp\n", "deploy-check/references/.gitkeep": b""}
    repo, _ = _dulwich_repo(tmp_path / "repo", extra)
    repo.close()
    imported = xb("skill", "import", str(tmp_path / "repo"), "--path", "deploy-check")
    assert imported.code == 0, imported.stderr
    assert sorted(imported.json["skipped"]) == [".gitignore", "references/.gitkeep"]
    assert imported.json["canonical_hash"] == plain["canonical_hash"]
    members = [
        ("deploy-check-main/.gitignore", b"*.tmp\n"),
        ("deploy-check-main/.github/workflows/ci.yml", b"on: push\n"),
        *(
            (f"deploy-check-main/{path.relative_to(EXAMPLE).as_posix()}", path.read_bytes())
            for path in sorted(EXAMPLE.rglob("*"))
            if path.is_file()
        ),
    ]
    download = tmp_path / "deploy-check-main.zip"  # as a repository's "Download ZIP"
    download.write_bytes(archive(members))
    unzipped = xb("skill", "import", str(download), store=tmp_path / "zipped")
    assert unzipped.code == 0, unzipped.stderr
    assert unzipped.json["skipped"] == [
        "deploy-check-main/.gitignore",
        "deploy-check-main/.github/workflows/ci.yml",
    ]
    assert unzipped.json["canonical_hash"] == plain["canonical_hash"]


def test_a_directory_with_a_symlink_is_refused(xb: Run, store_dir: Path, tmp_path: Path) -> None:
    source = skill_dir(tmp_path)
    (source / "references/passwd.md").symlink_to("/etc/passwd")
    result = xb("skill", "save", str(source))
    assert result.code == 4 and "symbolic link" in result.stderr
    assert not store_dir.exists()


def _source_repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "source-repo"
    (repo / "skills").mkdir(parents=True)
    shutil.copytree(EXAMPLE, repo / "skills" / "deploy-check")
    (repo / "skills" / "deploy-check" / ".DS_Store").write_bytes(b"\0")
    env = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *env, "commit", "-qm", "skills"], check=True)
    subprocess.run(["git", "-C", str(repo), "tag", "v1"], check=True)
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return repo, commit


@pytest.mark.compat
def test_import_from_a_git_url_records_the_commit(xb: Run, tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    repo, commit = _source_repo(tmp_path)
    for url, ref in ((str(repo), "v1"), (f"file://{repo}", None), (f"file://{repo}", "trunk")):
        store = tmp_path / f"store-{ref}-{url[:4]}"
        args = ["skill", "import", url, "--path", "skills/deploy-check"]
        result = xb(*args, *(["--ref", ref] if ref else []), store=store)
        assert result.code == 0, result.stderr
        assert result.json["state"] == "proposed" and result.json["skipped"] == [".DS_Store"]
        source = xb("skill", "log", "deploy-check", store=store).json["revisions"][0]["source"]
        assert source["type"] == "git" and source["commit"] == commit
        local = xb("skill", "save", str(EXAMPLE), store=tmp_path / "local").json
        assert result.json["canonical_hash"] == local["canonical_hash"]
    wrong = xb("skill", "import", f"file://{repo}", "--ref", "nope", store=tmp_path / "s2")
    assert wrong.code == 3 and not (tmp_path / "s2").exists()
    nowhere = xb("skill", "import", f"file://{repo}", "--path", "nope", store=tmp_path / "s3")
    assert nowhere.code == 3


@pytest.mark.compat
def test_a_git_import_with_a_symlink_is_refused(xb: Run, store_dir: Path, tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    repo, _ = _source_repo(tmp_path)
    (repo / "skills/deploy-check/references/evil.md").symlink_to("/etc/passwd")
    env = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *env, "commit", "-qm", "link"], check=True)
    result = xb("skill", "import", str(repo), "--path", "skills/deploy-check", "--ref", "trunk")
    assert result.code == 4 and "symbolic link" in result.stderr
    assert not store_dir.exists()


def _dulwich_repo(repo_dir: Path, extra: dict[str, bytes]) -> tuple[Any, bytes]:
    """A repository holding deploy-check and ``extra`` files, one commit, made with
    dulwich alone (no git binary needed); the open repository and its commit."""
    from dulwich.repo import Repo

    repo_dir.parent.mkdir(exist_ok=True)
    repo = Repo.init(str(repo_dir), mkdir=True)
    shutil.copytree(EXAMPLE, repo_dir / "deploy-check")
    for name, data in extra.items():
        (repo_dir / name).write_bytes(data)
    paths = [str(p.relative_to(repo_dir)).encode() for p in repo_dir.rglob("*") if p.is_file()]
    repo.get_worktree().stage([p for p in paths if not p.startswith(b".git/")])
    commit = repo.get_worktree().commit(
        message=b"skills", committer=b"t <t@example.invalid>", author=b"t <t@example.invalid>"
    )
    return repo, commit


@contextlib.contextmanager
def _git_daemon(tmp_path: Path, extra: dict[str, bytes]) -> Iterator[tuple[str, bytes]]:
    """A dulwich git:// server on 127.0.0.1 serving :func:`_dulwich_repo`; yields its URL
    and commit."""
    import threading

    from dulwich.server import DictBackend, TCPGitServer

    repo, commit = _dulwich_repo(tmp_path / "served", extra)
    server = TCPGitServer(DictBackend({b"/": repo}), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"git://127.0.0.1:{server.server_address[1]}/", commit
    finally:
        server.shutdown()
        server.server_close()
        repo.close()


def test_import_over_git_protocol_from_a_local_dulwich_daemon(xb: Run, tmp_path: Path) -> None:
    with _git_daemon(tmp_path, {}) as (url, commit):
        result = xb("skill", "import", url, "--path", "deploy-check")
        assert result.code == 0, result.stderr
        source = xb("skill", "log", "deploy-check").json["revisions"][0]["source"]
        assert source == {
            "type": "git",
            "url": url,
            "commit": commit.decode(),
            "path": "deploy-check",
        }


def test_a_git_import_pinned_to_a_commit_id(xb: Run, tmp_path: Path) -> None:
    """--ref may be a full commit id (a reproducible import), over git:// and in place;
    an id the repository lacks is not found (over git://, the server refuses it)."""
    with _git_daemon(tmp_path, {}) as (url, commit):
        pinned = commit.decode()
        for where in (url, str(tmp_path / "served")):
            store = tmp_path / f"store-{len(where)}"
            args = ["skill", "import", where, "--path", "deploy-check", "--ref", pinned]
            result = xb(*args, store=store)
            assert result.code == 0, result.stderr
            source = xb("skill", "log", "deploy-check", store=store).json["revisions"][0]
            assert source["source"]["commit"] == pinned and source["source"]["ref"] == pinned
        missing = "0" * 40
        local = xb("skill", "import", str(tmp_path / "served"), "--ref", missing)
        assert (local.code, local.stderr) == (
            3,
            f"The repository at {tmp_path / 'served'} has no commit {missing!r}.\n",
        )
        remote = xb("skill", "import", url, "--ref", missing, "--path", "deploy-check")
        assert remote.code in (3, 8) and len(remote.stderr.splitlines()) == 1, remote.stderr
    assert not (tmp_path / "store").exists()


def test_a_repository_sending_a_bomb_or_too_much_is_refused_before_indexing(
    xb: Run, store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dulwich.object_store import DiskObjectStore

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a refused pack reached dulwich's indexer")

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    # 40 MiB of zeros: ~40 KB on the wire, outside --path, and over the 32 MiB object bound
    with _git_daemon(tmp_path / "bomb", {"zeros.bin": bytes(40 << 20)}) as (url, _):
        monkeypatch.setattr(DiskObjectStore, "add_thin_pack", never)
        result = xb("skill", "import", url, "--path", "deploy-check")
        monkeypatch.setattr(DiskObjectStore, "add_thin_pack", DiskObjectStore.add_thin_pack)
    assert result.code == 4, result.stderr
    assert f"The repository at {url} holds an object of 41,943,040 bytes" in result.stderr
    assert not store_dir.exists()
    # a repository that sends more than the wire bound (patched down to 64 KiB here)
    import xbrain.skills

    tight = xbrain.skills.IMPORT_BOUND._replace(max_wire=64 << 10)
    monkeypatch.setattr(xbrain.skills, "IMPORT_BOUND", tight)
    with _git_daemon(tmp_path / "big", {"noise.bin": os.urandom(200 << 10)}) as (url, _):
        result = xb("skill", "import", url, "--path", "deploy-check")
    assert result.code == 4 and "sent more than 65,536 bytes, the limit." in result.stderr
    assert "import its folder from a checkout: xbrain skill import DIR." in result.stderr
    assert not store_dir.exists()
    assert not list(scratch.iterdir())  # the scratch repository is gone


def test_a_local_repository_is_read_in_place_without_its_other_files(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Only what lies on the way to --path and under it is read: a 40 MiB file elsewhere
    in the repository is never inflated (before, the whole snapshot was copied and read)."""
    import tracemalloc

    repo, commit = _dulwich_repo(tmp_path / "local", {"zeros.bin": bytes(40 << 20)})
    repo.close()
    local = xb("skill", "save", str(EXAMPLE), store=tmp_path / "plain").json["canonical_hash"]
    tracemalloc.start()
    try:
        result = xb("skill", "import", str(tmp_path / "local"), "--path", "deploy-check")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.code == 0, result.stderr
    assert result.json["canonical_hash"] == local and peak < 20 << 20
    source = xb("skill", "log", "deploy-check").json["revisions"][0]["source"]
    assert source["commit"] == commit.decode()
    # a file under --path over the component limit is refused from its header
    (tmp_path / "local" / "deploy-check" / "references" / "big.md").write_bytes(bytes(1 << 20))
    again, _ = _dulwich_repo(tmp_path / "again", {})
    shutil.rmtree(tmp_path / "again" / "deploy-check")
    shutil.copytree(tmp_path / "local" / "deploy-check", tmp_path / "again" / "deploy-check")
    again.get_worktree().stage([b"deploy-check/references/big.md"])
    again.get_worktree().commit(message=b"big", committer=b"t <t@x>", author=b"t <t@x>")
    again.close()
    before = head(store_dir)
    refused = xb("skill", "import", str(tmp_path / "again"), "--path", "deploy-check")
    assert refused.code == 4 and "is 1,048,576 bytes; the limit is 128 KiB" in refused.stderr
    assert head(store_dir) == before
    nothing = xb("skill", "import", str(tmp_path / "plain-dir"), store=tmp_path / "s2")
    assert nothing.code in (3, 4) and not (tmp_path / "s2").exists()


def test_a_directory_entry_naming_a_file_is_refused(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """A hand-made tree whose entry says "directory" but names a blob: an input error,
    not an internal one (it was an AssertionError)."""
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    repo = Repo.init_bare(str(tmp_path / "odd.git"), mkdir=True)
    skill = Blob.from_string((EXAMPLE / "SKILL.md").read_bytes())
    inner = Tree()
    inner.add(b"SKILL.md", 0o100644, skill.id)
    inner.add(b"references", 0o040000, skill.id)  # a "directory" that is a file
    root = Tree()
    root.add(b"deploy-check", 0o040000, inner.id)
    root.add(b"flat", 0o040000, skill.id)
    commit = Commit()
    commit.tree, commit.message = root.id, b"odd"
    commit.author = commit.committer = b"t <t@example.invalid>"
    commit.author_time = commit.commit_time = 0
    commit.author_timezone = commit.commit_timezone = 0
    for obj in (skill, inner, root, commit):
        repo.object_store.add_object(obj)
    repo.refs[b"refs/heads/main"] = commit.id
    repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    repo.close()
    for path in ("deploy-check", "flat"):
        result = xb("skill", "import", str(tmp_path / "odd.git"), "--path", path)
        assert result.code == 4 and "is not a directory" in result.stderr, result.stderr
    assert not store_dir.exists()


def test_credentials_in_a_git_url_never_reach_output_or_the_store(xb: Run, store_dir: Path) -> None:
    result = xb("skill", "import", "https://user:s3cret-token@127.0.0.1:9/x.git")
    assert result.code == 8
    assert "s3cret-token" not in result.stderr + result.stdout
    assert not store_dir.exists()


def test_doctor_verifies_hashes_and_chain_links(xb: Run, store_dir: Path, tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    xb("skill", "save", str(EXAMPLE))
    rev2 = xb("skill", "save", str(skill_dir(tmp_path, body="two\n"))).json["revision_id"]
    assert xb("doctor").json["ok"] is True
    env = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    target = store_dir / "skills/deploy-check/revisions" / rev2 / "files/SKILL.md"
    target.write_text(target.read_text() + "hand edit\n")
    git(store_dir, *env, "commit", "-qam", "hand edit")
    found = [p for p in xb("doctor").json["problems"] if p["code"] != "permissions"]  # git's
    assert [p["code"] for p in found] == ["skill_hash"]
    assert found[0]["path"].endswith(f"{rev2}/files/SKILL.md")
    # a revision whose parent link was rewritten (the manifest still matches its files)
    meta = store_dir / "skills/deploy-check/revisions" / rev2 / "revision.yaml"
    meta.write_text(meta.read_text().replace("number: 2", "number: 3"))
    git(store_dir, *env, "commit", "-qam", "renumber")
    codes = {p["code"] for p in xb("doctor").json["problems"]}
    assert "skill_revision" in codes


def test_a_revision_removed_by_a_plain_git_commit_is_exit_7_everywhere(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """export and restore failed with an AssertionError, and publish published a revision
    whose files were gone; every verb now names the missing file (exit 7), writes nothing."""
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    rev1 = xb("skill", "save", str(EXAMPLE)).json["revision_id"]
    xb("skill", "save", str(skill_dir(tmp_path, body="two\n")))
    env = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    git(store_dir, *env, "rm", "-rq", f"skills/deploy-check/revisions/{rev1}")
    git(store_dir, *env, "commit", "-qm", "hand delete")
    before = head(store_dir)
    missing = f"skills/deploy-check/revisions/{rev1}/revision.yaml is missing"
    for verb in (
        ["export", "deploy-check", str(tmp_path / "out.zip"), "--revision", rev1],
        ["restore", "deploy-check", rev1],
        ["recall", "--slug", "deploy-check", "--revision", rev1],
        ["diff", "deploy-check", "1", "2"],
        ["log", "deploy-check"],
        ["publish", "deploy-check", rev1],
        ["deprecate", "deploy-check", rev1],
    ):
        result = xb("skill", *verb)
        assert result.code == 7 and missing in result.stderr, (verb, result.stderr)
    assert head(store_dir) == before and not (tmp_path / "out.zip").exists()
    found = [p for p in xb("doctor").json["problems"] if p["code"] == "skill_revision"]
    assert [p["path"] for p in found] == [missing.removesuffix(" is missing")]


def test_skill_recall_stays_on_the_fast_path_after_other_writes(
    xb: Run, store_dir: Path, json_file: Callable[[Any], str]
) -> None:
    from tests.conftest import sample
    from xbrain.search.skills import level1 as indexed_level1

    xb("skill", "save", str(EXAMPLE))
    assert xb("skill", "recall", "deploy").json["count"] == 1  # builds the skill index
    assert xb("put", json_file(sample())).code == 0
    index = store_dir / ".git/xbrain/skills.sqlite"
    with sqlite3.connect(index) as conn:
        (commit,) = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
    # the put touched no skill: the index is not written, and a note says it still holds
    # for the new head (search.freshness), so the next recall needs no git
    from xbrain.search.freshness import reflects

    now = head(store_dir)
    assert now is not None and commit != now and reflects(index, commit, now)
    assert indexed_level1(store_dir, "deploy-check") is not None  # the fast path answers
    assert oct(index.stat().st_mode & 0o777) == "0o600"
    reindexed = xb("reindex").json
    assert reindexed["skills"] == 1 and reindexed["reindexed"] == 1


def test_restore_appends_an_old_revision_and_log_lists_the_commits(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    r1 = xb("skill", "save", str(EXAMPLE), "--agent", "claude-code").json
    xb("skill", "save", str(skill_dir(tmp_path, body="two\n")), "--publish")
    xb("put", str(EXAMPLES / "synthetic-resource.json"))  # not a skill commit
    restored = xb("skill", "restore", "deploy-check", "1").json
    assert restored["status"] == "updated" and restored["revision_number"] == 3
    assert restored["canonical_hash"] == r1["canonical_hash"]
    assert restored["restored_from"] == r1["revision_id"]
    assert restored["revision_id"] != r1["revision_id"]  # a new link in the chain
    again = xb("skill", "restore", "deploy-check", "3")
    assert again.json["status"] == "unchanged" and again.json["commit"] is None
    log = xb("skill", "log", "deploy-check").json
    commands = [c["command"] for c in log["commits"]]
    assert commands == ["skill restore", "skill save", "skill save"]
    assert log["commits"][-1]["agent"] == "claude-code"
    assert xb("skill", "log", "deploy-check", "--limit", "1").json["commits"][0]["command"] == (
        "skill restore"
    )
    assert xb("skill", "restore", "deploy-check", "9").code == 3


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda text: text.replace("status: active", "status: gone"), "status"),
        (lambda text: text.replace("number: 1", "number: one"), "number"),
        (lambda text: text.replace("head: rev_", "head: rev_0"), "head"),
        (lambda text: text.replace("  state: draft", "  state: published"), "published_at"),
    ],
)
def test_a_broken_hand_committed_state_is_reported_not_a_crash(
    xb: Run, store_dir: Path, edit: Callable[[str], str], message: str
) -> None:
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    xb("skill", "save", str(EXAMPLE))
    state = store_dir / "skills/deploy-check/skill.yaml"
    state.write_text(edit(state.read_text()))
    git(store_dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qam", "x")
    problems = [p for p in xb("doctor").json["problems"] if p["code"] != "permissions"]
    assert problems and problems[0]["path"] == "skills/deploy-check/skill.yaml"
    assert message in problems[0]["message"]
    listed = xb("skill", "list")
    if message != "published_at":  # readers need no publication time; the schema does
        assert listed.code == 7 and "skills/deploy-check/skill.yaml" in listed.stderr
        assert "Internal error" not in listed.stderr


def test_levels_1_and_2_from_the_index_equal_the_answers_from_git(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    rev = xb("skill", "save", str(EXAMPLE), "--publish").json["revision_id"]
    index = store_dir / ".git/xbrain/skills.sqlite"
    slow1 = xb("skill", "recall", "--slug", "deploy-check").json  # no index yet: from git
    args = ("--slug", "deploy-check", "--revision", rev, "--resource", "scripts/check.sh")
    slow2 = xb("skill", "recall", *args).json
    assert not index.exists()
    assert xb("skill", "recall", "deploy").json["count"] == 1  # builds the index
    from xbrain.search import skills as indexed

    assert indexed.level1(store_dir, "deploy-check") == slow1
    assert indexed.component(store_dir, "deploy-check", rev, "scripts/check.sh") == slow2
    assert xb("skill", "recall", "--slug", "deploy-check").json == slow1
    # a hand edit of the working-tree file: the index path declines, git answers
    target = store_dir / "skills/deploy-check/revisions" / rev / "files/scripts/check.sh"
    target.write_text("#!/bin/sh\nrm -rf /\n")
    assert indexed.component(store_dir, "deploy-check", rev, "scripts/check.sh") is None
    assert xb("skill", "recall", *args).json == slow2
    # a planted link to a file outside with the very same bytes still reads nothing outside
    outside = tmp_path / "outside.sh"
    outside.write_bytes((EXAMPLE / "scripts/check.sh").read_bytes())
    target.unlink()
    target.symlink_to(outside)
    assert indexed.component(store_dir, "deploy-check", rev, "scripts/check.sh") is None
    assert xb("skill", "recall", *args).json == slow2
    # a newer commit the index has not seen: it declines rather than answer stale
    with sqlite3.connect(index) as conn:
        conn.execute("UPDATE meta SET value = 'old' WHERE key = 'commit'")
    assert indexed.level1(store_dir, "deploy-check") is None
    assert xb("skill", "recall", "--slug", "deploy-check").json == slow1


def test_done_means_end_to_end_through_the_real_cli(
    xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Issue 15's walk-through as separate processes: save, three revisions, publish,
    deprecate, archive; Level 2 pinned to revision A after B is published; no commit for
    the same content; export twice, byte-identical, re-imported elsewhere with the same
    canonical hash; git fsck --strict clean."""

    def ok(*args: str, store: Path = store_dir) -> Any:
        result = xb_proc(*args, store=store)
        assert result.code == 0, (args, result.stderr)
        assert result.stderr == ""
        return result.json

    folder = skill_dir(tmp_path, body="# Runbook\n\nStep one.\n")
    a = ok("skill", "save", str(folder))
    revisions = [a]
    for n in (2, 3, 4):
        folder = skill_dir(tmp_path, body=f"# Runbook\n\nStep one.\nStep {n}.\n")
        (folder / "scripts/check.sh").write_text(f"#!/bin/sh\necho {n}\n")
        revisions.append(ok("skill", "save", str(folder)))
    assert [r["revision_number"] for r in revisions] == [1, 2, 3, 4]
    before = head(store_dir)
    assert ok("skill", "save", str(folder))["status"] == "unchanged"
    assert head(store_dir) == before
    # a workflow pinned to revision A keeps reading A's files after B is published
    pinned = revisions[1]["revision_id"]
    args = ("skill", "recall", "--slug", "deploy-check", "--revision", pinned)
    assert ok("skill", "publish", "deploy-check", revisions[3]["revision_id"])["status"] == (
        "published"
    )
    assert ok(*args, "--resource", "scripts/check.sh")["content"] == "#!/bin/sh\necho 2\n"
    assert (
        ok("skill", "recall", "--slug", "deploy-check")["revision_id"]
        == (revisions[3]["revision_id"])
    )
    assert ok("skill", "deprecate", "deploy-check", "4")["status"] == "deprecated"
    assert ok("skill", "recall", "runbook")["count"] == 1
    assert ok("skill", "archive", "deploy-check")["status"] == "archived"
    assert ok("skill", "recall", "runbook")["count"] == 0
    assert ok(*args)["revision_id"] == pinned  # archived and deprecated: still readable
    one, two = tmp_path / "one.zip", tmp_path / "two.zip"
    ok("skill", "export", "deploy-check", str(one), "--revision", "4")
    ok("skill", "export", "deploy-check", str(two), "--revision", revisions[3]["revision_id"])
    assert one.read_bytes() == two.read_bytes()
    elsewhere = ok("skill", "import", str(one), store=tmp_path / "elsewhere")
    assert elsewhere["canonical_hash"] == revisions[3]["canonical_hash"]
    commands = [c["command"] for c in ok("skill", "log", "deploy-check")["commits"]]
    assert commands == ["skill archive", "skill deprecate", "skill publish", *["skill save"] * 4]
    if shutil.which("git") is not None:
        fsck = subprocess.run(
            ["git", "-C", str(store_dir), "fsck", "--strict"], capture_output=True, text=True
        )
        assert fsck.returncode == 0, fsck.stderr
        assert git(store_dir, "status", "--porcelain") == ""


def test_the_argument_may_be_a_link_but_nothing_inside_is_followed(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    real = skill_dir(tmp_path)
    linked_dir = tmp_path / "linked-dir"
    linked_dir.symlink_to(real)
    assert xb("skill", "save", str(linked_dir)).json["status"] == "created"
    linked_file = tmp_path / "linked.md"
    linked_file.symlink_to(real / "SKILL.md")
    assert xb("skill", "save", str(linked_file)).code == 0
    (real / "references" / "inner-link.md").symlink_to(real / "SKILL.md")
    refused = xb("skill", "save", str(linked_dir))
    assert refused.code == 4 and "symbolic link" in refused.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert xb("skill", "save", str(fifo)).code == 4  # never opened, so never blocks


def test_a_component_name_that_is_not_utf8_is_refused_in_one_line(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "deploy-check"
    shutil.copytree(EXAMPLES / "skills" / "deploy-check", folder)
    with open(os.fsencode(folder / "references") + b"/x\xff.md", "wb") as handle:
        handle.write(b"hi")
    refused = xb("skill", "save", str(folder))
    assert refused.code == 4 and "'references/x\\udcff.md' is not valid UTF-8" in refused.stderr
    assert not store_dir.exists()


@pytest.mark.parametrize("damage", ["{not json", "[]"])
def test_a_damaged_skill_index_row_is_rebuilt_by_recall(
    xb: Run, xb_proc: Run, store_dir: Path, damage: str
) -> None:
    """A row of the skill index that is not what the index writes is damage: Level 0
    rebuilds the index and answers, in-process and in a fresh process."""
    assert xb("skill", "save", str(EXAMPLE)).code == 0
    before = xb("skill", "recall", "deploy check").json
    assert [r["slug"] for r in before["results"]] == ["deploy-check"]
    for run in (xb, xb_proc):
        with contextlib.closing(sqlite3.connect(store_dir / ".git/xbrain/skills.sqlite")) as db:
            db.execute("UPDATE docs SET resource = ?", (damage,))
            db.commit()
        after = run("skill", "recall", "deploy check")
        assert after.code == 0, after.stderr
        assert after.json == before
        assert json.loads(indexed_rows(store_dir)["deploy-check"][1])["slug"] == "deploy-check"


def test_level0_says_the_query_as_asked_and_the_terms_it_searched(xb_proc: Run) -> None:
    """A Level 0 answer showed a token list where the query was asked."""
    assert xb_proc("skill", "save", str(EXAMPLE)).code == 0
    found = xb_proc("skill", "recall", "How do I roll back the deploy? 部署回滚").json
    assert found["query"] == "How do I roll back the deploy? 部署回滚"
    assert "deploy" in found["terms"] and "the" not in found["terms"]
    assert found["results"][0]["slug"] == "deploy-check"
