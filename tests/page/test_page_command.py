"""`convgit html` on sessions that stress what the page computes by itself: comparisons across
branches and roots with every kind of change (convgit diff --json is the oracle), file names git
must quote, and the command's own promises (where it writes, stdout, --open, no git, errors)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit.session import Session
from convgit.text import render
from tests.clirun import run
from tests.page.conftest import Shown, convgit_json, run_convgit
from tests.workspace.gitrepo import GitRepo, UserStateGuard, init_repo

ODD_NAMES = ['tab\there "q".txt', "new\nline.txt", "back\\slash ü.txt"]


def snapshotted(repo: GitRepo) -> list[str]:
    return [
        e["id"]
        for e in convgit_json(repo.path, "tree")["entries"]
        if convgit_json(repo.path, "show", e["id"])["snapshot"] is not None
    ]


def branching_session(repo: GitRepo) -> dict[str, str]:
    """Five snapshots on two branches and two roots; between them files are added, changed,
    deleted, made executable, turned into links and folders, and named oddly."""
    run_convgit(repo.path, "init")
    repo.write("a.txt", "one\ntwo\nthree\n")
    repo.write("dir/b.txt", "b\n")
    repo.write("run.sh", "echo hi\n")
    repo.symlink("link", "a.txt")
    start = convgit_json(repo.path, "user", "start")["id"]
    repo.write("a.txt", "one\n2\nthree\nfour\n")
    (repo.path / "dir" / "b.txt").unlink()
    repo.write("new.txt", "new\n")
    for name in ODD_NAMES:
        repo.write(name, f"{name}\n")
    repo.write("blob.bin", b"\x00\x01binary\x00")
    first = convgit_json(repo.path, "assistant", "first")["id"]
    (repo.path / "new.txt").unlink()
    repo.write("new.txt/inner.txt", "now a folder\n")
    (repo.path / "link").unlink()
    repo.write("link", "a file now\n")
    (repo.path / "run.sh").chmod(0o755)
    second = convgit_json(repo.path, "assistant", "second")["id"]
    run_convgit(repo.path, "switch", start)  # the files stay as they are: branch B starts here
    repo.write("dir/b.txt", "b again\n")
    repo.write("zz/ä.txt", "ä\n")
    other = convgit_json(repo.path, "assistant", "other branch")["id"]
    root = {"type": "message", "role": "user", "content": "a second root", "parentId": None}
    appended = convgit_json(repo.path, "append", input=orjson.dumps(root).decode() + "\n")
    second_root = appended["ids"][0]
    (repo.path / "a.txt").unlink()
    lone = convgit_json(repo.path, "assistant", "under the second root")["id"]
    return {
        "start": start, "first": first, "second": second, "other": other,
        "second_root": second_root, "lone": lone,
    }  # fmt: skip


@dataclass(frozen=True)
class Branching:
    repo: GitRepo
    ids: dict[str, str]
    page: Path


@pytest.fixture(scope="module")
def branching(tmp_path_factory: pytest.TempPathFactory) -> Branching:
    guard = UserStateGuard()
    repo = init_repo(tmp_path_factory.mktemp("branching") / "repo")
    guard.watch(repo.path)
    ids = branching_session(repo)
    page = repo.path.parent / "page.html"
    run_convgit(repo.path, "html", "-o", str(page))
    guard.verify()  # writing the page touched none of the user's git state
    return Branching(repo, ids, page)


def test_compare_matches_convgit_diff_across_branches_roots_and_kinds(
    branching: Branching, show: Any
) -> None:
    repo, ids = branching.repo, branching.ids
    shown: Shown = show(branching.page)
    with_snapshots = snapshotted(repo)
    assert {ids["start"], ids["first"], ids["second"], ids["other"], ids["lone"]} <= set(
        with_snapshots
    )
    session = Session.open(repo.path)

    def diff_json(a: str, b: str) -> list[dict[str, str]]:
        return [{"path": c.path, "status": c.status} for c in session.snapshots.diff(a, b)]

    assert convgit_json(repo.path, "diff", ids["second"], ids["lone"])["changes"] == diff_json(
        ids["second"], ids["lone"]
    )
    statuses = set()
    for a in with_snapshots:
        shown.select(a)
        for b in with_snapshots:
            if b == a:
                continue
            expected = diff_json(a, b)
            statuses |= {c["status"] for c in expected}
            listed = shown.compare(b)
            assert listed == [f"{render.STATUS_LETTERS[c['status']]} {c['path']}" for c in expected]
    assert statuses == {"added", "modified", "deleted", "typechange"}


def test_every_changed_file_of_a_snapshot_has_git_s_diff_even_with_odd_names(
    branching: Branching, show: Any
) -> None:
    repo, ids = branching.repo, branching.ids
    shown: Shown = show(branching.page)
    shown.select(ids["first"])
    changes = convgit_json(repo.path, "diff", ids["start"], ids["first"])["changes"]
    assert {c["path"] for c in changes} >= set(ODD_NAMES)
    for change in changes:
        box = shown.file_box(change["path"])
        assert box.count() == 1, change
        if change["path"] == "blob.bin":  # named, not shown, in both views
            assert box.locator(".why").text_content() == "binary file: not shown"
            continue
        assert box.locator(".diff .add, .diff .del").count() >= 1, change
    shown.compare(ids["start"])
    binary = shown.file_box("blob.bin", within="#compare-result")
    assert binary.locator(".why").text_content() == "not shown: binary"
    assert shown.file_box(ODD_NAMES[0]).locator(".diff .add").all_text_contents() == [
        "+" + ODD_NAMES[0]
    ]


def test_html_writes_into_the_store_prints_and_opens(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    run_convgit(repo.path, "init")
    convgit_json(repo.path, "user", "hello")
    status = convgit_json(repo.path, "status")
    written = convgit_json(repo.path, "html")
    path = Path(written["path"])
    assert path == repo.path / ".git" / "convgit" / "pages" / f"{status['session']}.html"
    assert written["bytes"] == len(path.read_bytes())
    printed = run_convgit(repo.path, "html", "-o", "-").stdout
    assert printed.startswith("<!doctype html>") and printed.rstrip().endswith("</html>")
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n')
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("CONVGIT_")}
    run("html", "--open", "-o", str(tmp_path / "p.html"), cwd=repo.path,
        env={**env, "BROWSER": f"{browser} %s"})  # fmt: skip
    assert opened.read_text() == (tmp_path / "p.html").as_uri()


def test_html_outside_git_shows_the_conversation_alone(tmp_path: Path, show: Any) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    run_convgit(folder, "init")
    user = convgit_json(folder, "user", "no repository here")["id"]
    page = Path(convgit_json(folder, "html")["path"])
    assert page.parent == folder / ".convgit" / "pages"
    shown: Shown = show(page)
    shown.select(user)
    assert "no workspace track" in shown.page.locator("#details").inner_text()
    assert "files:   not tracked" in shown.page.locator("#status").inner_text()


def test_a_file_name_that_is_not_utf8_is_shown_with_a_replacement_character(
    tmp_path: Path,
) -> None:
    repo = init_repo(tmp_path / "repo")
    run_convgit(repo.path, "init")
    convgit_json(repo.path, "user", "start")
    (repo.path / os.fsdecode(b"bad\xff.txt")).write_text("made by a tool\n")
    convgit_json(repo.path, "assistant", "wrote a file whose name is not UTF-8")
    page = run_convgit(repo.path, "html", "-o", "-").stdout
    assert '"bad\ufffd.txt","added"' in page


def test_html_refuses_plainly(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    failed = run_convgit(folder, "html", code=1)
    assert failed.stderr.startswith("convgit: There is no current convgit session here.")
    run_convgit(folder, "init")
    failed = run_convgit(folder, "html", "nosuchsession", code=1)
    assert "There is no session 'nosuchsession' here." in failed.stderr
    sessions = folder / ".convgit" / "sessions"
    session_file = next(sessions.glob("*.jsonl"))
    with session_file.open("ab") as damaged:
        damaged.write(
            b'{"type":"message","id":"x1","parentId":"nowhere","ts":"t","role":"user","content":"q"}\n'
        )
    failed = run_convgit(folder, "html", code=3)
    assert "cannot be read safely" in failed.stderr and "convgit fsck" in failed.stderr
    assert not (folder / ".convgit" / "pages").exists()
