"""A hypothesis state machine: random append/switch/fork/edit/retry/label sequences against a plain
in-memory model. After every step the replayed path equals the model's, and reopening the file
gives the same tree and leaf."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from convgit import Session
from convgit.base.errors import RefusedError
from convgit.conversation.replay import BRANCH_SUMMARY_PREFIX

TEXT = st.text(alphabet='abcxyz é\n"\\{}', min_size=1, max_size=12).filter(str.strip)


class ConversationModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self._folder = tempfile.TemporaryDirectory(prefix="convgit-model-")
        self.dir = Path(self._folder.name)
        self.session = Session.create(self.dir, store_dir=self.dir / "store", snapshots=False)
        # the model: id -> (parent, role or kind, text)
        self.parent: dict[str, str | None] = {}
        self.kind: dict[str, str] = {}
        self.text: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self.leaf: str | None = None

    def _add(self, ident: str, parent: str | None, kind: str, text: str) -> None:
        self.parent[ident], self.kind[ident], self.text[ident] = parent, kind, text
        self.leaf = ident

    def teardown(self) -> None:
        self._folder.cleanup()

    # -- operations ------------------------------------------------------------------------

    @rule(text=TEXT)
    def append_user(self, text: str) -> None:
        e = self.session.append.user(text)
        self._add(e.id, self.leaf, "user", text)

    @rule(text=TEXT)
    def append_assistant(self, text: str) -> None:
        e = self.session.append.assistant(text)
        self._add(e.id, self.leaf, "assistant", text)

    @precondition(lambda self: self.parent)
    @rule(data=st.data())
    def switch(self, data: st.DataObject) -> None:
        target = data.draw(st.sampled_from(sorted(self.parent)))
        self.session.moves.switch(target)
        self.leaf = target

    @precondition(lambda self: self.parent)
    @rule(data=st.data(), text=st.none() | TEXT, summary=st.none() | TEXT)
    def fork(self, data: st.DataObject, text: str | None, summary: str | None) -> None:
        target = data.draw(st.sampled_from(sorted(self.parent)))
        left = self.leaf
        self.session.moves.fork(target, text, summary)
        self.leaf = target
        ids = list(self.session.conversation.tree.entries)
        new = [i for i in ids if i not in self.parent]
        if summary is not None:
            assert self.session.conversation.tree.entries[new[0]]["fromId"] == left
            self._add(new.pop(0), target, "branch_summary", summary)
        if text is not None:
            self._add(new.pop(0), self.leaf, "user", text)
        assert not new

    @precondition(lambda self: any(k in ("user", "assistant") for k in self.kind.values()))
    @rule(data=st.data(), text=TEXT)
    def edit(self, data: st.DataObject, text: str) -> None:
        messages = sorted(i for i, k in self.kind.items() if k in ("user", "assistant"))
        target = data.draw(st.sampled_from(messages))
        made = self.session.moves.edit(target, text)
        self._add(made, self.parent[target], self.kind[target], text)

    @precondition(lambda self: self.parent)
    @rule(data=st.data())
    def retry(self, data: st.DataObject) -> None:
        target = data.draw(st.sampled_from(sorted(self.parent)))
        if self.kind[target] == "assistant" and self.parent[target] is None:
            return
        if self.kind[target] not in ("user", "assistant"):  # nothing to retry there
            with pytest.raises(RefusedError):
                self.session.moves.retry(target)
            return
        moved = self.session.moves.retry(target)
        expected = self.parent[target] if self.kind[target] == "assistant" else target
        assert moved == expected
        self.leaf = expected

    @precondition(lambda self: self.parent)
    @rule(data=st.data(), name=st.sampled_from(["good", "bad", "v1", "v2"]))
    def label(self, data: st.DataObject, name: str) -> None:
        target = data.draw(st.sampled_from(sorted(self.parent)))
        self.session.moves.label(target, name)
        # a label names one entry: given to another, it moves there
        self.labels = {t: n for t, n in self.labels.items() if n != name}
        self.labels[target] = name

    # -- what must hold after every step -----------------------------------------------------

    def _expected(self) -> list[str]:
        path: list[str] = []
        node = self.leaf
        while node is not None:
            path.append(node)
            node = self.parent[node]
        out = []
        for ident in reversed(path):
            if self.kind[ident] == "branch_summary":
                out.append(BRANCH_SUMMARY_PREFIX + self.text[ident])
            else:
                out.append(self.text[ident])
        return out

    @invariant()
    def replay_matches_the_model(self) -> None:
        assert self.session.conversation.leaf == self.leaf
        if self.leaf is None:
            return
        got = [m["content"] for m in self.session.conversation.context().messages]
        assert got == self._expected()

    @invariant()
    def reopening_gives_the_same_tree_and_leaf(self) -> None:
        again = Session.open(self.dir, session=self.session.id, store_dir=self.dir / "store")
        assert again.conversation.leaf == self.leaf
        assert {i: r["parentId"] for i, r in again.conversation.tree.entries.items()} == self.parent
        assert again.conversation.tree.labels == self.labels
        assert not again.problems()


test_conversation_model = ConversationModel.TestCase
