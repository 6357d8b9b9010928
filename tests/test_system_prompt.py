"""The system prompt: a settings entry on the active path, replayed like a model change, sent
where each API wants it (the bodies judged by the providers' own SDK types), shown first by
`context`, and named for what it is by `tree`, `log`, `show` and `export --format pi`."""

from __future__ import annotations

from pathlib import Path

import orjson

from convgit import Session
from tests.clirun import Shell
from tests.request_bodies import check_anthropic, check_openai, sent


def test_the_last_system_prompt_on_the_path_is_in_force_and_only_on_its_path(
    tmp_path: Path,
) -> None:
    s = Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)
    first = s.append.user("hi").id
    s.append.system("Be brief.")
    brief = s.append.assistant("ok").id
    s.append.system("Answer in French.")
    french = s.append.user("and now?").id
    s.moves.switch(first)
    plain = s.append.assistant("hello").id
    assert s.conversation.context(brief).system == "Be brief."
    assert s.conversation.context(french).system == "Answer in French."
    assert s.conversation.context(plain).system is None
    s.moves.switch(french)
    s.append.system(None)
    assert s.conversation.context().system is None
    # the prompt is a setting, not a message, and both bodies carry it where the API wants it
    assert [m["content"] for m in s.conversation.context(french).messages] == [
        "hi",
        "ok",
        "and now?",
    ]
    bodies = sent(s.conversation.context(french))
    assert bodies.anthropic["system"] == "Answer in French."
    assert bodies.openai["messages"][0] == {"role": "system", "content": "Answer in French."}


def test_convgit_system_through_the_command_line(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    sh.run("init", "--no-snapshots")
    sh.run("user", "Fix add().")
    assert sh.run("system").stdout == b"no system prompt on the active path\n"
    made = sh.json("system", "You are a careful engineer.")["entry"]
    assert (made["type"], made["text"]) == ("system", "You are a careful engineer.")
    sh.run("assistant", "Done.")
    assert sh.run("system").stdout == b"You are a careful engineer.\n"

    openai = orjson.loads(sh.run("context", "--format", "openai").stdout)
    check_openai(openai, caller=("model",))
    assert openai["messages"][0] == {"role": "system", "content": "You are a careful engineer."}
    assert [m["role"] for m in openai["messages"]] == ["system", "user", "assistant"]
    anthropic = orjson.loads(sh.run("context", "--format", "anthropic").stdout)
    check_anthropic(anthropic, caller=("model", "max_tokens"))
    assert anthropic["system"] == "You are a careful engineer."
    assert [m["role"] for m in anthropic["messages"]] == ["user", "assistant"]
    assert sh.run("context").stdout.decode().splitlines() == [
        "system: You are a careful engineer.",
        "user: Fix add().",
        "assistant: Done.",
    ]

    shown = f"{made['id']} system prompt: You are a careful engineer."
    assert shown in sh.run("tree").stdout.decode()
    assert shown in sh.run("log").stdout.decode()
    assert sh.json("show", made["id"])["entry"]["text"] == made["text"]
    exported = [
        orjson.loads(line) for line in sh.run("export", "--format", "pi").stdout.splitlines()
    ]
    (kept,) = [e for e in exported if e.get("id") == made["id"]]
    assert kept["type"] == "custom" and kept["customType"] == "convgit-system"

    cleared = sh.json("system", "--clear")["entry"]
    assert cleared["text"] is None
    assert "system" not in orjson.loads(sh.run("context", "--format", "anthropic").stdout)
    assert f"{cleared['id']} system prompt: (none)" in sh.run("log").stdout.decode()
    sh.run("system", "x", "--clear", code=2)
