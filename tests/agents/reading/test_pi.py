"""pi's session files import through the CLI into pi's own tree: the same ids and parents (v1:
ids from the place in the file), the leaf pi continues from, every prompt and reply, replays a
provider accepts; a second import adds nothing, a grown file adds only what is new; each quirk
of the format has its outcome, and a hostile file gets one sentence, never a wrong tree."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from convgit.agents.pi import reading as pi
from convgit.agents.reading import Cursor, Known
from tests.agents.reading.agentfiles import (
    Store,
    anthropic_sound,
    counts,
    forks,
    native,
    openai_sound,
    placeholders,
    role,
    roots,
    sound_tree,
    texts,
    thinking,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "pi"


@dataclass(frozen=True)
class Shape:
    """What reading the file by hand says."""

    entries: int
    kinds: dict[str, int]
    root: str  # id, or the line number (as "line N") of a v1 entry
    leaf: str
    forks: dict[str, set[str]] = field(default_factory=dict)
    unanswered: int = 0  # tool calls the file never answers
    forked: bool = False  # its header names a parent session (not imported in this test)


SHAPES = {
    # pi's own large v1 fixture: no ids, a line; aborted replies leave 18 calls unanswered
    "pi-v1_large-session_test-fixture.jsonl": Shape(
        1018,
        {"user": 88, "assistant": 453, "tool": 373, "thinking": 103, "model": 1},
        root="line 2",
        leaf="line 1019",
        unanswered=18,
    ),
    # the SDK branched at the model_change: two children; the summary hangs below the reply
    # it summarises, and the file ends on a user message (pi continues from it)
    "pi-v3_sdk_branch_branch-summary.jsonl": Shape(
        8,
        {"model": 1, "thinking": 1, "user": 3, "assistant": 2, "branch_summary": 1},
        root="f9d38510",
        leaf="171ec88c",
        forks={"f9d38510": {"0aff3a90", "7ec4b92d"}},
    ),
    "pi-v3_sdk_fork-child_parentSession.jsonl": Shape(
        6,
        {"model": 1, "thinking": 1, "user": 2, "assistant": 2},
        "3e4d045f",
        "26c77b30",
        forked=True,
    ),
    "pi-v3_sdk_fork-parent.jsonl": Shape(
        6, {"model": 1, "thinking": 1, "user": 2, "assistant": 2}, "6ef220bb", "85074be6"
    ),
    "pi-v3_windows_small_chat.jsonl": Shape(
        12, {"model": 1, "thinking": 1, "user": 5, "assistant": 5}, "f069dfc0", "5727a723"
    ),
}


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _id(entries: list[dict[str, Any]], path: Path, named: str) -> str:
    """An id as SHAPES names it: itself, or the entry made from a line of a v1 file."""
    if not named.startswith("line "):
        return named
    line = _lines(path)[int(named.split()[1]) - 1]
    return next(e["id"] for e in entries if native(e) == line)


def _said(path: Path) -> list[str]:
    """Every text block of the file's user and assistant messages, read plainly."""
    found = []
    for line in _lines(path)[1:]:
        record = json.loads(line)
        message = record.get("message") or {}
        if record["type"] == "message" and message.get("role") in ("user", "assistant"):
            content = message["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            found += [b["text"] for b in blocks if b["type"] == "text"]
    return found


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_sample_imports_as_the_tree_pi_wrote(samples: Path, tmp_path: Path, name: str) -> None:
    path = samples / "pi" / name
    shape = SHAPES[name]
    store = Store(tmp_path / "store")
    result = store.import_(pi.IMPORTER.agent, path)
    assert result["new"] == result["entries"] == shape.entries
    assert result["kept"] == {}
    assert ["forked from" in n["what"] for n in result["notes"]] == [True] * shape.forked
    entries = store.entries(result["session"])
    sound_tree(entries)
    store.fsck_clean(result["session"])
    assert counts(entries) == shape.kinds
    assert roots(entries) == {_id(entries, path, shape.root)}
    assert result["leaf"] == _id(entries, path, shape.leaf)
    assert forks(entries) == shape.forks
    # every record is one entry and keeps its exact bytes
    assert sorted(native(e) for e in entries) == sorted(_lines(path)[1:])
    if "v1" not in name:
        assert [e["id"] for e in entries] == [json.loads(x)["id"] for x in _lines(path)[1:]]
        assert [e["parentId"] for e in entries] == [
            json.loads(x)["parentId"] for x in _lines(path)[1:]
        ]
    shown = {t for e in entries if e["type"] == "message" for t in texts(e)}
    assert set(_said(path)) <= shown
    for fmt, sound in (("openai", openai_sound), ("anthropic", anthropic_sound)):
        request = store.context(result["session"], fmt)
        sound(request)
    assert placeholders(store.context(result["session"], "openai")) == shape.unanswered
    again = store.import_("pi", path)
    assert again["new"] == 0 and again["session"] == result["session"]


def test_a_fork_records_where_it_was_forked_from(samples: Path, tmp_path: Path) -> None:
    """The child's parentSession names the parent's file on another machine; the folder was
    copied here with the files' own names, so the child is found to be its fork, at the
    parent's last entry written before the child began (the SDK started a fresh chain)."""
    folder = tmp_path / "sessions" / "parent-demo"
    folder.mkdir(parents=True)
    parent = folder / "parent.jsonl"
    child = folder / "2026-03-25T14-55-30-705Z_a4164bfd-05d9-449a-b20b-ff8955e916de.jsonl"
    shutil.copyfile(samples / "pi" / "pi-v3_sdk_fork-parent.jsonl", parent)
    shutil.copyfile(samples / "pi" / "pi-v3_sdk_fork-child_parentSession.jsonl", child)
    store = Store(tmp_path / "store")
    source = store.import_("pi", parent)["session"]
    imported = store.import_("pi", child)
    assert imported["notes"] == []
    (row,) = [s for s in store.sessions() if s["id"] == imported["session"]]
    header = json.loads(
        (tmp_path / "store" / ".convgit" / "sessions")
        .joinpath(f"{imported['session']}.jsonl")
        .read_text()
        .splitlines()[0]
    )
    assert header["forkedFrom"] == {"session": source, "entry": "85074be6"}
    assert row["agent_session_id"] == "a4164bfd-05d9-449a-b20b-ff8955e916de"


def test_a_fork_that_copies_its_source_forks_at_the_last_entry_they_share(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "store", real=False)
    source = store.import_("pi", FIXTURES / "v3-fork-source.jsonl")["session"]
    copy = store.import_("pi", FIXTURES / "v3-fork-copy.jsonl")
    header = _header(tmp_path / "store", copy["session"])
    assert header["forkedFrom"] == {"session": source, "entry": "a0000002"}
    # the copy is a session of its own: the shared ids do not clash
    assert [e["id"] for e in store.log(copy["session"])] == [
        "a0000001", "a0000002", "b0000001", "b0000002"
    ]  # fmt: skip


def test_a_fork_whose_source_is_not_imported_says_so(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    imported = store.import_("pi", FIXTURES / "v1-branched-from.jsonl")
    (note,) = imported["notes"]
    assert "forked from" in note["what"] and "import that first" in note["what"]
    assert "forkedFrom" not in _header(tmp_path / "store", imported["session"])


def _header(store: Path, session: str) -> dict[str, Any]:
    path = store / ".convgit" / "sessions" / f"{session}.jsonl"
    found: dict[str, Any] = json.loads(path.read_text().splitlines()[0])
    return found


# -- quirks, one fixture each (the importer's answer, without the CLI) -----------------------


def _batch(name: str) -> tuple[list[dict[str, Any]], Any]:
    batch = pi.parse((FIXTURES / name).read_bytes(), Cursor(), Known())
    return [r for r in batch.records if "parentId" in r], batch


def test_v1_compaction_index_counts_the_header_as_zero() -> None:
    entries, _ = _batch("v1-compaction-index.jsonl")
    (compaction,) = [e for e in entries if e["type"] == "compaction"]
    kept = next(e for e in entries if e["id"] == compaction["firstKeptId"])
    assert texts(kept) == ["Now rename b.py to c.py."]  # record 3: header 0, then 1, 2, 3
    assert [e["parentId"] for e in entries[1:]] == [e["id"] for e in entries[:-1]]


def test_v1_compaction_that_points_at_itself_keeps_nothing() -> None:
    entries, batch = _batch("v1-compaction-keeps-nothing.jsonl")
    (compaction,) = [e for e in entries if e["type"] == "compaction"]
    assert compaction["firstKeptId"] is None
    assert [line for line, _ in batch.report.notes] == [4]


def test_v2_hook_message_is_a_user_message_in_the_context() -> None:
    entries, _ = _batch("v2-hook-message.jsonl")
    assert [role(e) for e in entries] == ["user", "user", "assistant"]
    assert texts(entries[1]) == ["The linter found 2 warnings in src/app.ts."]


def test_tool_calls_pair_with_their_results_and_thinking_keeps_its_signature() -> None:
    entries, _ = _batch("v3-tool-calls-and-thinking.jsonl")
    reply = entries[3]
    assert [p["type"] for p in reply["content"]] == ["thinking", "text", "tool_call", "tool_call"]
    assert reply["content"][0]["signature"] == "c2lnbmF0dXJl"  # an Anthropic reply's
    assert reply["content"][2] == {
        "type": "tool_call", "id": "toolu_01", "name": "read", "input": {"path": "a.txt"}
    }  # fmt: skip
    results = [e for e in entries if role(e) == "tool"]
    assert [(e["toolCallId"], e["isError"]) for e in results] == [
        ("toolu_01", False), ("toolu_02", True)
    ]  # fmt: skip
    assert [e["type"] for e in entries[:2]] == ["model", "thinking"]
    assert entries[1]["level"] == "medium"


def test_compaction_keeps_from_the_entry_pi_names() -> None:
    entries, _ = _batch("v3-compaction.jsonl")
    (compaction,) = [e for e in entries if e["type"] == "compaction"]
    assert compaction["firstKeptId"] == "20000003"


def test_labels_and_session_info_stay_nodes_and_become_convgits_label_and_name() -> None:
    entries, batch = _batch("v3-label-and-session-info.jsonl")
    assert [role(e) for e in entries][2:] == [
        "custom pi.label", "custom pi.session_info", "custom pi.label", "custom pi.label"
    ]  # fmt: skip
    meta = [(r["type"], r.get("target"), r.get("label", r.get("name"))) for r in batch.records
            if r["type"] in ("label", "name")]  # fmt: skip
    assert meta == [
        ("label", "30000001", "before refactor"),
        ("name", None, "Refactor the parser"),
        ("label", "30000002", "started"),
        ("label", "30000002", None),  # pi's label without a name clears it
    ]
    assert batch.leaf == "30000006"  # pi continues below the last entry, a label


def test_label_and_name_through_the_cli(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    sid = store.import_("pi", FIXTURES / "v3-label-and-session-info.jsonl")["session"]
    assert [e["id"] for e in store.log(sid, "before refactor")] == ["30000001"]
    (row,) = store.sessions()
    assert row["name"] == "Refactor the parser"
    store.run("-s", sid, "show", "started", code=1)  # cleared


def test_custom_state_is_kept_and_a_custom_message_is_replayed(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    sid = store.import_("pi", FIXTURES / "v3-custom-and-custom-message.jsonl")["session"]
    entries = store.entries(sid)
    assert entries[1]["kind"] == "todo-extension" and entries[1]["data"]["todos"]
    said = [m["content"] for m in store.context(sid, "openai")["messages"]]
    assert said == ["Plan the migration.", "Plan mode is on: do not edit files.",
                    "Step 1: back up the database."]  # fmt: skip


def test_two_objects_on_one_line_are_two_entries_with_their_own_bytes() -> None:
    entries, _ = _batch("v3-two-objects-one-line.jsonl")
    assert [e["id"] for e in entries] == ["50000001", "50000002", "50000003", "50000004"]
    line = _lines(FIXTURES / "v3-two-objects-one-line.jsonl")[2]
    assert native(entries[1]) + native(entries[2]) == line  # type: ignore[operator]


def test_a_second_root_and_a_leaf_on_an_earlier_branch_are_where_pi_puts_them() -> None:
    entries, batch = _batch("v3-second-root.jsonl")
    assert roots(entries) == {"60000001", "60000003"} and batch.leaf == "60000004"
    entries, batch = _batch("v3-leaf-on-earlier-branch.jsonl")
    assert forks(entries) == {"70000002": {"70000003", "70000005"}}
    assert batch.leaf == "70000008"
    assert next(e for e in entries if e["type"] == "branch_summary")["fromId"] == "70000004"


def test_branch_summary_from_root_is_kept_as_pi_wrote_it() -> None:
    entries, _ = _batch("v3-branch-summary-from-root.jsonl")
    summary = next(e for e in entries if e["type"] == "branch_summary")
    assert summary["fromId"] == "root" and summary["parentId"] is None


def test_bash_execution_is_the_text_pi_sends_and_an_image_is_kept() -> None:
    entries, _ = _batch("v3-bash-execution-and-image.jsonl")
    assert texts(entries[0]) == ["Ran `ls`\n```\na.txt\nlogo.png\n\n```"]
    assert entries[1]["content"][1] == {
        "type": "image", "source": {"type": "base64", "media_type": "image/png",
                                    "data": "iVBORw0KGgo="}
    }  # fmt: skip
    assert thinking(entries[2]) == []


# -- hostile files -------------------------------------------------------------------------


TOLERATED = {
    # file: (entries imported, lines the report names)
    "bad-truncated-last-line.jsonl": (2, [4]),
    "bad-repeated-line.jsonl": (3, [4]),
    "bad-missing-parent.jsonl": (3, [3]),
    "bad-not-json-line.jsonl": (2, [3]),
    "bad-entry-without-id.jsonl": (1, [2, 3]),
}
REFUSED = {
    "bad-duplicate-id.jsonl": "Line 4 of this pi session uses the id c0000002 of line 3",
    "bad-unknown-version.jsonl": "version 4; convgit reads versions 1 to 3",
    "bad-wrong-version-type.jsonl": "version '3'",
    "bad-no-header.jsonl": "bad-no-header.jsonl is not a pi session file",
    "bad-header-without-id.jsonl": "bad-header-without-id.jsonl is not a pi session file",
    "bad-empty-file.jsonl": "bad-empty-file.jsonl is not a pi session file",
}


@pytest.mark.parametrize("name", sorted(TOLERATED))
def test_a_tolerated_defect_imports_the_rest_and_says_what_it_did(
    tmp_path: Path, name: str
) -> None:
    store = Store(tmp_path / "store", real=False)
    result = store.import_("pi", FIXTURES / name)
    imported, lines = TOLERATED[name]
    assert result["new"] == imported
    assert [n["line"] for n in result["notes"]] == lines
    report = store.json("-s", result["session"], "fsck")
    assert report["ok"], report
    openai_sound(store.context(result["session"], "openai"))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_file_that_cannot_be_read_is_refused_in_one_sentence(tmp_path: Path, name: str) -> None:
    store = Store(tmp_path / "store", real=False)
    assert REFUSED[name] in store.refused("pi", FIXTURES / name)
    assert store.sessions() == [] or all(s["entries"] == 0 for s in store.sessions())


def test_the_torn_line_is_imported_when_pi_has_finished_it(tmp_path: Path) -> None:
    torn = FIXTURES / "bad-truncated-last-line.jsonl"
    growing = tmp_path / "session.jsonl"
    shutil.copyfile(torn, growing)
    store = Store(tmp_path / "store", real=False)
    first = store.import_("pi", growing)
    whole = torn.read_bytes().rsplit(b"\n", 1)[0] + b"\n" + _finished_third_line()
    growing.write_bytes(whole)
    second = store.import_("pi", growing)
    assert (first["new"], second["new"], second["entries"]) == (2, 1, 3)
    assert second["notes"] == [] and second["leaf"] == "c0000003"


def _finished_third_line() -> bytes:
    return _lines(FIXTURES / "bad-missing-parent.jsonl")[3] + b"\n"


# -- a file that grows --------------------------------------------------------------------


@pytest.mark.parametrize("cut", [3, 6, 8])
def test_a_grown_file_adds_only_what_is_new_and_ends_as_one_import_would(
    samples: Path, tmp_path: Path, cut: int
) -> None:
    """Imported as pi wrote it, a line at a time (and cut mid-line), then whole: the same
    tree, the same leaf, as importing the whole file once."""
    path = samples / "pi" / "pi-v3_sdk_branch_branch-summary.jsonl"
    data = path.read_bytes()
    growing = tmp_path / "growing.jsonl"
    store = Store(tmp_path / "store", real=False)
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    growing.write_bytes(data[: ends[cut - 1] + 25])  # line `cut`, and a piece of the next
    first = store.import_("pi", growing)
    assert first["new"] == cut - 1 and [n["line"] for n in first["notes"]] == [cut + 1]
    growing.write_bytes(data)
    second = store.import_("pi", growing)
    assert first["new"] + second["new"] == 8 and second["leaf"] == "171ec88c"
    once = Store(tmp_path / "once", real=False)
    whole = once.import_("pi", path)
    pairs = [(e["id"], e["parentId"]) for e in store.entries(second["session"])]
    assert pairs == [(e["id"], e["parentId"]) for e in once.entries(whole["session"])]
