"""``xbrain project``: published skills and always-on rules, linked into an agent's folders.

Each published, active skill becomes ``<target>/skills/<slug>``, an absolute symbolic
link to the files of its published revision in the store's working tree; each active
``alwaysOn`` entry becomes ``<target>/rules/<name>.md``, a link to its Markdown rendered
under ``.git/xbrain/projected/``. A link is xbrain's when it resolves to one of these
(its text is not enough: ``<store>/../elsewhere`` is not in the store). The target must
be outside the store once resolved too (``T/../S``, a link to the store or into it).

A link is also xbrain's when it still points where this store last linked it (a ledger
under ``.git/xbrain/projected/``, per target): after the store was moved, its old links
are re-pointed, not reported as someone else's. Folders xbrain creates are private
(0700).

Fail closed: a real file, a real directory, a link pointing elsewhere (foreign) or a
dangling link that is not xbrain's stays exactly as it is and is reported as a
conflict. xbrain's own links are created, re-pointed when the revision changed, left
alone when right, and removed when nothing projects them any more. Running it twice
changes nothing the second time; ``dry_run`` reports without touching anything.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from . import kinds  # noqa: F401  (registers the record kinds)
from .core import Core, bulk, private_umask
from .errors import InvalidInputError, XbrainError
from .inputs import read_file
from .kinds import skill as skill_kind
from .kinds.entry import status_of
from .kinds.entryfacts import not_in_force
from .kinds.entryformat import cut_utf8, file_stem, render_file
from .paths import same_file_key

__all__ = ["project", "resolve_target"]

PROJECTED = Path("xbrain") / "projected" / "rules"
LEDGER = Path("xbrain") / "projected" / "links.json"  # target → {link path: what it names}


def resolve_target(target: str) -> Path:
    """``claude-code`` → ``~/.claude``; anything else is a directory path."""
    if target == "claude-code":
        return Path.home() / ".claude"
    if not target:
        raise InvalidInputError("Give --target DIR or --target claude-code.")
    return Path(target).expanduser().absolute()


def _wanted(core: Core, render: bool) -> dict[str, Path]:
    """Relative link path → absolute target inside the store (``render``: write the rules'
    Markdown the links point at)."""
    wanted: dict[str, Path] = {}
    with core.reading() as view:
        if view is None:
            return wanted
        for slug in skill_kind.slugs(view):
            state = skill_kind.read_state(view, slug)
            if state is None or state["status"] != "active":
                continue
            entry, fallback = skill_kind.chosen(state)
            if not fallback:
                files = core.path / skill_kind.revision_dir(slug, entry["id"]) / "files"
                wanted[f"skills/{slug}"] = files
        with core.git() as git:
            entries = list(bulk.records(git, view, "entry"))
        stale = not_in_force(entries, core.clock())  # superseded, expired
        rules = [
            e
            for e in entries
            if e["alwaysOn"]
            and status_of(e) == "active"
            and e["scope"] == "global"
            and e["id"] not in stale
        ]
    rendered = core.path / ".git" / PROJECTED
    for name, entry in _rule_names(rules).items():
        wanted[f"rules/{name}.md"] = rendered / f"{entry['id']}.md"
        if render:
            _render(rendered / f"{entry['id']}.md", render_file(entry))
    return wanted


def _rule_names(rules: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each rule's link name (without ``.md``): its name made a file name. Names that come
    out the same, letter case and Unicode normal form aside (``a/b`` and ``a\\b``, two
    long names alike in their first 80 characters), each end in a piece of their id, so
    no rule hides another."""
    stems = {entry["id"]: file_stem(entry) for entry in rules}
    taken = Counter(same_file_key(stem) for stem in stems.values())
    names: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    for entry in rules:
        stem, mark = stems[entry["id"]], f"-{entry['id'][6:18]}"
        if taken[same_file_key(stem)] == 1:
            name = stem
        else:  # the mark and .md still within a file name's 255 bytes
            name = cut_utf8(stem, 255 - len(mark) - len(".md")) + mark
        if same_file_key(name) in used:  # a rule named as another's name with its id piece
            name = entry["id"]
        used.add(same_file_key(name))
        names[name] = entry
    return names


def _render(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (0600, replaced whole) unless it already holds it."""
    with private_umask():
        path.parent.mkdir(parents=True, exist_ok=True)
        # UTF-8 whatever the locale: a rule in Chinese under a C locale failed to render
        if not path.exists() or path.read_text(encoding="utf-8", errors="replace") != text:
            temp = path.with_suffix(".tmp")
            temp.write_text(text, encoding="utf-8")
            os.replace(temp, path)


def _ours(link: Path, store: Path, made: dict[str, str], rel: str) -> bool:
    """Whether ``link`` is xbrain's: it resolves to a file this store projects, or it
    still points where this store last linked ``rel`` (``made``: the ledger's entry for
    this target)."""
    try:
        points = os.readlink(link)
    except OSError:
        return False
    return made.get(rel) == points or _projected(points, store)


def _projected(points: str, store: Path) -> bool:
    """Whether the link text ``points`` names what project links to in ``store``: a
    revision's ``files`` folder or a rendered rule. Judged by the path it resolves to,
    not by its text: ``S/../elsewhere`` begins with ``S`` and is not in it."""
    if not os.path.isabs(points):
        return False
    real, home = Path(os.path.realpath(points)), Path(os.path.realpath(store))
    if not real.is_relative_to(home):
        return False
    parts = real.relative_to(home).parts
    if len(parts) != 5:
        return False
    skill = parts[0] == skill_kind.DIRECTORY and parts[2] == "revisions" and parts[4] == "files"
    rule = parts[:4] == (".git", *PROJECTED.parts) and parts[4].endswith(".md")
    return skill or rule


def _inside(target: Path, store: Path) -> bool:
    """Whether ``target`` is the store or in it, as written or once resolved
    (``T/../S``, a link to the store or into it)."""
    real = Path(os.path.realpath(target))
    return target.is_relative_to(store) or real.is_relative_to(os.path.realpath(store))


def _ledger(store: Path) -> dict[str, dict[str, str]]:
    """Per target, the links this store made there last (unreadable: none)."""
    try:
        data = json.loads(read_file(store / ".git" / LEDGER, 4 << 20, "too large"))
    except (XbrainError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(target): {str(k): str(v) for k, v in links.items()}
        for target, links in data.items()
        if isinstance(links, dict)
    }


def project(core: Core, target: Path, *, dry_run: bool = False) -> dict[str, Any]:
    """Plan (and unless ``dry_run``, apply) the links; one action per path."""
    core.existing()
    store = core.path
    if _inside(target, store):
        raise InvalidInputError("The target must be outside the store.")
    wanted = _wanted(core, render=not dry_run)
    ledger = _ledger(store)
    made = ledger.get(str(target), {})
    actions: list[dict[str, Any]] = []
    for rel, source in sorted(wanted.items()):
        path = target / rel
        action: dict[str, Any] = {"path": str(path), "target": str(source)}
        if path.parent.is_symlink():
            actions.append({**action, "action": "conflict", "reason": "a linked folder"})
            continue
        if path.is_symlink():
            if not _ours(path, store, made, rel):
                dangling = not path.exists()
                reason = "a dangling link xbrain did not make" if dangling else "a foreign link"
                actions.append({**action, "action": "conflict", "reason": reason})
                continue
            if Path(os.readlink(path)) == source:
                actions.append({**action, "action": "unchanged"})
                continue
            actions.append({**action, "action": "relink"})
            if not dry_run:
                path.unlink()
                path.symlink_to(source)
            continue
        if path.exists():
            what = "a real directory" if path.is_dir() else "a real file"
            actions.append({**action, "action": "conflict", "reason": what})
            continue
        actions.append({**action, "action": "create"})
        if not dry_run:
            with private_umask():  # folders xbrain makes are 0700
                path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(source)
    for folder in ("skills", "rules"):
        directory = target / folder
        if not directory.is_dir() or directory.is_symlink():
            continue
        for path in sorted(directory.iterdir()):
            rel = f"{folder}/{path.name}"
            if rel not in wanted and path.is_symlink() and _ours(path, store, made, rel):
                actions.append({"path": str(path), "action": "remove"})
                if not dry_run:
                    path.unlink()
    if not dry_run:
        linked = {
            rel: str(source)
            for rel, source in wanted.items()
            if (target / rel).is_symlink() and os.readlink(target / rel) == str(source)
        }
        if linked != made:
            ledger[str(target)] = linked
            kept = {t: links for t, links in ledger.items() if links}
            _render(store / ".git" / LEDGER, json.dumps(kept, ensure_ascii=False, sort_keys=True))
    counts: dict[str, int] = {}
    for item in actions:
        counts[item["action"]] = counts.get(item["action"], 0) + 1
    return {"target": str(target), "dryRun": dry_run, "counts": counts, "actions": actions}
