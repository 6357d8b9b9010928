"""The small moves that once did the wrong thing in silence, each through the real CLI: a label
given to an entry that has one, a trashed session named by its name, a worktree of a commit
several entries share, a retry where there is nothing to retry, a saved state shown to a
person, a resume that writes into the working tree, a folder given to import, and a snapshot
that left a path out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def started(repo: GitRepo) -> dict[str, str]:
    convgit(repo.path, "init", "--name", "work")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.write("app.py", "print('a')\n")
    reply = convgit(repo.path, "assistant", "plan A", "--json").json()["id"]
    return {"task": task, "reply": reply}


def labels(repo: GitRepo) -> dict[str, str]:
    return {
        e["id"]: e["label"]
        for e in convgit(repo.path, "tree", "--json").json()["entries"]
        if e.get("label")
    }


def test_a_second_label_on_an_entry_is_refused_and_force_replaces_it_saying_so(
    repo: GitRepo,
) -> None:
    ids = started(repo)
    done = convgit(repo.path, "label", ids["reply"], "planA")
    assert done.stdout.splitlines()[-1].startswith("files: not changed")  # as every move ends
    refused = convgit(repo.path, "label", ids["reply"], "first-try", code=1)
    assert "is labelled 'planA' already" in one_sentence(refused.stderr)
    assert "-f" in refused.stderr and labels(repo) == {ids["reply"]: "planA"}
    replaced = convgit(repo.path, "label", ids["reply"], "first-try", "-f")
    assert "labelled first-try (was planA)" in replaced.stdout
    assert labels(repo) == {ids["reply"]: "first-try"}
    cleared = convgit(repo.path, "label", ids["reply"], "--clear", "--json").json()
    assert cleared["replaced"] == "first-try" and labels(repo) == {}


def test_sessions_restore_takes_a_trashed_sessions_name(repo: GitRepo) -> None:
    started(repo)
    sid = convgit(repo.path, "status", "--json").json()["session"]
    convgit(repo.path, "init", "--name", "other")
    convgit(repo.path, "sessions", "rm", "work", "--yes")
    used = convgit(repo.path, "use", "work", code=1)
    assert f"`convgit sessions restore {sid}`" in used.stderr  # named in the trash, too
    back = convgit(repo.path, "sessions", "restore", "work", "--json").json()
    assert back["session"] == sid
    assert convgit(repo.path, "use", "work").code == 0


def test_a_worktree_names_the_entry_asked_for_when_entries_share_a_commit(
    repo: GitRepo, tmp_path: Path
) -> None:
    ids = started(repo)
    again = convgit(repo.path, "assistant", "nothing changed", "--json").json()["id"]
    snaps = {
        e: convgit(repo.path, "show", e, "--json").json()["snapshot"]["commit"]
        for e in (ids["reply"], again)
    }
    assert snaps[ids["reply"]] == snaps[again]  # the same files, the same commit
    for entry, folder in ((ids["reply"], "one"), (again, "two")):
        made = convgit(repo.path, "worktree", entry, str(tmp_path / folder), "--json").json()
        assert made["added"]["entry"] == entry
        said = convgit(repo.path, "worktree", "--remove", str(tmp_path / folder))
        assert said.code == 0
    text = convgit(repo.path, "worktree", again, str(tmp_path / "three")).stdout
    assert f"the snapshot of {again}" in text
    convgit(repo.path, "worktree", "--remove", str(tmp_path / "three"))


def test_retry_at_a_system_prompt_is_refused_naming_the_reply_above(repo: GitRepo) -> None:
    ids = started(repo)
    convgit(repo.path, "system", "be brief")
    refused = convgit(repo.path, "retry", code=1)
    assert "nothing to retry" in one_sentence(refused.stderr)
    assert f"`convgit retry {ids['reply']}`" in refused.stderr


def test_show_of_a_saved_state_is_words_for_a_person_and_json_with_json(repo: GitRepo) -> None:
    ids = started(repo)
    convgit(repo.path, "restore", ids["task"], "--yes")
    saved = convgit(repo.path, "restores", "--json").json()["saved_states"][0]["id"]
    shown = convgit(repo.path, "show", saved).stdout
    assert not shown.lstrip().startswith("{")
    assert shown.startswith(f"saved state {saved}")
    assert f"before `restore {ids['task']}`" in shown and "app.py" in shown
    assert f"`convgit restore {saved}`" in shown
    assert convgit(repo.path, "show", saved, "--json").json()["saved_state"]["id"] == saved


def test_resume_of_a_file_imported_from_the_checkout_says_it_writes_there(repo: GitRepo) -> None:
    source = repo.path / "sessions" / "pi.jsonl"
    source.parent.mkdir()
    shutil.copy(FIXTURES / "pi" / "v3-tool-calls-and-thinking.jsonl", source)
    convgit(repo.path, "import", "pi", str(source))
    said = convgit(repo.path, "resume", "10000007").stdout.splitlines()
    assert said[0].startswith("wrote a pi session") and ": sessions/" in said[0]
    assert "inside the working tree" in said[1]
    written = json.loads(convgit(repo.path, "resume", "10000007", "--json").stdout)["path"]
    assert Path(written).parent == source.parent


def test_a_folder_or_device_given_to_import_is_refused_by_its_path_not_as_a_damaged_store(
    repo: GitRepo,
) -> None:
    """The file to import is the user's argument, not the store: a folder or a device is a
    refusal (exit 1) naming the path as given, never exit 3, which says the store is damaged."""
    folder = repo.path.parent / "sessions-folder"
    folder.mkdir()
    for given, what in ((str(folder), "is a directory"), ("/dev/null", "is not a regular file")):
        for args in (("import", "codex", given), ("import", given)):
            said = one_sentence(convgit(repo.path, *args, code=1).stderr)
            assert given in said and what in said, said


def test_show_names_what_the_snapshot_left_alone_as_json_does(repo: GitRepo) -> None:
    """`git add -A` would take a nested repository; a snapshot leaves it alone, and `show`
    says so beside the snapshot (its --json always had it), not only a restore."""
    convgit(repo.path, "init")
    repo.git("init", "-q", str(repo.path / "vendor" / "lib"))
    (repo.path / "vendor" / "lib" / "code.py").write_text("inside\n")
    repo.write("app.py", "print('a')\n")
    reply = convgit(repo.path, "assistant", "done", "--json").json()
    assert reply["snapshot"]["skipped"] == [{"path": "vendor/lib", "reason": "nested repository"}]
    (field,) = [
        line for line in convgit(repo.path, "show", reply["id"]).stdout.splitlines()
        if line.startswith("snapshot:")
    ]  # fmt: skip
    assert field.endswith("; left alone: vendor/lib (nested repository)")
