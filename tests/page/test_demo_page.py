"""The page of the demo session, in a real headless Chromium: the tree, the diffs, the markers,
comparisons and the promise that nothing is fetched. git and the CLI are the oracles."""

from __future__ import annotations

import re
import subprocess
from itertools import permutations
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit.text import render
from tests.page.conftest import Demo, Shown, convgit_json, run_convgit
from tests.page.screenshots import source_digest, write_screenshot


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def ids_of(locator: Any) -> list[str]:
    return list(locator.evaluate_all("nodes => nodes.map(n => n.dataset.entry)"))


def entry_of(marker: Any) -> str:
    return str(marker.evaluate("m => m.closest('[data-entry]').dataset.entry"))


def changed_lines(patch: str) -> list[str]:
    """The + and - lines of a unified diff's hunks."""
    body = patch.split("\n@@", 1)[-1].splitlines()[1:]
    return [line for line in body if line[:1] in "+-"]


def test_the_demo_ends_by_writing_its_page(demo: Demo) -> None:
    assert f"wrote the page of session {demo.status['session']} to {demo.page}" in demo.output
    assert demo.page.stat().st_size > 0
    # the page lives in the store, not in the working tree: no snapshot will ever hold it
    assert git(demo.folder, "status", "--porcelain", "--untracked-files=all") == " M calc.py\n"
    assert demo.status["files"] == {"matches": demo.labels["planB"], "changed": []}


def test_the_tree_shows_every_entry_in_the_words_and_order_of_convgit_tree(
    demo: Demo, show: Any
) -> None:
    shown: Shown = show(demo.page)
    rows = shown.page.locator("#rows [data-entry]")
    ids = ids_of(rows)
    drawn = run_convgit(demo.folder, "tree").stdout.splitlines()[1:]
    assert ids == [re.findall(r"\b[0-9a-f]{8}\b", line)[0] for line in drawn]
    assert sorted(ids) == sorted(e["id"] for e in demo.entries)
    by_id = {e["id"]: e for e in demo.entries}
    words = rows.evaluate_all(
        "rows => rows.map(r => [r.querySelector('.kind').title,"
        " r.querySelector('.text').textContent])"
    )
    for ident, (kind, text) in zip(ids, words, strict=True):
        assert (f"{kind}: {text}" if text else kind) == render.summary(by_id[ident])
    for label, ident in demo.labels.items():
        assert shown.row(ident).locator(".label").inner_text() == label
    on_path = [e["id"] for e in convgit_json(demo.folder, "log")["entries"]]
    assert set(ids_of(shown.page.locator("#rows .row.on-path"))) == set(on_path)
    snapshotted = {
        e["id"] for e in demo.entries if convgit_json(demo.folder, "show", e["id"])["snapshot"]
    }
    assert set(ids_of(shown.page.locator("#rows .row:has(.lane .snap)"))) == snapshotted


def test_clicking_plan_a_shows_its_diff_with_the_changed_line(demo: Demo, show: Any) -> None:
    shown: Shown = show(demo.page)
    plan_a, task = demo.labels["planA"], demo.labels["task"]
    shown.select(plan_a)
    details = shown.page.locator("#details")
    assert "Plan A: add() now counts up from a in a loop." in details.inner_text()
    box = details.locator('.file[data-path="calc.py"]')
    page_patch = "\n".join(box.locator(".diff > span").all_inner_texts())
    assert "+    for _ in range(b):  # plan A: count up (breaks for negative b)" in page_patch
    assert "-    return a - b  # bug: should add" in page_patch
    trees = [convgit_json(demo.folder, "show", e)["snapshot"]["tree"] for e in (task, plan_a)]
    assert changed_lines(page_patch) == changed_lines(git(demo.folder, "diff-tree", "-p", *trees))
    assert box.locator(".diff .add").count() == 4 and box.locator(".diff .del").count() == 1


def test_the_context_and_files_markers_sit_where_status_says(demo: Demo, show: Any) -> None:
    shown: Shown = show(demo.page)
    context = shown.page.locator('#rows [data-marker="context"]')
    files = shown.page.locator('#rows [data-marker="files"]')
    assert context.count() == 1 and files.count() == 1
    assert entry_of(context) == demo.status["leaf"]
    assert entry_of(files) == demo.status["files"]["matches"]
    assert context.inner_text() == "← context" and files.inner_text() == "← files"
    words = run_convgit(demo.folder, "status").stdout.rstrip("\n")
    assert shown.page.locator("#status").inner_text().rstrip("\n") == words


def test_compare_gives_the_file_list_of_convgit_diff_for_every_pair(demo: Demo, show: Any) -> None:
    shown: Shown = show(demo.page)
    snapshotted = [
        e["id"] for e in demo.entries if convgit_json(demo.folder, "show", e["id"])["snapshot"]
    ]
    assert {demo.labels["planA"], demo.labels["planB"]} <= set(snapshotted)
    for a, b in permutations(snapshotted, 2):
        shown.select(a)
        listed = shown.compare(b)
        expected = convgit_json(demo.folder, "diff", a, b)["changes"]
        assert listed == [f"{render.STATUS_LETTERS[c['status']]} {c['path']}" for c in expected]
    shown.select(demo.labels["planA"])
    assert shown.compare(demo.labels["planB"]) == ["M calc.py"]
    result = shown.page.locator("#compare-result")
    assert "$ convgit diff planA planB" in result.inner_text()
    lines = result.locator('.file[data-path="calc.py"] .diff > span').all_inner_texts()
    assert "+    return a + b  # plan B: just add" in lines
    assert "-    for _ in range(b):  # plan A: count up (breaks for negative b)" in lines


def test_the_page_compares_lines_as_git_does(demo: Demo, show: Any) -> None:
    """The page's own line diff (for comparisons) against git's, on the same two snapshots."""
    shown: Shown = show(demo.page)
    task, plan_a = demo.labels["task"], demo.labels["planA"]
    shown.select(task)
    assert shown.compare(plan_a) == ["M calc.py"]
    mine = shown.page.locator('#compare-result .file[data-path="calc.py"] .diff > span')
    trees = [convgit_json(demo.folder, "show", e)["snapshot"]["tree"] for e in (task, plan_a)]
    theirs = git(demo.folder, "diff-tree", "-p", *trees)
    assert mine.all_inner_texts() == theirs.split("\n@@", 1)[1].join(["@@", ""]).splitlines()


def test_restores_and_saved_states_are_shown_where_they_happened(demo: Demo, show: Any) -> None:
    shown: Shown = show(demo.page)
    sidecar = (
        demo.folder / ".git" / "convgit" / "sessions" / f"{demo.status['session']}.files.jsonl"
    )
    records = [orjson.loads(line) for line in sidecar.read_bytes().splitlines()]
    saved = [r["before"] for r in records if r["type"] == "restore"]
    assert len(saved) == 3
    notes = [e["id"] for e in demo.entries if e["type"] == "note" and e.get("source") == "restore"]
    # the first restore is told by a note above the message asking for plan B; restoring plan A
    # and undoing it before the next turn left no note: both are shown at the last entry before
    # them, plan B
    assert len(notes) == 1
    where = [notes[0], demo.labels["planB"]]
    assert ids_of(shown.page.locator("#rows .row:has(.lane .restore)")) == where
    timeline = shown.page.locator(".timeline").inner_text()
    for commit in saved:
        assert f"saved the previous state as saved:{commit[:12]}" in timeline
    shown.select(notes[0])
    event = shown.page.locator("#details .event").inner_text()
    assert f"restored 1 file to the snapshot of {demo.labels['task']}" in event
    assert f"saved the previous state as saved:{saved[0][:12]}" in event
    fork = next(e["id"] for e in demo.entries if e["type"] == "branch_summary")
    shown.select(fork)  # going back changed no file: no restore, no snapshot of its own
    assert shown.page.locator("#details .event").count() == 0
    assert "No snapshot of its own" in shown.page.locator("#details").inner_text()


def test_the_page_opens_on_the_newest_reply_with_a_snapshot_not_a_restore_note(
    demo: Demo, show: Any
) -> None:
    shown: Shown = show(demo.page)
    by_id = {e["id"]: e for e in demo.entries}
    path = [e["id"] for e in convgit_json(demo.folder, "log")["entries"]]
    replies = [
        i
        for i in path
        if by_id[i].get("role") == "assistant" and convgit_json(demo.folder, "show", i)["snapshot"]
    ]
    assert replies[-1] == demo.labels["planB"]
    assert shown.page.locator("#details").get_attribute("data-entry") == replies[-1]
    notes = [i for i in path if by_id[i]["type"] == "note" and by_id[i]["source"] == "restore"]
    assert notes, "a restore note on the path, which the page passes over"


def test_a_branch_collapses_and_expands(demo: Demo, show: Any) -> None:
    shown: Shown = show(demo.page)
    plan_a = demo.labels["planA"]
    after = next(e["id"] for e in demo.entries if e["parentId"] == plan_a)
    shown.row(plan_a).locator(".tog").click()
    assert shown.row(after).is_hidden() and shown.row(plan_a).is_visible()
    assert shown.row(plan_a).locator(".hidden-count").inner_text() == "(+1 hidden)"
    shown.row(plan_a).locator(".tog").click()
    assert shown.row(after).is_visible()
    order = ids_of(shown.page.locator("#rows [data-entry]"))
    shown.select(order[0])
    shown.page.keyboard.press("ArrowDown")  # the arrow keys walk the rows as drawn
    shown.page.wait_for_selector(f'#details[data-entry="{order[1]}"]')


def test_no_request_leaves_the_page(demo: Demo, show: Any) -> None:
    shown: Shown = show(demo.page)
    for row in ids_of(shown.page.locator("#rows [data-entry]")):
        shown.select(row)
    shown.select(demo.labels["planA"])
    shown.compare(demo.labels["planB"])
    shown.page.wait_for_load_state("networkidle")
    assert {url.split("#")[0] for url in shown.requests} == {shown.url}


def test_the_screenshot_of_the_demo_page_in_docs(
    demo: Demo, show: Any, request: pytest.FixtureRequest
) -> None:
    """docs/demo-page.png, shown in the README, is made here (see tests/pictures.py): made
    again by `pytest --pictures` whenever the code that draws the page or the demo changed."""
    shown: Shown = show(demo.page)
    shown.select(demo.labels["planA"])
    shown.compare(demo.labels["planB"])
    shown.page.set_viewport_size({"width": 1360, "height": 1000})
    write_screenshot(shown.page, "demo-page.png", source_digest(), demo.page.parent, request)
