"""Adding an agent is one folder holding its declaration (docs/technical/architecture.md): a
toy agent, written as a new folder of ``convgit/agents/`` in a copy of the package (its reader
and its ``agent.py``, a ``protocol.Declaration`` as any agent's), is read by ``convgit import``
(named and recognised), listed in the help texts, and refused in one sentence where it has no part
(hooks, resume, export). No file of the package is edited."""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from pathlib import Path

import orjson

from tests import clirun

PACKAGE = Path(__file__).resolve().parents[2] / "convgit"

# The toy agent writes pi's records under a header of its own type; its reader reads them as pi's.
TOY_INIT = '''"""A toy agent: pi's records under a header of its own."""

NAME = "toy"
TITLE = "Toy Agent"
'''
TOY_READING = '''"""The toy agent's files: pi's records under a ``toy-session`` header."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from convgit.agents.pi import reading as pi
from convgit.agents.reading import Batch, Cursor, Known
from convgit.agents.toy import NAME, TITLE

_HEADER = (b'"type":"toy-session"', b'"type":"session"    ')  # same length: offsets hold


def _as_pi(data: bytes) -> bytes:
    return data.replace(*_HEADER, 1)


def parse(data: bytes, cursor: Cursor, known: Known) -> Batch:
    return pi.parse(_as_pi(data) if cursor.offset == 0 else data, cursor, known)


def recognises(records: list[dict[str, Any]], data: bytes) -> bool:
    return bool(records) and records[0].get("type") == "toy-session"


IMPORTER = replace(
    pi.IMPORTER, agent=NAME, title=TITLE, parse=parse,
    session_id=lambda data: pi.IMPORTER.session_id(_as_pi(data)),
)
'''


TOY_AGENT = '''"""The toy agent, declared: its reader, and no other part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convgit.agents.protocol import Declaration
from convgit.agents.toy import NAME, TITLE

if TYPE_CHECKING:
    from convgit.agents.protocol import Reading


def _reading() -> Reading:
    from convgit.agents.toy import reading

    return reading


AGENT = Declaration(NAME, TITLE, reading=_reading, order=90)
'''


def _toy_file(path: Path, session: str) -> Path:
    lines = [
        {"type": "toy-session", "version": 3, "id": session, "timestamp": "2026-03-01T10:00:00Z"},
        _message("t1", None, "user", "Make it faster."),
        _message("t2", "t1", "assistant", "Done: it is faster."),
    ]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def _message(ident: str, parent: str | None, role: str, text: str) -> dict[str, object]:
    return {
        "type": "message",
        "id": ident,
        "parentId": parent,
        "timestamp": "2026-03-01T10:00:01Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1},
    }


def _add_toy(root: Path) -> Path:
    """A copy of the package with the toy agent added: its folder, nothing else."""
    copy = root / "pkg" / "convgit"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    folder = copy / "agents" / "toy"
    folder.mkdir()
    (folder / "__init__.py").write_text(TOY_INIT)
    (folder / "reading.py").write_text(TOY_READING)
    (folder / "agent.py").write_text(TOY_AGENT)
    return copy


def _edited(copy: Path) -> list[str]:
    """Every file of the copy that differs from the package, and the changed lines of those
    that existed before."""
    changes = []
    for path in sorted(copy.rglob("*.py")):
        rel = path.relative_to(copy)
        before = PACKAGE / rel
        if not before.exists():
            changes.append(f"new {rel.as_posix()}")
            continue
        diff = [
            d
            for d in difflib.unified_diff(
                before.read_text().splitlines(), path.read_text().splitlines(), lineterm="", n=0
            )
            if d[:1] in "+-" and not d.startswith(("+++", "---"))
        ]
        changes += [f"{rel.as_posix()}: {d}" for d in diff]
    return changes


def test_an_agent_added_as_one_folder_with_its_declaration_is_read_named_and_refused(
    tmp_path: Path,
) -> None:
    copy = _add_toy(tmp_path)
    assert sorted(_edited(copy)) == [
        "new agents/toy/__init__.py",
        "new agents/toy/agent.py",
        "new agents/toy/reading.py",
    ]
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    env = {**os.environ, "PYTHONPATH": str(copy.parent), "COLUMNS": "200"}

    def convgit(*args: str, code: int = 0) -> clirun.Ran:
        return clirun.run(*args, cwd=work, env=env, code=code)

    named = orjson.loads(
        convgit("import", "toy", str(_toy_file(tmp_path / "a.jsonl", "s-a")), "--json").stdout
    )
    (result,) = named["imports"]
    assert result["agent"] == "toy"
    recognised = convgit("import", str(_toy_file(tmp_path / "b.jsonl", "s-b")))
    assert "is a Toy Agent session file (recognised from its content)" in recognised.stdout
    entries = orjson.loads(convgit("log", "--json").stdout)["entries"]
    said = [part["text"] for e in entries for part in e["content"]]
    assert "Done: it is faster." in said
    assert "toy" in convgit("import", "--help").stdout
    hooks = convgit("hooks", "install", "toy", code=2)
    assert (
        "convgit does not run beside 'toy': use one of claude-code, codex, copilot, gemini,"
        " opencode, pi, qwen." in hooks.stderr
    )
    export = convgit("export", "--format", "toy", code=2)
    assert "Unknown export format 'toy': use --format claude-code, codex, copilot" in export.stderr
