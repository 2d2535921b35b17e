"""Entries through the CLI: write rules, memex folders in and out, hostile input."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, head, merged_tree, snapshot_files
from xbrain.kinds.entry import entry_id
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
MEMEX = EXAMPLES / "memex"
RULE = entry_id("global", "no-force-push")


def same_tree(a: Path, b: Path) -> bool:
    compare = filecmp.dircmp(a, b)
    if compare.left_only or compare.right_only or compare.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, compare.common_files, shallow=False)
    return not mismatch and not errors and all(same_tree(a / d, b / d) for d in compare.common_dirs)


def test_a_memex_folder_imports_and_exports_back_byte_identically(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    imported = xb("entry", "import", str(MEMEX))
    assert imported.code == 0, imported.stderr
    assert schema_errors("entry-put-output", imported.json) == []
    assert imported.json["added"] == 4
    names = {r["name"] for r in imported.json["results"]}
    assert names == {
        "no-force-push",
        "review-checklist",
        "project-notes#部署环境",
        "project-notes#Build tips",
    }
    # skills/deploy/SKILL.md is memex's skill folder: a skill, not a workflow entry
    (skill,) = imported.json["skills"]
    assert "skills/deploy/ holds the skill named deploy-steps" in skill["warnings"]
    assert (skill["slug"], skill["status"], skill["state"]) == (
        "deploy-steps",
        "created",
        "proposed",
    )
    before = head(store_dir)
    again = xb("entry", "import", str(MEMEX)).json
    assert again["unchanged"] == 4 and again["commit"] is None and head(store_dir) == before
    assert again["skills"][0]["status"] == "unchanged" and again["missing"] == []
    out = tmp_path / "out"
    exported = xb("entry", "export", str(out))
    assert exported.json == {"exported": 4, "skills": 1, "files": 4, "directory": str(out)}
    assert same_tree(MEMEX, out)
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in out.rglob("*.md"))
    rule = xb("entry", "get", RULE).json
    assert schema_errors("entry-get-output", rule) == []
    assert rule["kind"] == "rule" and rule["boost"] == 0.05
    assert rule["queries"] == ["git push --force", "强制推送到主分支"]
    assert rule["oneLiner"] == "Rule: no force-push on shared branches."
    assert xb("entry", "get", entry_id("global", "deploy-steps")).code == 3
    assert xb("skill", "publish", "deploy-steps", "1").code == 0  # imported: proposed
    steps = xb("skill", "recall", "--slug", "deploy-steps").json
    assert steps["instructions"] == "1. Build.\n2. Ship.\n"
    memory = xb("entry", "get", entry_id("global", "project-notes#Build tips")).json
    assert memory["body"].startswith("Use `make -j2`") and memory["kind"] == "memory"
    review = xb("entry", "get", entry_id("global", "review-checklist")).json
    assert review["description"] == (
        "Before approving a pull request:\ncheck tests, docs and the changelog.\n"
    )


def test_edited_entries_render_and_import_back_to_the_same_fields(xb: Run, tmp_path: Path) -> None:
    xb("entry", "import", str(MEMEX))
    rule = xb("entry", "get", RULE).json
    rule.pop("updatedAt")
    rule.update(oneLiner='Rule: "never": force-push.', description="多行\n描述: yes")
    assert xb("entry", "put", "-", input=rule).json["updated"] == 1
    memory = xb("entry", "get", entry_id("global", "project-notes#部署环境")).json
    memory.pop("updatedAt")
    memory.update(queries=["部署窗口"])  # a section cannot say this: its own file
    assert xb("entry", "put", "-", input=memory).json["updated"] == 1
    out = tmp_path / "out"
    assert xb("entry", "export", str(out)).code == 0
    assert (out / "rules/review-checklist.md").read_bytes() == (
        MEMEX / "rules/review-checklist.md"
    ).read_bytes()
    assert "one-liner:" in (out / "rules/no-force-push.md").read_text()
    other = tmp_path / "other"
    assert xb("entry", "import", str(out), store=other).json["added"] == 4
    for rid in (RULE, entry_id("global", "project-notes#部署环境")):
        here = xb("entry", "get", rid).json
        there = xb("entry", "get", rid, store=other).json
        assert {k: v for k, v in here.items() if k != "source"} == {
            k: v for k, v in there.items() if k != "source"
        }


def test_write_rules_match_resources(
    xb: Run, store_dir: Path, json_file: Callable[[Any], str]
) -> None:
    entry = {
        "kind": "rule",
        "name": "tabs",
        "body": "Indent with tabs.",
        "updatedAt": "2026-01-02T00:00:00.000Z",
    }
    assert xb("entry", "put", json_file(entry)).json["added"] == 1
    rid = entry_id("global", "tabs")
    stale = xb("entry", "put", json_file({**entry, "updatedAt": "2026-01-01T00:00:00.000Z"}))
    assert stale.code == 5
    conflict = xb("entry", "put", json_file({**entry, "body": "Spaces."}))
    assert conflict.code == 5
    assert xb("entry", "put", json_file(entry)).json["unchanged"] == 1
    deleted = xb("entry", "delete", rid).json
    assert deleted["deleted"] is True and schema_errors("entry-delete-output", deleted) == []
    assert xb("entry", "delete", rid).json == {"deleted": False, "commit": None}
    gone = xb("entry", "get", rid)
    assert gone.code == 3 and "deleted at" in gone.stderr
    revived = xb("entry", "put", json_file({**entry, "updatedAt": "2027-01-01T00:00:00.000Z"}))
    assert revived.json["added"] == 1
    retired = xb("entry", "retire", rid).json
    assert retired["status"] == "retired" and schema_errors("entry-status-output", retired) == []
    assert xb("entry", "retire", rid).json["status"] == "unchanged"
    listed = xb("entry", "list", "--status", "retired").json
    assert [e["id"] for e in listed["entries"]] == [rid]
    assert schema_errors("entry-list-output", listed) == []
    assert xb("entry", "list", "--status", "active").json["count"] == 0
    assert xb("entry", "activate", rid).json["status"] == "active"
    assert xb("entry", "list", "--kind", "memory").json["count"] == 0


def test_an_import_does_not_bring_back_a_deleted_entry(xb: Run) -> None:
    xb("entry", "import", str(MEMEX))
    assert xb("entry", "delete", RULE).json["deleted"] is True
    again = xb("entry", "import", str(MEMEX)).json
    assert again["skippedDeleted"] == 1 and again["unchanged"] == 3
    assert xb("entry", "get", RULE).code == 3


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"kind": "note", "name": "x"}, "kind"),
        ({"kind": "rule", "name": "a\nb"}, "name"),
        ({"kind": "rule", "name": "x", "boost": 0.5}, "boost"),
        ({"kind": "rule", "name": "n" * 201}, "Entry name is over 200 characters."),
        ({"kind": "rule", "name": "x", "oneLiner": "o" * 301}, "oneLiner is over 300"),
        ({"kind": "rule", "name": "x", "scope": "Project:X"}, "scope"),
        ({"kind": "rule", "name": "x", "events": ["not an event"]}, "events"),
        ({"kind": "rule", "name": "x", "queries": "q" * 600}, "queries"),
        (
            {
                "kind": "rule",
                "name": "x",
                "source": {"path": "../../etc/x.md", "section": None, "order": 0, "markdown": ""},
            },
            "path",
        ),
        (
            {
                "kind": "rule",
                "name": "x",
                "source": {"path": "other/x.md", "section": None, "order": 0, "markdown": ""},
            },
            "rules/",
        ),
    ],
)
def test_invalid_entries_change_nothing(
    xb: Run, store_dir: Path, json_file: Callable[[Any], str], entry: dict[str, Any], message: str
) -> None:
    xb("entry", "import", str(MEMEX))
    before = snapshot_files(store_dir)
    result = xb("entry", "put", json_file([{"kind": "rule", "name": "fine"}, entry]))
    assert result.code == 4 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot_files(store_dir) == before


def test_entry_texts_at_their_limits_are_kept(xb: Run, json_file: Callable[[Any], str]) -> None:
    entry = {"kind": "rule", "name": "n" * 200, "oneLiner": "o" * 300}
    result = xb("entry", "put", json_file([entry]))
    assert result.code == 0, result.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: rule\nname: r\nname: s\n", 'duplicate key "name"'),
        ("kind: rule\nname: r\nname: s\n", "(line 3, column 1)"),
        ("---\ntype: rule\nname: r\n  bad: [\n---\nbody\n", "(line 4, column 6)"),
        ("just a sentence\n", "Input is not JSON, YAML or Markdown"),
    ],
)
def test_unreadable_yaml_says_what_and_where(
    xb: Run, store_dir: Path, text: str, message: str
) -> None:
    xb("entry", "import", str(MEMEX))
    before = snapshot_files(store_dir)
    result = xb("entry", "put", "-", input=text)
    assert result.code == 4 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "unicode string" not in result.stderr
    assert snapshot_files(store_dir) == before


def test_windows_line_endings_import_and_a_bad_file_is_named(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """A memex folder saved with CRLF line endings was refused whole ("Entry body has a
    control character"), and the error never said which of its files was at fault."""
    folder = tmp_path / "memex"
    (folder / "rules").mkdir(parents=True)
    (folder / "memory").mkdir()
    rule = "---\nname: crlf\ndescription: Saved on Windows\nqueries: [line endings]\n---\nUse LF.\n"
    (folder / "rules" / "crlf.md").write_bytes(rule.replace("\n", "\r\n").encode())
    notes = "## Tabs\nThe user prefers tabs.\n\n## City\nBerlin.\n"
    (folder / "memory" / "notes.md").write_bytes(notes.replace("\n", "\r\n").encode())
    imported = xb("entry", "import", str(folder))
    assert imported.code == 0 and imported.json["added"] == 3, imported.stderr
    rule_id = next(r["id"] for r in imported.json["results"] if r["name"] == "crlf")
    shown = xb("entry", "get", rule_id).json
    assert shown["body"] == "Use LF.\n" and shown["description"] == "Saved on Windows"
    before = snapshot_files(store_dir)
    (folder / "rules" / "bad.md").write_text("---\nname: bad\n---\nA lone \r here.\n")
    refused = xb("entry", "import", str(folder))
    assert refused.code == 4 and refused.stderr.startswith("rules/bad.md: "), refused.stderr
    listed = [{"kind": "rule", "name": "ok"}, {"kind": "rule", "name": "bad", "body": "\r"}]
    named = xb("entry", "put", "-", input=listed)
    assert named.code == 4 and named.stderr.startswith("Entry 2 of 2: "), named.stderr
    assert snapshot_files(store_dir) == before


def test_markdown_put_and_hostile_folders(xb: Run, store_dir: Path, tmp_path: Path) -> None:
    note = tmp_path / "stop.md"
    note.write_text("---\ntype: stop-rule\nhooks: [Stop]\n---\nNot while a secret is staged.\n")
    made = xb("entry", "put", str(note)).json
    assert made["results"][0]["name"] == "stop"  # no name: the file's
    assert xb("entry", "put", "-", input="---\nname: x\n---\nno type\n").code == 4
    linked = tmp_path / "linked"
    shutil.copytree(MEMEX, linked)
    (linked / "rules/evil.md").symlink_to("/etc/passwd")
    before = snapshot_files(store_dir)
    refused = xb("entry", "import", str(linked))
    assert refused.code == 4 and "symbolic link" in refused.stderr
    (linked / "rules/evil.md").unlink()
    (linked / "rules/latin1.md").write_bytes(b"---\ntype: rule\n---\ncaf\xe9\n")
    assert xb("entry", "import", str(linked)).code == 4
    not_folder = xb("entry", "import", os.devnull)  # there, but no folder (click's check
    assert not_folder.code == 4 and "Not a directory" in not_folder.stderr  # takes files)
    assert xb("entry", "import", str(tmp_path / "absent")).code == 3
    assert snapshot_files(store_dir) == before
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    assert xb("entry", "export", str(busy)).code == 4
    assert (busy / "keep.txt").read_text() == "mine"
    assert xb("entry", "import", str(tmp_path / "nowhere")).code in (2, 3)


def test_two_devices_merge_entries_like_resources(xb: Run, tmp_path: Path) -> None:
    base = tmp_path / "base"
    xb("entry", "import", str(MEMEX), store=base)
    left, right = tmp_path / "left", tmp_path / "right"
    shutil.copytree(base, left, symlinks=True)
    shutil.copytree(base, right, symlinks=True)
    rule = xb("entry", "get", RULE, store=left).json
    rule.update(body="Edited on the left.", updatedAt="2030-01-01T00:00:00.000Z")
    assert xb("entry", "put", "-", input=json.dumps(rule), store=left).code == 0
    assert xb("entry", "delete", RULE, store=right).json["deleted"] is True
    notes = entry_id("global", "project-notes#Build tips")
    assert xb("entry", "delete", notes, store=left).json["deleted"] is True
    one, other = merged_tree(left, right), merged_tree(right, left)
    assert one == other
    rule_path = f"entries/{RULE[6:8]}/{RULE}.yaml"
    assert b"Edited on the left." in one[rule_path]  # the later edit beats the delete
    assert f"entry-tombstones/{RULE[6:8]}/{RULE}.yaml" not in one
    assert f"entry-tombstones/{notes[6:8]}/{notes}.yaml" in one
    catalog = json.loads(one[f"index/catalog/{RULE[6:8]}.json"])
    assert RULE in catalog and "updatedAt" in catalog[RULE]


def test_a_scoped_import_exports_with_its_scope(xb: Run, tmp_path: Path) -> None:
    scoped = xb("entry", "import", str(MEMEX), "--scope", "project:example.org/app")
    assert scoped.json["added"] == 4
    out = tmp_path / "out"
    assert xb("entry", "export", str(out)).code == 0
    assert "scope: project:example.org/app" in (out / "rules/no-force-push.md").read_text()
    again = tmp_path / "again"
    assert xb("entry", "import", str(out), store=again).json["added"] == 4
    ids = {e["id"] for e in xb("entry", "list").json["entries"]}
    assert {e["id"] for e in xb("entry", "list", store=again).json["entries"]} == ids


def test_an_edited_section_never_overwrites_its_file(xb: Run, tmp_path: Path) -> None:
    xb("entry", "import", str(MEMEX))
    notes = entry_id("global", "project-notes#部署环境")
    memory = xb("entry", "get", notes).json
    memory.pop("updatedAt")
    memory["queries"] = ["部署窗口是什么时候"]  # a section cannot hold this
    assert xb("entry", "put", "-", input=json.dumps(memory)).json["updated"] == 1
    out = tmp_path / "out"
    assert xb("entry", "export", str(out)).json["files"] == 5
    kept = (out / "memory/project-notes.md").read_text()
    assert kept.startswith("# Project notes\n\nIntro text before the first section.\n")
    assert "## Build tips" in kept and "部署环境" not in kept
    assert "queries:" in (out / "memory/project-notes-2.md").read_text()
    other = tmp_path / "other"
    assert xb("entry", "import", str(out), store=other).json["added"] == 4


def test_two_entries_with_one_name_in_a_batch_change_nothing(
    xb: Run, store_dir: Path, json_file: Callable[[Any], str]
) -> None:
    xb("entry", "import", str(MEMEX))
    before = snapshot_files(store_dir)
    twice = [{"kind": "rule", "name": "same"}, {"kind": "memory", "name": "same"}]
    result = xb("entry", "put", json_file(twice))
    assert result.code == 4 and "same scope and name" in result.stderr
    assert snapshot_files(store_dir) == before


def test_a_whole_cache_build_holds_what_each_write_adds(
    xb: Run, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recall cache built from every entry at once (reindex; with jieba-rs when it
    is big) holds the rows each write's upkeep adds to it, Chinese included."""
    import sqlite3

    from xbrain.search import entrycache, tokenize

    assert xb("entry", "import", str(MEMEX)).code == 0
    assert xb("recall", "-", input="git push --force").code == 0  # builds the cache
    rule = {
        "kind": "rule",
        "name": "alert-rule",
        "queries": ["先确认告警级别"],
        "body": "再通知值班。",
    }
    assert xb("entry", "put", "-", input=json.dumps(rule)).json["added"] == 1  # upkeep adds

    def rows() -> tuple[list[Any], list[Any]]:
        with sqlite3.connect(store_dir / ".git" / entrycache.CACHE_FILE) as conn:
            entries = conn.execute("SELECT id, data, body FROM entry ORDER BY id").fetchall()
            postings = conn.execute(
                "SELECT term, id FROM posting JOIN entry USING (i) ORDER BY term, id"
            ).fetchall()
        return entries, postings

    added = rows()
    assert len(added[0]) == 5 and ("告警", entry_id("global", "alert-rule")) in added[1]
    monkeypatch.setattr(tokenize, "BULK_SWITCH", 0)  # jieba-rs from the first character
    assert xb("reindex").code == 0
    assert rows() == added


def test_a_file_name_that_is_not_utf8_is_refused_in_one_line(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """It crashed: "Internal error (UnicodeEncodeError)"."""
    import os

    folder = tmp_path / "memex"
    shutil.copytree(EXAMPLES / "memex", folder)
    with open(os.fsencode(folder / "rules") + b"/bad\xffname.md", "wb") as handle:
        handle.write(b"---\nkind: rule\nname: bad-name\ndescription: d\n---\nBody.\n")
    refused = xb("entry", "import", str(folder))
    assert refused.code == 4 and refused.stderr.count("\n") == 1
    assert "'rules/bad\\udcffname.md' is not valid UTF-8" in refused.stderr
    assert not store_dir.exists()


def test_an_unpaired_surrogate_in_entry_json_is_refused_not_a_crash(
    xb: Run, store_dir: Path
) -> None:
    """JSON can escape one ("\\ud800"); the YAML emitter then crashed (exit 1)."""
    rule = '{"kind": "rule", "name": "odd", "description": "d", "body": "b", "queries": ["q"]}'
    for plain, odd in (('"d"', '"d \\ud800"'), ('"b"', '"b \\udfff"'), ('"q"', '"\\ud800"')):
        refused = xb("entry", "put", "-", input=rule.replace(plain, odd))
        assert refused.code == 4, refused.stderr
        assert refused.stderr == "Entry text must not hold unpaired surrogates.\n"
    assert not store_dir.exists()


def test_export_names_every_entry_a_file_the_file_system_takes(xb: Run, tmp_path: Path) -> None:
    """Long Chinese names, names of four-byte characters and names alike but for letter
    case (one would replace the other where case is ignored) each get a file of their own,
    and the export imports back to the same entries."""
    names = ["长" * 80, "\U00020000" * 70, "Deploy/Checks", "deploy\\checks", "café", "cafe\u0301"]
    rules = [{"kind": "rule", "name": name, "body": f"rule {i}"} for i, name in enumerate(names)]
    assert xb("entry", "put", "-", input=rules).code == 0
    out = tmp_path / "out"
    exported = xb("entry", "export", str(out))
    assert exported.code == 0, exported.stderr
    files = sorted(path.name for path in (out / "rules").iterdir())
    folded = {unicodedata.normalize("NFC", name).casefold() for name in files}
    assert len(files) == len(folded) == len(names)
    assert all(len(name.encode()) <= 255 for name in files)
    ids = {e["id"] for e in xb("entry", "list").json["entries"]}
    again = tmp_path / "again"
    assert xb("entry", "import", str(out), store=again).json["added"] == len(names)
    assert {e["id"] for e in xb("entry", "list", store=again).json["entries"]} == ids


def test_an_export_that_fails_midway_leaves_nothing_behind(xb: Run, tmp_path: Path) -> None:
    """A write refused midway (here the file-size limit, as a full disk would) removes
    what the export had written: the folder is as it was, and the export can run again."""
    import resource
    import subprocess
    import sys

    rules = [{"kind": "rule", "name": f"r{i}", "body": "short"} for i in range(3)]
    rules.append({"kind": "rule", "name": "zz-long", "body": "x" * 60_000})
    assert xb("entry", "put", "-", input=rules).code == 0
    out = tmp_path / "out"
    out.mkdir()

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (16_384, resource.RLIM_INFINITY))

    store = str(tmp_path / "store")
    argv = [sys.executable, "-m", "xbrain", "entry", "export", str(out), "--store", store]
    failed = subprocess.run(argv, capture_output=True, text=True, preexec_fn=small_files)
    assert failed.returncode == 1 and failed.stderr.count("\n") == 1, failed.stderr
    assert list(out.iterdir()) == []
    assert xb("entry", "export", str(out)).json["files"] == 4
    fresh = tmp_path / "fresh"
    assert subprocess.run([*argv[:5], str(fresh), *argv[6:]], preexec_fn=small_files).returncode
    assert not fresh.exists()


def test_export_goes_into_a_new_or_empty_folder_only(xb: Run, tmp_path: Path) -> None:
    assert xb("entry", "import", str(MEMEX)).code == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert xb("entry", "export", str(empty)).json["files"] == 4  # was refused as "not a file"
    refused = xb("entry", "export", str(empty))
    assert refused.code == 4 and "new or empty directory" in refused.stderr
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    refused = xb("entry", "export", str(a_file))
    assert refused.code == 2 and "is a file" in refused.stderr
    assert a_file.read_text() == "mine"


def test_a_memex_file_name_with_a_colon_imports_and_exports_back(xb: Run, tmp_path: Path) -> None:
    """Such a name is fine for an entry's source file (only an export writes it), unlike
    a file in the store's own working tree; a name no file system holds is refused."""
    folder = tmp_path / "memex"
    (folder / "rules").mkdir(parents=True)
    (folder / "rules" / "deploy: checks.md").write_text(
        "---\nname: deploy-checks\n---\nRun them.\n"
    )
    assert xb("entry", "import", str(folder)).json["added"] == 1
    out = tmp_path / "out"
    assert xb("entry", "export", str(out)).code == 0
    assert same_tree(folder, out)
    entry = {
        "kind": "rule",
        "name": "long-source",
        "source": {
            "path": "rules/" + "n" * 300 + ".md",
            "section": None,
            "order": 0,
            "markdown": "x",
        },
    }
    refused = xb("entry", "put", "-", input=entry)
    assert refused.code == 4 and "longer than 255 bytes" in refused.stderr


def test_entry_list_reads_recalls_cache_when_it_reflects_main(xb: Run, store_dir: Path) -> None:
    """Once recall has built its entry cache, ``entry list`` answers from it, the same
    records in the same order as git gives for every filter; a cache at another commit,
    or a damaged one, is passed over and git answers."""
    import sqlite3

    xb("entry", "import", str(MEMEX))
    xb("entry", "retire", RULE)
    filters = [[], ["--kind", "rule"], ["--kind", "memory"], ["--status", "retired"]]
    filters += [["--status", "active", "--kind", "skill"]]
    from_git = [xb("entry", "list", *f).stdout for f in filters]
    assert xb("recall", "-", input="git push --force to main").code == 0  # builds the cache
    cache = store_dir / ".git" / "xbrain" / "entries.sqlite"
    assert cache.is_file()
    assert [xb("entry", "list", *f).stdout for f in filters] == from_git
    assert json.loads(from_git[3])["count"] == 1 and json.loads(from_git[0])["count"] == 4
    # the cache is what answered: a description changed in it alone shows
    with sqlite3.connect(cache) as conn:
        (data,) = conn.execute("SELECT data FROM entry WHERE id = ?", (RULE,)).fetchone()
        marked = {**json.loads(data), "description": "from the cache"}
        conn.execute("UPDATE entry SET data = ? WHERE id = ?", (json.dumps(marked), RULE))
    shown = xb("entry", "list", "--status", "retired").json["entries"]
    assert [e["description"] for e in shown] == ["from the cache"]
    with sqlite3.connect(cache) as conn:  # a row that is not what the cache writes
        conn.execute("UPDATE entry SET data = '{not json' WHERE id = ?", (RULE,))
    assert xb("entry", "list").stdout == from_git[0]  # damaged: git answers
    with sqlite3.connect(cache) as conn:
        conn.execute("UPDATE entry SET data = ? WHERE id = ?", (json.dumps(marked), RULE))
        conn.execute("UPDATE meta SET value = 'another' WHERE key = 'commit'")
    assert xb("entry", "list").stdout == from_git[0]  # at another commit: git answers
    cache.write_bytes(b"not a database" * 100)
    assert xb("entry", "list").stdout == from_git[0]  # damaged: git answers


@pytest.mark.parametrize("damage", ["{not json", '{"id": "x"}', "[]"])
def test_recall_rebuilds_an_entry_cache_whose_rows_are_damaged(
    xb: Run, store_dir: Path, damage: str
) -> None:
    """A cache row that is not what the cache writes (a hand edit, bit rot) is damage,
    like a file SQLite cannot read: recall rebuilds the cache from the commits and
    answers, instead of failing with an internal error."""
    import sqlite3

    xb("entry", "import", str(MEMEX))
    prompt = "can I git push --force to main?"
    before = xb("recall", "-", input=prompt)
    assert before.code == 0 and "no-force-push" in [r["name"] for r in before.json["results"]]
    cache = store_dir / ".git" / "xbrain" / "entries.sqlite"
    with sqlite3.connect(cache) as conn:
        conn.execute("UPDATE entry SET data = ? WHERE id = ?", (damage, RULE))
    after = xb("recall", "-", input=prompt)
    assert after.code == 0, after.stderr
    assert [r["name"] for r in after.json["results"]] == [r["name"] for r in before.json["results"]]
    with sqlite3.connect(cache) as conn:
        (data,) = conn.execute("SELECT data FROM entry WHERE id = ?", (RULE,)).fetchone()
    assert json.loads(data)["name"] == "no-force-push"  # rebuilt from git


@pytest.mark.parametrize("damage", ['{"id": "x"}', "[]", '"text"'])
def test_entry_list_passes_over_a_cache_row_it_cannot_read(
    xb: Run, store_dir: Path, damage: str
) -> None:
    """A cache row that is JSON but not an entry (missing fields, not an object) is
    damage: ``entry list`` answers from git, never with an internal error."""
    import sqlite3

    xb("entry", "import", str(MEMEX))
    from_git = xb("entry", "list").stdout
    assert xb("recall", "-", input="git push --force to main").code == 0  # builds the cache
    with sqlite3.connect(store_dir / ".git" / "xbrain" / "entries.sqlite") as conn:
        conn.execute("UPDATE entry SET data = ? WHERE id = ?", (damage, RULE))
    listed = xb("entry", "list")
    assert listed.code == 0, listed.stderr
    assert listed.stdout == from_git


def _folder(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # two imports of rules/x.md: different names, so two entries wanting one file
        (
            {"rules/x.md": "---\nname: x\n---\nRule X.\n"},
            {"rules/x.md": "---\nname: y\n---\nRule Y.\n"},
        ),
        # the same, where the names differ only in letter case
        (
            {"rules/x.md": "---\nname: x\n---\nRule X.\n"},
            {"rules/X.md": "---\nname: y\n---\nRule Y.\n"},
        ),
        # two memory files at one path, each with its first section
        ({"memory/n.md": "## A\nBody a.\n"}, {"memory/n.md": "## B\nBody b.\n"}),
        # a whole memory file and sections of another at the same path
        ({"memory/n.md": "Just notes.\n"}, {"memory/n.md": "# Notes\n\n## B\nBody b.\n"}),
    ],
)
def test_two_entries_from_one_file_name_are_both_exported_and_import_back(
    xb: Run, tmp_path: Path, first: dict[str, str], second: dict[str, str]
) -> None:
    """Entries imported from different folders whose files had the same name: the export
    writes every one (never one over another) and imports back to the same entries."""
    assert xb("entry", "import", str(_folder(tmp_path / "a", first))).code == 0
    assert xb("entry", "import", str(_folder(tmp_path / "b", second))).code == 0
    entries = {e["id"]: e for e in xb("entry", "list").json["entries"]}
    assert len(entries) == 2
    out = tmp_path / "out"
    exported = xb("entry", "export", str(out))
    assert exported.code == 0, exported.stderr
    assert exported.json["exported"] == exported.json["files"] == 2
    assert len([p for p in out.rglob("*.md")]) == 2
    again = tmp_path / "again"
    assert xb("entry", "import", str(out), store=again).json["added"] == 2
    for rid in entries:
        here = xb("entry", "get", rid).json
        there = xb("entry", "get", rid, store=again).json
        assert {k: v for k, v in here.items() if k not in ("source", "updatedAt")} == {
            k: v for k, v in there.items() if k not in ("source", "updatedAt")
        }


def _claude_code_skills(root: Path) -> None:
    """Two real-looking Claude Code skills (extra frontmatter keys, references/,
    templates/, an executable script) beside a memex rules/ and memory/ tree."""
    review = root / "skills" / "code-review"
    (review / "references").mkdir(parents=True)
    (review / "templates").mkdir()
    (review / "SKILL.md").write_text(
        "---\nname: code-review\ndescription: Review a pull request the way this team does.\n"
        "allowed-tools: Read, Grep, Bash(git diff:*)\nmodel: claude-sonnet-4-5\n"
        "argument-hint: [pr-number]\n---\nRead the diff, then the tests.\n"
    )
    (review / "references" / "style.md").write_text("# Style\nPrefer small functions.\n")
    (review / "templates" / "comment.md").write_text("## Review\n- [ ] tests pass\n")
    release = root / "skills" / "release"
    (release / "scripts").mkdir(parents=True)
    (release / "SKILL.md").write_text(
        "---\nname: release\ndescription: 发布新版本的步骤。\ndisable-model-invocation: true\n"
        "---\n1. 运行 scripts/tag.sh\n2. 写发布说明。\n"
    )
    (release / "scripts" / "tag.sh").write_text('#!/bin/sh\ngit tag "$1"\n')
    (release / "scripts" / "tag.sh").chmod(0o755)
    (root / "rules").mkdir()
    (root / "rules" / "no-force-push.md").write_bytes(
        (MEMEX / "rules/no-force-push.md").read_bytes()
    )
    (root / "memory").mkdir()
    (root / "memory" / "notes.md").write_text("## Staging\nThe staging host is stg-2.\n")


def test_claude_code_skill_folders_become_skills_not_junk_entries(
    xb_proc: Run, tmp_path: Path
) -> None:
    """entry import read every .md under skills/ recursively: a skill's references/ and
    templates/ became workflow entries whose bodies matched prompts."""
    folder = tmp_path / "agent"
    _claude_code_skills(folder)
    imported = xb_proc("entry", "import", str(folder))
    assert imported.code == 0, imported.stderr
    assert schema_errors("entry-put-output", imported.json) == []
    names = sorted(r["name"] for r in imported.json["results"])
    assert names == ["no-force-push", "notes#Staging"]  # no style, comment or SKILL entries
    slugs = sorted(s["slug"] for s in imported.json["skills"])
    assert slugs == ["code-review", "release"]
    warned = next(s for s in imported.json["skills"] if s["slug"] == "code-review")["warnings"]
    assert any("'model'" in w for w in warned)
    assert xb_proc("skill", "publish", "code-review", "1").code == 0  # imported: proposed
    level1 = xb_proc("skill", "recall", "--slug", "code-review").json
    assert {f["path"] for f in level1["files"]} == {"references/style.md", "templates/comment.md"}
    assert xb_proc("entry", "list").json["count"] == 2
    found = xb_proc("skill", "recall", "review a pull request").json
    assert found["results"][0]["slug"] == "code-review"
    # exported and imported again: every file back, byte for byte, nothing added
    out = tmp_path / "out"
    exported = xb_proc("entry", "export", str(out))
    assert exported.code == 0 and exported.json["skills"] == 2
    for path in folder.rglob("*"):
        if path.is_file():
            rel = path.relative_to(folder)
            assert (out / rel).read_bytes() == path.read_bytes(), rel
    again = tmp_path / "again"
    back = xb_proc("entry", "import", str(out), store=again)
    assert back.code == 0 and back.json["added"] == 2
    assert sorted(s["slug"] for s in back.json["skills"]) == slugs
    here = xb_proc("skill", "log", "release").json["revisions"][0]["canonical_hash"]
    there = xb_proc("skill", "log", "release", store=again).json["revisions"][0]["canonical_hash"]
    assert here == there


def test_a_bad_skill_folder_refuses_the_whole_import(
    xb_proc: Run, tmp_path: Path, store_dir: Path
) -> None:
    folder = tmp_path / "agent"
    _claude_code_skills(folder)
    (folder / "skills" / "release" / "SKILL.md").write_text("---\nname: Bad Name\n---\nx\n")
    result = xb_proc("entry", "import", str(folder))
    assert result.code == 4 and "skills/release" in result.stderr
    assert not store_dir.exists() or head(store_dir) is None


def test_import_lists_entries_whose_file_is_gone_and_prune_deletes_them(
    xb_proc: Run, tmp_path: Path
) -> None:
    folder = tmp_path / "agent"
    _claude_code_skills(folder)
    assert xb_proc("entry", "import", str(folder)).code == 0
    other = tmp_path / "other"  # another folder of the same scope, its own file names
    (other / "rules").mkdir(parents=True)
    (other / "rules" / "tabs.md").write_text(
        "---\nname: tabs\ndescription: Use tabs.\n---\nTabs.\n"
    )
    assert xb_proc("entry", "import", str(other)).code == 0
    (folder / "memory" / "notes.md").unlink()
    listed = xb_proc("entry", "import", str(folder))
    assert listed.code == 0
    assert [m["name"] for m in listed.json["missing"]] == ["notes#Staging"]
    assert listed.json["missing"][0]["path"] == "memory/notes.md"
    assert listed.json["commit"] is None  # listing changes nothing
    pruned = xb_proc("entry", "import", str(folder), "--prune")
    assert [m["name"] for m in pruned.json["pruned"]] == ["notes#Staging"]
    assert pruned.json["commit"] is not None
    names = sorted(e["name"] for e in xb_proc("entry", "list").json["entries"])
    assert names == ["no-force-push", "tabs"]  # the other folder's entry is kept
    assert xb_proc("entry", "import", str(folder), "--prune").json["pruned"] == []


def test_prune_removes_the_junk_entries_an_older_import_made_of_skill_files(
    xb_proc: Run, tmp_path: Path
) -> None:
    """Stores that imported skills/ before: a skill's references became workflow
    entries (no folder remembered); the next import lists them, --prune removes them."""
    folder = tmp_path / "agent"
    _claude_code_skills(folder)
    text = (folder / "skills/code-review/references/style.md").read_text()
    junk = {
        "kind": "workflow",
        "name": "style",
        "body": text,
        "source": {
            "path": "skills/code-review/references/style.md",
            "section": None,
            "order": 0,
            "markdown": text,
        },
    }
    assert xb_proc("entry", "put", "-", input=json.dumps(junk)).code == 0
    keep = {"kind": "rule", "name": "mine", "description": "A rule put by hand."}
    assert xb_proc("entry", "put", "-", input=json.dumps(keep)).code == 0
    listed = xb_proc("entry", "import", str(folder)).json
    assert [m["path"] for m in listed["missing"]] == ["skills/code-review/references/style.md"]
    pruned = xb_proc("entry", "import", str(folder), "--prune").json
    assert [m["name"] for m in pruned["pruned"]] == ["style"]
    names = sorted(e["name"] for e in xb_proc("entry", "list").json["entries"])
    assert names == ["mine", "no-force-push", "notes#Staging"]


def test_an_export_imported_back_into_its_own_store_changes_nothing(
    xb_proc: Run, tmp_path: Path, store_dir: Path
) -> None:
    """Found by a new user: entry export, then entry import of it, reported every entry
    updated and made a commit (only the remembered folder differed)."""
    folder = tmp_path / "agent"
    _claude_code_skills(folder)
    assert xb_proc("entry", "import", str(folder)).code == 0
    out = tmp_path / "out"
    assert xb_proc("entry", "export", str(out)).code == 0
    before = head(store_dir)
    again = xb_proc("entry", "import", str(out))
    assert again.code == 0, again.stderr
    assert again.json["updated"] == 0 and again.json["unchanged"] == 2
    assert again.json["commit"] is None and head(store_dir) == before
    # the entries stay their first folder's: its --prune still covers them
    (folder / "memory" / "notes.md").unlink()
    pruned = xb_proc("entry", "import", str(folder), "--prune").json
    assert [m["name"] for m in pruned["pruned"]] == ["notes#Staging"]


def test_an_entry_no_prompt_can_reach_but_by_its_description_says_so(xb: Run) -> None:
    """A rule written by hand without queries or keywords is found by its description
    alone: the put says so (a trial's rule "Use pnpm" was never recalled for "pnpm")."""
    bare = "---\nname: prefer-pnpm\ndescription: Use pnpm\ntype: rule\n---\nAlways use pnpm.\n"
    put = xb("entry", "put", "-", input=bare)
    assert put.code == 0, put.stderr
    (result,) = put.json["results"]
    assert "add queries" in result["note"]
    routed = {
        "kind": "rule",
        "name": "pnpm-q",
        "description": "Use pnpm",
        "body": "b",
        "queries": ["should I use npm or pnpm"],
    }
    again = xb("entry", "put", "-", input=routed)
    assert again.code == 0 and "note" not in again.json["results"][0]
    same = xb("entry", "put", "-", input=bare)
    assert same.json["results"][0]["status"] == "unchanged"
    assert "note" not in same.json["results"][0]  # said when it was written


def test_an_entry_s_ten_conflicts_listed_are_the_likeliest(xb: Run) -> None:
    """More than ten active entries look like a new one: the ten listed are those that
    share the most words, most first (cut by id, the closest could be left out)."""
    base = "deploy the staging cluster with helm charts"
    alike = [
        {
            "kind": "rule",
            "name": f"alike-{i}",
            "body": "b",
            "oneLiner": "o",
            "description": f"{base} {' '.join(f'extra{k}' for k in range(i % 4))}",
        }
        for i in range(14)
    ]
    closest = {
        "kind": "rule",
        "name": "deploy-staging",
        "body": "b",
        "oneLiner": "o",
        "description": base,
    }
    assert xb("entry", "put", "-", input=[*alike, closest]).code == 0
    new = {
        "kind": "rule",
        "name": "deploy-staging-two",
        "body": "b",
        "oneLiner": "o",
        "description": base,
    }
    put = xb("entry", "put", "-", input=new)
    assert put.code == 0, put.stderr
    listed = put.json["results"][0]["possibleConflicts"]
    shares = [float(c["why"].split("(")[1].split()[0]) for c in listed]
    assert len(listed) == 10 and shares == sorted(shares, reverse=True)
    assert listed[0]["name"] == "deploy-staging"
