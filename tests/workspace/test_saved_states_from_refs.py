"""A saved state is found from its ref (refs/convgit/<sid>/safety/<time>) even when its sidecar
record is lost: `restores` lists it, `restore saved:ID` brings it back, `fsck` names the ref and
`repair` writes the record again. Through the real CLI on real repositories, under the guard
that the user's git state never changes."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo, digest


def sidecar_path(repo: GitRepo, sid: str) -> Path:
    return repo.path / ".git" / "convgit" / "sessions" / f"{sid}.files.jsonl"


def restored_once(repo: GitRepo) -> tuple[str, dict[str, object], dict[str, object]]:
    """A session, a restore to its task (saving the plan's files and an untracked note):
    (session id, the restore's --json, the files before it)."""
    sid = convgit(repo.path, "init", "--json").json()["id"]
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.write("src/app.py", "print('plan A')\n")
    convgit(repo.path, "assistant", "plan A")
    repo.write("notes.txt", "my untracked notes\n")
    before = digest(repo.path)
    result = convgit(repo.path, "restore", task, "--yes", "--json").json()
    assert result["saved"]
    return sid, result, before


def drop_the_record(path: Path, saved_commit: str) -> None:
    """Remove the `restore` record of ``saved_commit`` (and its `restored` one) from a sidecar."""
    kept = [
        line
        for line in path.read_bytes().splitlines(keepends=True)
        if orjson.loads(line).get("before") != saved_commit
    ]
    path.write_bytes(b"".join(kept))


@pytest.mark.parametrize("loss", ["sidecar deleted", "record dropped"])
def test_a_saved_state_without_its_record_is_listed_restorable_named_and_repaired(
    repo: GitRepo, loss: str
) -> None:
    sid, result, before = restored_once(repo)
    saved, commit = str(result["saved"]), str(result["before"])
    ref = repo.git("for-each-ref", "--format=%(refname)", f"refs/convgit/{sid}/safety/").strip()
    assert ref and repo.git("rev-parse", ref).strip() == commit
    if loss == "sidecar deleted":
        sidecar_path(repo, sid).unlink()
    else:
        drop_the_record(sidecar_path(repo, sid), commit)

    listed = convgit(repo.path, "restores", "--json").json()["saved_states"]
    assert [(s["id"], s["recorded"]) for s in listed] == [(saved, False)]
    assert listed[0]["session"] == sid
    words = convgit(repo.path, "restores").stdout
    assert f"{saved}  " in words and "no record in the sidecar, found from its ref" in words

    check = convgit(repo.path, "fsck", code=3).stderr
    assert ref in check and saved in check and "`convgit repair` records" in check
    report = convgit(repo.path, "fsck", "--json", code=3).json()
    assert not report["ok"] and any(ref in p["what"] for p in report["problems"])

    back = convgit(repo.path, "restore", saved, "--yes", "--json").json()
    assert back["saved_state"] == saved
    assert digest(repo.path) == before  # the notes and the plan's file, byte for byte

    repaired = convgit(repo.path, "repair").stdout
    assert "recorded 1 saved state(s) again from their refs" in repaired
    assert convgit(repo.path, "fsck", "--json").json()["ok"]
    convgit(repo.path, "fsck")
    listed = convgit(repo.path, "restores", "--json").json()["saved_states"]
    assert {s["id"]: (s["recorded"], s["rebuilt"]) for s in listed}[saved] == (True, True)
    assert "nothing to repair" in convgit(repo.path, "repair").stdout


def test_undo_finds_the_newest_saved_state_from_its_ref(repo: GitRepo) -> None:
    """The newest restore's record is lost: `--undo` still returns to the state it saved."""
    sid, result, before = restored_once(repo)
    drop_the_record(sidecar_path(repo, sid), str(result["before"]))
    undone = convgit(repo.path, "restore", "--undo", "--yes", "--json").json()
    assert undone["saved_state"] == result["saved"]
    assert digest(repo.path) == before
