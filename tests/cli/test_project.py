"""``xbrain project``: links into an agent's folders, never clobbering what is not ours."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import EXAMPLES, Result, snapshot_files

Run = Callable[..., Result]
SKILL = EXAMPLES / "skills" / "deploy-check"
ALWAYS = {
    "kind": "rule",
    "name": "answer-in-english",
    "body": "Answer in English unless asked otherwise.",
    "alwaysOn": True,
}


def actions(result: Result) -> dict[str, str]:
    from xbrain.schemas import schema_errors

    assert result.code == 0, result.stderr
    assert schema_errors("project-output", result.json) == []
    return {
        Path(a["path"]).relative_to(result.json["target"]).as_posix(): a["action"]
        for a in result.json["actions"]
    }


def test_create_noop_relink_remove(xb: Run, store_dir: Path, tmp_path: Path) -> None:
    first = xb("skill", "save", str(SKILL), "--publish").json["revision_id"]
    xb("entry", "put", "-", input=json.dumps(ALWAYS))
    xb("entry", "put", "-", input=json.dumps({**ALWAYS, "name": "not-always", "alwaysOn": False}))
    target = tmp_path / "agent"
    planned = actions(xb("project", "--target", str(target), "--dry-run"))
    assert planned == {"skills/deploy-check": "create", "rules/answer-in-english.md": "create"}
    assert not target.exists()  # a dry run touches nothing
    assert actions(xb("project", "--target", str(target))) == planned
    link = target / "skills" / "deploy-check"
    assert os.path.isabs(os.readlink(link)) and first in os.readlink(link)
    assert (link / "SKILL.md").read_bytes() == (SKILL / "SKILL.md").read_bytes()
    assert (target / "rules/answer-in-english.md").read_text().endswith(ALWAYS["body"])
    assert set(actions(xb("project", "--target", str(target))).values()) == {"unchanged"}
    changed = tmp_path / "v2"
    changed.mkdir()
    (changed / "SKILL.md").write_text((SKILL / "SKILL.md").read_text() + "\nv2\n")
    second = xb("skill", "save", str(changed), "--publish").json["revision_id"]
    assert actions(xb("project", "--target", str(target)))["skills/deploy-check"] == "relink"
    assert second in os.readlink(link)
    xb("skill", "archive", "deploy-check")
    assert actions(xb("project", "--target", str(target)))["skills/deploy-check"] == "remove"
    assert not link.is_symlink()


def test_a_moved_store_re_points_its_own_links_and_folders_are_private(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Links are xbrain's when they point into the store; after the store was moved,
    its old links pointed nowhere and were "a dangling link xbrain did not make", left
    for the user to find and delete. The folders it made were 0755."""
    import shutil

    xb("skill", "save", str(SKILL), "--publish")
    xb("entry", "put", "-", input=json.dumps(ALWAYS))
    target = tmp_path / "agent"
    assert set(actions(xb("project", "--target", str(target))).values()) == {"create"}
    for folder in (target, target / "skills", target / "rules"):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
    moved = tmp_path / "moved-store"
    shutil.move(store_dir, moved)
    (target / "rules" / "mine.md").symlink_to(tmp_path / "gone.md")  # the user's own
    again = actions(xb("project", "--target", str(target), store=moved))
    assert again == {
        "skills/deploy-check": "relink",
        "rules/answer-in-english.md": "relink",
    }
    assert os.readlink(target / "skills" / "deploy-check").startswith(str(moved))
    assert (target / "rules" / "answer-in-english.md").read_text().endswith(ALWAYS["body"])
    assert set(actions(xb("project", "--target", str(target), store=moved)).values()) == {
        "unchanged"
    }
    assert (target / "rules" / "mine.md").is_symlink()  # never claimed
    xb("skill", "archive", "deploy-check", store=moved)
    gone = actions(xb("project", "--target", str(target), store=moved))
    assert gone["skills/deploy-check"] == "remove" and "rules/mine.md" not in gone


def test_conflicts_are_reported_never_clobbered(xb: Run, tmp_path: Path) -> None:
    xb("skill", "save", str(SKILL), "--publish")
    for name in ("file", "dir", "foreign", "broken"):
        xb("entry", "put", "-", input=json.dumps({**ALWAYS, "name": f"rule-{name}"}))
    target = tmp_path / "agent"
    rules = target / "rules"
    rules.mkdir(parents=True)
    (rules / "rule-file.md").write_text("mine")
    (rules / "rule-dir.md").mkdir()
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("someone else's")
    (rules / "rule-foreign.md").symlink_to(elsewhere)
    (rules / "rule-broken.md").symlink_to(tmp_path / "gone.md")
    (target / "skills").mkdir()
    (target / "skills" / "deploy-check").write_text("a real file")
    before = {
        p: (p.is_symlink(), os.readlink(p) if p.is_symlink() else None) for p in rules.iterdir()
    }
    result = xb("project", "--target", str(target))
    found = actions(result)
    assert found == {
        "rules/rule-file.md": "conflict",
        "rules/rule-dir.md": "conflict",
        "rules/rule-foreign.md": "conflict",
        "rules/rule-broken.md": "conflict",
        "skills/deploy-check": "conflict",
    }
    reasons = {Path(a["path"]).name: a["reason"] for a in result.json["actions"]}
    assert reasons["rule-file.md"] == "a real file" and reasons["rule-dir.md"] == "a real directory"
    assert reasons["rule-foreign.md"] == "a foreign link"
    assert reasons["rule-broken.md"] == "a dangling link xbrain did not make"
    after = {
        p: (p.is_symlink(), os.readlink(p) if p.is_symlink() else None) for p in rules.iterdir()
    }
    assert after == before
    assert (rules / "rule-file.md").read_text() == "mine"
    assert (target / "skills" / "deploy-check").read_text() == "a real file"
    assert elsewhere.read_text() == "someone else's"


def test_a_linked_folder_and_the_store_itself_are_refused(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    xb("skill", "save", str(SKILL), "--publish")
    target = tmp_path / "agent"
    target.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (target / "skills").symlink_to(outside)
    assert actions(xb("project", "--target", str(target)))["skills/deploy-check"] == "conflict"
    assert list(outside.iterdir()) == []
    before = snapshot_files(store_dir)
    assert xb("project", "--target", str(store_dir / "x")).code == 4
    assert snapshot_files(store_dir) == before


def test_claude_code_target_is_the_users_claude_folder(xb: Run, tmp_path: Path) -> None:
    xb("skill", "save", str(SKILL), "--publish")
    result: Any = xb("project", "--target", "claude-code", "--dry-run").json
    assert result["target"] == str(Path(os.environ["HOME"]) / ".claude")
    assert result["counts"] == {"create": 1}


def test_every_always_on_rule_gets_a_link_of_its_own(xb: Run, tmp_path: Path) -> None:
    """Names that make the same file name (letter case aside) each get one, and a name of
    characters four bytes long still makes a file name a file system takes."""
    long = "x" * 90
    names = [
        "deploy/checks",
        "Deploy\\Checks",
        "deploy-checks-a",
        long,
        long + "y",
        "\U00020000" * 90,
        "长" * 80,  # 240 bytes: with a piece of the id and .md, 256
        "长" * 80 + "!",
    ]
    rules = [{**ALWAYS, "name": name, "body": f"rule {i}"} for i, name in enumerate(names)]
    assert xb("entry", "put", "-", input=json.dumps(rules)).code == 0
    target = tmp_path / "agent"
    planned = actions(xb("project", "--target", str(target)))
    assert len(planned) == len(names) and set(planned.values()) == {"create"}
    folded = [Path(path).name.casefold() for path in planned]
    assert len(set(folded)) == len(folded)
    assert "rules/deploy-checks-a.md" in planned  # a name unlike the others keeps its own
    assert all(len(Path(path).name.encode()) <= 255 for path in planned)
    bodies = sorted((target / path).read_text().strip().rsplit("\n", 1)[-1] for path in planned)
    assert bodies == sorted(f"rule {i}" for i in range(len(names)))
    assert set(actions(xb("project", "--target", str(target))).values()) == {"unchanged"}


def test_a_locale_without_utf8(xb: Run, store_dir: Path, tmp_path: Path) -> None:
    """Under a C locale without UTF-8 (PYTHONCOERCECLOCALE=0) the rendered rule was
    written and read in ASCII: a Chinese body was "Internal error (UnicodeEncodeError)".
    It is UTF-8 now; a file name the locale cannot hold is one line that says so."""
    import subprocess
    import sys

    c_locale = {
        **os.environ,
        "LC_ALL": "C",
        "LANG": "C",
        "PYTHONUTF8": "0",
        "PYTHONCOERCECLOCALE": "0",
        "XBRAIN_STORE": str(store_dir),
    }
    rule = {**ALWAYS, "name": "deploy-check", "body": "部署前要检查数据库迁移回滚。"}
    assert xb("entry", "put", "-", input=json.dumps(rule, ensure_ascii=False)).code == 0

    def project(target: Path) -> subprocess.CompletedProcess[bytes]:
        command = [sys.executable, "-m", "xbrain", "project", "--target", str(target)]
        return subprocess.run(command, capture_output=True, env=c_locale, timeout=60)

    done = project(tmp_path / "a")
    assert done.returncode == 0, done.stderr
    rendered = tmp_path / "a" / "rules" / "deploy-check.md"
    assert rendered.read_text(encoding="utf-8").endswith(rule["body"])
    assert project(tmp_path / "a").returncode == 0  # read back as UTF-8 too
    chinese = {**ALWAYS, "name": "部署检查"}
    assert xb("entry", "put", "-", input=json.dumps(chinese, ensure_ascii=False)).code == 0
    refused = project(tmp_path / "b")
    assert refused.returncode == 1
    assert refused.stderr.decode().strip().endswith("e.g. LANG=C.UTF-8.")
    assert "Internal error" not in refused.stderr.decode()


def test_a_target_that_resolves_into_the_store_is_refused(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Issue 42, item 6: ``T/../S`` or a link to the store (or into it) passed the text
    check, and project wrote rules/ and skills/ into the store's working tree (doctor
    then exited 7)."""
    xb("skill", "save", str(SKILL), "--publish")
    xb("entry", "put", "-", input=json.dumps(ALWAYS))
    agent = tmp_path / "agent"
    agent.mkdir()
    (tmp_path / "to-store").symlink_to(store_dir)
    (tmp_path / "to-skills").symlink_to(store_dir / "skills")
    (tmp_path / "to-new").symlink_to(store_dir / "new")  # dangling, into the store
    (agent / "up").symlink_to(store_dir.parent)
    before = snapshot_files(store_dir)
    for target in (
        f"{agent}/../{store_dir.name}",
        f"{agent}/../{store_dir.name}/sub",
        f"{agent}/missing/../../{store_dir.name}",  # a folder mkdir would make on the way
        str(tmp_path / "to-store"),
        str(tmp_path / "to-store" / "deeper"),
        str(tmp_path / "to-skills"),
        str(tmp_path / "to-new"),
        str(agent / "up" / store_dir.name),
    ):
        for dry in ([], ["--dry-run"]):
            result = xb("project", "--target", target, *dry)
            assert result.code == 4, (target, result.stdout, result.stderr)
            assert result.stderr == "The target must be outside the store.\n"
    assert snapshot_files(store_dir) == before
    assert not (store_dir / "rules").exists() and not (store_dir / "new").exists()
    assert xb("doctor").code == 0
    assert set(actions(xb("project", "--target", str(agent / "up" / "agent"))).values()) == {
        "create"
    }  # a link out of the store is the user's choice: followed


def test_a_link_is_ours_by_where_it_resolves_not_its_text(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Issue 42, item 6: a user's link ``S/../elsewhere`` begins with the store's path, so
    project took it for its own: removed it, or re-pointed it."""
    xb("skill", "save", str(SKILL), "--publish")
    xb("entry", "put", "-", input=json.dumps(ALWAYS))
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("the user's own\n")
    target = tmp_path / "agent"
    rules = target / "rules"
    rules.mkdir(parents=True)
    sneaky = f"{store_dir}/../{elsewhere.name}"
    (rules / "mine.md").symlink_to(sneaky)
    (rules / "answer-in-english.md").symlink_to(sneaky)  # a name project wants
    (rules / "marker.md").symlink_to(store_dir / "xbrain.yaml")  # in the store, not projected
    result = xb("project", "--target", str(target))
    found = actions(result)
    assert found == {"rules/answer-in-english.md": "conflict", "skills/deploy-check": "create"}
    reasons = {Path(a["path"]).name: a.get("reason") for a in result.json["actions"]}
    assert reasons["answer-in-english.md"] == "a foreign link"
    for name, points in (
        ("mine.md", sneaky),
        ("answer-in-english.md", sneaky),
        ("marker.md", str(store_dir / "xbrain.yaml")),
    ):
        assert os.readlink(rules / name) == points, name
    assert elsewhere.read_text() == "the user's own\n"
    xb("skill", "archive", "deploy-check")
    gone = actions(xb("project", "--target", str(target)))
    assert gone == {"rules/answer-in-english.md": "conflict", "skills/deploy-check": "remove"}
    assert (rules / "mine.md").is_symlink() and (rules / "marker.md").is_symlink()
