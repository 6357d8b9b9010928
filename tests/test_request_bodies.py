"""What the model is sent: every part survives export or is reported, and both bodies are ones
the APIs accept, judged by the providers' own SDK types and the ordering rules."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit import Session
from convgit.base.errors import UsageError
from convgit.conversation.replay import Context
from convgit.providers import export
from convgit.providers.openai import IMAGES_OF, TOOL_ERROR_PREFIX
from convgit.providers.request import START_PLACEHOLDER
from tests.clirun import Shell
from tests.request_bodies import PNG, InvalidBody, check_anthropic, check_openai, sent

IMAGE = {"type": "image", "mediaType": "image/png", "data": PNG}
URL_IMAGE = {"type": "image", "url": "https://example.com/shot.png"}
SIGNED = {"type": "thinking", "thinking": "the loop is off by one", "signature": "c2lnbmVk"}


def new(tmp_path: Path) -> Session:
    return Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)


def message(role: str, content: Any, **more: Any) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content, **more}


def call(ident: str, name: str = "run", **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": ident, "name": name, "input": arguments}


def whats(dropped: list[dict[str, Any]]) -> list[str]:
    return [item["what"] for item in dropped]


# -- the checker itself -------------------------------------------------------------------------

GOOD_ANTHROPIC: dict[str, Any] = {
    "model": "claude-x",
    "max_tokens": 1000,
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "run it"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "run", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": [
                        {"type": "text", "text": "done"},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                        },
                    ],
                }
            ],
        },
    ],
}
GOOD_OPENAI: dict[str, Any] = {
    "model": "gpt-x",
    "messages": [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "https://x/a.png"}}],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ],
}


def _broken(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """``body`` with the value at ``path`` replaced (a key named ``...delete`` removes it)."""
    body = copy.deepcopy(body)
    node = body
    for key in path[:-1]:
        node = node[key]
    if value == "...delete":
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return body


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("messages", 2, "content", 0, "content", 0, "text"), "...delete"),
        (("messages", 2, "content", 0, "content", 1, "source", "media_type"), "image/bmp"),
        (("messages", 2, "content", 0, "content", 0, "extra"), 1),
        (("messages", 1, "content", 0, "input"), "ls"),
        (("messages", 1, "content", 0, "id"), "call:1"),
        (("messages", 0, "content", 0, "text"), "  "),
        (("messages", 0, "role"), "assistant"),
        (("messages", 2, "content", 0, "tool_use_id"), "c2"),
        (("messages", 0, "content"), []),
        (("thinking",), {"type": "enabled"}),
        (("system",), [{"type": "text"}]),
        (("surprise",), True),
    ],
    ids=[
        "nested-text-missing",
        "nested-image-type",
        "nested-extra-key",
        "input-not-object",
        "tool-use-id",
        "blank-text",
        "starts-with-assistant",
        "unanswered-call",
        "empty-content",
        "thinking-without-budget",
        "system-block-without-text",
        "unknown-top-level-field",
    ],
)
def test_the_anthropic_checker_catches(path: tuple[Any, ...], value: Any) -> None:
    check_anthropic(GOOD_ANTHROPIC)
    with pytest.raises(InvalidBody):
        check_anthropic(_broken(GOOD_ANTHROPIC, path, value))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("messages", 1, "tool_calls", 0, "function", "arguments"), "...delete"),
        (("messages", 1, "tool_calls", 0, "function", "arguments"), {}),
        (("messages", 0, "content", 0, "image_url", "url"), "...delete"),
        (("messages", 0, "content", 0, "image_url", "detail"), "huge"),
        (("messages", 2, "is_error"), True),
        (("messages", 2, "tool_call_id"), "c2"),
        (("messages", 0, "content"), " "),
        (("reasoning_effort",), "extreme"),
    ],
    ids=[
        "arguments-missing",
        "arguments-object",
        "image-url-missing",
        "image-detail",
        "tool-error-flag",
        "unanswered-call",
        "blank-content",
        "reasoning-effort",
    ],
)
def test_the_openai_checker_catches(path: tuple[Any, ...], value: Any) -> None:
    check_openai(GOOD_OPENAI)
    with pytest.raises(InvalidBody):
        check_openai(_broken(GOOD_OPENAI, path, value))


# -- every part survives export, or is reported -------------------------------------------------


def test_images_survive_export_in_user_turns_and_tool_results(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.entry(message("user", [IMAGE]))  # an image-only turn
    s.append.entry(message("assistant", [call("c1", "screenshot")]))
    s.append.tool_result("c1", [{"type": "text", "text": "here"}, URL_IMAGE])
    s.append.entry(
        message(
            "user",
            [
                {"type": "text", "text": "and this one"},
                {"type": "image", "url": f"data:image/png;base64,{PNG}"},
            ],
        )
    )
    bodies = sent(s.conversation.context())
    first = bodies.anthropic["messages"][0]
    assert first["role"] == "user"
    assert first["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    ]
    result = bodies.anthropic["messages"][2]["content"][0]
    assert result["content"][1] == {
        "type": "image",
        "source": {"type": "url", "url": URL_IMAGE["url"]},
    }
    data_url = bodies.anthropic["messages"][2]["content"][1]
    assert data_url["type"] == "text"
    assert bodies.anthropic["messages"][2]["content"][2]["source"]["type"] == "base64"
    openai = bodies.openai["messages"]
    assert openai[0] == {
        "role": "user",
        "content": [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}],
    }
    assert openai[2] == {"role": "tool", "tool_call_id": "c1", "content": "here"}
    assert openai[3]["content"] == [
        {"type": "text", "text": IMAGES_OF.format(call="c1")},
        {"type": "image_url", "image_url": {"url": URL_IMAGE["url"]}},
    ]
    assert not bodies.anthropic_dropped and not bodies.openai_dropped


def test_empty_and_blank_messages_are_left_out_and_reported(tmp_path: Path) -> None:
    s = new(tmp_path)
    # `convgit user` refuses a blank message; an agent's own file may hold one
    s.append.entry({"type": "message", "role": "user", "content": "   "})
    s.append.assistant("hello")
    s.append.entry({"type": "message", "role": "user", "content": ""})
    s.append.assistant([{"type": "text", "text": ""}, {"type": "text", "text": "ok"}])
    s.append.user("next")
    bodies = sent(s.conversation.context())
    assert bodies.anthropic["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": START_PLACEHOLDER}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "ok"}],
        },
        {"role": "user", "content": [{"type": "text", "text": "next"}]},
    ]
    assert [m["content"] for m in bodies.openai["messages"]] == [
        START_PLACEHOLDER,
        "hello",
        "ok",
        "next",
    ]
    for dropped in (bodies.anthropic_dropped, bodies.openai_dropped):
        assert whats(dropped) == ["user message", "user message", "blank text"]


def test_thinking_reaches_anthropic_with_its_signature(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("why does it fail?")
    s.append.assistant(
        [SIGNED, {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}]
    )  # only thinking
    s.append.user("go on")
    bodies = sent(s.conversation.context())
    assert bodies.anthropic["messages"][1]["content"] == [
        {"type": "thinking", "thinking": SIGNED["thinking"], "signature": SIGNED["signature"]},
        {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
    ]
    assert not bodies.anthropic_dropped
    # Chat Completions takes no reasoning back: the message is left out, and that is said
    assert [m["content"] for m in bodies.openai["messages"]] == ["why does it fail?", "go on"]
    assert whats(bodies.openai_dropped) == ["thinking", "redacted_thinking", "assistant message"]


def test_unsigned_thinking_is_reported_not_sent(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("q")
    s.append.assistant([{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "answer"}])
    bodies = sent(s.conversation.context())
    assert bodies.anthropic["messages"][1]["content"] == [{"type": "text", "text": "answer"}]
    assert "no signature" in bodies.anthropic_dropped[0]["why"]


ADAPTIVE_HIGH = {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}}


@pytest.mark.parametrize(
    ("level", "model", "anthropic", "openai"),
    [
        ("high", None, ADAPTIVE_HIGH, {"reasoning_effort": "high"}),
        ("high", "claude-opus-4-6", ADAPTIVE_HIGH, {"reasoning_effort": "high"}),
        (
            "high",
            "claude-sonnet-4-5-20250929",
            {"thinking": {"type": "enabled", "budget_tokens": 16384}},
            {"reasoning_effort": "high"},
        ),
        (
            "low",
            "claude-3-7-sonnet-20250219",
            {"thinking": {"type": "enabled", "budget_tokens": 2048}},
            {"reasoning_effort": "low"},
        ),
        (
            "minimal",
            None,
            {"thinking": {"type": "adaptive"}, "output_config": {"effort": "low"}},
            {"reasoning_effort": "minimal"},
        ),
        ("off", None, {}, {"reasoning_effort": "none"}),
        (4096, None, {"thinking": {"type": "enabled", "budget_tokens": 4096}}, None),
        ("turbo", None, None, None),
    ],
)
def test_the_thinking_level_maps_to_each_providers_setting(
    tmp_path: Path,
    level: Any,
    model: str | None,
    anthropic: dict[str, Any] | None,
    openai: dict[str, Any] | None,
) -> None:
    """None: the provider has no setting for that level, and the body says so."""
    s = new(tmp_path)
    s.append.user("q")
    if model is not None:
        s.append.entry({"type": "model", "provider": "anthropic", "model": model})
    s.append.entry({"type": "thinking", "level": level})
    bodies = sent(s.conversation.context(), max_tokens=32000)
    settings = {k: v for k, v in bodies.anthropic.items() if k in ("thinking", "output_config")}
    assert settings == (anthropic or {})
    assert {k: v for k, v in bodies.openai.items() if k == "reasoning_effort"} == (openai or {})
    assert (f"thinking level {level!r}" in whats(bodies.anthropic_dropped)) == (anthropic is None)
    assert (f"thinking level {level!r}" in whats(bodies.openai_dropped)) == (openai is None)


def test_a_budget_larger_than_max_tokens_is_refused(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("q")
    s.append.entry({"type": "thinking", "level": 4096})
    with pytest.raises(UsageError, match="must exceed the thinking budget"):
        export(s.conversation.context(), "anthropic", max_tokens=4096)


@pytest.mark.parametrize("provider", ["anthropic", "openai", "google"])
def test_a_model_goes_only_to_its_own_provider(tmp_path: Path, provider: str) -> None:
    s = new(tmp_path)
    s.append.user("q")
    s.append.entry({"type": "model", "provider": provider, "model": "m-1"})
    bodies = sent(s.conversation.context())
    assert ("model" in bodies.anthropic) == (provider == "anthropic")
    assert ("model" in bodies.openai) == (provider == "openai")
    reported = [whats(bodies.anthropic_dropped), whats(bodies.openai_dropped)]
    assert reported.count([f"model {provider}/m-1"]) == (2 if provider == "google" else 1)


def test_tool_errors_reach_both_providers(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("run the tests")
    s.append.entry(message("assistant", [call("c1")]))
    s.append.tool_result("c1", "2 failed", is_error=True)
    bodies = sent(s.conversation.context())
    result = bodies.anthropic["messages"][2]["content"][0]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": "2 failed",
        "is_error": True,
    }
    assert bodies.openai["messages"][2]["content"] == TOOL_ERROR_PREFIX + "2 failed"


def test_tool_call_ids_anthropic_refuses_are_rewritten_on_call_and_result(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("q")
    s.append.entry(message("assistant", [call("call_1|fc_2"), call("call_1_fc_2")]))
    s.append.tool_result("call_1|fc_2", "one")
    s.append.tool_result("call_1_fc_2", "two")
    bodies = sent(s.conversation.context())
    uses = [b["id"] for b in bodies.anthropic["messages"][1]["content"]]
    results = [(b["tool_use_id"], b["content"]) for b in bodies.anthropic["messages"][2]["content"]]
    assert uses == ["call_1_fc_2_2", "call_1_fc_2"]
    assert results == [("call_1_fc_2_2", "one"), ("call_1_fc_2", "two")]
    assert [m.get("tool_call_id") for m in bodies.openai["messages"][2:]] == [
        "call_1|fc_2",
        "call_1_fc_2",
    ]


def test_tool_arguments_of_an_older_file_are_normalised_or_reported(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("q")
    written = message(
        "assistant",
        [
            {"type": "tool_call", "id": "a", "name": "ls", "arguments": '{"dir": "src"}'},
            {"type": "tool_call", "id": "b", "name": "ls", "input": "-l"},
        ],
        id="01d0f11e",
        parentId=s.conversation.leaf,
        ts="2026-01-01T00:00:00.000Z",
    )
    with s.conversation.file.path.open("ab") as f:
        f.write(orjson.dumps(written) + b"\n")
    s = Session.open(tmp_path, session=s.id, store_dir=tmp_path / "store")
    bodies = sent(s.conversation.context())
    uses = [b["input"] for b in bodies.anthropic["messages"][1]["content"]]
    assert uses == [{"dir": "src"}, {}]
    assert whats(bodies.anthropic_dropped) == ["arguments of tool call b"]
    arguments = [c["function"]["arguments"] for c in bodies.openai["messages"][1]["tool_calls"]]
    assert arguments == ['{"dir":"src"}', "{}"]


def test_the_system_prompt_goes_where_each_api_wants_it() -> None:
    ctx = Context(
        leaf="u1", system="Be brief.", messages=[{"role": "user", "content": "hi", "id": "u1"}]
    )
    bodies = sent(ctx)
    assert bodies.anthropic["system"] == "Be brief."
    assert all(m["role"] != "system" for m in bodies.anthropic["messages"])
    assert bodies.openai["messages"][0] == {"role": "system", "content": "Be brief."}


# -- through the command line -------------------------------------------------------------------


def test_context_reports_what_a_body_leaves_out(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    sh.run("init")
    sh.run("user", "q")
    thinking = message(
        "assistant", [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "a"}]
    )
    ident = orjson.loads(
        sh.append(thinking, {"type": "model", "provider": "openai", "model": "gpt-x"}).stdout
    )["ids"][0]
    done = sh.run("context", "--format", "anthropic", "--max-tokens", "2000")
    body = orjson.loads(done.stdout)
    assert body["max_tokens"] == 2000 and "model" not in body
    stderr = done.stderr.decode()
    assert (
        f"convgit: not sent to Anthropic: thinking (entry {ident}): it has no signature" in stderr
    )
    assert "convgit: not sent to Anthropic: model openai/gpt-x: it is not an Anthropic" in stderr
    enveloped = sh.json("context", "--format", "openai")
    assert enveloped["request"]["model"] == "gpt-x"
    assert [d["what"] for d in enveloped["dropped"]] == ["thinking"]
    assert sh.run("context", "--format", "openai", "--max-tokens", "0", code=2).stderr.startswith(
        b"convgit: --max-tokens takes"
    )
    sh.run("context", "--max-tokens", "10", code=2)


def test_the_demo_sends_valid_bodies(tmp_path: Path) -> None:
    repo = tmp_path / "demo"
    Shell(tmp_path).run("demo", "--dir", str(repo))
    sh = Shell(repo)
    anthropic = orjson.loads(sh.run("context", "--format", "anthropic").stdout)
    check_anthropic(anthropic, caller=("model", "max_tokens"))
    openai = orjson.loads(sh.run("context", "--format", "openai").stdout)
    check_openai(openai, caller=("model",))
    texts = [m["content"] for m in openai["messages"]]
    assert texts[0].startswith("test_add fails.")
    # the restore's note right above the message that asks for plan B, then plan B's reply
    assert texts[2].startswith("Note from convgit: The files were restored")
    assert texts[3].startswith("Try plan B") and texts[4].startswith("Plan B")
