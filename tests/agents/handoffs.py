"""Helpers of the handoff tests: a session imported in this process, a path written as another
agent's session and read back by that agent's importer, and one agent-neutral view of a path
(what a round trip must give back: text, calls, results, thinking where the target keeps it)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from convgit.agents import importing, registry, writing
from convgit.agents.handoff import Handoff, Native, Said
from convgit.agents.reading import Cursor, Known, fresh
from convgit.conversation.replay import replay
from convgit.conversation.tree import Tree, build_records
from convgit.session import Session

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
AGENTS = ("claude-code", "codex", "copilot", "gemini", "opencode", "pi", "qwen")
FOLDERS = {"claude-code": "claude-code", "codex": "codex", "copilot": "copilot",
           "gemini": "gemini", "opencode": "opencode", "pi": "pi", "qwen": "qwen"}  # fmt: skip
SAMPLE_FOLDERS = {"claude-code": "claude-code", "codex": "codex", "copilot-cli": "copilot",
                  "gemini-cli": "gemini", "pi": "pi"}  # fmt: skip
_UNSAFE = re.compile(r"[^A-Za-z0-9]")


def imported(agent: str, file: Path, store: Path) -> Session:
    """``file`` imported as ``agent``'s into a store of its own, in this process."""
    results = importing.import_file(agent, file, store, store_dir=store, make_current=False)
    return Session.open(store, session=results[0].session, store_dir=store)


def read_back(native: Native, agent: str) -> Tree:
    """What ``agent``'s importer reads of ``native``, as a tree."""
    batch = registry.importer(agent).parse(native.data, Cursor(), Known())
    records, _ = fresh(batch.records, Known())
    header = {"type": "session", "v": 1, "id": "back", "created": "2026-01-01T00:00:00.000Z"}
    tree = build_records([header, *records])
    if batch.leaf is not None:
        tree.leaf = batch.leaf
    return tree


def round_trip(session: Session, ref: str, target: str) -> tuple[Handoff, Native, Tree]:
    handoff, native = writing.written(session, ref, target)
    return handoff, native, read_back(native, target)


def _norm(ident: Any) -> str:
    return _UNSAFE.sub("", str(ident))


def _words(text: str) -> str:
    return " ".join(text.split())


def view(
    messages: Iterable[Mapping[str, Any]], thinking: bool, errors: bool = True
) -> list[tuple[Any, ...]]:
    """The path as the model reads it, whatever agent's shape carried it: prompts, replies
    (a reply recorded block by block read as one), thinking (with ``thinking``), calls (by id,
    tool and input), results (by call, text, error); text blank lines and ids' punctuation
    aside."""
    found: list[tuple[Any, ...]] = []
    for message in messages:
        role = message["role"]
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if role == "tool":
            text = "\n".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
            failed = bool(message.get("isError")) and errors
            found.append(("result", _norm(message["toolCallId"]), _words(text), failed))
            continue
        for part in parts:
            kind = part.get("type")
            if kind == "text" and str(part.get("text", "")).strip():
                _add(found, role, _words(str(part["text"])))
            elif kind == "thinking" and thinking and str(part.get("thinking", "")).strip():
                _add(found, "thinking", _words(str(part["thinking"])))
            elif kind == "tool_call" and role == "assistant":
                given = json.dumps(part.get("input", {}), sort_keys=True)
                found.append(("call", _norm(part["id"]), part["name"], given))
    return found


def _add(found: list[tuple[Any, ...]], role: str, text: str) -> None:
    """Text of one speaker in a row is one piece (agents split and join a reply's blocks)."""
    if found and found[-1][0] == role:
        found[-1] = (role, found[-1][1] + " " + text)
    else:
        found.append((role, text))


def said_view(said: list[Said], thinking: bool, errors: bool = True) -> list[tuple[Any, ...]]:
    """The view of what the writer was given."""
    messages = []
    for message in said:
        record: dict[str, Any] = {"role": message.role, "content": message.parts}
        if message.role == "tool":
            record.update(toolCallId=message.call, isError=message.error)
        messages.append(record)
    return view(messages, thinking, errors)


def tree_view(
    tree: Tree, leaf: str | None, thinking: bool, errors: bool = True
) -> list[tuple[Any, ...]]:
    return view(replay(tree, leaf).messages, thinking, errors)


def keeps_thinking(source: str | None, target: str) -> bool:
    keeps = writing.writer(target).KEEPS.thinking
    return keeps == "all" or (keeps == "own" and source == target)


def sources() -> list[tuple[str, Path]]:
    """Every fixture a session imports from (the bad ones aside), by agent."""
    found = []
    for agent, folder in FOLDERS.items():
        for path in sorted((FIXTURES / folder).glob("*.json*")):
            if not path.name.startswith(("bad-", "not-")):
                found.append((agent, path))
    return found
