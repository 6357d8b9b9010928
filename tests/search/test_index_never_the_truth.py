"""The search index is never the truth: deleted, cut short, filled with garbage or behind the
files (a turn appended as a hook appends it, a session rewritten by redact, snapshots gc let go,
a session moved to the trash and back), a search still finds what the files say. Redacted text
is never found again, and no file of the index keeps it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.search.oracle import changed_by_git, searched, turn
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo


def _index(here: Path) -> Path:
    return here / ".git" / "convgit" / "search.sqlite"


def _why(here: Path, *args: str) -> object:
    return convgit(here, "search", *args, "--json").json()["indexes"][0]["why"]


def test_a_deleted_cut_short_or_garbage_index_is_rebuilt_from_the_files(repo: GitRepo) -> None:
    here = repo.path
    convgit(here, "init")
    made = {turn(here, f"needle number {n} of the haystack") for n in range(6)}
    assert searched(here, "needle") == made
    assert _why(here, "needle") is None  # up to date: read as it is
    _index(here).unlink()
    assert _why(here, "needle") == "missing"
    assert searched(here, "needle") == made
    data = _index(here).read_bytes()
    _index(here).write_bytes(data[: len(data) // 2])
    assert _why(here, "needle") == "damaged"
    assert searched(here, "needle") == made
    _index(here).write_bytes(b"not a database at all" * 100)
    assert _why(here, "needle") == "damaged"
    assert searched(here, "needle") == made
    assert _why(here, "needle", "--reindex") == "asked"


def test_an_index_behind_the_files_is_brought_up_to_date(repo: GitRepo) -> None:
    here = repo.path
    sid = convgit(here, "init", "--json").json()["id"]
    first = turn(here, "first words")
    assert searched(here, "words") == {first}
    second = turn(here, "second words")  # as a hook appends a turn: the index is behind
    assert searched(here, "words") == {first, second}
    other = convgit(here, "init", "--json").json()["id"]
    third = turn(here, "third words")
    assert searched(here, "words") == {first, second, third}
    convgit(here, "sessions", "rm", other, "--yes")
    assert searched(here, "words") == {first, second}
    convgit(here, "sessions", "restore", other)
    assert searched(here, "words") == {first, second, third}
    convgit(here, "use", sid)
    convgit(here, "label", first, "milestone-one")
    assert searched(here, "milestone") == {first}
    convgit(here, "label", first, "--clear")
    assert searched(here, "milestone") == set()


def test_redacted_text_is_never_found_again(repo: GitRepo) -> None:
    here = repo.path
    convgit(here, "init")
    secret = "hunter2-very-secret-token"
    kept = turn(here, f"the token is {secret}, keep it safe")
    plain = turn(here, "nothing to hide here")
    assert searched(here, secret) == {kept}
    assert searched(here, "hide") == {plain}
    convgit(here, "redact", secret, "--yes")
    assert searched(here, secret) == set()
    assert searched(here, "hunter2") == set()
    assert searched(here, "[redacted]") == {kept}
    assert searched(here, "hide") == {plain}
    for path in _index(here).parent.glob("search.sqlite*"):
        assert secret.encode() not in path.read_bytes(), path
    # not even its pieces: the index keeps the trigrams of the words, and none of the secret's
    db = sqlite3.connect(_index(here))
    db.execute("create virtual table temp.terms using fts5vocab(main, words, row)")
    terms = {term for (term,) in db.execute("select term from temp.terms")}
    db.close()
    pieces = {secret[i : i + 3].lower() for i in range(len(secret) - 2)}
    kept_text = "the token is [redacted], keep it safe nothing to hide here"
    assert terms and not (pieces - {kept_text[i : i + 3] for i in range(len(kept_text))}) & terms


def test_files_changed_after_gc_let_snapshots_go_are_gits_diff_of_what_stays(
    repo: GitRepo,
) -> None:
    here = repo.path
    sid = convgit(here, "init", "--json").json()["id"]
    old = "2026-01-01T10:00:00.000Z"
    repo.write("base.txt", "base\n")
    base = [turn(here, "base one", ts=old)]
    repo.write("base.txt", "base 2\n")
    base.append(turn(here, "base two", ts=old))
    convgit(here, "switch", base[0])
    side = []
    for n in range(3):
        repo.write(f"side{n}.txt", f"side {n}\n")
        side.append(turn(here, f"side {n}", ts=old))
    convgit(here, "switch", base[-1])
    before = {p: searched(here, "--file", p) for p in ("side0.txt", "side1.txt", "side2.txt")}
    assert before == {"side0.txt": {side[0]}, "side1.txt": {side[1]}, "side2.txt": {side[2]}}
    done = convgit(here, "gc", "--json").json()
    assert {i["entry"] for i in done["let_go"]} == set(side[:-1]), "set up"
    expected = changed_by_git(here, sid)
    for path in ("side0.txt", "side1.txt", "side2.txt", "base.txt"):
        want = {entry for entry, paths in expected.items() if path in paths}
        assert searched(here, "--file", path) == want, path
    assert searched(here, "--file", "side0.txt") == {side[-1]}  # the kept end of the branch
