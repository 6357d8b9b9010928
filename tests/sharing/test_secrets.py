"""Secrets and remotes: a refused push leaves no trace of what it refused, a redaction after a
push leaves no local copy and says what the remote still holds, and the scan finds what a
detector finds (a `.env` file that git does not ignore is a secret by its name)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.sharing.clones import Clone, another_clone, convgit_refs
from tests.sharing.test_push_fetch import start
from tests.workspace.cli import one_sentence
from tests.workspace.gitrepo import UserStateGuard, git

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


def _turn(clone: Clone, text: str) -> None:
    clone.run("user", text)
    clone.run("assistant", "done")


def test_a_dotenv_template_is_no_secret_by_its_name(a: Clone) -> None:
    a.run("init")
    for name in (
        ".env.example",
        ".env.sample",
        ".env.template",
        ".env.dist",
        "web/.env.local.example",
    ):
        a.write(name, "DATABASE_URL=\nDEBUG=1\n")  # nothing the detector takes
    a.write(".debug", "DEBUG=1\n")  # the same bytes as .env.local, under a name listed first
    a.write(".env.local", "DEBUG=1\n")
    _turn(a, "the environment")
    a.run("share", a.session())
    refused = one_sentence(a.run("push", code=1).stderr)
    assert "The push would send 1 secret(s): file .env.local (a .env file" in refused
    with open(a.path / ".git" / "info" / "exclude", "a") as exclude:
        exclude.write(".env.local\n")
    a.run("push")  # the templates stay in the snapshot: they block nothing


def test_a_template_the_remote_holds_does_not_block_a_push_but_a_new_file_does(
    a: Clone, b: Clone, remote: Path, user_state_guard: UserStateGuard
) -> None:
    a.write(".env.example", "DATABASE_URL=\nAPI_KEY=changeme\n")  # the detector takes it
    a.repo.commit_all("the template")
    git(a.path, "push", "-q", "origin", "main")  # the user's own push: the remote has it
    user_state_guard.watch(a.path)
    a.run("init")
    _turn(a, "first")
    a.run("share", a.session())
    assert a.json("push")["pushed"]  # the template blocks nothing: origin holds it
    # the same file changed here is new to origin: found
    a.write(".env.example", "DATABASE_URL=\nAPI_KEY=changed\n")
    _turn(a, "second")
    refused = one_sentence(a.run("push", code=1).stderr)
    assert "file .env.example (Secret Keyword)" in refused
    # a secret the user committed, pushed, then dropped from origin (another clone's forced
    # push): this clone's origin/main still names it, origin does not hold it any more
    a.write("deploy.cfg", f"password = {AWS_SECRET}\n")
    a.repo.commit_all("deploy")
    git(a.path, "push", "-q", "origin", "main")
    git(b.path, "push", "-q", "--force", "origin", "refs/remotes/origin/main:refs/heads/main")
    assert AWS_SECRET in git(a.path, "show", "origin/main:deploy.cfg")
    user_state_guard.watch(a.path)
    _turn(a, "third")
    refused = one_sentence(a.run("push", code=1).stderr)
    assert "file deploy.cfg (Secret Keyword)" in refused
    git(remote, "gc", "-q", "--prune=now")
    assert holding(remote, AWS_SECRET) == 0


def test_a_secret_in_a_file_name_is_found_and_never_shown(a: Clone, remote: Path) -> None:
    a.run("init")
    a.write(f"cache_{TOKEN}", "")
    a.write(f"build/{TOKEN}/out.txt", "built\n")
    _turn(a, "made a cache")
    a.run("share", a.session())
    refused = a.run("push", code=1).stderr
    said = one_sentence(refused)
    assert "path cache_[redacted] (GitHub token)" in said
    assert "path build/[redacted] (GitHub token)" in said
    assert "not their names" in refused and TOKEN not in refused
    assert holding(remote, TOKEN) == 0
    # the same name in a message: redaction takes the whole token, not its "ghp" alone
    a.run("user", f"it wrote cache_{TOKEN}")
    a.run("redact", "--secrets", "--yes")
    texts = str(a.entries(a.session()))
    assert "cache_[redacted]" in texts and TOKEN[4:] not in texts
