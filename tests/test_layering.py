"""The conversation track and the store stay below the session and git (ARCHITECTURE.md): each
module of theirs imports only what is beneath it, and no module runs generated code."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "convgit"
BENEATH = {
    "schema": {"convgit.schema", "convgit.errors"},
    "conversation": {"convgit.conversation", "convgit.schema", "convgit.codec", "convgit.errors"},
    "store": {
        "convgit.store",
        "convgit.conversation",
        "convgit.schema",
        "convgit.codec",
        "convgit.errors",
        "convgit.locks",
        "convgit.faults",
    },
}


def _imports(path: Path) -> set[str]:
    """Every convgit module ``path`` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module is not None and not node.level:
            if node.module == "convgit":
                found |= {f"convgit.{alias.name}" for alias in node.names}
            else:
                found.add(node.module)
    return {name for name in found if name.split(".")[0] == "convgit"}


@pytest.mark.parametrize("package", sorted(BENEATH))
def test_a_package_imports_only_what_is_beneath_it(package: str) -> None:
    allowed = BENEATH[package]
    for path in sorted((PACKAGE / package).glob("*.py")):
        above = {
            name
            for name in _imports(path)
            if not any(name == ok or name.startswith(ok + ".") for ok in allowed)
        }
        assert not above, f"{path.name} imports {sorted(above)}"


def test_no_module_runs_generated_code() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        calls = [
            node.func.id
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("exec", "eval", "compile")
        ]
        assert not calls, f"{path.relative_to(PACKAGE)} calls {calls}"
