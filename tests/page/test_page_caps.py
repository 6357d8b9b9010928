"""What the page says where it cannot show everything: a first snapshot with too many files to
list, a diff or a file over the page's cap. The page is made from values (what convgit html
hands convgit.text.html) and read in the browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from convgit.git.plumbing.objects import BLOB
from convgit.text import html
from tests.page.conftest import Shown

TS = "2026-01-02T03:04:05.000Z"


def message(ident: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "id": ident, "parentId": parent, "ts": TS, "role": role,
            "content": text}  # fmt: skip


def capped_page() -> html.Page:
    big_patch = "diff --git a/big.txt b/big.txt\n@@ -1 +1 @@\n" + "+x\n" * html.PATCH_CAP
    snapshots = [
        html.SnapshotView("u1", "c1" * 20, "t1" * 20, 9_999, TS, None, None, []),
        html.SnapshotView(
            "a1", "c2" * 20, "t2" * 20, 9_999, TS, "u1",
            [html.FileChange("big.txt", "modified", (BLOB, "b1" * 20), (BLOB, "b2" * 20),
                             big_patch)],
            [{"path": "huge.iso", "reason": "over the size cap (10.0 MiB)"}],
        ),
        html.SnapshotView("r2", "c3" * 20, "t3" * 20, 1, TS, None, [], []),
    ]  # fmt: skip
    return html.Page(
        session="caps",
        name=None,
        entries=[
            message("u1", None, "user", "start"),
            message("a1", "u1", "assistant", "changed big.txt"),
            message("r2", None, "user", "another root"),
        ],
        children={None: ["u1", "r2"], "u1": ["a1"]},
        path=["u1", "a1"],
        labels={},
        leaf="a1",
        files_at="a1",
        workspace=True,
        status=["session caps", "context: at a1"],
        snapshots=snapshots,
        restores=[],
        blobs={"b1" * 20: b"a" * (html.BLOB_CAP + 1), "b2" * 20: b"small\n"},
    )


def test_what_the_page_cannot_show_it_names_and_says_why(tmp_path: Path, show: Any) -> None:
    page = tmp_path / "caps.html"
    page.write_text(html.render(capped_page()))
    shown: Shown = show(page)
    shown.select("u1")
    assert "Too many files to list here" in shown.page.locator("#details").inner_text()
    shown.select("a1")
    box = shown.file_box("big.txt")
    assert box.locator(".why").text_content() == (
        "its diff is over the page's cap (256 KiB): not shown"
    )
    assert (
        "skipped huge.iso: over the size cap (10.0 MiB)"
        in shown.page.locator("#details").inner_text()
    )
    assert shown.compare("u1") == ["M big.txt"]
    compared = shown.file_box("big.txt", within="#compare-result")
    assert compared.locator(".why").text_content() == "not shown: over the page's cap (256 KiB)"
    assert shown.compare("r2") == []  # across roots, through a snapshot that lists no files
    assert "too many files for this page" in shown.page.locator("#compare-result").inner_text()
