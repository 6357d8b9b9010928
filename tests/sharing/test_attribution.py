"""The git notes of attribution: a commit made beside a recorded session carries an Agent Trace
record (valid against the specification's published schema) and a Git AI v3 authorship log
(valid by the standard's rules) that say, line by line, what `convgit blame` says; they survive
a rebase, an amend, a cherry-pick and a squash merge; and a clone that fetched only the notes
blames from them alone what the session's own clone blames from its snapshots."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema

from convgit.session import Session
from tests.sharing.clones import Clone
from tests.sharing.git_ai_format import attested, problems
from tests.workspace.cli import one_sentence
from tests.workspace.gitrepo import UserStateGuard, git

SCHEMA = json.loads((Path(__file__).parent / "data" / "trace-record.schema.json").read_text())


def old() -> dict[str, str]:
    """The environment of a commit made long ago (read when called: the run's own)."""
    dated = {"GIT_AUTHOR_DATE": "2020-01-01T00:00:00", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00"}
    return {**os.environ, **dated}


ANN = ("-c", "user.name=Ann", "-c", "user.email=ann@example.com")


def story(a: Clone, guard: UserStateGuard) -> dict[str, str]:
    """An older commit of Ann's, then a session of Claude Code's (its model said): turn 1 adds
    a line, turn 2 changes one, a hand edit at the next prompt, turn 3; the git hooks installed
    (with Git AI's notes too) and the files committed by Ann. The entries by name."""
    a.write("f.txt", "a\nb\nc\n")
    git(a.path, "add", "f.txt")
    git(a.path, *ANN, "commit", "-qm", "old lines", env=old())
    session = Session.create(a.path, agent=("claude-code", "claude-session-1"))
    session.append.entry({"type": "model", "provider": "anthropic", "model": "claude-sonnet-4-5"})
    entries = {}
    for name, prompt, text in [
        ("turn 1", "add d", "a\nb\nc\nd\n"),
        ("turn 2", "change b", "a\nB\nc\nd\n"),
        ("turn 3", "add e", "a\nB\nc\nd\nhand\ne\n"),
    ]:
        if name == "turn 3":
            a.write("f.txt", "a\nB\nc\nd\nhand\n")  # by hand, before the prompt
        entries[f"prompt of {name}"] = session.append.user(prompt).id
        a.write("f.txt", text)
        entries[name] = session.append.assistant(f"did: {prompt}").id
    entries["hand edit"] = entries["prompt of turn 3"]
    (a.path / ".git" / "convgit" / "config.toml").write_text("[attribution]\ngit_ai = true\n")
    a.json("hooks", "install", "git")
    git(a.path, "add", "f.txt")
    git(a.path, *ANN, "commit", "-qm", "the session's work")
    guard.watch(a.path)
    entries["session"] = session.id
    return entries


def blamed(clone: Clone, *args: str) -> list[tuple[Any, ...]]:
    """(text, kind, entry, agent, model, commit, session) of each line `convgit blame` gives."""
    found = clone.json(*args, "blame", "f.txt")["lines"]
    keys = ("text", "kind", "entry", "agent", "model", "commit", "session")
    return [tuple(line[k] for k in keys) for line in found]


def note(clone: Clone, ref: str, rev: str = "HEAD") -> str:
    return git(clone.path, "notes", f"--ref={ref}", "show", rev)


def trace_lines(record: dict[str, Any]) -> dict[int, tuple[str, str | None]]:
    """f.txt's line -> (contributor type, entry), read from the record as the spec lays it out
    (independent of convgit's reader): the entry from metadata.convgit by the group's url."""
    facts = record.get("metadata", {}).get("convgit", {}).get("conversations", {})
    out = {}
    (file,) = [f for f in record["files"] if f["path"] == "f.txt"]
    for group in file["conversations"]:
        entry = facts.get(group.get("url"), {}).get("entry")
        for span in group["ranges"]:
            for n in range(span["start_line"], span["end_line"] + 1):
                out[n] = (group["contributor"]["type"], entry)
    return out


def validate(record: dict[str, Any]) -> None:
    """The record against Agent Trace's published schema, formats checked (uuid, date-time);
    the `uri` format needs a package jsonschema leaves optional, so each url is parsed here."""
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    jsonschema.Draft202012Validator(SCHEMA, format_checker=checker).validate(record)
    for file in record["files"]:
        for group in file["conversations"]:
            if "url" in group:
                assert urlsplit(group["url"]).scheme == "convgit", group["url"]


def test_a_commit_beside_a_session_carries_both_notes_saying_what_blame_says(
    a: Clone, user_state_guard: UserStateGuard
) -> None:
    named = story(a, user_state_guard)
    head = git(a.path, "rev-parse", "HEAD").strip()
    blame = a.json("blame", "f.txt")["lines"]
    kinds = {"turn": "ai", "hand edit": "human"}
    # the lines this commit added, as convgit blame names them over the session's snapshots
    expected = {
        line["line"]: (kinds[line["kind"]], line["entry"])
        for line in blame
        if line["kind"] in kinds
    }
    assert expected == {
        2: ("ai", named["turn 2"]),
        4: ("ai", named["turn 1"]),
        5: ("human", named["hand edit"]),
        6: ("ai", named["turn 3"]),
    }

    record = json.loads(note(a, "refs/notes/agent-trace"))
    validate(record)
    assert record["version"] == "0.1" and record["vcs"] == {"type": "git", "revision": head}
    assert trace_lines(record) == expected
    models = {
        g["contributor"].get("model_id")
        for g in record["files"][0]["conversations"]
        if g["contributor"]["type"] == "ai"
    }
    assert models == {"anthropic/claude-sonnet-4-5"}

    log = note(a, "refs/notes/ai")
    assert problems(log) == []
    metadata = json.loads(log.split("\n---\n", 1)[1])
    assert metadata["base_commit_sha"] == head
    (agent,) = [s["agent_id"] for s in metadata["sessions"].values()]
    assert agent == {"tool": "claude", "id": "claude-session-1", "model": "claude-sonnet-4-5"}
    committer = git(a.path, "log", "-1", "--format=%cn <%ce>").strip()
    assert list(metadata["humans"].values()) == [{"author": committer}]
    keys = attested(log)["f.txt"]
    assert {n: "human" if k.startswith("h_") else "ai" for n, k in keys.items()} == {
        n: kind for n, (kind, _) in expected.items()
    }
    assert len({keys[2], keys[4], keys[6]}) == 3  # a trace per turn, in one session

    message = git(a.path, "log", "-1", "--format=%B")
    assert "Convgit-" not in message  # trailers are opt-in now: the notes carry the link
    why = a.json("why", "HEAD")
    assert (why["found_by"], why["entry"]) == ("notes", named["turn 3"])
    rewrite_refs = git(a.path, "config", "--get-all", "notes.rewriteRef").split()
    assert rewrite_refs == ["refs/notes/agent-trace", "refs/notes/ai"]
    removed = a.json("hooks", "uninstall", "git")["hooks"]
    assert [h["config"] for h in removed if h["hook"] == "post-rewrite"] == [rewrite_refs]
    assert git(a.path, "config", "--get-all", "notes.rewriteRef", check=False) == ""


def test_a_rebase_and_an_amend_keep_each_lines_attribution(
    a: Clone, user_state_guard: UserStateGuard
) -> None:
    named = story(a, user_state_guard)
    before = {line[0]: line[1:3] for line in blamed(a, "--session", named["session"])}
    # upstream moved meanwhile: a line on top of the file, so every line of the work moves down
    work = git(a.path, "rev-parse", "HEAD").strip()
    git(a.path, "checkout", "-q", "-b", "upstream", "HEAD~1")
    a.write("f.txt", "zero\na\nb\nc\n")
    git(a.path, *ANN, "commit", "-qam", "upstream: a line on top")
    git(a.path, "checkout", "-q", "main")
    git(a.path, *ANN, "rebase", "-q", "upstream")
    user_state_guard.watch(a.path)
    rebased = git(a.path, "rev-parse", "HEAD").strip()
    assert rebased != work
    lines = a.json("blame", "--notes", "f.txt")["lines"]
    assert lines[0]["text"] == "zero" and lines[0]["kind"] == "commit"
    assert {line["text"]: (line["kind"], line["entry"]) for line in lines[1:]} == before
    record = json.loads(note(a, "refs/notes/agent-trace"))
    validate(record)
    assert record["vcs"]["revision"] == rebased
    assert problems(note(a, "refs/notes/ai")) == []

    # an amend: the lines kept keep their turns, and a new turn's line is its own
    session = Session.open(a.path)
    session.append.user("add f")
    a.write("f.txt", "zero\na\nB\nc\nd\nhand\ne\nf\n")
    turn4 = session.append.assistant("added f").id
    git(a.path, *ANN, "commit", "-q", "-a", "--amend", "--no-edit")
    user_state_guard.watch(a.path)
    lines = a.json("blame", "--notes", "f.txt")["lines"]
    got = {line["text"]: (line["kind"], line["entry"]) for line in lines[1:]}
    assert got == {**before, "f": ("turn", turn4)}
    assert problems(note(a, "refs/notes/ai")) == []

    # an amend that writes every line anew by hand: git's copies of the notes, whose lines no
    # longer say anything of this commit, are taken away
    a.write("f.txt", "zero\nall\nnew\n")
    git(a.path, *ANN, "commit", "-q", "-a", "--amend", "--no-edit")
    user_state_guard.watch(a.path)
    for ref in ("refs/notes/agent-trace", "refs/notes/ai"):
        assert git(a.path, "notes", f"--ref={ref}", "list", "HEAD", check=False) == ""


def test_blame_from_the_notes_alone_in_a_second_clone_equals_blame_with_the_sessions_refs(
    a: Clone, b: Clone, remote: Path, user_state_guard: UserStateGuard
) -> None:
    named = story(a, user_state_guard)
    with_refs = blamed(a)
    assert {k for _, k, *_ in with_refs} == {"commit", "turn", "hand edit"}
    a.run("share", named["session"])
    pushed = a.json("push")
    assert pushed["notes"] == ["refs/notes/agent-trace", "refs/notes/ai"]
    assert git(remote, "rev-parse", "refs/notes/agent-trace").strip()
    git(a.path, "push", "-q", "origin", "main")

    # a clone that fetched the notes only, through git's transport: no session, no convgit ref
    git(b.path, "pull", "-q", "origin", "main")
    git(b.path, "fetch", "-q", "origin", "refs/notes/*:refs/notes/*")
    user_state_guard.watch(b.path)
    assert git(b.path, "for-each-ref", "refs/convgit/") == ""
    alone = b.json("blame", "f.txt")
    assert alone["session"] is None
    assert blamed(b) == with_refs
    assert "answered from the git notes" in b.run("blame", "f.txt").stdout

    # a squash merge there, and a cherry-pick: carried by `attribution rewrite` and the hook
    (b.path / ".git" / "convgit").mkdir()
    (b.path / ".git" / "convgit" / "config.toml").write_text("[attribution]\ngit_ai = true\n")
    old, work = git(b.path, "rev-parse", "HEAD~1", "HEAD").split()
    git(b.path, "checkout", "-q", "-b", "squashed", old)
    git(b.path, "merge", "-q", "--squash", work)
    git(b.path, *ANN, "commit", "-qm", "squash of the work")
    rewrote = b.json("attribution", "rewrite", "--from", f"{old}..{work}")["commits"]
    assert [(c["lines"], c["written"]) for c in rewrote] == [
        (4, ["refs/notes/agent-trace", "refs/notes/ai"])
    ]
    assert blamed(b) == with_refs
    b.json("hooks", "install", "git")
    git(b.path, "checkout", "-q", "-b", "picked", old)
    b.write("other.txt", "another change first\n")
    git(b.path, "add", "other.txt")
    git(b.path, *ANN, "commit", "-qm", "another change")
    git(b.path, *ANN, "cherry-pick", work)
    user_state_guard.watch(b.path)
    assert blamed(b) == with_refs
    validate(json.loads(note(b, "refs/notes/agent-trace")))

    # a Git AI note another tool wrote is never written over
    theirs = "src/x.rs\n  h_0123456789abcd 1\n---\n{}\n"
    git(b.path, "notes", "--ref=refs/notes/ai", "add", "-f", "-m", theirs, "squashed")
    kept = b.json("attribution", "rewrite", "squashed", "--from", f"{old}..{work}")["commits"]
    assert kept[0]["kept"] == ["refs/notes/ai"]
    assert note(b, "refs/notes/ai", "squashed").strip() == theirs.strip()

    # the remote's notes move (the other clone pushed its own): a's push merges them, then sends
    git(b.path, "push", "-q", "origin", "refs/notes/agent-trace")
    session = Session.open(a.path)
    session.append.user("add f")
    a.write("f.txt", "a\nB\nc\nd\nhand\ne\nf\n")
    session.append.assistant("added f")
    git(a.path, *ANN, "commit", "-qam", "more work")
    user_state_guard.watch(a.path)
    again = a.json("push")
    assert again["notes"] == ["refs/notes/agent-trace", "refs/notes/ai"] and again["tries"] == 2
    on_remote = git(remote, "notes", "--ref=refs/notes/agent-trace", "list").split()
    mine, squashed = git(a.path, "rev-parse", "HEAD").strip(), git(b.path, "rev-parse", "squashed")
    assert mine in on_remote and squashed.strip() in on_remote


def test_settings_and_arguments_of_the_wrong_kind_are_one_sentence(a: Clone) -> None:
    a.run("init")
    config = a.path / ".git" / "convgit" / "config.toml"
    for table, wrong, said in [
        ("attribution", "git_ai = 'yes'", '[attribution] git_ai must be true or false, got "yes"'),
        ("share", "notes = ['commits']", "[share] notes must be a list of 'agent-trace' and"),
    ]:
        config.write_text(f"[{table}]\n{wrong}\n")
        assert said in one_sentence(a.run("hooks", "install", "git", code=3).stderr)
    assert not (a.path / ".git" / "hooks" / "post-commit").exists()
    config.unlink()
    refused = a.run("attribution", "rewrite", code=2).stderr
    assert "--from" in one_sentence(refused)
    refused = a.run("attribution", "rewrite", "--from", "nowhere..HEAD", code=1).stderr
    assert "nowhere..HEAD" in one_sentence(refused)
