"""One word, one meaning, in the code as on docs/glossary.md: the words the glossary retired
name nothing in the code, each module is imported under its own name (never under another
module's, nor under one it had before a move), and every ``Convgit-`` trailer is spelled in one
module, ``git/names.py``. Read from the source, importing nothing."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent.parent / "convgit"
NAMES = PACKAGE / "git" / "names.py"

# a word the code once said beside the glossary's, and the glossary's word for it
RETIRED = {
    "safety": "saved state (the ref's folder keeps the name, as a string)",
    "session_import": "importing (agents/importing.py, under its own name)",
}
# a type the code once named beside the glossary's word (a record's and --json's key `skipped`
# keeps its name, and the fields that carry it to them with it)
RETIRED_TYPES = {"Skipped": "LeftAlone"}


def _sources() -> Iterator[tuple[str, ast.AST]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield str(path.relative_to(PACKAGE.parent)), ast.parse(path.read_text())


def _names_defined(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """The names the code gives: classes, functions, their parameters, assignments, attributes
    set, import aliases."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.lineno, node.name
        elif isinstance(node, ast.arg):
            yield node.lineno, node.arg
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            yield node.lineno, node.attr
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.lineno, node.target.id
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.asname:
                    yield node.lineno, alias.asname


def test_no_code_name_says_a_word_the_glossary_retired() -> None:
    """`Skipped` is `LeftAlone`, `safety_ref` a saved state's ref, `session_import` is
    `importing`: a name in the code says the glossary's word."""
    wrong = []
    for where, tree in _sources():
        for line, name in _names_defined(tree):
            for word, said in RETIRED.items():
                if word in name.lower().split("_") or word == name.lower():
                    wrong.append(f"{where}:{line}: {name} ({said})")
            if name in RETIRED_TYPES:
                wrong.append(f"{where}:{line}: {name} ({RETIRED_TYPES[name]})")
    assert not wrong, "\n".join(wrong)


def test_a_module_is_imported_under_its_own_name_or_one_no_module_has() -> None:
    """`from convgit.agents import reading as importing` made `importing` mean two modules."""
    modules = {p.stem for p in PACKAGE.rglob("*.py")} | {p.name for p in PACKAGE.iterdir()}
    wrong = []
    for where, tree in _sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                "convgit"
            ):
                continue
            for alias in node.names:
                named = alias.asname
                if named and named != alias.name and {alias.name, named} <= modules:
                    wrong.append(f"{where}:{node.lineno}: {alias.name} as {alias.asname}")
    assert not wrong, "\n".join(wrong)


def test_each_convgit_trailer_is_spelled_in_the_names_module_alone() -> None:
    wrong = [
        f"{where}:{node.lineno}: {node.value!r}"
        for where, tree in _sources()
        if where != str(NAMES.relative_to(PACKAGE.parent))
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "Convgit-" in node.value
        and "Convgit-`" not in node.value
    ]
    assert not wrong, "\n".join(wrong)
