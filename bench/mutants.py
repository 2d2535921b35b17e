"""A hand-made mutation sample of the core, the kinds and the intake gates (issue 42).

Each mutant changes one behaviour users rely on (a comparison flipped, a check dropped, a
bound moved by one); the tests named beside it must notice. For every mutant, in turn,
the committed tree (``git archive HEAD``) is copied into a temporary directory, the
mutation applied there, and ``pytest -x -q -n 0`` run on the mutant's test files only,
with PYTHONPATH at the copy so the subprocess tests (``python -m xbrain``) import the
mutant too. The working tree is never touched.

    .venv/bin/python bench/mutants.py            # every mutant (about 20 minutes, one core)
    .venv/bin/python bench/mutants.py W2 K19     # some of them

Prints one Markdown row per mutant: killed (by the first failing test) or survived.
A mutant marked ``same`` is one another check makes equivalent: it is expected to survive.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent


class Mutant(NamedTuple):
    id: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    same: str = ""  # why another check makes it equivalent, when it does


SI = "tests/cli/test_skill_integrity.py"
HR = "tests/security/test_hostile_remote.py"
SKILLS = "tests/cli/test_skills.py"
SYNC = "tests/cli/test_skills_sync.py"
SF = "tests/unit/test_skillformat.py"
ZIP = "tests/unit/test_skillzip.py"
MODEL = "tests/unit/test_model.py"
CONF = "tests/cli/test_config_limits.py"
BOUNDED = "tests/security/test_bounded_inputs.py"
W, C, K = "xbrain/git/writing.py", "xbrain/core/", "xbrain/kinds/"
GATE, S = "xbrain/remote/intake.py", "xbrain/skills/sources.py"
OFF = "if False:"

MUTANTS = [
    Mutant(
        "W1",
        W,
        "if parent is None:\n            return bool(",
        "if False:\n            return bool(",
        ("tests/cli/test_store_safety.py",),
    ),
    Mutant(
        "W2",
        W,
        "            if not moved:\n",
        "            if False:\n",
        ("tests/unit/test_main_cas.py",),
    ),
    Mutant("W3", W, "if self.head() != new:", OFF, ("tests/cli/test_store_safety.py",)),
    Mutant(
        "W4",
        W,
        "if len(tree) == 0 and base is not None:",
        OFF,
        ("tests/compat/test_git_interop.py",),
    ),
    Mutant(
        "W5",
        W,
        "MAIN,\n                ObjectID(parent.encode()),",
        "MAIN,\n                None,",
        ("tests/unit/test_main_cas.py", "tests/compat/test_git_interop.py"),
    ),
    Mutant(
        "C1",
        C + "view.py",
        "limited_count(self._summary) > self.settings.max_entries",
        "limited_count(self._summary) > self.settings.max_entries + 1",
        (CONF,),
    ),
    Mutant(
        "C2",
        C + "view.py",
        'self._summary["bytes"] > self.settings.max_bytes',
        'self._summary["bytes"] > self.settings.max_bytes * 2',
        (CONF,),
    ),
    Mutant("C3", C + "config.py", "int(value) < floor", "int(value) < 0", (CONF,)),
    Mutant("C4", C + "config.py", 'or raw.get("format") != layout.FORMAT', "", (SI,)),
    Mutant("C5", C + "config.py", "or not low <= value <= high", "or not low <= value", (CONF,)),
    Mutant("C6", C + "registry.py", 'if record.path(value["id"]) != path:', OFF, (HR,)),
    Mutant(
        "C7",
        C + "base.py",
        "refuse_hand_edits(git, git.hand_edits(txn.snap, list(changes), changes.get))",
        "pass",
        ("tests/cli/test_doctor.py",),
    ),
    Mutant("C8", C + "base.py", "git.check_worktree_paths(list(changes))", "pass", (HR,)),
    Mutant(
        "C9",
        C + "lock.py",
        "if not stat.S_ISREG(os.fstat(fd).st_mode):",
        OFF,
        ("tests/unit/test_lock.py",),
    ),
    Mutant(
        "R1",
        "xbrain/resources.py",
        'new["updatedAt"] <= deleted["deletedAt"]',
        'new["updatedAt"] < deleted["deletedAt"]',
        ("tests/cli/test_write_rules.py",),
    ),
    Mutant(
        "U1",
        "xbrain/urls.py",
        'if url.protocol != "https:" or url.username or url.password:',
        'if url.protocol != "https:" or url.password:',
        ("tests/security/test_secrets.py",),
    ),
    Mutant("K1", K + "model.py", 'if "id" in raw and raw["id"] != rid:', OFF, (MODEL,)),
    Mutant(
        "K2",
        K + "model.py",
        "utf16_length(value) > limit",
        "utf16_length(value) > limit + 1",
        (MODEL,),
    ),
    Mutant("K3", K + "model.py", "if has_invalid_text(value):", OFF, (MODEL,)),
    Mutant(
        "K4",
        K + "model.py",
        'len(value) > _NOTES["maxItems"]',
        'len(value) > _NOTES["maxItems"] + 1',
        (MODEL,),
    ),
    Mutant(
        "K5",
        K + "model.py",
        "if not _PROVIDER.fullmatch(provider) or not sid:",
        "if not sid:",
        (MODEL,),
    ),
    Mutant(
        "K6",
        K + "skillformat.py",
        '    if len(data) > MAX_SKILL_MD_BYTES:\n        raise InvalidInputError(f"{SKILL_MD} is',
        '    if False:\n        raise InvalidInputError(f"{SKILL_MD} is',
        (SF,),
    ),
    Mutant(
        "K7",
        K + "skillformat.py",
        "if len(parts) > MAX_DEPTH:",
        "if len(parts) > MAX_DEPTH + 1:",
        (SF,),
    ),
    Mutant("K8", K + "skillformat.py", "if same_file_key(path) in folded:", OFF, (SF,)),
    Mutant(
        "K9",
        K + "skillformat.py",
        "len(data) > MAX_COMPONENT_BYTES:",
        "len(data) > MAX_COMPONENT_BYTES + 1:",
        (SF,),
    ),
    Mutant(
        "K10",
        K + "skillformat.py",
        "if len(components) > MAX_COMPONENTS:",
        "if len(components) > MAX_COMPONENTS + 1:",
        (SF,),
    ),
    Mutant(
        "K11",
        K + "skillformat.py",
        "canonical_json([skill, parent, content_hash])",
        "canonical_json([skill, content_hash])",
        (SF, SI),
    ),
    Mutant("K12", K + "skillzip.py", "if kind == stat.S_IFLNK:", OFF, (ZIP,)),
    Mutant("K13", K + "skillzip.py", "if info.flag_bits & 0x1:", OFF, (ZIP,)),
    Mutant(
        "K14",
        K + "skillzip.py",
        "if info.file_size > MAX_RATIO * max(info.compress_size, 1):",
        OFF,
        (ZIP,),
    ),
    Mutant(
        "K15",
        K + "skillzip.py",
        "if len(content) != info.file_size or extra:",
        "if extra:",
        (ZIP, SKILLS),
        "zipfile's own CRC and end-of-stream checks",
    ),
    Mutant("K16", K + "skillzip.py", "if key in seen:", OFF, (ZIP,)),
    Mutant("K17", K + "skill.py", 'if state["id"] != skill_id(state["slug"]):', OFF, (HR,)),
    Mutant(
        "K18",
        K + "skill.py",
        'if sum(entry["state"] == "published" for entry in state["revisions"]) > 1:',
        OFF,
        (HR,),
    ),
    Mutant("K19", K + "skill.py", "winner = max(published,", "winner = min(published,", (SYNC,)),
    Mutant(
        "K20",
        K + "skill.py",
        '"created": max(known["created"], entry["created"])',
        '"created": min(known["created"], entry["created"])',
        (SYNC,),
    ),
    Mutant(
        "K21",
        K + "skillcheck.py",
        'elif revision["number"] != above["number"] + 1:',
        "elif False:",
        (SI,),
    ),
    Mutant("K22", K + "skillcheck.py", "if stray[len(files_dir) + 1 :] not in listed:", OFF, (SI,)),
    Mutant(
        "K23",
        K + "skillcheck.py",
        'elif sha256_hex(data) != item["sha256"] or len(data) != item["bytes"]:',
        'elif len(data) != item["bytes"]:',
        (SI,),
    ),
    Mutant(
        "K24",
        K + "entry.py",
        "or not -0.2 <= boost <= 0.2",
        "or not -0.2 <= boost",
        ("tests/cli/test_entries.py",),
    ),
    Mutant(
        "K25",
        K + "entry.py",
        "if len(value) > limit:",
        "if len(value) > limit + 1:",
        ("tests/cli/test_entries.py",),
    ),
    Mutant(
        "I1",
        GATE,
        "if leaf.mode != FILE_MODE:",
        "if leaf.mode not in (FILE_MODE, 0o100755):",
        (HR,),
    ),
    Mutant(
        "I2",
        GATE,
        "        if size is not None and size > max_bytes(kind):\n",
        "        if False:\n",
        (HR,),
        "the check after inflating (I3); packcheck bounds the pack",
    ),
    Mutant(
        "I3",
        GATE,
        "        if len(data) > max_bytes(kind):\n",
        "        if False:\n",
        (HR,),
        "the check from the object's header (I2)",
    ),
    Mutant("I4", GATE, "if base is None and snap.read(layout.MARKER) is None:", OFF, (HR,)),
    Mutant(
        "I5",
        GATE,
        "            if problem is not None:\n                raise _refuse(origin, shown, prob",
        "            if False:\n                raise _refuse(origin, shown, prob",
        (HR,),
    ),
    Mutant(
        "S1",
        S,
        'if rel.count("/") + 1 >= MAX_DEPTH:',
        'if rel.count("/") + 1 > MAX_DEPTH:',
        (SKILLS, BOUNDED),
        "check_path's depth bound on every file",
    ),
    Mutant(
        "S2",
        S,
        "if len(gathered.files) > MAX_COMPONENTS:",
        "if len(gathered.files) > MAX_COMPONENTS + 1:",
        (SKILLS, SF),
        "manifest()'s component bound",
    ),
    Mutant(
        "S3",
        S,
        'os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)',
        "os.O_RDONLY",
        (SKILLS, BOUNDED),
        "the lstat before the open (only a race tells them apart)",
    ),
    Mutant(
        "S4",
        S,
        '    if len(data) > MAX_ARCHIVE_BYTES:\n        raise InvalidInputError("Input exceeds',
        '    if False:\n        raise InvalidInputError("Input exceeds',
        (SKILLS, BOUNDED),
        "the ZIP and SKILL.md size bounds",
    ),
    Mutant(
        "S5",
        S,
        "if entry.name in _JUNK or git_own_name(entry.name):",
        "if entry.name in _JUNK:",
        (SKILLS,),
    ),
]


def committed_tree(into: Path) -> None:
    """The tree of HEAD, written under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "HEAD"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def run(mutant: Mutant, tree: Path) -> tuple[str, str, float]:
    """(killed or survived, the first failing test, seconds) for one mutant."""
    path = tree / mutant.path
    original = path.read_text()
    if original.count(mutant.old) != 1:
        return "not applied (the code changed)", "", 0.0
    path.write_text(original.replace(mutant.old, mutant.new))
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-n",
                "0",
                "-p",
                "no:cacheprovider",
                *list(mutant.tests),
            ],
            cwd=tree,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(tree)},
        )
    finally:
        path.write_text(original)
    failed = [line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    status = "killed" if proc.returncode else "survived"
    return status, failed[0].split()[1] if failed else "", time.monotonic() - started


def main(wanted: list[str]) -> None:
    chosen = [m for m in MUTANTS if not wanted or m.id in wanted]
    print("| mutant | file:line | result | by |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="xbrain-mutants-") as scratch:
        tree = Path(scratch)
        committed_tree(tree)
        for mutant in chosen:
            text = (tree / mutant.path).read_text()
            line = text[: max(text.find(mutant.old), 0)].count("\n") + 1
            status, by, _ = run(mutant, tree)
            if status == "survived" and mutant.same:
                by = f"(equivalent: {mutant.same})"
            print(f"| {mutant.id} | {mutant.path}:{line} | {status} | {by} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
