"""The layers hold for every module (docs/technical/architecture.md): each module sits in a
folder the layers contract names (lint-imports checks the imports), no import cycle, no generated
code, no private module of a dependency."""

from __future__ import annotations

import ast
import itertools
import re
import sys
from pathlib import Path

import grimp

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PACKAGE = Path(__file__).resolve().parent.parent / "convgit"
PYPROJECT = PACKAGE.parent / "pyproject.toml"


def _layers() -> list[str]:
    """The folders (and top-level modules) the layers contract of pyproject.toml names."""
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in config if c["type"] == "layers" and c["containers"] == ["convgit"]]
    return [name.strip() for layer in contract["layers"] for name in layer.split("|")]


def test_every_module_is_in_a_layer() -> None:
    """lint-imports checks only what its layers name: a module outside every named folder would
    be checked by nobody, so none may exist."""
    layers = set(_layers())
    outside = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0].removesuffix(".py") not in layers
        and path.relative_to(PACKAGE) != Path("__init__.py")
    ]
    assert not outside, f"modules in no layer of pyproject.toml's contract: {outside}"


def test_every_layer_exists() -> None:
    missing = [
        n for n in _layers() if not (PACKAGE / n).is_dir() and not (PACKAGE / f"{n}.py").is_file()
    ]
    assert not missing, f"layers naming nothing: {missing}"


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
    """No import cycle, counting imports inside functions and ``TYPE_CHECKING`` ones: a cycle
    only the type checker sees is still two modules that cannot be read one without the other."""
    graph = grimp.build_graph("convgit", exclude_type_checking_imports=False)
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


def test_no_module_imports_a_private_module_of_a_dependency() -> None:
    """A dependency's private module (``typer._completion_classes``) may change in any release:
    convgit imports its public names alone (typer's completion through ``typer.completion``)."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                named = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                named = [a.name for a in node.names]
            else:
                continue
            for module in named:
                parts = module.split(".")
                if parts[0] != "convgit" and any(p.startswith("_") for p in parts[1:]):
                    wrong.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {module}")
    assert not wrong, "\n".join(wrong)


def test_only_the_workspace_track_runs_git() -> None:
    """One door to git: the runner (``convgit.git.plumbing.run``) is imported by ``git/`` and
    ``workspace/`` alone, every other module gets a ``Workspace``; and no module outside them
    starts a git process of its own, but the three that run the user's git as the user would."""
    track = ("convgit.git", "convgit.workspace")
    graph = grimp.build_graph("convgit", exclude_type_checking_imports=False)
    holders = sorted(
        m
        for m in graph.find_modules_that_directly_import("convgit.git.plumbing.run")
        if not any(m == t or m.startswith(t + ".") for t in track)
    )
    assert not holders, f"modules outside the workspace track that hold git's runner: {holders}"
    # the user's git, run as the user would: the demo's repository is made by plain git
    # commands; the commit-msg hook reads the index git is committing (GIT_INDEX_FILE, which
    # the runner scrubs); an agent's file is kept out through the repository the user sees
    users_git = {"cli/demo.py", "attribution/trailers.py", "agents/exclude.py"}
    starting = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.split("/")[0] in ("git", "workspace") or name in users_git:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.List)
                and node.elts
                and isinstance(node.elts[0], ast.Constant)
                and node.elts[0].value == "git"
            ):
                starting.append(f"{name}:{node.lineno}")
    assert not starting, f"git started around the runner: {starting}"


def test_the_stores_repository_is_opened_in_one_place() -> None:
    """``Workspace.of`` (and ``needed_by``, which refuses) open the repository a store lives in:
    no module outside the workspace track opens one itself (``Workspace.at``, ``Git.open``)."""
    opening = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.split("/")[0] in ("git", "workspace"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and (node.func.value.id, node.func.attr) in (("Workspace", "at"), ("Git", "open"))
            ):
                opening.append(f"{name}:{node.lineno}")
    assert not opening, f"a store's repository opened beside Workspace.of: {opening}"


def _floor(module: str) -> int:
    """The layer of ``module`` (``convgit.x.y``), counted from the top."""
    top = module.split(".")[1]
    contract = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contract if c.get("containers") == ["convgit"]]
    (at,) = [n for n, layer in enumerate(layers) if top in (p.strip() for p in layer.split("|"))]
    return at


def test_no_floor_starts_a_higher_floors_module() -> None:
    """A process convgit starts of its own (``python -m convgit.x``) runs a module that exists,
    on the starter's floor or below: a lower floor never runs a higher one's code, which the
    import contracts cannot see."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        starter = ".".join(("convgit", *path.relative_to(PACKAGE).with_suffix("").parts))
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.List):
                continue
            words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            for flag, started in itertools.pairwise(words):
                if flag != "-m" or not isinstance(started, str) or started == "convgit":
                    continue
                file = PACKAGE.parent / (started.replace(".", "/") + ".py")
                if not file.is_file():
                    wrong.append(f"{starter} starts {started}, which does not exist")
                elif _floor(started) < _floor(starter):
                    wrong.append(f"{starter} starts {started}, a floor above it")
    assert not wrong, wrong


def test_the_architecture_names_every_module_of_git() -> None:
    """git/ is grouped by concept, and docs/technical/architecture.md's row for it names each
    sub-package (``plumbing/``) and each module (``private_index``), so the map cannot go stale."""
    row = next(
        line
        for line in (PACKAGE.parent / "docs" / "technical" / "architecture.md")
        .read_text()
        .splitlines()
        if line.startswith("| **store** ")
    )
    named = set(re.findall(r"`([\w/]+)`", row.split("`git`:", 1)[1]))
    git = PACKAGE / "git"
    missing = [
        str(p.relative_to(git))
        for p in sorted(git.rglob("*.py"))
        if p.name != "__init__.py" and p.stem not in named
    ] + [
        f"{p.name}/"
        for p in sorted(git.iterdir())
        if p.is_dir() and p.name != "__pycache__" and f"{p.name}/" not in named
    ]
    assert not missing, f"git/ modules the architecture's row does not name: {missing}"
