"""`convgit search --all-stores` searches every store convgit has written on this machine (the
per-user list under XDG data, which a new session adds its store to), newest first, and each
result's command shows it from anywhere; a store gone from the disk is passed over."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from tests.search.oracle import turn
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import init_repo


def test_every_store_written_is_searched_and_each_result_shows_from_anywhere(
    tmp_path: Path,
) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    found = {}
    for name, ts in (("one", "2026-01-01T10:00:00.000Z"), ("two", "2026-02-01T10:00:00.000Z")):
        repo = init_repo(tmp_path / name)
        convgit(repo.path, "init", env=env)
        found[name] = (repo.path, turn(repo.path, f"shared needle in {name}", ts=ts))
    plain = tmp_path / "plain"  # a store outside git, made by the hooks' per-user way too
    plain.mkdir()
    convgit(plain, "init", env=env)
    convgit(plain, "user", "shared needle outside git", env=env)
    gone = init_repo(tmp_path / "gone")
    convgit(gone.path, "init", env=env)
    shutil.rmtree(gone.path)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = convgit(elsewhere, "search", "shared needle", "--all-stores", "--json", env=env).json()
    results = done["results"]
    assert [r["entry"] for r in results][1:] == [found["two"][1], found["one"][1]]
    assert "outside git" in results[0]["snippet"]
    for result in results:  # the command shown works from a folder of no store
        words = shlex.split(result["show"])
        assert words[:2] == ["convgit", "--store"]
        shown = convgit(elsewhere, *words[1:], "--json", env=env).json()
        assert shown["entry"]["id"] == result["entry"]
    assert not convgit(elsewhere, "search", "shared", "--json", code=1, env=env).stdout


def test_a_store_the_file_system_refuses_is_left_out_and_the_others_are_searched(
    tmp_path: Path,
) -> None:
    """A store of the list whose files the file system refuses (a folder where the search
    index goes, as a crashed tool or a hand can leave it) is named as left out in --json; the
    search of the others goes on (it stopped with "Is a directory")."""
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    good = init_repo(tmp_path / "good")
    convgit(good.path, "init", env=env)
    kept = turn(good.path, "shared needle here", ts="2026-01-01T10:00:00.000Z")
    odd = init_repo(tmp_path / "odd")
    convgit(odd.path, "init", env=env)
    turn(odd.path, "shared needle there", ts="2026-02-01T10:00:00.000Z")
    (odd.path / ".git" / "convgit" / "search.sqlite").mkdir()

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = convgit(elsewhere, "search", "shared needle", "--all-stores", "--json", env=env).json()
    assert [r["entry"] for r in done["results"]] == [kept]
    [left] = [i for i in done["indexes"] if i["why"].startswith("left out")]
    assert left["store"].endswith("odd/.git/convgit")
