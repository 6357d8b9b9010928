"""Random conversations (branches, forks with summaries, compactions, notes, parallel and late
tool results, results filed on other branches, images, thinking, empty messages, model and
thinking settings): after every step both request bodies pass the providers' SDK types and the
ordering rules, no tool result on the path disappears unreported, and every image and every
signed thinking block is sent."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from convgit import Session, schema
from convgit.base.errors import RefusedError, UsageError
from convgit.conversation.parts import image_source
from tests.request_bodies import PNG, sent

TEXT = st.sampled_from(["", " ", "\n", "ok", "run it", "ça marche", "tabs\tand\nlines"])
IMAGES = st.sampled_from(
    [
        {"type": "image", "mediaType": "image/png", "data": PNG},
        {"type": "image", "url": "https://example.com/a.png"},
        {"type": "image", "url": f"data:image/png;base64,{PNG}"},
    ]
)
USER_PART = st.one_of(TEXT.map(lambda t: {"type": "text", "text": t}), IMAGES)
ASSISTANT_PART = st.one_of(
    TEXT.map(lambda t: {"type": "text", "text": t}),
    st.builds(
        lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, TEXT, st.just("c2ln")
    ),
    TEXT.map(lambda t: {"type": "thinking", "thinking": t}),
    st.just({"type": "redacted_thinking", "data": "ZW5j"}),
)
CALL_IDS = st.sampled_from(["c", "call_1", "toolu_01", "call_1|fc_2", "Bash:12", "x.y"])
LEVELS = st.sampled_from([None, "off", "minimal", "low", "high", "max", 2048, 0, "turbo"])
PROVIDERS = st.sampled_from(["anthropic", "openai", "google"])


class Conversations(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self._folder = tempfile.TemporaryDirectory(prefix="convgit-bodies-")
        folder = Path(self._folder.name)
        self.s = Session.create(folder, store_dir=folder / "store", snapshots=False)
        self.calls = 0

    def teardown(self) -> None:
        self._folder.cleanup()

    def _ids(self) -> list[str]:
        return list(
            self.s.conversation.tree.entries
        )  # file order: the ids are random, their order is not

    def _calls_on_path(self) -> list[str]:
        path = self.s.conversation.tree.path() if self.s.conversation.leaf else []
        return [
            part["id"]
            for ident in path
            for part in self._parts(ident)
            if part.get("type") == "tool_call"
        ]

    def _parts(self, ident: str) -> list[dict[str, Any]]:
        content = self.s.conversation.tree.entries[ident].get("content")
        return content if isinstance(content, list) else []

    # -- what a conversation is made of -------------------------------------------------------

    def _refused_if_blank(self, *texts: str | None) -> bool:
        """Whether one of ``texts`` is given and blank: an empty or blank message or summary
        is refused in one sentence and nothing is written (as the CLI promises)."""
        return any(t is not None and not t.strip() for t in texts)

    def _refused(self, call: Any) -> None:
        before = self.s.conversation.file.path.read_bytes()
        try:
            call()
        except UsageError:
            assert self.s.conversation.file.path.read_bytes() == before
            return
        raise AssertionError("a blank message or summary was written")

    @rule(text=TEXT)
    def user_text(self, text: str) -> None:
        if self._refused_if_blank(text):
            self._refused(lambda: self.s.append.user(text))
            return
        self.s.append.user(text)

    @rule(parts=st.lists(USER_PART, max_size=3))
    def user_parts(self, parts: list[dict[str, Any]]) -> None:
        self.s.append.entry({"type": "message", "role": "user", "content": parts})

    @rule(
        parts=st.lists(ASSISTANT_PART, max_size=3),
        calls=st.lists(CALL_IDS, max_size=3),
        as_string=st.booleans(),
    )
    def assistant(self, parts: list[dict[str, Any]], calls: list[str], as_string: bool) -> None:
        made = []
        for name in calls:
            self.calls += 1
            made.append(
                {"type": "tool_call", "id": f"{name}{self.calls}", "name": "run", "input": {}}
            )
        content: Any = parts + made
        if as_string and not made:
            content = "".join(p.get("text", "") for p in parts)
        self.s.append.entry({"type": "message", "role": "assistant", "content": content})

    @precondition(lambda self: self._calls_on_path())
    @rule(
        data=st.data(),
        text=TEXT,
        images=st.lists(IMAGES, max_size=2),
        error=st.booleans(),
    )
    def tool_result(
        self, data: st.DataObject, text: str, images: list[dict[str, Any]], error: bool
    ) -> None:
        call = data.draw(st.sampled_from(self._calls_on_path()))  # late, parallel, or repeated
        content: Any = [{"type": "text", "text": text}, *images] if images else text
        self.s.append.tool_result(call, content, is_error=error)

    @precondition(lambda self: self.calls)
    @rule(data=st.data())
    def result_on_the_calls_branch(self, data: st.DataObject) -> None:
        made = [
            p["id"]
            for ident in self._ids()
            for p in self._parts(ident)
            if p.get("type") == "tool_call"
        ]
        call = data.draw(st.sampled_from(made))
        leaf = self.s.conversation.leaf
        try:
            self.s.append.tool_result(call, "late", on_call_branch=True)
        except RefusedError:
            raise AssertionError("a call anywhere in the session can be answered") from None
        assert self.s.conversation.leaf == leaf or call in self._calls_on_path()

    @rule(text=TEXT)
    def note(self, text: str) -> None:
        self.s.append.entry({"type": "note", "text": text or "files changed", "source": "restore"})

    @precondition(lambda self: self.s.conversation.leaf)
    @rule(data=st.data(), text=st.none() | TEXT, summary=st.none() | TEXT)
    def fork(self, data: st.DataObject, text: str | None, summary: str | None) -> None:
        target = data.draw(st.sampled_from(self._ids()))
        if self.s.conversation.tree.open_tool_calls(
            target
        ):  # inside a tool run: refused, nothing written
            before = self.s.conversation.file.path.read_bytes()
            try:
                self.s.moves.fork(target, text, summary)
            except (RefusedError, UsageError):  # a blank text is refused first
                assert self.s.conversation.file.path.read_bytes() == before
                return
            raise AssertionError(f"a fork from {target}, inside a tool run, was made")
        if self._refused_if_blank(text, summary):
            self._refused(lambda: self.s.moves.fork(target, text, summary))
            return
        self.s.moves.fork(target, text, summary)

    @precondition(lambda self: self.s.conversation.leaf)
    @rule(data=st.data())
    def switch(self, data: st.DataObject) -> None:
        self.s.moves.switch(data.draw(st.sampled_from(self._ids())))

    @precondition(lambda self: self.s.conversation.leaf)
    @rule(data=st.data(), keep_none=st.booleans())
    def compaction(self, data: st.DataObject, keep_none: bool) -> None:
        kept = None if keep_none else data.draw(st.sampled_from(self.s.conversation.tree.path()))
        self.s.append.entry({"type": "compaction", "summary": "earlier work", "firstKeptId": kept})

    @rule(provider=PROVIDERS)
    def model(self, provider: str) -> None:
        self.s.append.entry({"type": "model", "provider": provider, "model": f"{provider}-m"})

    @rule(level=LEVELS)
    def thinking(self, level: Any) -> None:
        self.s.append.entry({"type": "thinking", "level": level})

    # -- what must hold after every step ------------------------------------------------------

    @invariant()
    def both_bodies_are_valid_and_nothing_is_lost_unreported(self) -> None:
        if self.s.conversation.leaf is None:
            return
        ctx = self.s.conversation.context()
        bodies = sent(ctx, max_tokens=64000)
        visible = _visible(self.s)
        sent_ids = {m.get("id") for m in ctx.messages}
        reported = {d["entry"] for d in ctx.dropped}
        called: set[str] = set()
        answered: set[str] = set()
        for ident in visible:  # a result is sent when its call is before it, the first one
            record = self.s.conversation.tree.entries[ident]
            if record["type"] != "message":
                continue
            if record["role"] == "assistant":
                called.update(schema.tool_call_ids(record))
            elif record["role"] == "tool":
                call = record["toolCallId"]
                expected = call in called and call not in answered
                answered.update([call] if expected else [])
                assert (ident in sent_ids) == expected != (ident in reported), ident
        records = [self.s.conversation.tree.entries[i] for i in visible if i in sent_ids]
        messages = [r for r in records if r["type"] == "message"]
        images = sum(
            1
            for m in messages
            if m["role"] != "assistant" and isinstance(m["content"], list)
            for p in m["content"]
            if p["type"] == "image" and image_source(p) is not None
        )
        signed = sum(
            1
            for m in messages
            if m["role"] == "assistant" and isinstance(m["content"], list)
            for p in m["content"]
            if p["type"] == "thinking" and p.get("signature")
        )
        assert _count(bodies.anthropic, "image") == images
        assert _count(bodies.openai, "image_url") == images
        assert _count(bodies.anthropic, "thinking") == signed


def _visible(s: Session) -> list[str]:
    """The entries replay reads after compactions cut the path (a plain model of the rule)."""
    kept: list[tuple[int, str]] = []
    path = s.conversation.tree.path()
    for i, ident in enumerate(path):
        record = s.conversation.tree.entries[ident]
        if record["type"] == "compaction":
            start = i if record["firstKeptId"] is None else path.index(record["firstKeptId"])
            kept = [(p, x) for p, x in kept if p >= start]
        kept.append((i, ident))
    return [x for _, x in kept]


def _count(value: Any, kind: str) -> int:
    """How many objects of ``"type": kind`` a body holds, at any depth."""
    if isinstance(value, dict):
        return (value.get("type") == kind) + sum(_count(v, kind) for v in value.values())
    if isinstance(value, list):
        return sum(_count(v, kind) for v in value)
    return 0


class TestRequestBodiesStayValid(Conversations.TestCase):  # type: ignore[misc,valid-type]
    """A quick run with every test run."""

    settings = settings(max_examples=12, stateful_step_count=15)


@pytest.mark.slow
class TestRequestBodiesStayValidLonger(Conversations.TestCase):  # type: ignore[misc,valid-type]
    """Longer conversations, as many as the profile says (ci: a fixed seed)."""

    settings = settings(stateful_step_count=40)
