"""``convgit sessions rm`` moves a session to the store's trash (its files and its refs, renamed
so git gc keeps its snapshots), ``sessions restore`` brings it back as it was, and ``gc
--trash`` deletes it for good. A session in the trash is not listed as a session, not opened,
not resumed, and a hook does not record into it."""

from __future__ import annotations

from pathlib import Path

from tests.test_hook import SESSION, event, hook, line
from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo

STORE = Path(".git") / "convgit"


def _files(repo: GitRepo, sid: str) -> dict[str, bytes]:
    """Every file of session ``sid`` in the store's sessions folder, by name."""
    folder = repo.path / STORE / "sessions"
    return {p.name: p.read_bytes() for p in sorted(folder.glob(f"{sid}.*"))}


def _refs(repo: GitRepo) -> str:
    return repo.git("for-each-ref", "--format=%(objectname) %(refname)", "refs/convgit/")


def _session(repo: GitRepo) -> str:
    convgit(repo.path, "init", "--name", "plan-a")
    convgit(repo.path, "user", "make a plan")
    repo.write("plan.txt", "plan A\n")
    convgit(repo.path, "assistant", "plan A written")
    convgit(repo.path, "restore", ":1", "--yes")  # a saved state: a ref under safety/
    convgit(repo.path, "restore", "--undo", "--yes")
    sid: str = convgit(repo.path, "status", "--json").json()["session"]
    return sid


def test_rm_then_restore_gives_back_the_same_bytes_and_the_same_refs(repo: GitRepo) -> None:
    sid = _session(repo)
    other = convgit(repo.path, "init", "--json").json()["id"]  # stays where it is
    files, refs = _files(repo, sid), _refs(repo)
    assert f"{sid}.files.jsonl" in files and f"refs/convgit/{sid}/safety/" in refs

    # no terminal to ask on: refused, and the hint is the command that then does it
    ran = convgit(repo.path, "sessions", "rm", "plan-a", code=1)
    one_sentence(ran.stderr)
    assert _files(repo, sid) == files and _refs(repo) == refs
    hinted = ran.stderr.split("hint: `convgit ", 1)[1].split("`", 1)[0].split()
    assert hinted == ["sessions", "rm", sid, "--yes"]
    moved = convgit(repo.path, *hinted, "--json").json()
    assert moved["session"] == sid and sorted(moved["files"]) == sorted(files)
    assert moved["refs"] == refs.count(f"refs/convgit/{sid}/")

    assert _files(repo, sid) == {}
    kept = _refs(repo)
    assert f"refs/convgit/{sid}/" not in kept
    assert kept.count(f"refs/convgit/_trash/{sid}/") == moved["refs"], "git gc keeps them"
    listed = convgit(repo.path, "sessions", "--json").json()["sessions"]
    assert [row["id"] for row in listed] == [other]
    assert [
        row["id"] for row in convgit(repo.path, "sessions", "--trash", "--json").json()["sessions"]
    ] == [sid]
    text = convgit(repo.path, "sessions").stdout
    assert "in the trash" in text and sid in text.split("in the trash", 1)[1]

    # not opened while there: one sentence saying where it is and what brings it back
    for args in (("--session", sid, "log"), ("--session", sid, "resume", "@")):
        said = one_sentence(convgit(repo.path, *args, code=1).stderr)
        assert said == f"convgit: Session {sid} is in the trash."

    back = convgit(repo.path, "sessions", "restore", sid[:6], "--json").json()
    assert back["session"] == sid
    assert _files(repo, sid) == files, "byte for byte"
    assert _refs(repo) == refs, "the same refs, at the same commits"
    logged = convgit(repo.path, "--session", sid, "log", "--json").json()["entries"]
    assert logged[-1]["content"] == "plan A written"  # a restore undone leaves no note
    assert convgit(repo.path, "sessions", "--trash", "--json").json()["sessions"] == []
    assert not (repo.path / STORE / "trash" / sid).exists()
    convgit(repo.path, "--session", sid, "fsck")


def test_restore_refuses_a_session_that_is_in_the_store(repo: GitRepo) -> None:
    sid = _session(repo)
    convgit(repo.path, "sessions", "rm", sid, "--yes")
    trashed = repo.path / STORE / "trash" / sid / "sessions" / f"{sid}.jsonl"
    copy = repo.path / STORE / "sessions" / f"{sid}.jsonl"
    copy.write_bytes(trashed.read_bytes())  # a session of that id is back in the store
    said = one_sentence(convgit(repo.path, "sessions", "restore", sid, code=1).stderr)
    assert (
        said
        == f"convgit: A session {sid} is in the store already; the one in the trash stays there."
    )
    assert trashed.exists()


def test_gc_trash_deletes_for_good_and_then_restore_refuses(repo: GitRepo) -> None:
    sid = _session(repo)
    convgit(repo.path, "sessions", "rm", sid, "--yes")
    said = one_sentence(convgit(repo.path, "gc", "--trash", code=1).stderr)
    assert "needs --yes; nothing was deleted" in said
    assert convgit(repo.path, "sessions", "--trash", "--json").json()["sessions"] != []

    ran = convgit(repo.path, "gc", "--trash", "--yes")
    assert f"removed session {sid} (plan-a, " in ran.stdout
    assert f"{sid}.jsonl" in ran.stdout and f"{sid}.files.jsonl" in ran.stdout
    assert "refs/convgit/" not in _refs(repo), "no ref of it is left"
    assert not (repo.path / STORE / "trash" / sid).exists()
    assert convgit(repo.path, "sessions", "--trash", "--json").json()["sessions"] == []

    ran = convgit(repo.path, "sessions", "restore", sid, code=1)
    assert one_sentence(ran.stderr) == (
        f"convgit: There is no session '{sid}' in the trash (`convgit gc --trash` may have"
        " emptied it)."
    )
    assert convgit(repo.path, "gc", "--trash", "--json").json() == {
        "removed": [],
        "leftover_refs": 0,
    }


def test_a_hook_records_nothing_into_a_session_in_the_trash(repo: GitRepo, tmp_path: Path) -> None:
    transcript = tmp_path / "claude" / f"{SESSION}.jsonl"
    transcript.parent.mkdir()
    transcript.write_text("")
    hook(repo.path, event("SessionStart", transcript, repo.path, source="startup"))
    hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-1"))
    with transcript.open("a") as out:
        out.write(line("user", "u-1", None, "Make notes.txt", promptId="p-1"))
        out.write(line("assistant", "a-1", "u-1", [{"type": "text", "text": "Made it."}]))
    hook(repo.path, event("Stop", transcript, repo.path, prompt_id="p-1"))
    (mirror,) = convgit(repo.path, "sessions", "--json").json()["sessions"]
    convgit(repo.path, "sessions", "rm", mirror["id"], "--yes")
    trash = repo.path / STORE / "trash"
    before = {p: p.read_bytes() for p in trash.rglob("*") if p.is_file()}

    hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-2"))
    with transcript.open("a") as out:
        out.write(line("user", "u-2", "a-1", "And more", promptId="p-2"))
        out.write(line("assistant", "a-2", "u-2", [{"type": "text", "text": "More."}]))
    done = hook(repo.path, event("Stop", transcript, repo.path, prompt_id="p-2"))
    assert (done.returncode, done.stdout) == (0, b"")

    assert convgit(repo.path, "sessions", "--json").json()["sessions"] == [], (
        "no session made in its place"
    )
    assert {p: p.read_bytes() for p in trash.rglob("*") if p.is_file()} == before
    log = (repo.path / STORE / "logs" / "hooks.log").read_text()
    assert f"session {mirror['id']} is in the trash: the event was not recorded" in log

    convgit(repo.path, "sessions", "restore", mirror["id"])
    hook(repo.path, event("SessionEnd", transcript, repo.path, reason="other"))
    ids = [
        r["id"]
        for r in convgit(repo.path, "--session", mirror["id"], "log", "--json").json()["entries"]
    ]
    assert ids == ["u-1", "a-1", "u-2", "a-2"], "restored, it catches up with the agent"


def test_a_move_killed_half_way_is_finished_by_the_same_command(repo: GitRepo) -> None:
    """Killed after its refs moved, or between two files, ``rm`` and ``restore`` leave the
    session whole where its own file is; run again, each finishes the move."""
    sid = _session(repo)
    files, refs = _files(repo, sid), _refs(repo)
    assert len(files) == 2
    for point in ("trash:refs", "trash:file#2"):
        killed = convgit(
            repo.path, "sessions", "rm", sid, "--yes", env={"CONVGIT_FAULT": point}, code=None
        )
        assert killed.code == -9, killed
        assert f"{sid}.jsonl" in _files(repo, sid), "not moved yet: its own file moves last"
        convgit(repo.path, "--session", sid, "log")
        convgit(repo.path, "sessions", "rm", sid, "--yes")
        assert _files(repo, sid) == {}
        killed = convgit(
            repo.path, "sessions", "restore", sid, env={"CONVGIT_FAULT": point}, code=None
        )
        assert killed.code == -9, killed
        assert f"{sid}.jsonl" not in _files(repo, sid), "still in the trash"
        convgit(repo.path, "sessions", "restore", sid)
        assert _files(repo, sid) == files and _refs(repo) == refs
