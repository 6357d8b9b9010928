"""A session that does not exist and a store that cannot be read are different errors: the first
is exit 1 with the list of sessions, the second exit 3 with fsck's report. Neither is ever shown
as an empty conversation."""

from __future__ import annotations

from pathlib import Path

import pytest

from convgit import CorruptStoreError, NotFoundError, Session
from tests.clirun import Shell

READERS = (["log"], ["context"], ["branches"], ["html", "-o", "-"])


@pytest.fixture
def two(tmp_path: Path) -> tuple[Shell, str, str]:
    sh = Shell(tmp_path)
    first = sh.json("init", "--no-snapshots", "--name", "first")["id"]
    sh.run("user", "one")
    second = sh.json("init", "--no-snapshots")["id"]
    sh.run("user", "two")
    return sh, first, second


def listed(first: str, second: str) -> str:
    ids = sorted([(first, f"{first} (first)"), (second, second)])
    return "  hint: the sessions here: " + ", ".join(shown for _, shown in ids)


@pytest.mark.parametrize("args", READERS)
def test_a_session_that_does_not_exist_is_exit_1_with_the_sessions_there_are(
    two: tuple[Shell, str, str], args: list[str]
) -> None:
    sh, first, second = two
    done = sh.run("--session", "0000nosuch", *args, code=1)
    assert done.stdout == b""
    assert done.stderr.decode().splitlines() == [
        "convgit: There is no session '0000nosuch' here.",
        listed(first, second),
    ]


def test_every_way_of_naming_a_missing_session_says_so(
    two: tuple[Shell, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sh, first, second = two
    monkeypatch.setenv("CONVGIT_SESSION", "feedfeedfeed")
    done = sh.run("log", code=1)
    monkeypatch.delenv("CONVGIT_SESSION")
    assert b"There is no session 'feedfeedfeed' here." in done.stderr
    assert listed(first, second).encode() in done.stderr
    # neither an id nor a session's name (`--session` takes both)
    done = sh.run("--session", "no/such", "log", code=1)
    assert b"There is no session 'no/such' here." in done.stderr
    assert listed(first, second).encode() in done.stderr
    assert sh.run("--session", "first", "log").stdout  # the first session, by its name
    # the session `init` made current was deleted: not an empty conversation
    store = tmp_path / ".convgit" / "sessions"
    (store / f"{second}.jsonl").unlink()
    done = sh.run("context", code=1)
    assert done.stdout == b"" and f"There is no session '{second}' here.".encode() in done.stderr
    assert f"hint: the sessions here: {first} (first)".encode() in done.stderr


def test_no_session_at_all_says_how_to_start_one(tmp_path: Path) -> None:
    done = Shell(tmp_path).run("log", code=1)
    assert done.stderr.decode().splitlines() == [
        "convgit: There is no current convgit session here.",
        "  hint: convgit init",
    ]
    with pytest.raises(NotFoundError, match="no current convgit session"):
        Session.open(tmp_path, store_dir=tmp_path / "store")


def test_a_session_that_cannot_be_read_is_exit_3_with_fsck_s_report(
    two: tuple[Shell, str, str], tmp_path: Path
) -> None:
    sh, _, second = two
    path = tmp_path / ".convgit" / "sessions" / f"{second}.jsonl"
    with path.open("ab") as f:
        f.write(
            b'{"type":"message","id":"x1","parentId":"gone","ts":"t","role":"user","content":"a"}\n'
        )
        f.write(b"not json\n")
    fsck = sh.run("fsck", code=3).stderr.decode().splitlines()
    errors = [line for line in fsck if line.startswith("error: ")]
    assert len(errors) == 2
    for args in READERS:
        done = sh.run(*args, code=3)
        lines = done.stderr.decode().splitlines()
        assert done.stdout == b"", args
        assert lines[0].startswith(f"convgit: Session {second} cannot be read safely: line 3")
        assert lines[1:3] == [f"  {line}" for line in errors], args
        assert lines[3].startswith("  hint: run `convgit fsck`")
    with pytest.raises(CorruptStoreError) as raised:
        Session.open(
            tmp_path, session=second, store_dir=tmp_path / ".convgit"
        ).conversation.context()
    assert list(raised.value.report) == errors


def test_a_store_whose_folders_cannot_be_read_is_exit_3_not_an_empty_store(
    tmp_path: Path,
) -> None:
    sh = Shell(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    (store / "sessions").write_text("a file where the sessions folder goes\n")
    for args in (["sessions"], ["--session", "abc", "log"]):
        done = sh.run("--store", str(store), *args, code=3)
        assert b"sessions folder" in done.stderr and b"cannot be read" in done.stderr
    (store / "sessions").unlink()
    (store / "current" / "store").mkdir(parents=True)  # the current-session pointer
    done = sh.run("--store", str(store), "log", code=3)
    assert b"pointer to the current session" in done.stderr
    sid = Session.create(tmp_path, store_dir=tmp_path / "other", snapshots=False).id
    session_file = tmp_path / "other" / "sessions" / f"{sid}.jsonl"
    session_file.unlink()
    session_file.mkdir()
    done = sh.run("--store", str(tmp_path / "other"), "--session", sid, "log", code=3)
    assert b"is a directory" in done.stderr
