"""Rules of ARCHITECTURE.md that import-linter does not check: private names stay
private, modules stay small, and the lazy CLI's help table matches the commands."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "xbrain"
MODULES = sorted(PACKAGE.rglob("*.py"))
# the standard library's documented functions whose names begin with "_"
PUBLIC_UNDERSCORED = {("os", "_exit")}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_another_modules_private_names(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            inside = node.level > 0 or (node.module or "").startswith("xbrain")
            private = [a.name for a in node.names if a.name.startswith("_")]
            private = [name for name in private if name not in ("__version__",)]
            assert not (inside and private), f"line {node.lineno} imports {private}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_code_reaches_into_another_objects_private_names(path: Path) -> None:
    """``store._session()`` from a feature is how layers used to leak; only ``self``/``cls``."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            if node.attr.startswith("__"):
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and (owner.id, node.attr) in PUBLIC_UNDERSCORED:
                continue
            assert isinstance(owner, ast.Name) and owner.id in ("self", "cls"), (
                f"line {node.lineno}: {ast.unparse(node)}"
            )


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_400_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 400


def test_the_lazy_help_table_matches_every_commands_own_help() -> None:
    from xbrain.cli import COMMANDS

    for name, (module, attr, first) in COMMANDS.items():
        command = getattr(importlib.import_module(f"xbrain.cli.{module}"), attr)
        assert command.name == name
        assert " ".join((command.help or "").split("\n\n")[0].split()) == first, name


def test_help_imports_no_command_module() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from xbrain.cli import main; sys.argv = ['xbrain', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = [m for m in sys.modules if m.startswith('xbrain.') or m in "
        "('dulwich', 'ruamel', 'jieba', 'sqlite3', 'filelock', 'jsonschema')]\n"
        "print(' '.join(sorted(loaded)), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    loaded = set(proc.stderr.split())
    assert loaded <= {
        "xbrain.cli",
        "xbrain.cli.base",
        "xbrain.errors",
        "xbrain.lightcli",
        "xbrain.userdirs",
    }, loaded


def test_a_command_imports_only_what_it_uses(tmp_path: Path) -> None:
    """``xbrain get`` loads its own command module, the core and the resource kinds —
    not the other commands, search or recall, remotes, providers, the MCP server or SQLite."""
    import subprocess
    import sys

    store = tmp_path / "store"
    code = (
        "import sys; from xbrain.cli import main\n"
        f"sys.argv = ['xbrain', 'get', 'resource_' + '0' * 64, '--store', {str(store)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)"
    )
    subprocess.run([sys.executable, "-m", "xbrain", "init", "--store", str(store)], check=True)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    loaded = set(proc.stderr.split())
    assert "xbrain.cli.records" in loaded and "xbrain.core" in loaded
    unwanted = {
        "xbrain.cli.find",
        "xbrain.cli.remotes",
        "xbrain.cli.history",
        "xbrain.cli.ingest",
        "xbrain.cli.upkeep",
        "xbrain.cli.agents",
        "xbrain.search.index",
        "xbrain.search.tokenize",
        "xbrain.semantic",
        "xbrain.retrieval",
        "xbrain.recall",
        "xbrain.remote",
        "xbrain.providers",
        "xbrain.mcp_server",
        "xbrain.history",
        "sqlite3",
        "jieba",
        "jsonschema",
    }
    assert not loaded & unwanted, loaded & unwanted


def test_a_skill_saved_from_a_folder_loads_no_zip_reader(tmp_path: Path) -> None:
    """``xbrain skill save DIR`` (the console script's path) reads no archive, so it does
    not load ``zipfile``; the same save from a ZIP does."""
    import subprocess
    import sys
    import zipfile

    folder = tmp_path / "demo-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: demo-skill\ndescription: A demo.\n---\nSteps.\n")
    archive = tmp_path / "demo.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("SKILL.md", "---\nname: demo-skill\ndescription: Zipped.\n---\nSteps.\n")
    loaded = []
    for source in (folder, archive):
        code = (
            "import sys; from xbrain.launch import main\n"
            f"sys.argv = ['xbrain', 'skill', 'save', {str(source)!r}, '--store', "
            f"{str(tmp_path / 'store')!r}]\n"
            "try:\n    main()\nfinally:\n"
            "    print('zipfile' in sys.modules, file=sys.stderr)"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert proc.returncode == 0 and '"status"' in proc.stdout, proc.stderr
        loaded.append(proc.stderr.split()[-1])
    assert loaded == ["False", "True"]
