"""`convgit redact`: the one operation that rewrites history. A secret said in a message, a tool
call and its result, a branch summary, a quarantined line, a snapshotted file and a saved state
is gone from every file under the store and, after `--snapshots` and git's gc, from every object
git holds, while fsck passes and the tree keeps its ids and shape. The user's git state is
guarded, as in every workspace test."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit import Session
from convgit.base.errors import RefusedError
from convgit.session import scrub
from convgit.upkeep import redact
from tests.clirun import Shell
from tests.workspace.cli import one_sentence
from tests.workspace.gitrepo import GitRepo

SECRET = "sk-ant-api03-" + "Zq9x" * 8
CALL = {
    "type": "message",
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Trying the key."},
        {"type": "tool_call", "id": "c1", "name": "bash", "input": {"cmd": f"deploy {SECRET}"}},
    ],
}


def store_files(repo: GitRepo) -> dict[str, bytes]:
    root = repo.path / ".git" / "convgit"
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def shape(sh: Shell) -> dict[str, Any]:
    entries = sh.json("tree")["entries"]
    return {
        "parents": {e["id"]: e["parentId"] for e in entries},
        "kinds": {e["id"]: e["type"] for e in entries},
        "labels": {e["id"]: e.get("label") for e in entries},
        "leaf": sh.json("status")["leaf"],
    }


def convgit_refs(repo: GitRepo) -> dict[str, str]:
    listed = repo.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/convgit")
    return dict(line.split() for line in listed.splitlines())


def every_object(repo: GitRepo) -> bytes:
    done = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=repo.path, capture_output=True, check=True,
    )  # fmt: skip
    return done.stdout


def secret_everywhere(repo: GitRepo) -> Shell:
    """A session that holds the secret in every place the store and git keep text."""
    sh = Shell(repo.path)
    sh.run("init", "--name", "deploy")
    asked = sh.json("user", f"Deploy with the key {SECRET}, please.")["id"]
    sh.run("label", asked, "ask")
    repo.write("config/app.env", f"API_KEY={SECRET}\n")
    sh.append(CALL)
    sh.run("tool", "c1", f"401 Unauthorized for {SECRET}", "--error")
    sh.run("assistant", "The key was refused.")  # snapshotted: config/app.env holds the key
    sh.run("fork", "ask", "--summary", f"The key {SECRET} is revoked; ask for a new one.")
    repo.write("config/app.env", f"API_KEY={SECRET}\nDEBUG=1\n")
    sh.run("restore", "ask", "--yes")  # its saved state holds the file; the restore removes it
    with sh.session_file().open("ab") as f:
        f.write(f"not JSON, and the key {SECRET}\n".encode())
    sidecar = sh.session_file().with_suffix(".files.jsonl")
    with sidecar.open("ab") as f:
        f.write(f'{{"type": "snapshot", "entry": "{SECRET}"}}\n'.encode())
    sh.run("repair")  # the lines go to the quarantines; the original files stay as backups
    sh.run("html")
    sh.run("run", ".", "--", "sh", "-c", f"echo using {SECRET}")
    return sh


def test_a_secret_is_gone_from_the_store_and_from_git_after_snapshots_and_gc(
    repo: GitRepo,
) -> None:
    sh = secret_everywhere(repo)
    files = store_files(repo)
    assert [name for name, data in files.items() if SECRET.encode() in data], "set up"
    assert any(name.startswith("sessions/") and ".bak-" in name for name in files)
    assert any(name.startswith("runs/") for name in files)
    before = shape(sh)
    refs_before = convgit_refs(repo)

    done = sh.json("redact", "--secrets", "--snapshots", "--yes")

    (found,) = done["sessions"]
    assert found["matches"] == 4 and done["gc"] is True
    assert set(found["files"]) >= {
        f"{found['session']}.quarantine.jsonl",
        f"{found['session']}.files.quarantine.jsonl",
    }
    assert any(".bak-" in name for name in found["files"])
    assert sorted(p for paths in found["snapshots"].values() for p in paths) >= ["config/app.env"]
    assert any(ref.startswith("safety/") for ref in found["snapshots"])
    assert found["page_removed"] is not None and not Path(found["page_removed"]).exists()
    assert done["runs"] and done["working_tree"] == []

    assert [name for name, data in store_files(repo).items() if SECRET.encode() in data] == []
    assert shape(sh) == before
    sh.run("fsck")
    assert set(convgit_refs(repo)) == set(refs_before)
    repo.git("-c", "gc.packRefs=false", "gc", "--quiet", "--prune=now")
    commits = repo.git("rev-list", "--glob=refs/convgit").split()
    grep = subprocess.run(["git", "grep", "-I", "-e", SECRET, *commits], cwd=repo.path)
    assert grep.returncode == 1, "git grep finds the secret in a commit under refs/convgit"
    assert SECRET.encode() not in every_object(repo)
    repo.git("fsck", "--no-dangling")
    # the snapshots still restore, with the secret redacted in them
    sh.run("restore", "--undo", "--yes")
    assert (repo.path / "config" / "app.env").read_text() == "API_KEY=[redacted]\nDEBUG=1\n"
    lines = [orjson.loads(x) for x in sh.session_file().read_bytes().splitlines()]
    (record,) = [r for r in lines if r["type"] == "redaction"]
    assert record["matches"] >= 4 and record["by"] == "secrets"
    assert set(record["entries"]) == set(found["entries"])


def test_dry_run_lists_what_would_change_and_changes_nothing(repo: GitRepo) -> None:
    sh = secret_everywhere(repo)
    files, refs = store_files(repo), convgit_refs(repo)
    text = sh.run("redact", SECRET, "--snapshots", "--dry-run").stdout.decode()
    # 4 in the session file, 1 in its quarantine and 5 in the backup repair kept of it; 1 in
    # the snapshot records' quarantine and 1 in their backup
    assert "would redact matches of the pattern: 12 in its records" in text.splitlines()[0]
    assert "  saved state safety/" in text and "config/app.env" in text
    assert text.splitlines()[-1] == "dry run: nothing was changed"
    assert SECRET not in text, "the report never repeats the text"
    assert store_files(repo) == files and convgit_refs(repo) == refs


def test_without_a_terminal_redact_needs_yes(repo: GitRepo) -> None:
    sh = Shell(repo.path)
    sh.run("init")
    sh.run("user", f"key {SECRET}")
    files = store_files(repo)
    done = sh.run("redact", "--secrets", code=1)
    assert done.stderr.decode().splitlines() == [
        "convgit: convgit redact rewrites history, and with no terminal to ask on it needs --yes.",
        "  hint: `convgit redact … --dry-run` lists what would change",
    ]
    assert store_files(repo) == files
    for args in (["x", "--secrets"], ["("], ["a*"], [], ["x", "--all", "--session", "y"]):
        sh.run("redact", *args, "--yes", code=2)
    assert store_files(repo) == files


@pytest.mark.parametrize(
    "pattern",
    ["a{99999999999}", "(" * 5000 + "x" + ")" * 5000, "[z-a]", "(?<=a+)b"],
    ids=["repetition too large", "nested too deep", "bad range", "look-behind not fixed"],
)
def test_a_pattern_python_cannot_compile_is_one_sentence(repo: GitRepo, pattern: str) -> None:
    sh = Shell(repo.path)
    sh.run("init")
    sh.run("user", f"key {SECRET}")
    files = store_files(repo)
    for mode in ("--dry-run", "--yes"):
        done = sh.run("redact", pattern, mode, code=2)
        line = one_sentence(done.stderr.decode())
        assert "is not a regular expression" in line
        assert pattern not in line, "the sentence never repeats the pattern"
    assert store_files(repo) == files


def test_a_pattern_matching_an_id_is_refused_and_nothing_is_rewritten(repo: GitRepo) -> None:
    sh = Shell(repo.path)
    sh.run("init")
    ident = sh.json("user", "hello")["id"]
    files = store_files(repo)
    done = sh.run("redact", ident, "--yes", code=1)
    assert b"redact keeps every id" in done.stderr
    assert store_files(repo) == files


def test_one_session_is_redacted_and_the_others_are_named(repo: GitRepo) -> None:
    sh = Shell(repo.path)
    first = sh.json("init")["id"]
    sh.run("user", f"one {SECRET}")
    repo.write("key.txt", SECRET)
    sh.run("assistant", "kept it")
    common = sh.json("log")["entries"][-1]["id"]
    second = sh.json("fork", common, "--new-session")["session"]  # shares the snapshots
    sh.run("user", f"two {SECRET}")
    (repo.path / "key.txt").unlink()
    done = sh.json("--session", first, "redact", "--secrets", "--snapshots", "--yes")
    assert [s["session"] for s in done["sessions"]] == [first]
    elsewhere = " ".join(done["elsewhere"])
    assert f"session {second} holds matches too" in elsewhere
    assert f"still in snapshots of other sessions ({second})" in elsewhere
    done = sh.json("redact", "--secrets", "--snapshots", "--all", "--yes")
    assert {s["session"] for s in done["sessions"]} == {first, second}
    assert done["elsewhere"] == []
    refs = convgit_refs(repo)
    assert refs[f"refs/convgit/{first}/{common}"] == refs[f"refs/convgit/{second}/{common}"]
    repo.git("-c", "gc.packRefs=false", "gc", "--quiet", "--prune=now")
    assert SECRET.encode() not in every_object(repo)
    assert [n for n, data in store_files(repo).items() if SECRET.encode() in data] == []


def test_a_file_still_holding_the_secret_is_named_and_left_as_it_is(repo: GitRepo) -> None:
    sh = Shell(repo.path)
    sh.run("init")
    sh.run("user", "store the key")
    repo.write("key.txt", SECRET)
    sh.run("assistant", "stored")
    text = sh.run("redact", "--secrets", "--snapshots", "--yes").stdout.decode()
    assert "warning: key.txt in the working tree still holds a match" in text
    assert (repo.path / "key.txt").read_text() == SECRET


def test_through_the_library_a_writer_that_read_the_old_file_is_told(
    repo: GitRepo, tmp_path: Path
) -> None:
    session = Session.create(repo.path)
    session.append.user(f"the key is {SECRET}")
    stale = Session.open(repo.path, session=session.id)
    report = redact.redact([session], scrub.Scrubber(SECRET))
    assert [f.entries for f in report.sessions] == [{stale.conversation.leaf: ["content"]}]
    with pytest.raises(RefusedError, match="was replaced"):
        stale.append.user("more")
    fresh = Session.open(repo.path, session=session.id)
    assert fresh.conversation.context().messages[0]["content"] == "the key is [redacted]"
    assert [r["matches"] for r in fresh.conversation.tree.redactions] == [1]
