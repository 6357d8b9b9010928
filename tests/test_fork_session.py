"""`fork REF --new-session`: a new session from the root-to-REF path of another, which stays as
it was. The four checks of the SDK article on checkpoints and forks are the first four tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit import Session
from convgit.base.errors import RefusedError
from tests.clirun import Shell

PI_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pi"


def new(tmp_path: Path) -> Session:
    return Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)


def reopen(session: Session) -> Session:
    """The session as a new process reads it (a restart)."""
    return Session.open(session.location.root, session=session.id, store_dir=session.location.root)


def said(session: Session) -> list[Any]:
    return [m["content"] for m in session.conversation.context().messages]


def requirements_then_a(tmp_path: Path) -> tuple[Session, str]:
    """A: the shared requirements, then A's own discussion. Returns A and the common point."""
    a = new(tmp_path)
    a.append.user("Requirements: a CLI that adds numbers.")
    common = a.append.assistant("Understood: add(a, b).").id
    a.append.user("A: use a loop.")
    a.append.assistant("A: a loop it is.")
    return a, common


def test_a_still_shows_its_later_discussion_after_b_is_made_from_the_common_point(
    tmp_path: Path,
) -> None:
    a, common = requirements_then_a(tmp_path)
    before = a.conversation.file.path.read_bytes()
    a.fork_session(common)
    assert a.conversation.file.path.read_bytes() == before
    assert said(reopen(a))[-2:] == ["A: use a loop.", "A: a loop it is."]


def test_b_starts_from_the_shared_requirements_without_a_s_own_content(tmp_path: Path) -> None:
    a, common = requirements_then_a(tmp_path)
    b = reopen(a).fork_session(common, name="plan B")
    b = reopen(b)
    assert said(b) == ["Requirements: a CLI that adds numbers.", "Understood: add(a, b)."]
    assert b.conversation.leaf == common and b.conversation.name == "plan B"
    assert not any("A:" in str(r) for r in b.conversation.tree.entries.values())
    assert (b.conversation.tree.header or {})["forkedFrom"] == {"session": a.id, "entry": common}


def test_a_and_b_each_keep_what_is_added_after_a_restart(tmp_path: Path) -> None:
    a, common = requirements_then_a(tmp_path)
    b = a.fork_session(common)
    reopen(a).append.user("A: more on the loop.")
    reopen(b).append.user("B: just return a + b.")
    assert said(reopen(a))[-1] == "A: more on the loop."
    assert said(reopen(b))[-1] == "B: just return a + b."
    assert "B: just return a + b." not in said(reopen(a))
    assert "A: more on the loop." not in said(reopen(b))


def test_an_explicit_rewind_of_a_that_is_saved_reads_back_as_the_rewound_history(
    tmp_path: Path,
) -> None:
    a, common = requirements_then_a(tmp_path)
    a.fork_session(common)
    reopen(a).moves.switch(common)
    assert said(reopen(a)) == ["Requirements: a CLI that adds numbers.", "Understood: add(a, b)."]


def test_the_fork_copies_the_path_s_ids_and_labels_and_nothing_of_other_branches(
    tmp_path: Path,
) -> None:
    a, common = requirements_then_a(tmp_path)
    first = a.conversation.path()[0].id
    a.moves.label(first, "start")
    a.moves.switch(first)
    a.append.assistant("a sibling branch")
    b = a.fork_session(common)
    assert list(b.conversation.tree.entries) == a.conversation.tree.path(common)
    assert [b.conversation.tree.entries[i] for i in b.conversation.tree.entries] == [
        a.conversation.tree.entries[i] for i in b.conversation.tree.entries
    ]
    assert b.conversation.tree.labels == {first: "start"}
    assert b.location.current() == b.id


def test_a_fork_inside_a_tool_run_is_refused_and_nothing_is_made(tmp_path: Path) -> None:
    a = new(tmp_path)
    a.append.user("run it")
    call = a.append.entry(
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_call", "id": "c1", "name": "bash", "input": {}}],
        }
    ).id
    with pytest.raises(RefusedError, match="inside a tool run"):
        a.fork_session(call)
    assert a.location.session_ids() == [a.id]


def test_fork_new_session_and_sessions_through_the_command_line(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    original = sh.json("init", "--no-snapshots", "--name", "plan A")["id"]
    sh.run("user", "requirements")
    common = sh.json("assistant", "understood")["id"]
    sh.run("user", "A: a loop")
    made = sh.json("fork", common, "--new-session", "--name", "plan B")
    assert made["source"] == {"session": original, "entry": common}
    assert made["leaf"] == common and made["files_changed"] is False
    rows = {row["id"]: row for row in sh.json("sessions")["sessions"]}
    assert rows[original]["source"] is None and rows[original]["current"] is False
    assert rows[made["session"]]["source"] == made["source"]
    assert rows[made["session"]]["name"] == "plan B" and rows[made["session"]]["current"]
    listing = sh.run("sessions").stdout.decode().splitlines()
    (fork_line,) = [line for line in listing if made["session"] in line]
    assert fork_line.startswith(f"* {made['session']}  plan B  2 entries, leaf {common}, created ")
    assert fork_line.endswith(f"UTC, forked from {original} at {common}")
    text = sh.run("--session", original, "fork", common, "--new-session").stdout.decode()
    assert text.startswith("started session ") and f"{original} is unchanged" in text
    assert (
        b"--new-session takes no TEXT"
        in sh.run("fork", common, "more", "--new-session", code=2).stderr
    )
    assert b"--name goes with" in sh.run("fork", common, "--name", "x", code=2).stderr


def test_sessions_says_where_a_pi_fork_and_a_convgit_fork_come_from_alike(tmp_path: Path) -> None:
    """pi's fork copies the shared entries with their ids; so does `fork --new-session`, and
    both record ``forkedFrom`` as the session and the last entry they share."""
    sh = Shell(tmp_path)
    source = sh.json("import", "pi", str(PI_FIXTURES / "v3-fork-source.jsonl"))["imports"][0][
        "session"
    ]
    pi_fork = sh.json("import", "pi", str(PI_FIXTURES / "v3-fork-copy.jsonl"))["imports"][0][
        "session"
    ]
    ours = sh.json("--session", source, "fork", "a0000002", "--new-session")["session"]
    rows = {row["id"]: row for row in sh.json("sessions")["sessions"]}
    assert (
        rows[pi_fork]["source"]
        == rows[ours]["source"]
        == {
            "session": source,
            "entry": "a0000002",
        }
    )
    assert rows[source]["source"] is None
    copied = [
        e["id"] for e in orjson.loads(sh.run("--session", ours, "log", "--json").stdout)["entries"]
    ]
    assert copied == ["a0000001", "a0000002"]
