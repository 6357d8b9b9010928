"""Secrets and remotes: a refused push leaves no trace of what it refused, a redaction after a
push leaves no local copy and says what the remote still holds, and the scan finds what a
detector finds (a `.env` file that git does not ignore is a secret by its name)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.sharing.clones import Clone, another_clone, convgit_refs
from tests.sharing.test_push_fetch import start
from tests.workspace.cli import one_sentence
from tests.workspace.gitrepo import git

TOKEN = "ghp_" + "Z9y8X7w6" * 5


def holding(repo: Path, text: str) -> int:
    """How many objects of ``repo`` hold ``text`` (every object, reachable or not, whole)."""
    dump = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout
    return dump.count(text.encode())


def test_a_refused_push_records_nothing_of_what_it_refused(a: Clone, remote: Path) -> None:
    sid = start(a)
    a.run("push")
    a.run("user", f"deploy with {TOKEN}")
    refs = git(a.path, "for-each-ref")
    refused = a.run("push", code=1)
    assert "GitHub token" in one_sentence(refused.stderr)
    assert git(a.path, "for-each-ref") == refs  # no ref moved, none made
    assert holding(a.path, TOKEN) == 0  # no object holds it
    # the hint's advice, then the next push: the remote never gets it
    a.run("redact", "--secrets", "--snapshots", "--yes")
    git(a.path, "-c", "gc.packRefs=false", "gc", "-q", "--prune=now")  # refs left as they are
    assert holding(a.path, TOKEN) == 0
    a.run("push")
    assert f"refs/convgit/_shared/{sid}" in convgit_refs(remote)
    assert holding(remote, TOKEN) == 0


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def test_an_aws_secret_in_a_dotenv_file_is_found_by_push_and_redact(a: Clone, remote: Path) -> None:
    start(a)
    a.run("push")
    a.write(".env", f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\n")
    a.run("assistant", "wrote the environment")
    a.run("user", f"it printed AWS_SECRET_ACCESS_KEY={AWS_SECRET[::-1]}")
    refused = one_sentence(a.run("push", code=1).stderr)
    assert "file .env (a .env file: a secret by its name)" in refused
    assert "file .env (Secret Keyword)" in refused and "entry " in refused
    assert AWS_SECRET not in refused and holding(remote, AWS_SECRET) == 0
    redacted = a.json("redact", "--secrets", "--snapshots", "--yes")["sessions"][0]
    assert redacted["matches"] == 1  # the entry
    assert [".env"] in redacted["snapshots"].values()  # the snapshot's file
    git(a.path, "-c", "gc.packRefs=false", "gc", "-q", "--prune=now")
    assert holding(a.path, AWS_SECRET) == holding(a.path, AWS_SECRET[::-1]) == 0
    # clean now, but a .env file that git does not ignore is a secret by its name
    refused = one_sentence(a.run("push", code=1).stderr)
    assert "file .env (a .env file: a secret by its name)" in refused
    assert "Secret Keyword" not in refused
    with open(a.path / ".git" / "info" / "exclude", "a") as exclude:
        exclude.write(".env\n")
    a.run("push")
    assert holding(remote, AWS_SECRET) == 0


def test_redact_after_a_push_leaves_no_copy_here_and_says_how_the_remote_is_replaced(
    a: Clone, b: Clone, remote: Path, tmp_path: Path
) -> None:
    sid = start(a)
    a.write("deploy.sh", f"export GITHUB_TOKEN={TOKEN}\n")
    a.run("user", f"deploy with {TOKEN}")
    a.run("assistant", "deployed")
    a.run("push", "--allow-secrets")  # it went out: the user said so
    b.run("fetch")
    a.run("user", "one more turn")
    done = a.run("redact", "--secrets", "--snapshots", "--yes").stdout
    (said,) = [line for line in done.splitlines() if "origin still holds" in line]
    assert f"session {sid}" in said and f"`convgit push --replace --session {sid} origin`" in said
    (row,) = a.json("fetch")["sessions"]  # a fetch would bring the text back: not done
    assert (row["session"], row["stale"]) == (sid, True)
    git(a.path, "-c", "gc.packRefs=false", "gc", "-q", "--prune=now")
    assert holding(a.path, TOKEN) == 0  # the session commits and the remote's copies too
    # the check docs/redaction.md gives finds nothing
    tips = git(a.path, "rev-list", "--glob=refs/convgit").split()
    assert git(a.path, "grep", "-e", TOKEN, *tips, check=False) == ""
    # a plain push is refused: it would not replace the remote's copy
    refs = git(remote, "for-each-ref")
    refused = one_sentence(a.run("push", code=1).stderr)
    assert "origin still holds session" in refused and git(remote, "for-each-ref") == refs
    # another clone pushed since: the forced push, leased on what origin had, is refused once
    b.run("--session", sid, "user", "from b")
    b.run("--session", sid, "push", "--allow-secrets")
    refused = one_sentence(a.run("push", "--replace", code=1).stderr)
    assert "changed since it was last fetched here" in refused
    assert a.json("push", "--replace")["replaced"] == [sid]
    git(remote, "gc", "-q", "--prune=now")
    assert holding(remote, TOKEN) == 0
    assert a.json("push")["sessions"][0]["refs"] == 0  # the remote has it all now
    # a new clone gets the redacted session, snapshots and all
    c = another_clone(tmp_path / "c", str(remote))
    assert c.json("fetch")["sessions"][0]["new"]
    assert c.entries(sid) == a.entries(sid) and c.snapshots(sid) == a.snapshots(sid)
    assert holding(c.path, TOKEN) == 0
