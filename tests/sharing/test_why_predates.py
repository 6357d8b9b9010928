"""`convgit why` on a commit made before the session began, found by its files (the session
started from them): it says the commit predates the session, never that a conversation led
there."""

from __future__ import annotations

from tests.sharing.clones import Clone


def test_why_a_commit_older_than_the_session_says_it_predates_it(a: Clone) -> None:
    sid = a.json("init")["id"]
    first = a.json("user", "start from what is committed")["id"]  # its snapshot: HEAD's files
    why = a.json("why", "HEAD")
    assert why["found_by"] == "files" and why["entry"] == first and why["predates"] is True
    shown = a.run("why", "HEAD").stdout
    assert f"it predates session {sid}" in shown and "no conversation led there" in shown
    assert "the conversation that led there" not in shown
