"""A skill's identities and its revision chain, pinned through what ``xbrain skill save``
writes (SPEC §12), and every corruption ``doctor`` and the reads detect (exit 7)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Result
from xbrain.codec import load_yaml
from xbrain.core import GitStore

Run = Callable[..., Result]

SLUG = "golden-chain"
SKILL_1 = b"---\nname: golden-chain\ndescription: Pins the revision chain.\n---\nStep 1.\n"
SKILL_2 = SKILL_1 + b"Step 2.\n"
COMPONENT = ("references/api.md", b"API notes.\n")

# Pinned: any change to the manifest, the hashing or the chaining that alters a stored id
# fails here. Each value is also recomputed below from SPEC §12's formulas alone.
SKILL_ID = "skill_90babb67675f51253e40ceea09c304f8d04980c0074a9e486b06f2e6f7906e65"
HASH_1 = "sha256:f2ff3f5391892bdb16f1ee696f920fc0d5b3b8890c023a9a47d9cc055cd905ec"
REV_1 = "rev_74a6937b3581bedcdc8ea08629c4fd45"
HASH_2 = "sha256:bea83aacd68860322f1cc1a152c7871d6e5bf128b1d98692757601320ddec5f9"
REV_2 = "rev_0e8873bff23bf473432c5e2ef94d3c04"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def spec_canonical_hash(skill_md: bytes) -> str:
    """``"sha256:" + sha256(RFC 8785 JSON of {"format": "xbrain.skill/1", "files": [...]})``,
    written out by hand: keys sorted, no whitespace, files sorted by UTF-8 path bytes,
    ``SKILL.md`` itself a file of type ``instructions``."""
    path, data = COMPONENT
    files = [
        f'{{"bytes":{len(skill_md)},"path":"SKILL.md","sha256":"{_sha(skill_md)}",'
        '"type":"instructions"}',
        f'{{"bytes":{len(data)},"path":"{path}","sha256":"{_sha(data)}","type":"reference"}}',
    ]
    document = '{"files":[' + ",".join(files) + '],"format":"xbrain.skill/1"}'
    return "sha256:" + _sha(document.encode())


def spec_revision_id(skill_id: str, parent: str | None, content: str) -> str:
    """``"rev_" + first 32 hex of sha256(JSON [skill_id, parent, canonical_hash])``, with
    JSON as JavaScript's ``JSON.stringify`` writes it (``null`` for no parent)."""
    shown = "null" if parent is None else f'"{parent}"'
    return "rev_" + _sha(f'["{skill_id}",{shown},"{content}"]'.encode())[:32]


def test_the_spec_formulas_give_the_pinned_values() -> None:
    assert "skill_" + _sha(f'["skill","{SLUG}"]'.encode()) == SKILL_ID
    assert spec_canonical_hash(SKILL_1) == HASH_1
    assert spec_revision_id(SKILL_ID, None, HASH_1) == REV_1
    assert spec_canonical_hash(SKILL_2) == HASH_2
    assert spec_revision_id(SKILL_ID, REV_1, HASH_2) == REV_2


def _skill(tmp_path: Path, skill_md: bytes) -> Path:
    folder = tmp_path / "work" / SLUG
    (folder / "references").mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_bytes(skill_md)
    (folder / COMPONENT[0]).write_bytes(COMPONENT[1])
    return folder


def test_skill_save_writes_the_golden_chain(xb: Run, store_dir: Path, tmp_path: Path) -> None:
    first = xb("skill", "save", str(_skill(tmp_path, SKILL_1)))
    assert first.code == 0, first.stderr
    second = xb("skill", "save", str(_skill(tmp_path, SKILL_2)))
    assert second.code == 0, second.stderr
    for made, content, rev, number in ((first, HASH_1, REV_1, 1), (second, HASH_2, REV_2, 2)):
        out = made.json
        assert (out["skill_id"], out["canonical_hash"]) == (SKILL_ID, content)
        assert (out["revision_id"], out["revision_number"]) == (rev, number)
    for rev, parent, content, skill_md in (
        (REV_1, None, HASH_1, SKILL_1),
        (REV_2, REV_1, HASH_2, SKILL_2),
    ):
        folder = store_dir / "skills" / SLUG / "revisions" / rev
        stored = load_yaml((folder / "revision.yaml").read_bytes())
        assert (stored["id"], stored["skill_id"]) == (rev, SKILL_ID)
        assert (stored["parent"], stored["canonical_hash"]) == (parent, content)
        assert (folder / "files" / "SKILL.md").read_bytes() == skill_md
        assert (folder / "files" / COMPONENT[0]).read_bytes() == COMPONENT[1]
    state = load_yaml((store_dir / "skills" / SLUG / "skill.yaml").read_bytes())
    assert state["id"] == SKILL_ID and state["head"] == REV_2
    assert [(e["id"], e["parent"], e["number"]) for e in state["revisions"]] == [
        (REV_1, None, 1),
        (REV_2, REV_1, 2),
    ]
    log = xb("skill", "log", SLUG).json["revisions"]
    assert [(r["revision_id"], r["parent"]) for r in log] == [(REV_2, REV_1), (REV_1, None)]


# ---------------------------------------------------------------------------------------
# Every corruption of a committed tree that doctor reports: exit 7 and its code; and the
# reads that touch it exit 7 too, naming the damaged file and "run xbrain doctor".

ID = "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56"
RECORD = f"resources/e6/{ID}.yaml"
STATE = f"skills/{SLUG}/skill.yaml"
Read = Callable[[str], bytes]
Changes = dict[str, bytes | None]


def _rev(rev: str, name: str = "revision.yaml") -> str:
    return f"skills/{SLUG}/revisions/{rev}/{name}"


def _edit(path: str, old: bytes, new: bytes) -> Callable[[Read], Changes]:
    def change(read: Read) -> Changes:
        data = read(path)
        assert data.count(old) >= 1, (path, old)
        return {path: data.replace(old, new)}

    return change


RECALL = ("skill", "recall", "--slug", SLUG)
RESOURCE = (*RECALL, "--revision", REV_2, "--resource", COMPONENT[0])
LOG = ("skill", "log", SLUG)
DIFF = ("skill", "diff", SLUG, REV_1, REV_2)
EXPORT = ("skill", "export", SLUG)  # + the archive's path
SKILL_READS = (RECALL, LOG, RESOURCE, EXPORT, DIFF, ("skill", "list"))

# (case, doctor's code, the corruption, the reads that detect it today, what they name)
CORRUPTIONS: list[tuple[str, str, Callable[[Read], Changes], tuple[tuple[str, ...], ...], str]] = [
    (
        "skill.yaml not YAML",
        "skill_state",
        lambda read: {STATE: b"- not: [a mapping\n"},
        SKILL_READS,
        STATE,
    ),
    ("skill.yaml removed", "skill_state", lambda read: {STATE: None}, (), ""),
    (
        "a revision skill.yaml does not list",
        "skill_orphan",
        lambda read: {_rev("rev_" + "0" * 32): read(_rev(REV_1))},
        (),
        "",
    ),
    (
        "a listed revision.yaml removed",
        "skill_revision",
        lambda read: {_rev(REV_2): None},
        (RECALL, LOG, RESOURCE, EXPORT, DIFF),
        _rev(REV_2),
    ),
    (
        "revision.yaml's number differs from skill.yaml",
        "skill_revision",
        _edit(_rev(REV_2), b"number: 2", b"number: 3"),
        (),
        "",
    ),
    (
        "SKILL.md of a revision removed",
        "skill_file",
        lambda read: {_rev(REV_2, "files/SKILL.md"): None},
        (RECALL, EXPORT, DIFF, ("skill", "list")),
        _rev(REV_2, "files/SKILL.md"),
    ),
    (
        "a component of a revision removed",
        "skill_file",
        lambda read: {_rev(REV_2, f"files/{COMPONENT[0]}"): None},
        (RESOURCE, EXPORT, DIFF),
        _rev(REV_2, f"files/{COMPONENT[0]}"),
    ),
    (
        "a file the manifest does not list",
        "skill_file",
        lambda read: {_rev(REV_2, "files/extra.md"): b"x\n"},
        (),
        "",
    ),
    (
        "SKILL.md's bytes changed",
        "skill_hash",
        _edit(_rev(REV_2, "files/SKILL.md"), b"Step 2", b"Step 9"),
        (RECALL, EXPORT, DIFF, ("skill", "list")),  # never served (issue 42)
        REV_2,
    ),
    (
        "a component's bytes changed",
        "skill_hash",
        _edit(_rev(REV_2, f"files/{COMPONENT[0]}"), b"notes", b"notez"),
        (RESOURCE, EXPORT, DIFF),
        REV_2,
    ),
    (
        "canonical_hash changed",
        "skill_hash",
        _edit(_rev(REV_2), HASH_2.encode(), HASH_1.encode()),
        SKILL_READS,
        REV_2,
    ),
    (
        "a parent changed in both files: the id no longer chains",
        "skill_chain",
        lambda read: {
            **_edit(_rev(REV_2), f"parent: {REV_1}".encode(), b"parent: null")(read),
            **_edit(STATE, f"parent: {REV_1}".encode(), b"parent: null")(read),
        },
        (),
        "",
    ),
    (
        "a number that is not its parent's plus one, in both files",
        "skill_chain",
        lambda read: {
            **_edit(_rev(REV_2), b"number: 2", b"number: 3")(read),
            **_edit(STATE, b"number: 2", b"number: 3")(read),
        },
        (),
        "",
    ),
    (
        "a record that does not parse",
        "invalid_record",
        lambda read: {RECORD: b"id: [\n"},
        (("get", ID), ("list",), ("search", "synthetic")),
        RECORD,
    ),
    (
        "a record not in its normalized form",
        "not_normalized",
        lambda read: {RECORD: b"# a comment\n" + read(RECORD)},
        (),
        "",
    ),
    (
        "a record in another shard",
        "misplaced_record",
        lambda read: {RECORD: None, RECORD.replace("/e6/", "/00/"): read(RECORD)},
        (("list",), ("status",)),
        "index/catalog/00.json",
    ),
    (
        "a tombstone beside the live record",
        "duplicate_id",
        lambda read: {
            RECORD.replace("resources/", "tombstones/"): (
                f"id: {ID}\ndeletedAt: '2030-01-01T00:00:00.000Z'\n".encode()
            )
        },
        (),
        "",
    ),
    (
        "a catalog shard emptied",
        "catalog_drift",
        lambda read: {"index/catalog/e6.json": b"{}\n"},
        (),
        "",
    ),
    ("a file no store has", "unsafe_path", lambda read: {"stray.txt": b"x\n"}, (), ""),
    (
        "a state file that is not JSON",
        "invalid_state",
        lambda read: {"receipts/" + "a" * 64 + ".json": b"not json\n"},
        (),
        "",
    ),
    (
        "xbrain.yaml of another format",
        "invalid_config",
        lambda read: {"xbrain.yaml": b"format: nope\n"},
        (("get", ID), ("list",), ("status",), ("search", "synthetic"), RECALL, LOG, EXPORT),
        "Unsupported store format",
    ),
]


def _store_with_a_resource_and_a_skill(xb: Run, tmp_path: Path) -> None:
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    assert xb("skill", "save", str(_skill(tmp_path, SKILL_1))).code == 0
    assert xb("skill", "save", str(_skill(tmp_path, SKILL_2))).code == 0


def _commit_outside(store: Path, change: Callable[[Read], Changes]) -> None:
    """Commit ``change`` on main as another program would (no xbrain write)."""
    with GitStore(store) as git:
        parent = git.head()
        assert parent is not None
        snap = git.snapshot(parent)

        def read(path: str) -> bytes:
            data = snap.read(path)
            assert data is not None, path
            return data

        changes = change(read)
        commit = git.commit(parent, changes, "outside: edit\n", "t <t@t>", 0)
        git.refresh_worktree(commit, list(changes))


@pytest.mark.parametrize(
    ("code", "change", "reads", "named"),
    [pytest.param(*case[1:], id=case[0]) for case in CORRUPTIONS],
)
def test_doctor_and_the_reads_exit_7_on_each_corruption(
    xb: Run,
    store_dir: Path,
    tmp_path: Path,
    code: str,
    change: Callable[[Read], Changes],
    reads: tuple[tuple[str, ...], ...],
    named: str,
) -> None:
    _store_with_a_resource_and_a_skill(xb, tmp_path)
    assert xb("doctor").code == 0
    _commit_outside(store_dir, change)
    report = xb("doctor")
    assert report.code == 7, report.stdout
    assert code in {p["code"] for p in report.json["problems"]}, report.stdout
    for argv in reads:
        out = tmp_path / "out.zip"
        args = (*argv, str(out)) if argv == EXPORT else argv
        refused = xb(*args)
        assert refused.code == 7, (args, refused.stdout, refused.stderr)
        assert named in refused.stderr and refused.stderr.count("\n") == 1, refused.stderr
        assert not out.exists()


def test_a_missing_git_object_is_exit_7_for_doctor_and_get(xb: Run, store_dir: Path) -> None:
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    with GitStore(store_dir) as git:
        blob = dict(git.snapshot().files())[RECORD]
    loose = store_dir / ".git" / "objects" / blob[:2] / blob[2:]
    loose.unlink()
    report = xb("doctor")
    assert report.code == 7 and "git_object" in {p["code"] for p in report.json["problems"]}
    refused = xb("get", ID)
    assert refused.code == 7, (refused.stdout, refused.stderr)
    assert "xbrain doctor" in refused.stderr
