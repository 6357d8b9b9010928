"""`convgit export --format pi` gives back what pi wrote: import a pi file, export it, and the
root-to-leaf path comes back with the same entries, ids, parents and leaf, each record with
the very bytes pi wrote (v1 records, which had no ids, with the ids convgit gave them). A
session convgit wrote itself exports as a pi v3 file that reads back as the same tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit.agents.pi import reading as pi
from convgit.agents.reading import Cursor, Known
from tests.agents.reading.agentfiles import Store, texts

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "pi"
SAMPLES = [
    "pi-v1_large-session_test-fixture.jsonl",
    "pi-v3_sdk_branch_branch-summary.jsonl",
    "pi-v3_sdk_fork-child_parentSession.jsonl",
    "pi-v3_sdk_fork-parent.jsonl",
    "pi-v3_windows_small_chat.jsonl",
]
V3_FIXTURES = sorted(p.name for p in FIXTURES.glob("v3-*.jsonl"))


def _pi_path(lines: list[bytes]) -> list[bytes]:
    """pi's active path, read plainly: from the last entry up its parents (v1: every line)."""
    header = json.loads(lines[0])
    if "version" not in header:
        return lines[1:]
    by_id = {json.loads(line)["id"]: line for line in lines[1:]}
    path, node = [], json.loads(lines[-1])["id"]
    while node is not None:
        path.append(by_id[node])
        node = json.loads(by_id[node])["parentId"]
    return path[::-1]


def _split(data: bytes) -> list[bytes]:
    """pi's records one per line; a line with two objects (a pi quirk) as two."""
    out = []
    for line in data.decode().splitlines():
        at = 0
        while at < len(line):
            _, end = json.JSONDecoder().raw_decode(line, at)
            out.append(line[at:end].encode())
            at = end
    return out


def _round_trip(store: Store, path: Path, out: Path) -> tuple[list[bytes], list[bytes]]:
    session = store.import_("pi", path)["session"]
    store.run("-s", session, "export", "--format", "pi", "-o", str(out))
    return _split(path.read_bytes()), out.read_bytes().splitlines()


@pytest.mark.parametrize("name", SAMPLES)
def test_a_pi_sample_comes_back_as_pi_wrote_it(samples: Path, tmp_path: Path, name: str) -> None:
    original, exported = _round_trip(
        Store(tmp_path / "store"), samples / "pi" / name, tmp_path / "out.jsonl"
    )
    path = _pi_path(original)
    assert len(exported) == 1 + len(path)
    header = json.loads(exported[0])
    if "v1" in name:
        assert header == {**json.loads(original[0]), "version": 3}
        records = [json.loads(line) for line in exported[1:]]
        for record, source in zip(records, path, strict=True):
            kept = {k: v for k, v in record.items() if k not in ("id", "parentId")}
            assert kept == json.loads(source)
        assert [r["parentId"] for r in records] == [None] + [r["id"] for r in records[:-1]]
    else:
        assert exported == [original[0], *path]  # byte for byte, the leaf last


@pytest.mark.parametrize("name", V3_FIXTURES)
def test_every_v3_quirk_comes_back_byte_for_byte(tmp_path: Path, name: str) -> None:
    original, exported = _round_trip(
        Store(tmp_path / "store", real=False), FIXTURES / name, tmp_path / "out.jsonl"
    )
    assert exported == [original[0], *_pi_path(original)]


def test_a_v1_compaction_comes_back_naming_the_entry_it_keeps(tmp_path: Path) -> None:
    _, exported = _round_trip(
        Store(tmp_path / "store", real=False), FIXTURES / "v1-compaction-index.jsonl",
        tmp_path / "out.jsonl",
    )  # fmt: skip
    records = [json.loads(line) for line in exported[1:]]
    (compaction,) = [r for r in records if r["type"] == "compaction"]
    assert "firstKeptEntryIndex" not in compaction
    kept = next(r for r in records if r["id"] == compaction["firstKeptEntryId"])
    assert kept["message"]["content"][0]["text"] == "Now rename b.py to c.py."


def test_export_of_an_earlier_entry_is_the_path_to_it(samples: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    source = samples / "pi" / "pi-v3_sdk_branch_branch-summary.jsonl"
    session = store.import_("pi", source)["session"]
    exported = store.run("-s", session, "export", "16a8a06a", "--format", "pi").stdout
    lines = source.read_bytes().splitlines()
    assert exported.splitlines() == [lines[0], lines[1], lines[2], lines[3], lines[4]]


def test_a_session_convgit_wrote_exports_as_a_pi_file_of_the_same_tree(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    store.run("init")
    records = [
        {"type": "model", "provider": "anthropic", "model": "claude-sonnet-4-5"},
        {"type": "message", "role": "user", "content": "Read a.txt."},
        {"type": "message", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "One read.", "signature": "sig"},
            {"type": "tool_call", "id": "c1", "name": "read", "input": {"path": "a.txt"}}]},
        {"type": "message", "role": "tool", "toolCallId": "c1", "content": "alpha"},
        {"type": "compaction", "summary": "a.txt was read", "firstKeptId": None},
        {"type": "note", "text": "The files were restored.", "source": "restore"},
        {"type": "message", "role": "assistant", "content": "It says alpha."},
    ]  # fmt: skip
    store.run("append", input=b"".join(orjson.dumps(r) + b"\n" for r in records))
    made = store.log(_current(store))
    data = store.run("export", "--format", "pi").stdout
    header, *lines = data.splitlines()
    assert orjson.loads(header)["version"] == 3
    batch = pi.parse(data, Cursor(), Known())
    back = [r for r in batch.records if "parentId" in r]
    assert [(r["id"], r["parentId"]) for r in back] == [(e["id"], e["parentId"]) for e in made]
    assert [r["type"] for r in back] == [
        "model", "message", "message", "message", "compaction", "message", "message"
    ]  # fmt: skip
    call = back[2]["content"][1]
    assert call == {"type": "tool_call", "id": "c1", "name": "read", "input": {"path": "a.txt"}}
    result = orjson.loads(lines[3])["message"]
    assert [result[k] for k in ("role", "toolName", "toolCallId")] == ["toolResult", "read", "c1"]
    assert texts(back[5]) == ["Note from convgit: The files were restored."]
    assert all("usage" in orjson.loads(x)["message"] for x in lines if b'"assistant"' in x)
    assert batch.leaf == made[-1]["id"]


@pytest.mark.parametrize(
    ("agent", "sample"),
    [
        ("codex", "codex/codex-0.121.0_cli_multi-turn_web-search_turn-aborted.jsonl"),
        ("gemini", "gemini-cli/gemini_session_tool-calls_info-msg_13-messages.json"),
    ],
)
def test_another_agents_session_exports_to_a_pi_file_that_replays_the_same(
    samples: Path, tmp_path: Path, agent: str, sample: str
) -> None:
    """A Codex or Gemini CLI session, exported to pi and that file imported again, is sent to
    the model with the same prompts, the same model and thinking level (the calls, mapped to
    pi's tools, and their results: tests/agents/test_handoff.py)."""
    store = Store(tmp_path / "store", real=False)
    session = store.import_(agent, samples / sample)["session"]
    exported = tmp_path / "continued.jsonl"
    store.run("-s", session, "export", "--format", "pi", "-o", str(exported))
    again = Store(tmp_path / "again", real=False)
    copy = again.import_("pi", exported)["session"]
    for fmt in ("openai", "anthropic"):
        mapped, before = again.context(copy, fmt), store.context(session, fmt)
        assert _prompts(mapped) == _prompts(before)
        assert {k: v for k, v in mapped.items() if k != "messages"} == {
            k: v for k, v in before.items() if k != "messages"
        }


def _prompts(context: dict[str, Any]) -> list[Any]:
    """The prompts (a call pi has no counterpart for is given with its result as text)."""
    found = []
    for message in context["messages"]:
        content = message["content"]
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
        if message["role"] == "user" and content and not content.startswith("[The result of"):
            found.append(content)
    return found


def _current(store: Store) -> str:
    (row,) = store.sessions()
    return str(row["id"])


def test_export_refuses_to_overwrite_and_names_its_formats(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    session = store.import_("pi", FIXTURES / "v3-compaction.jsonl")["session"]
    taken = tmp_path / "taken.jsonl"
    taken.write_text("mine\n")
    words = store.run("-s", session, "export", "--format", "pi", "-o", str(taken), code=1)
    assert b"exists" in words.stderr and taken.read_text() == "mine\n"
    words = store.run("-s", session, "export", "--format", "html", code=2)
    assert b"use --format claude-code, codex" in words.stderr
    words = store.run("-s", session, "export", code=2)
    assert words.stderr.startswith(
        b"convgit: Say which agent's format to write: --format claude-code, codex,"
    )
    empty = Store(tmp_path / "empty", real=False)
    empty.run("init")
    assert b"no entries" in empty.run("export", "--format", "pi", code=1).stderr
