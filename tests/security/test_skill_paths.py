"""A skill's component paths, from every intake: each file can be checked out, and each
name shows as what it is (issue 42, items 1 and 10).

Item 1: a skill holding a file ``a`` and a file ``a/b`` was accepted (exit 0) and saved
a revision whose ``a`` the tree could not hold; from then on doctor and ``skill export``
exited 7 and ``doctor --repair`` could not help. Item 10: names holding bidirectional
controls (``evil\\u202egnp.md`` shows as ``evilpng.md``) or other invisible characters
were accepted. Both are refused (exit 4, nothing written) wherever a skill comes in: a
ZIP (file or stdin), a directory, a git repository, MCP ``save_skill``, and a remote's
revision manifest.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Result, head, snapshot_files
from xbrain.errors import InvalidInputError
from xbrain.kinds import skill as kind
from xbrain.kinds.skillformat import skill_id
from xbrain.mcp_server import Tools

Run = Callable[..., Result]
EXAMPLE = EXAMPLES / "skills" / "deploy-check"
SKILL = b"---\nname: clash\ndescription: A skill whose paths clash.\n---\nDo the thing.\n"
NFD_FOLDER = "cafe\u0301"  # "café" in NFD: the folder of a file named "café" (NFC)

# path sets a checkout cannot hold whole: a file that is also a folder of another,
# as written or as a case-insensitive, normalizing file system sees it
CLASHES: dict[str, list[str]] = {
    "file-and-folder": ["a", "a/b"],
    "deeper": ["docs/a", "docs/a/b/c.md"],
    "case": ["A", "a/b"],
    "skill-md-as-folder": ["skill.md/x.md"],
    "nfc": ["café", f"{NFD_FOLDER}/x.md"],
}
# names that show as something they are not: every bidirectional control, and the other
# invisible characters chosen (format characters, C1 controls, line separators)
BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]
BIDI += ["\u200e", "\u200f", "\u061c"]
INVISIBLE = ["\u200b", "\u2060", "\ufeff", "\u00ad", "\u0085", "\u2028", "\U000e0041"]


def zipped(paths: list[str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("SKILL.md", SKILL)
        for path in paths:
            archive.writestr(path, path.encode() + b"\n")
    return out.getvalue()


def refused(result: Result) -> None:
    assert result.code == 4, (result.code, result.stdout, result.stderr)
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Internal error" not in result.stderr


@pytest.fixture
def saved(xb: Run, store_dir: Path) -> dict[str, bytes]:
    """A store holding one skill; every file of it (nothing may change)."""
    assert xb("skill", "save", str(EXAMPLE)).code == 0
    return snapshot_files(store_dir)


@pytest.mark.parametrize("case", sorted(CLASHES))
def test_a_zip_whose_paths_clash_is_refused_by_every_command(
    xb: Run, store_dir: Path, tmp_path: Path, saved: dict[str, bytes], case: str
) -> None:
    data = zipped(CLASHES[case])
    target = tmp_path / "clash.zip"
    target.write_bytes(data)
    for args, stdin in (
        (("skill", "import", str(target)), None),
        (("skill", "save", str(target)), None),
        (("skill", "save", "-"), data),
        (("skill", "import", "-"), data),
    ):
        result = xb(*args, input=stdin)
        refused(result)
        assert "also the folder of" in result.stderr, (args, result.stderr)
    assert snapshot_files(store_dir) == saved
    assert xb("doctor").code == 0


@pytest.mark.parametrize("char", BIDI + INVISIBLE)
def test_a_zip_member_with_an_invisible_character_is_refused(
    xb: Run, store_dir: Path, tmp_path: Path, saved: dict[str, bytes], char: str
) -> None:
    target = tmp_path / "faked.zip"
    target.write_bytes(zipped([f"references/evil{char}dm.txt"]))
    for verb in ("import", "save"):
        result = xb("skill", verb, str(target))
        refused(result)
        assert f"U+{ord(char):04X}" in result.stderr and char not in result.stderr
    assert snapshot_files(store_dir) == saved


@pytest.mark.parametrize("name", ["قهوه\u200cخانه.md", "क्\u200dष.md", "👩\u200d💻.md", "café.md"])
def test_names_spelt_with_joiners_are_still_saved(xb: Run, tmp_path: Path, name: str) -> None:
    """The zero-width non-joiner and joiner spell Persian and Indic words and emoji: kept."""
    target = tmp_path / "spelt.zip"
    target.write_bytes(zipped([f"references/{name}"]))
    saved = xb("skill", "save", str(target))
    assert saved.code == 0, saved.stderr
    assert xb("doctor").code == 0


def case_sensitive(folder: Path) -> bool:
    (folder / "Probe").write_text("x")
    sensitive = not (folder / "probe").exists()
    (folder / "Probe").unlink()
    return sensitive


def clashing_dir(tmp_path: Path, char: str = "") -> Path:
    """A skill directory holding a file ``A`` and a file ``a/b`` (``char`` in a name)."""
    source = tmp_path / "work" / "clash"
    source.mkdir(parents=True)
    if not case_sensitive(source):
        pytest.skip("the file system folds case: A and a/ cannot both exist")
    (source / "SKILL.md").write_bytes(SKILL)
    (source / "A").write_text("a file\n")
    (source / "a").mkdir()
    (source / "a" / f"b{char}.md").write_text("a file in a folder of the same name\n")
    return source


def test_a_directory_whose_paths_clash_is_refused(
    xb: Run, xb_proc: Run, store_dir: Path, tmp_path: Path, saved: dict[str, bytes]
) -> None:
    """``skill save DIR`` through the light path (a real process) and click, and import."""
    source = clashing_dir(tmp_path)
    for run, verb in ((xb_proc, "save"), (xb, "save"), (xb, "import")):
        result = run("skill", verb, str(source))
        refused(result)
        assert "'A' is a file and also the folder of 'a/b.md'" in result.stderr
    assert snapshot_files(store_dir) == saved


def test_a_directory_with_a_bidi_name_is_refused(
    xb_proc: Run, store_dir: Path, tmp_path: Path, saved: dict[str, bytes]
) -> None:
    source = tmp_path / "faked"
    shutil.copytree(EXAMPLE, source)
    (source / "references" / "run\u202ecod.sh").write_text("echo hi\n")
    for verb in ("save", "import"):
        result = xb_proc("skill", verb, str(source))
        refused(result)
        assert "U+202E" in result.stderr
    assert snapshot_files(store_dir) == saved


def test_a_skipped_name_with_a_bidi_character_is_refused(
    xb: Run, store_dir: Path, tmp_path: Path, saved: dict[str, bytes]
) -> None:
    """A name skipped as git's own file is still reported, so shown: refused as well."""
    source = tmp_path / "faked"
    shutil.copytree(EXAMPLE, source)
    (source / ".gitignore\u202etxt.exe").write_text("x\n")
    result = xb("skill", "import", str(source))
    refused(result)
    assert "U+202E" in result.stderr
    assert snapshot_files(store_dir) == saved


def commit_all(repo: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "skill"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)


@pytest.mark.skipif(shutil.which("git") is None, reason="the git binary makes the repository")
@pytest.mark.parametrize("char", ["", "\u202e"])
def test_a_git_repository_whose_paths_clash_or_fake_is_refused(
    xb: Run, store_dir: Path, tmp_path: Path, saved: dict[str, bytes], char: str
) -> None:
    """A git tree cannot hold ``a`` beside ``a/b``, but it can hold ``A`` beside ``a/b``
    (and a name with a bidi control): both refused, in place and over file://."""
    source = clashing_dir(tmp_path, char)
    commit_all(source.parent)
    for url in (str(source.parent), f"file://{source.parent}"):
        result = xb("skill", "import", url, "--path", "clash")
        refused(result)
        assert ("U+202E" if char else "also the folder of") in result.stderr
    assert snapshot_files(store_dir) == saved


@pytest.mark.parametrize("paths", [["a", "a/b"], ["A", "a/b"], ["x\u2067y.md"]])
def test_mcp_save_skill_refuses_clashing_and_faked_paths(
    store_dir: Path, tmp_path: Path, saved: dict[str, bytes], paths: list[str]
) -> None:
    tools = Tools(store_dir, tmp_path / "cache", wait=0, agent=None)
    files = {"SKILL.md": SKILL.decode(), **{path: "text\n" for path in paths}}
    with pytest.raises(InvalidInputError, match=r"also the folder of|U\+2067"):
        tools.call("save_skill", {"files": files})
    assert snapshot_files(store_dir) == saved


def _revision(paths: list[str]) -> bytes:
    """A revision.yaml of a skill ``evil`` whose manifest lists ``paths``."""
    files = [{"path": "SKILL.md", "type": "instructions", "sha256": "0" * 64, "bytes": 1}]
    files += [{"path": p, "type": "document", "sha256": "1" * 64, "bytes": 1} for p in paths]
    record = {
        "id": "rev_" + "0" * 32,
        "skill_id": skill_id("evil"),
        "slug": "evil",
        "parent": None,
        "number": 1,
        "created": "2026-01-01T00:00:00.000Z",
        "source": {"type": "save"},
        "canonical_hash": "sha256:" + "2" * 64,
        "files": files,
    }
    return kind.serialize(record)


@pytest.mark.skipif(shutil.which("git") is None, reason="the git binary makes the remote")
@pytest.mark.parametrize(
    ("paths", "why"),
    [
        (["a", "a/b"], "'a' is a file and also the folder of 'a/b'"),
        (["A", "a/b"], "'A' is a file and also the folder of 'a/b'"),
        (["x.md", "X.md"], "same after NFC and case folding"),
        (["evil\u202egnp.md"], "U+202E"),
        (["../escape.md"], "'..'"),
    ],
)
def test_a_remote_revision_whose_manifest_clashes_is_refused(
    xb: Run, store_dir: Path, tmp_path: Path, paths: list[str], why: str
) -> None:
    """A tree cannot hold ``a`` beside ``a/b``, but a manifest can list both: the
    intake gate reads the manifest's paths with the rules a save applies."""
    from tests.security.test_hostile_remote import hostile_push, mktree

    remote = tmp_path / "backup.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert xb("put", str(EXAMPLES / "batch.json")).code == 0
    assert xb("remote", "add", "origin", str(remote)).code == 0
    assert xb("remote", "push").code == 0
    assert kind.parse_revision(_revision(["a/b"]), full=True)  # the same, without the clash
    data = _revision(paths).decode()
    blob = subprocess.run(
        ["git", "-C", str(remote), "hash-object", "-w", "--stdin"],
        input=data,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    entry = ("100644", "blob", blob, "revision.yaml")
    for name in ("rev_" + "0" * 32, "revisions", "evil", "skills"):
        entry = ("040000", "tree", mktree(remote, [entry]), name)
    hostile_push(remote, [entry])
    before = head(store_dir)
    result = xb("remote", "pull")
    refused(result)
    assert "Refused remote origin" in result.stderr and why in result.stderr, result.stderr
    assert head(store_dir) == before and not (store_dir / "skills").exists()
    clone = xb("clone", str(remote), str(tmp_path / "copy"), store=None)
    assert clone.code == 4 and why in clone.stderr, clone.stderr
    assert not (tmp_path / "copy").exists()
