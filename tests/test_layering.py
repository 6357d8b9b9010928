"""The conversation track and the store stay below the session and git (docs/architecture.md): each
module of theirs imports only what is beneath it, and no module runs generated code."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
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


def test_no_two_modules_import_each_other() -> None:
    """No import cycle, counting imports inside functions (``TYPE_CHECKING`` ones are not run)."""
    graph = grimp.build_graph("convgit", exclude_type_checking_imports=True)
    imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    cycles = [group for group in _strongly_connected(imports) if len(group) > 1]
    assert not cycles, f"modules that import each other: {cycles}"


def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                found.append(sorted(group))
    return found
