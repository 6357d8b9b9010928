"""Codex rollouts import through the CLI as a line of what the model saw: each prompt once
(never the instructions Codex injects), each reply, reasoning and tool run once (never their
event_msg mirrors), calls paired with their outputs by call_id, a compaction where Codex
compacted, a subagent as a fork of its parent; a file cut mid-turn imports up to the cut and
the rest arrives with the next import, exactly as one import of the whole file would have it."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from convgit.agents.codex import reading as codex
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
    sound_tree,
    texts,
    thinking,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "codex"
INSTRUCTIONS = f"custom {codex.INSTRUCTIONS}"


@dataclass(frozen=True)
class Shape:
    """What reading the rollout by hand says, by line number."""

    kinds: dict[str, int]
    prompts: tuple[int, ...]  # lines of the user's own messages
    instructions: tuple[int, ...]  # lines of injected context (user or developer role)
    leaf: int
    unanswered: int = 0
    forked: bool = False  # a subagent: its parent is not imported in this test


# the 0.121 rollout's prompts: each line followed by its user_message mirror
PROMPTS_0121 = (
    6, 157, 183, 218, 423, 514, 540, 566, 576, 611, 621, 643, 653, 710, 719, 821, 830, 897
)  # fmt: skip
SHAPES = {
    # redacted: no text tells prompt from context; only line 9 has its user_message mirror.
    # The file stops on an exec_command call with no output and no task_complete.
    "codex-0.104.0-alpha.1_desktop_truncated-mid-turn.jsonl": Shape(
        {INSTRUCTIONS: 7, "user": 1, "model": 1, "thinking": 1, "assistant": 3},
        prompts=(9,),
        instructions=(2, 3, 4, 5, 6, 7, 11),
        leaf=18,
        unanswered=1,
    ),
    # 18 turns, one interrupted (line 536 is Codex's <turn_aborted> notice); 144 function
    # calls and 19 apply_patch calls, all answered; 4 web searches; 82 reasoning items
    "codex-0.121.0_cli_multi-turn_web-search_turn-aborted.jsonl": Shape(
        {INSTRUCTIONS: 3, "user": 18, "model": 1, "thinking": 1, "assistant": 325, "tool": 163},
        prompts=PROMPTS_0121,
        instructions=(3, 4, 536),
        leaf=918,
    ),
    # a subagent's thread: permissions and AGENTS.md, the task, one command, the verdict
    "codex-0.142.0-alpha.1_subagent-child-A_parent_thread_id.jsonl": Shape(
        {INSTRUCTIONS: 2, "user": 1, "model": 1, "thinking": 1, "assistant": 3, "tool": 1},
        prompts=(6,),
        instructions=(3, 4),
        leaf=13,
        forked=True,
    ),
}


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def _by_line(entries: list[dict[str, Any]], path: Path) -> dict[int, dict[str, Any]]:
    """The entry made from each line (its kept text is the line's)."""
    lines = {line: n for n, line in enumerate(path.read_bytes().splitlines(), 1)}
    return {lines[native(e)]: e for e in entries if native(e) in lines}  # type: ignore[index]


def _message_texts(record: dict[str, Any]) -> list[str]:
    return [p["text"] for p in record["payload"]["content"] if "text" in p]


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_rollout_imports_once_as_the_model_saw_it(
    samples: Path, tmp_path: Path, name: str
) -> None:
    path = samples / "codex" / name
    shape = SHAPES[name]
    store = Store(tmp_path / "store")
    result = store.import_("codex", path)
    assert result["new"] == result["entries"] == sum(shape.kinds.values())
    assert result["kept"] == {}
    assert ["forked from" in n["what"] for n in result["notes"]] == [True] * shape.forked
    entries = store.entries(result["session"])
    sound_tree(entries)
    store.fsck_clean(result["session"])
    assert counts(entries) == shape.kinds
    assert forks(entries) == {}  # a rollout is a line
    by_line = _by_line(entries, path)
    assert {n for n, e in by_line.items() if role(e) == "user"} == set(shape.prompts)
    assert {n for n, e in by_line.items() if role(e) == INSTRUCTIONS} == set(shape.instructions)
    assert result["leaf"] == by_line[shape.leaf]["id"]
    records = _records(path)
    prompts = {t for n in shape.prompts for t in _message_texts(records[n - 1])}
    assert prompts == {t for e in entries if role(e) == "user" for t in texts(e)}
    replies = [
        t
        for r in records
        if r["type"] == "response_item" and r["payload"].get("role") == "assistant"
        for t in _message_texts(r)
    ]
    assert replies == [t for e in entries if role(e) == "assistant" for t in texts(e)]
    # every record is kept, exactly once: as an entry or beside one
    session_file = tmp_path / "store" / ".convgit" / "sessions" / f"{result['session']}.jsonl"
    kept = [json.loads(x) for x in session_file.read_bytes().splitlines()[1:]]
    texts_kept = [r["text"] for r in kept if r["type"] == "native"]
    texts_kept += [r["native"]["text"] for r in kept if "native" in r and "text" in r["native"]]
    assert sorted(texts_kept) == sorted(path.read_text().splitlines())
    for fmt, sound in (("openai", openai_sound), ("anthropic", anthropic_sound)):
        sound(store.context(result["session"], fmt))
    assert placeholders(store.context(result["session"], "openai")) == shape.unanswered
    assert store.import_("codex", path)["new"] == 0


def test_a_subagent_is_a_fork_of_its_parent_at_the_spawn_that_names_it(
    samples: Path, tmp_path: Path
) -> None:
    store = Store(tmp_path / "store")
    parent = FIXTURES / "subagent-parent.jsonl"
    source = store.import_("codex", parent)
    child = store.import_("codex", samples / "codex" / SHAPES_CHILD)
    assert child["notes"] == []
    spawned = _by_line(store.entries(source["session"]), parent)[7]  # spawn_agent's output
    assert _header(tmp_path, child["session"])["forkedFrom"] == {
        "session": source["session"], "entry": spawned["id"]
    }  # fmt: skip


SHAPES_CHILD = "codex-0.142.0-alpha.1_subagent-child-A_parent_thread_id.jsonl"


def test_a_subagent_imported_before_its_parent_says_so(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    child = store.import_("codex", FIXTURES / "subagent-child.jsonl")
    assert ["forked from" in n["what"] for n in child["notes"]] == [True]
    assert "forkedFrom" not in _header(tmp_path, child["session"])
    parent = store.import_("codex", FIXTURES / "subagent-child-parent.jsonl")
    other = Store(tmp_path / "other", real=False)
    other.import_("codex", FIXTURES / "subagent-child-parent.jsonl")
    linked = other.import_("codex", FIXTURES / "subagent-child.jsonl")
    assert parent["notes"] == [] and linked["notes"] == []
    assert _header(tmp_path, linked["session"], "other")["forkedFrom"]["entry"] == next(
        e["id"] for e in other.entries(_sid(other, "019ede30-0000-7000-8000-0000000000c0"))
        if e.get("toolCallId") == "call_K"
    )  # fmt: skip


def _sid(store: Store, agent_session: str) -> str:
    return str(next(s["id"] for s in store.sessions() if s["agent_session_id"] == agent_session))


def _header(tmp_path: Path, session: str, store: str = "store") -> dict[str, Any]:
    path = tmp_path / store / ".convgit" / "sessions" / f"{session}.jsonl"
    found: dict[str, Any] = json.loads(path.read_text().splitlines()[0])
    return found


# -- quirks, one fixture each ------------------------------------------------------------


def _batch(name: str) -> list[dict[str, Any]]:
    batch = codex.parse((FIXTURES / name).read_bytes(), Cursor(), Known())
    return [r for r in batch.records if "parentId" in r]


def test_injected_instructions_are_kept_in_order_but_are_not_prompts() -> None:
    entries = _batch("injected-instructions.jsonl")
    assert [role(e) for e in entries] == [
        INSTRUCTIONS, INSTRUCTIONS, INSTRUCTIONS, "model", "thinking", "user", "assistant"
    ]  # fmt: skip
    assert [e["data"]["role"] for e in entries[:3]] == ["developer", "user", "user"]
    assert texts(entries[5]) == ["What does make test run?"]


def test_parallel_calls_are_one_reply_and_their_outputs_pair_by_call_id(tmp_path: Path) -> None:
    entries = _batch("parallel-function-calls.jsonl")
    assert [role(e) for e in entries][3:] == ["assistant"] * 3 + ["tool", "tool", "assistant"]
    calls = [p["id"] for e in entries[4:6] for p in e["content"]]
    assert calls == ["call_A", "call_B"]
    assert [e["toolCallId"] for e in entries if role(e) == "tool"] == ["call_B", "call_A"]
    assert entries[4]["content"][0]["input"] == {"cmd": "git branch --show-current"}
    store = Store(tmp_path / "store", real=False)
    sid = store.import_("codex", FIXTURES / "parallel-function-calls.jsonl")["session"]
    request = store.context(sid, "openai")
    openai_sound(request)
    reply = request["messages"][1]
    assert [c["id"] for c in reply["tool_calls"]] == ["call_A", "call_B"]
    assert placeholders(request) == 0


def test_an_apply_patch_call_is_a_tool_call_with_its_patch() -> None:
    entries = _batch("custom-tool-call-apply-patch.jsonl")
    (call,) = [p for e in entries if role(e) == "assistant" for p in e["content"]
               if p["type"] == "tool_call"]  # fmt: skip
    assert call["name"] == "apply_patch" and call["input"]["input"].startswith("*** Begin Patch")
    (result,) = [e for e in entries if role(e) == "tool"]
    assert result["toolCallId"] == "call_P" and "Success." in texts(result)[0]


def test_reasoning_is_kept_once_with_its_summary() -> None:
    entries = _batch("reasoning-summary.jsonl")
    assert [t for e in entries for t in thinking(e)] == ["**Checking small factors**"]


def test_a_web_search_is_part_of_the_reply_and_asks_for_no_result(tmp_path: Path) -> None:
    entries = _batch("web-search-call.jsonl")
    search = entries[3]["content"][0]
    assert search["type"] == "web_search"
    assert search["action"]["query"] == "actions/setup-go latest release"
    store = Store(tmp_path / "store", real=False)
    sid = store.import_("codex", FIXTURES / "web-search-call.jsonl")["session"]
    assert placeholders(store.context(sid, "openai")) == 0


def test_an_interrupted_turn_leaves_its_call_unanswered_and_keeps_the_notice(
    tmp_path: Path,
) -> None:
    entries = _batch("turn-aborted.jsonl")
    assert [role(e) for e in entries][2:] == [
        "user",
        "assistant",
        INSTRUCTIONS,
        "user",
        "assistant",
    ]
    store = Store(tmp_path / "store", real=False)
    sid = store.import_("codex", FIXTURES / "turn-aborted.jsonl")["session"]
    request = store.context(sid, "anthropic")
    anthropic_sound(request)
    assert placeholders(store.context(sid, "openai")) == 1


def test_a_compaction_replaces_what_came_before_with_codexs_replacement_history(
    tmp_path: Path,
) -> None:
    entries = _batch("compacted-replacement-history.jsonl")
    compaction = next(e for e in entries if e["type"] == "compaction")
    assert compaction["firstKeptId"] is None and compaction["summary"] == codex.ENCRYPTED_SUMMARY
    store = Store(tmp_path / "store", real=False)
    sid = store.import_("codex", FIXTURES / "compacted-replacement-history.jsonl")["session"]
    said = [(m["role"], m["content"]) for m in store.context(sid, "openai")["messages"]]
    assert said[1:] == [
        ("user", "Explain the parser."),  # what replacement_history kept
        ("user", "And the lexer?"),
        ("assistant", "The lexer is table driven."),
    ]
    assert codex.ENCRYPTED_SUMMARY in said[0][1]


def test_an_old_compaction_with_only_a_message_is_a_compaction_with_that_summary() -> None:
    entries = _batch("compacted-message-only.jsonl")
    (compaction,) = [e for e in entries if e["type"] == "compaction"]
    assert compaction["summary"] == "The user asked about the parser: recursive descent."


def test_a_rollout_cut_mid_turn_imports_up_to_the_cut() -> None:
    entries = _batch("cut-mid-turn.jsonl")
    assert texts(entries[-2]) == ["Running make."]
    assert entries[-1]["content"][0]["id"] == "call_M"
    batch = codex.parse((FIXTURES / "torn-last-line.jsonl").read_bytes(), Cursor(), Known())
    assert [r["id"] for r in batch.records if "parentId" in r] == [e["id"] for e in entries]
    assert [line for line, _ in batch.report.notes] == [9]


def test_a_prompt_typed_while_a_command_ran_stays_where_codex_recorded_it() -> None:
    entries = _batch("user-message-during-turn.jsonl")
    assert [role(e) for e in entries] == ["user", "assistant", "user", "tool", "assistant"]


def test_one_call_id_used_twice_pairs_each_output_with_the_call_before_it(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "store", real=False)
    sid = store.import_("codex", FIXTURES / "repeated-call-id.jsonl")["session"]
    request = store.context(sid, "openai")
    openai_sound(request)
    assert [m["content"] for m in request["messages"] if m["role"] == "tool"] == [
        "a.py", ".git a.py"
    ]  # fmt: skip


def test_unknown_records_are_kept_and_reported(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    result = store.import_("codex", FIXTURES / "unknown-record-types.jsonl")
    assert result["kept"] == {
        "world_state": {"count": 1, "lines": [5]},
        "response item image_generation_call": {"count": 1, "lines": [6]},
    }
    # world_state is what Codex 0.171 writes beside every turn: counted, not called unknown
    assert result["notes"] == []
    store.fsck_clean(result["session"])


# -- hostile files ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["bad-not-json-line.jsonl", "bad-record-not-an-object.jsonl", "output-without-call.jsonl"],
)
def test_a_line_that_is_no_record_or_an_output_without_call_is_tolerated(
    tmp_path: Path, name: str
) -> None:
    store = Store(tmp_path / "store", real=False)
    result = store.import_("codex", FIXTURES / name)
    if name.startswith("bad-"):
        assert [n["line"] for n in result["notes"]] == [3]
    report = store.json("-s", result["session"], "fsck")
    assert report["ok"]
    openai_sound(store.context(result["session"], "openai"))


def test_a_line_written_twice_is_imported_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    result = store.import_("codex", FIXTURES / "bad-repeated-line.jsonl")
    assert [n["line"] for n in result["notes"]] == [11]
    assert result["new"] == len(_batch("parallel-function-calls.jsonl"))
    assert placeholders(store.context(result["session"], "openai")) == 0


def test_a_file_that_is_no_rollout_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    words = store.refused("codex", FIXTURES / "bad-no-session-meta.jsonl")
    assert "is not a Codex session file" in words
    assert store.sessions() == []


# -- a rollout that grows ------------------------------------------------------------------


@pytest.mark.parametrize("cut", [6, 7, 13, 20, 536, 700])
def test_a_rollout_read_as_it_grows_ends_as_one_import_of_the_whole(
    samples: Path, tmp_path: Path, cut: int
) -> None:
    """Imported cut after line `cut` plus half of the next (before a prompt's mirror, between
    parallel calls, at an interrupted turn...), then whole."""
    path = samples / "codex" / "codex-0.121.0_cli_multi-turn_web-search_turn-aborted.jsonl"
    data = path.read_bytes()
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    growing = tmp_path / "rollout.jsonl"
    growing.write_bytes(data[: ends[cut - 1] + (ends[cut] - ends[cut - 1]) // 2])
    store = Store(tmp_path / "store", real=False)
    first = store.import_("codex", growing)
    assert [n["line"] for n in first["notes"]] == [cut + 1]
    shutil.copyfile(path, growing)
    second = store.import_("codex", growing)
    assert first["new"] + second["new"] == 511 and second["notes"] == []
    once = Store(tmp_path / "once", real=False)
    whole = once.import_("codex", path)
    assert [(e["id"], e["parentId"], role(e)) for e in store.entries(second["session"])] == [
        (e["id"], e["parentId"], role(e)) for e in once.entries(whole["session"])
    ]
    assert second["leaf"] == whole["leaf"]
