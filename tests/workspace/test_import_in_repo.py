"""Importing an agent's past turns inside a git repository records no snapshot: today's files
are not the files of those turns. The session stays a live one: the next reply appended is
snapshotted as usual. The user's git state is untouched throughout (the guard)."""

from __future__ import annotations

from pathlib import Path

from tests.clirun import Cli
from tests.workspace.gitrepo import GitRepo

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "claude-code" / "rewind.jsonl"


def test_an_import_snapshots_nothing_and_the_session_goes_on_live(repo: GitRepo, cli: Cli) -> None:
    convgit = cli.at(repo.path)
    (result,) = convgit.json("import", "claude-code", str(FIXTURE))["imports"]
    assert result["new"] == 6 and result["leaf"] == "a2"
    assert repo.git("for-each-ref", "refs/convgit") == ""
    status = convgit.json("status")
    assert status["snapshots"] is True and status["leaf_snapshot"] is None
    reply = convgit.json("assistant", "Done, live.")
    assert reply["parentId"] == "a2" and reply["snapshot"] is not None
    refs = repo.git("for-each-ref", "--format=%(refname)", "refs/convgit").split()
    assert refs == [f"refs/convgit/{result['session']}/{reply['id']}"]
