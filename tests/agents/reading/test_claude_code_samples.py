"""Every real Claude Code transcript in ../shared/samples imports through the CLI into a tree
whose shape is the one read by hand from the file: its real branches (Claude's own rewinds)
and nothing else, its compactions, its subagents as side branches, the leaf Claude would
resume. Nothing is lost or orphaned, every prompt and reply is there, a second import adds
nothing, and the replayed context is what Claude sends: turns in order, tool calls paired."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit.conversation.replay import MISSING_RESULT
from tests.clirun import run

FOLDER = "claude-code"


@dataclass(frozen=True)
class Shape:
    """What reading the file by hand says (ids by their first 8 characters)."""

    root: str
    leaf: str
    branches: dict[str, set[str]] = field(default_factory=dict)  # fork -> its children
    compactions: dict[str, str] = field(default_factory=dict)  # compaction -> its parent
    subagents: dict[str, int] = field(default_factory=dict)  # spawning entry -> entries below
    notes: tuple[int, ...] = ()  # lines the report must name


SHAPES = {
    # linear; a manual /compact whose boundary points at a stop-hook line after the last reply
    "cc-2.0.76_fasthooks_manual-compact+sidechain/sample_main_transcript.jsonl": Shape(
        root="0bdd2740", leaf="5685c15e", compactions={"1d483453": "452e3cc4"}
    ),
    # the "Warmup" subagent of the same session: its own root (no call in the main file)
    "cc-2.0.76_fasthooks_manual-compact+sidechain/sample_agent_sidechain.jsonl": Shape(
        root="6e3bca70", leaf="2c0eb16a"
    ),
    # linear; it opens with hook attachments (a custom root) and ends on a reply
    "cc-2.1.119_attachments_permission-mode_last-prompt.jsonl": Shape(
        root="63cf7459", leaf="d6a329e8"
    ),
    # a slice of a longer session: line 1's parent is not in the file; one compaction whose
    # logicalParentUuid is the tool result before it; a microcompact boundary kept
    "cc-2.1.14_compact-boundary_and_microcompact.jsonl": Shape(
        root="119f3dbe", leaf="acea2013", compactions={"c677d686": "8cebc497"}, notes=(1,)
    ),
    # a Task subagent mirrored inline by 37 agent_progress lines: a side branch of 37
    "cc-2.1.19_task-subagent_agent-progress-inline.jsonl": Shape(
        root="33b662d5", leaf="57a2b4fd", subagents={"3bc674bc": 37}
    ),
    # a resume: line 128 holds an assistant line and a summary; line 131 writes the uuid of
    # line 128 again (with the cwd and version of the resuming machine)
    "cc-2.1.7+2.1.12_resume_two-objects-on-one-line_duplicate-uuid.jsonl": Shape(
        root="2b6fd122", leaf="9a1d53b3", notes=(131,)
    ),
    # the real rewind: prompt 024faab1 interrupted, then submitted again as ee0e356f below the
    # same parent (the session's first lines); an Agent subagent mirrored by 57 lines; /exit,
    # the resume stub "No response requested." beside it, then "commit"
    "cc-2.1.79_rewind-after-interrupt_agent-tool.jsonl": Shape(
        root="d8a0df0a",
        leaf="cbfa8f45",
        branches={"d8a0df0a": {"024faab1", "ee0e356f"}},
        subagents={"ed5e4d2e": 57},
    ),
}


def convgit(folder: Path, *args: str, code: int = 0) -> bytes:
    return run("-C", str(folder), *args, cwd=folder, code=code).out


def convgit_json(folder: Path, *args: str) -> Any:
    return orjson.loads(convgit(folder, *args, "--json"))


@dataclass
class Imported:
    folder: Path
    file: Path
    result: dict[str, Any]
    entries: dict[str, dict[str, Any]]

    def short(self, ident: str | None) -> str | None:
        return None if ident is None else ident[:8]


@pytest.fixture(scope="module", params=sorted(SHAPES))
def imported(
    request: pytest.FixtureRequest, samples: Path, tmp_path_factory: pytest.TempPathFactory
) -> Imported:
    file = samples / FOLDER / request.param
    folder = tmp_path_factory.mktemp("cc")
    result = convgit_json(folder, "import", "claude-code", str(file))["imports"][0]
    entries = {e["id"]: e for e in convgit_json(folder, "tree")["entries"]}
    return Imported(folder, file, result, entries)


def test_the_samples_are_all_expected(samples: Path) -> None:
    found = {str(p.relative_to(samples / FOLDER)) for p in (samples / FOLDER).rglob("*.jsonl")}
    assert found == set(SHAPES)


def test_the_tree_has_the_shape_read_from_the_file(imported: Imported) -> None:
    shape = _shape_of(imported)
    entries = imported.entries
    children: dict[str | None, list[str]] = {}
    for ident, entry in entries.items():
        children.setdefault(entry["parentId"], []).append(ident)

    def subagent(ident: str) -> bool:
        return "subagent" in entries[ident]["native"]

    assert [imported.short(r) for r in children[None]] == [shape.root]
    forks = {
        imported.short(parent): {imported.short(c) for c in kids if not subagent(c)}
        for parent, kids in children.items()
        if parent is not None and len([c for c in kids if not subagent(c)]) > 1
    }
    assert forks == shape.branches
    compactions = {
        imported.short(i): imported.short(e["parentId"])
        for i, e in entries.items()
        if e["type"] == "compaction"
    }
    assert compactions == shape.compactions
    below: dict[str, int] = {}
    for ident, entry in entries.items():
        parent = entry["parentId"]
        if subagent(ident) and parent is not None and not subagent(parent):
            below[str(imported.short(parent))] = _count_below(children, ident)
    assert below == shape.subagents
    assert imported.short(imported.result["leaf"]) == shape.leaf
    assert [n["line"] for n in imported.result["notes"]] == list(shape.notes)


def test_nothing_is_orphaned_or_damaged(imported: Imported) -> None:
    report = convgit_json(imported.folder, "fsck")
    assert report["ok"] and report["problems"] == []


def test_every_line_of_the_file_is_kept_exactly(imported: Imported) -> None:
    """Each object of the file (two on one line count as two) is kept once, byte for byte: in
    the entry made from it or in a native record."""
    session = next((imported.folder / ".convgit" / "sessions").glob("*[0-9a-f].jsonl"))
    kept: list[bytes] = []
    for line in session.read_bytes().splitlines()[1:]:
        record = orjson.loads(line)
        holder = record.get("native") if "parentId" in record else record
        if record.get("type") == "native" or (holder and "text" in holder):
            kept.append(holder["text"].encode())
    assert sorted(kept) == sorted(_objects(imported.file))


def test_every_prompt_and_reply_is_in_the_tree(imported: Imported) -> None:
    texts = set()
    for entry in imported.entries.values():
        content = entry.get("content", entry.get("summary"))
        if isinstance(content, str):
            texts.add(content)
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "text":
                texts.add(part["text"])
    missing = [t[:60] for t in _prompts_and_replies(imported.file) if t not in texts]
    assert missing == []


def test_a_second_import_adds_nothing_and_writes_nothing(imported: Imported) -> None:
    session = next((imported.folder / ".convgit" / "sessions").glob("*[0-9a-f].jsonl"))
    before = session.read_bytes()
    again = convgit_json(imported.folder, "import", "claude-code", str(imported.file))["imports"][0]
    assert again["new"] == 0 and again["session"] == imported.result["session"]
    assert session.read_bytes() == before
    listed = convgit_json(imported.folder, "sessions")["sessions"]
    assert [(s["agent"], s["agent_session_id"]) for s in listed] == [
        ("claude-code", imported.result["agent_session_id"])
    ]


def test_the_context_is_what_claude_sends(imported: Imported) -> None:
    """Turns alternate, every tool_use is answered in the next user turn by its own result
    (a placeholder only for a call the file never answers), and the calls come in the order
    Claude made them since the last compaction."""
    request = orjson.loads(convgit(imported.folder, "context", "--format", "anthropic"))
    messages = request["messages"]
    assert messages[0]["role"] == "user"
    assert all(a["role"] != b["role"] for a, b in pairwise(messages))
    unanswered = _unanswered_calls(imported.file)
    calls: list[str] = []
    for number, message in enumerate(messages):
        uses = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        calls += uses
        if not uses:
            continue
        answer = messages[number + 1]["content"]
        results = {b["tool_use_id"]: b for b in answer if b["type"] == "tool_result"}
        assert set(uses) <= set(results)
        for use in uses:
            placeholder = results[use]["content"] == MISSING_RESULT
            assert placeholder == (use in unanswered)
    assert calls == _calls_since_last_compaction(imported.file)


# -- reading the file independently ---------------------------------------------------------


def _shape_of(imported: Imported) -> Shape:
    for name, shape in SHAPES.items():
        if imported.file.as_posix().endswith(name):
            return shape
    raise AssertionError(imported.file)


def _count_below(children: dict[str | None, list[str]], ident: str) -> int:
    return 1 + sum(_count_below(children, c) for c in children.get(ident, []))


def _objects(file: Path) -> list[bytes]:
    """Every JSON object of the file, exactly (a line may hold two)."""
    import json

    decoder = json.JSONDecoder()
    found = []
    for line in file.read_text().splitlines():
        at = 0
        while at < len(line.strip()):
            _, end = decoder.raw_decode(line, at)
            found.append(line[at:end].encode())
            at = end
    return found


def _lines(file: Path) -> list[dict[str, Any]]:
    return [orjson.loads(raw) for raw in _objects(file)]


def _messages(file: Path) -> list[dict[str, Any]]:
    """The user and assistant records, those a subagent's agent_progress line carries too."""
    found = []
    for record in _lines(file):
        if record.get("type") == "progress" and isinstance(record["data"].get("message"), dict):
            record = record["data"]["message"]
        if record.get("type") in ("user", "assistant"):
            found.append(record)
    return found


def _prompts_and_replies(file: Path) -> list[str]:
    texts = []
    for record in _messages(file):
        message = record["message"]
        if message.get("model") == "<synthetic>":
            continue  # Claude's stand-ins, kept but not replies
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [b["text"] for b in content if b["type"] == "text"]
    return texts


def _unanswered_calls(file: Path) -> set[str]:
    uses, results = set(), set()
    for record in _messages(file):
        content = record["message"]["content"]
        for block in content if isinstance(content, list) else []:
            if block["type"] == "tool_use":
                uses.add(block["id"])
            if block["type"] == "tool_result":
                results.add(block["tool_use_id"])
    return uses - results


def _calls_since_last_compaction(file: Path) -> list[str]:
    """Tool calls of the session's own assistant lines in file order, after the last compact
    summary (what a compaction leaves the model)."""
    calls: list[str] = []
    for record in _lines(file):
        if record.get("isCompactSummary"):
            calls = []
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        content = record["message"]["content"]
        calls += [b["id"] for b in content if isinstance(b, dict) and b["type"] == "tool_use"]
    return calls
