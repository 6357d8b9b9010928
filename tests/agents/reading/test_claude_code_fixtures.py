"""One quirk of Claude Code's transcripts per file of fixtures/claude-code/, and hostile
variants: each imports (through the command line, in-process) to the tree written here by
hand, reports what it kept without interpreting, and never ends in a traceback."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit.conversation.replay import BRANCH_SUMMARY_PREFIX, COMPACTION_PREFIX
from tests.clirun import invoke

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "claude-code"


def cli(folder: Path, *args: str, code: int = 0) -> Any:
    result = invoke("-C", str(folder), *args)
    assert result.exit_code == code, (args, result.output, result.exception)
    assert "Traceback" not in result.output
    return result


def cli_json(folder: Path, *args: str) -> Any:
    return orjson.loads(cli(folder, *args, "--json").stdout)


@dataclass(frozen=True)
class Expect:
    parents: dict[str, str | None]  # every entry and its parent
    leaf: str
    kept: dict[str, int] = field(default_factory=dict)  # report: kind -> records kept
    notes: tuple[int, ...] = ()  # report: lines with a note


EXPECT = {
    "two-objects-on-one-line.jsonl": Expect(
        {"p1": None, "a1": "p1", "p2": "a1"}, "p2", {"summary": 1}
    ),
    "duplicate-uuid.jsonl": Expect(
        {"p1": None, "a1": "p1"}, "a1", {"file-history-snapshot": 1, "repeated line": 1}
    ),
    "duplicate-uuid-other-content.jsonl": Expect(
        {"p1": None, "a1": "p1", "p2": "a1"}, "p2", notes=(3,)
    ),
    "other-session-lines.jsonl": Expect(
        {"p1": None, "a1": "p1", "p2": "a1"}, "p2", {"line of another session": 1}
    ),
    "parallel-tool-results.jsonl": Expect(
        {"p1": None, "a1": "p1", "a2": "a1", "r1": "a2", "r2": "r1", "a3": "r2"}, "a3"
    ),
    "split-reply-interleaved.jsonl": Expect(
        {"p1": None, "a1": "p1", "a2": "a1", "r1": "a2", "a3": "r1", "r2": "a3", "a4": "r2"},
        "a4",
        {"progress/hook_progress": 1},
    ),
    "progress-and-attachments.jsonl": Expect(
        {"h1": None, "p1": "h1", "a1": "p1", "p2": "a1"},
        "p2",
        {
            "attachment/hook_success": 1,
            "attachment/skill_listing": 1,
            "system/stop_hook_summary": 1,
            "system/turn_duration": 1,
            "permission-mode": 1,
            "last-prompt": 1,
        },
    ),
    "resume-stub.jsonl": Expect(
        {"p1": None, "a1": "p1", "c1": "a1", "c2": "c1", "c3": "c2", "p2": "c3", "a2": "p2"},
        "a2",
        {"assistant/synthetic": 1},
    ),
    "local-command-side-chain.jsonl": Expect(
        {"p1": None, "a1": "p1", "c1": "a1", "c2": "c1", "c3": "c2", "p2": "c3", "a2": "p2"},
        "a2",
    ),
    "rewind.jsonl": Expect(
        {"p0": None, "a0": "p0", "p1": "a0", "a1": "p1", "p2": "a0", "a2": "p2"}, "a2"
    ),
    "last-prompt-leaf.jsonl": Expect(
        {"p0": None, "a0": "p0", "p1": "a0", "a1": "p1", "p2": "a0", "a2": "p2"},
        "a1",
        {"last-prompt": 1},
    ),
    "compaction.jsonl": Expect(
        {"p1": None, "a1": "p1", "k1": "a1", "p2": "k1", "a2": "p2"},
        "a2",
        {"system/compact_boundary": 1},
    ),
    "compaction-dangling-logical-parent.jsonl": Expect(
        {"p1": None, "a1": "p1", "k1": "a1", "a2": "k1"},
        "a2",
        {"system/compact_boundary": 1},
        notes=(3,),
    ),
    "subagent-mirrors.jsonl": Expect(
        {
            "p1": None,
            "a1": "p1",
            "s-p1": "a1",
            "s-a1": "s-p1",
            "s-r1": "s-a1",
            "s-a2": "s-r1",
            "r1": "a1",
            "a2": "r1",
        },
        "a2",
    ),
    "queued-prompt.jsonl": Expect(
        {"p1": None, "a1": "p1", "r1": "a1", "q1": "r1", "a2": "q1"}, "a2", {"queue-operation": 3}
    ),
    "image.jsonl": Expect({"p1": None, "a1": "p1"}, "a1"),
    "thinking-signature.jsonl": Expect({"p1": None, "a1": "p1", "a2": "a1"}, "a2"),
    "is-error-result.jsonl": Expect({"p1": None, "a1": "p1", "r1": "a1", "a2": "r1"}, "a2"),
    # hostile: each is a documented tolerance
    "truncated-last-line.jsonl": Expect({"p1": None, "a1": "p1"}, "a1", notes=(3,)),
    "missing-parent.jsonl": Expect(
        {"p1": None, "a1": "p1", "p2": None, "a2": "p2"}, "a2", notes=(3,)
    ),
    "not-json-line.jsonl": Expect({"p1": None, "a1": "p1"}, "a1", notes=(2,)),
    "unknown-record-type.jsonl": Expect(
        {"p1": None, "a1": "p1"}, "a1", {"hologram": 1, "brand-new-thing": 1}, notes=(2, 3)
    ),
    "odd-content.jsonl": Expect(
        {"p1": None, "a2": "p1"},
        "a2",
        {"user line not understood": 1, "assistant line not understood": 1},
        notes=(2, 3),
    ),
}


@pytest.fixture
def imported(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Any]:
    result = cli_json(tmp_path, "import", "claude-code", str(FIXTURES / request.param))["imports"][
        0
    ]
    return tmp_path, result


def test_every_fixture_has_an_expectation() -> None:
    files = {p.name for p in FIXTURES.glob("*.jsonl")} - {"not-a-transcript.jsonl"}
    assert files == set(EXPECT)


@pytest.mark.parametrize("imported", sorted(EXPECT), indirect=True)
def test_each_quirk_imports_to_the_tree_written_by_hand(imported: tuple[Path, Any]) -> None:
    folder, result = imported
    expect = EXPECT[Path(result["source"]).name]
    tree = cli_json(folder, "tree")["entries"]
    assert {e["id"]: e["parentId"] for e in tree} == expect.parents
    assert result["leaf"] == expect.leaf
    assert cli_json(folder, "status")["leaf"] == expect.leaf
    assert {kind: v["count"] for kind, v in result["kept"].items()} == expect.kept
    assert [n["line"] for n in result["notes"]] == list(expect.notes)
    assert cli_json(folder, "fsck")["ok"]
    again = cli_json(folder, "import", "claude-code", result["source"])["imports"][0]
    assert again["new"] == 0


def _context(folder: Path) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = orjson.loads(
        cli(folder, "context", "--format", "anthropic").stdout
    )["messages"]
    return messages


@pytest.mark.parametrize("imported", ["parallel-tool-results.jsonl"], indirect=True)
def test_parallel_calls_are_one_turn_answered_together(imported: tuple[Path, Any]) -> None:
    messages = _context(imported[0])
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert [b["id"] for b in messages[1]["content"]] == ["t1", "t2"]
    assert [(b["tool_use_id"], b["content"]) for b in messages[2]["content"]] == [
        ("t1", "a.txt"),
        ("t2", "3 a.txt"),
    ]


@pytest.mark.parametrize("imported", ["split-reply-interleaved.jsonl"], indirect=True)
def test_a_reply_written_around_its_tool_results_keeps_each_call_answered(
    imported: tuple[Path, Any],
) -> None:
    messages = _context(imported[0])
    shape = [(m["role"], [b["type"] for b in m["content"]]) for m in messages]
    assert shape == [
        ("user", ["text"]),
        ("assistant", ["thinking", "tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
    ]
    assert messages[1]["content"][0] == {
        "type": "thinking",
        "thinking": "Two reads.",
        "signature": "sig-1",
    }


@pytest.mark.parametrize("imported", ["image.jsonl"], indirect=True)
def test_an_image_goes_to_the_model_as_it_came(imported: tuple[Path, Any]) -> None:
    first = _context(imported[0])[0]["content"]
    assert first[0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    assert first[1] == {"type": "text", "text": "What is in this picture?"}


@pytest.mark.parametrize("imported", ["is-error-result.jsonl"], indirect=True)
def test_a_failed_tool_stays_failed(imported: tuple[Path, Any]) -> None:
    result = _context(imported[0])[2]["content"][0]
    assert result["is_error"] is True and "No such file" in result["content"]


@pytest.mark.parametrize("imported", ["compaction.jsonl"], indirect=True)
def test_a_compaction_leaves_the_model_its_summary_and_what_came_after(
    imported: tuple[Path, Any],
) -> None:
    messages = _context(imported[0])
    texts = [b["text"] for m in messages for b in m["content"] if b["type"] == "text"]
    assert texts[0].startswith(COMPACTION_PREFIX + "This session is being continued")
    assert texts[1:] == ["Do step two.", "Step two done."]
    assert not any(t.startswith(BRANCH_SUMMARY_PREFIX) for t in texts)


@pytest.mark.parametrize("imported", ["subagent-mirrors.jsonl"], indirect=True)
def test_a_subagent_is_a_side_branch_the_main_context_never_sees(
    imported: tuple[Path, Any],
) -> None:
    folder, _ = imported
    texts = [str(b.get("text")) for m in _context(folder) for b in m["content"]]
    assert "Find README files" not in texts  # the subagent's prompt
    entry = cli_json(folder, "show", "s-a1")["entry"]
    assert entry["native"] == {"key": "s-a1", "in": "m2", "subagent": "ag1"}
    side = orjson.loads(cli(folder, "context", "s-a2", "--format", "anthropic").stdout)
    assert side["messages"][-1]["content"] == [{"type": "text", "text": "Found README.md."}]


def test_a_subagent_file_beside_the_session_is_imported_with_it(tmp_path: Path) -> None:
    main = FIXTURES / "subagent-file" / "main.jsonl"
    results = cli_json(tmp_path, "import", "claude-code", str(main))["imports"]
    assert [Path(r["source"]).name for r in results] == ["main.jsonl", "agent-ag1.jsonl"]
    assert [r["new"] for r in results] == [4, 4]
    tree = {e["id"]: e["parentId"] for e in cli_json(tmp_path, "tree")["entries"]}
    assert tree == EXPECT["subagent-mirrors.jsonl"].parents
    assert results[1]["leaf"] == "a2"  # the subagent's file does not move the leaf


def test_a_file_no_claude_session_wrote_is_refused_plainly(tmp_path: Path) -> None:
    result = cli(
        tmp_path, "import", "claude-code", str(FIXTURES / "not-a-transcript.jsonl"), code=1
    )
    assert result.output.startswith("convgit: not-a-transcript.jsonl is not a Claude Code")
    assert not (tmp_path / ".convgit").exists()


def test_a_missing_file_and_an_unknown_agent_are_refused_plainly(tmp_path: Path) -> None:
    missing = cli(tmp_path, "import", "claude-code", str(tmp_path / "nope.jsonl"), code=1)
    assert missing.output.startswith("convgit: There is no Claude Code transcript file nope.jsonl")
    unknown = cli(tmp_path, "import", "cursor", str(FIXTURES / "rewind.jsonl"), code=2)
    assert "There is no importer for 'cursor'" in unknown.output


def test_long_ids_are_listed_by_a_prefix_that_names_them_alone(tmp_path: Path) -> None:
    from convgit import Session

    session = Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)
    uuid = "2b6fd122-5bd8-4e0f-9a40-63a8e36b5a11"
    ids = [uuid, uuid + "_2", "2b6fd1ff-0000-4000-8000-000000000000", "abc12345"]
    parent = None
    for ident in ids:
        session.append.entry(
            {"type": "message", "id": ident, "parentId": parent, "role": "user"}
            | {"content": ident}
        )
        parent = ident
    view = session.view()
    shown = {ident: view.short_id(ident) for ident in ids}
    assert shown == {
        uuid: uuid,  # all of it is a prefix of the next
        uuid + "_2": uuid + "_",
        "2b6fd1ff-0000-4000-8000-000000000000": "2b6fd1ff",
        "abc12345": "abc12345",
    }
    assert all(session.conversation.resolve(prefix) == ident for ident, prefix in shown.items())


def test_a_subagent_both_mirrored_and_in_its_own_file_is_one_side_branch(tmp_path: Path) -> None:
    """The mirrors came first (they are in the main file): the subagent's own file adds no
    entry, keeps its lines beside the mirrored ones and the one line no mirror carried."""
    main = FIXTURES / "subagent-mirrors-and-file" / "main.jsonl"
    results = cli_json(tmp_path, "import", "claude-code", str(main))["imports"]
    assert [(r["new"], r["notes"]) for r in results] == [(8, []), (0, [])]
    assert {k: v["count"] for k, v in results[1]["kept"].items()} == {
        "subagent line its mirrors did not carry": 1
    }
    tree = {e["id"]: e["parentId"] for e in cli_json(tmp_path, "tree")["entries"]}
    assert tree == EXPECT["subagent-mirrors.jsonl"].parents
    (session,) = (tmp_path / ".convgit" / "sessions").glob("*[0-9a-f].jsonl")
    lines = [orjson.loads(line) for line in session.read_bytes().splitlines()]
    kept = {r["key"].split("@")[0] for r in lines if r["type"] == "native" and "@" in r["key"]}
    assert kept == {"s-p1", "s-a1", "s-r1", "s-a2"}  # the file's own text of each, beside
    again = cli_json(tmp_path, "import", "claude-code", str(main))["imports"]
    assert [r["new"] for r in again] == [0, 0]


@pytest.mark.parametrize("imported", ["queued-prompt.jsonl"], indirect=True)
def test_a_message_typed_while_a_tool_ran_is_a_user_message_of_the_turn(
    imported: tuple[Path, Any],
) -> None:
    messages = _context(imported[0])
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2]["content"][0]["type"] == "tool_result"
    assert messages[2]["content"][1] == {"type": "text", "text": "Also, thank you"}


def test_a_subagent_file_read_before_its_call_has_a_result_hangs_below_the_call(
    tmp_path: Path,
) -> None:
    """Live, SubagentStop imports the subagent's file before Claude writes the call's result
    (which names the subagent): the call is found by its prompt."""
    import shutil

    source = FIXTURES / "subagent-file"
    copy = tmp_path / "claude"
    shutil.copytree(source, copy)
    lines = (source / "main.jsonl").read_bytes().splitlines(keepends=True)
    main = copy / "main.jsonl"
    main.write_bytes(b"".join(lines[:2]))  # the Task call, no result yet
    first = cli_json(tmp_path, "import", "claude-code", str(main))["imports"]
    assert [r["new"] for r in first] == [2, 4] and first[1]["notes"] == []
    main.write_bytes(b"".join(lines))
    second = cli_json(tmp_path, "import", "claude-code", str(main))["imports"]
    assert [r["new"] for r in second] == [2, 0]
    tree = {e["id"]: e["parentId"] for e in cli_json(tmp_path, "tree")["entries"]}
    assert tree == EXPECT["subagent-mirrors.jsonl"].parents
