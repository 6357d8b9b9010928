"""OpenCode's live side without OpenCode: the plugin's events as convgit's, and the export
document written from a database laid out as OpenCode 1.18.33's (its session, message and part
tables, filled from the export fixture) equal to the one `opencode export` printed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from convgit.agents.opencode import live, transcript
from convgit.base.errors import NotFoundError

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "opencode" / "write-then-bash.json"
SCHEMA = """
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text,
  parent_id text, slug text NOT NULL, directory text NOT NULL, path text, title text NOT NULL,
  version text NOT NULL, share_url text, summary_additions integer, summary_deletions integer,
  summary_files integer, summary_diffs text, metadata text, cost real DEFAULT 0 NOT NULL,
  tokens_input integer DEFAULT 0 NOT NULL, tokens_output integer DEFAULT 0 NOT NULL,
  tokens_reasoning integer DEFAULT 0 NOT NULL, tokens_cache_read integer DEFAULT 0 NOT NULL,
  tokens_cache_write integer DEFAULT 0 NOT NULL, revert text, permission text, agent text,
  model text, time_created integer NOT NULL, time_updated integer NOT NULL,
  time_compacting integer, time_archived integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT
  NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
"""


def database(path: Path, parent: str | None = None) -> str:
    """OpenCode's tables holding the fixture's session; its id."""
    document = json.loads(FIXTURE.read_text())
    info = document["info"]
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA)
        db.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, path, title,"
            " version, summary_additions, summary_deletions, summary_files, cost, tokens_input,"
            " tokens_output, permission, agent, model, time_created, time_updated)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, 40, 20, ?, ?, ?, ?, ?)",
            (
                info["id"], info["projectID"], parent, info["slug"], info["directory"],
                info["path"], info["title"], info["version"], json.dumps(info["permission"]),
                info["agent"], json.dumps(info["model"]), info["time"]["created"],
                info["time"]["updated"],
            ),
        )  # fmt: skip
        for message in reversed(document["messages"]):  # the order is the query's
            row = {k: v for k, v in message["info"].items() if k not in ("id", "sessionID")}
            created = row["time"]["created"]
            db.execute(
                "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                (message["info"]["id"], info["id"], created, created, json.dumps(row)),
            )
            for part in message["parts"]:
                data = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
                db.execute(
                    "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                    (part["id"], part["messageID"], info["id"], 0, 0, json.dumps(data)),
                )
    return str(info["id"])


def test_the_export_written_from_the_database_is_opencodes_own(tmp_path: Path) -> None:
    session = database(tmp_path / "opencode.db")
    other = tmp_path / "opencode-dev.db"  # another channel's, which OpenCode also keeps
    sqlite3.connect(other).executescript(SCHEMA)
    written = json.loads(transcript.export([other, tmp_path / "opencode.db"], session))
    printed = json.loads(FIXTURE.read_text())
    assert written["messages"] == printed["messages"]
    assert written["info"] == printed["info"]


def test_a_subagents_session_is_not_recorded(tmp_path: Path) -> None:
    session = database(tmp_path / "opencode.db", parent="ses_parent")
    with pytest.raises(transcript.SubagentSessionError):
        transcript.export([tmp_path / "opencode.db"], session)


def test_the_database_is_found_where_opencode_keeps_it(tmp_path: Path) -> None:
    home = {"HOME": "/h"}
    assert transcript.databases(home) == [Path("/h/.local/share/opencode/opencode.db")]
    data = {**home, "XDG_DATA_HOME": str(tmp_path)}
    (tmp_path / "opencode").mkdir()
    (tmp_path / "opencode" / "opencode-beta-2.db").touch()  # a channel of its own
    assert transcript.databases(data) == [
        tmp_path / "opencode" / "opencode.db",
        tmp_path / "opencode" / "opencode-beta-2.db",
    ]
    assert transcript.databases({**data, "OPENCODE_DB": "/x.db"}) == [Path("/x.db")]
    named = {**home, "OPENCODE_DB": "other.db"}
    assert transcript.databases(named) == [Path("/h/.local/share/opencode/other.db")]
    assert transcript.databases({**home, "OPENCODE_DB": ":memory:"}) == []


def test_a_session_in_no_database_is_named_in_one_sentence(tmp_path: Path) -> None:
    database(tmp_path / "opencode.db")
    with pytest.raises(NotFoundError, match="has no session ses_gone"):
        transcript.export([tmp_path / "opencode.db"], "ses_gone")


def test_the_plugins_events_are_convgits() -> None:
    base = {"session_id": "ses_1", "cwd": "/p"}
    prompt = live.event({**base, "event": "chat.message", "prompt_id": "msg_1"})
    assert (prompt.name, prompt.prompt_id, prompt.agent) == (
        "UserPromptSubmit",
        "msg_1",
        "opencode",
    )
    assert prompt.called == "chat.message"  # as OpenCode names it, to the user
    tool = {"event": "tool.execute.after", "tool_use_id": "c1", "path": "a.txt"}
    edit = live.event({**base, **tool, "tool_name": "edit"})
    assert (edit.name, edit.edited, edit.cwd) == ("PostToolUse", ("a.txt",), Path("/p"))
    assert live.event({**base, **tool, "tool_name": "bash"}).edited == ()
    assert live.event({**base, "event": "session.idle"}).name == "Stop"
    for bad in ([], {"event": "session.idle"}, {**base, "event": "message.updated"}):
        with pytest.raises(ValueError):
            live.event(bad)


def test_a_prompt_is_told_by_the_id_of_its_message() -> None:
    assert live.carries_prompt('{"info":{"id":"msg_1","role":"user"}}', "msg_1")
    assert live.carries_prompt('{"info": {"id": "msg_1"}}', "msg_1")
    assert not live.carries_prompt('{"info":{"id":"msg_12"}}', "msg_1")
