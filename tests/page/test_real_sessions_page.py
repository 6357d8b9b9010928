"""The page of real sessions: Claude Code, Codex and pi sessions imported from the agents' own
transcripts, with snapshots and a restore made through the CLI (tests/page/real_sessions.py),
in a real headless Chromium at 800 px wide and on a wide screen. What is measured is what a
reader sees: short ids, badges, aligned columns, nothing cut or overlapping (the browser's own
boxes), the search box, the entry the page opens on, and what the snapshot list counts."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit.conversation.shortids import ShortIds
from convgit.text import render
from tests.page.conftest import Shown, convgit_json
from tests.page.real_sessions import SAMPLES, RealSession, build
from tests.page.screenshots import source_digest, write_screenshot
from tests.workspace.gitrepo import git

WIDTHS = [800, 1400]
# the columns of a row, left to right, as the browser lays them out
COLUMNS = ".pre, .tog, .id, .kind, .text, .label, .mark, .ts, .lane"
# fields of an entry that name other entries or its own place: not what a search looks in
REFERENCES = {"id", "parentId", "fromId", "firstKeptId", "ts", "type", "label"}


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def real(
    request: pytest.FixtureRequest, samples: Path, tmp_path_factory: pytest.TempPathFactory
) -> RealSession:
    return build(samples, request.param, tmp_path_factory.mktemp(f"real-{request.param}"))


def short_ids(real: RealSession) -> ShortIds:
    return ShortIds(e["id"] for e in real.entries)


def measure(shown: Shown, ids: list[str]) -> list[dict[str, Any]]:
    """For each row of ``ids`` (scrolled into view first): the box of the row, of the list
    and of each column, with the scroll and client widths of each (what is cut shows as
    scrollWidth > clientWidth)."""
    return list(
        shown.page.evaluate(
            """([ids, columns]) => ids.map((id) => {
                const row = document.querySelector(`#rows [data-entry="${CSS.escape(id)}"]`);
                row.scrollIntoView({ block: "center" });
                const box = (node) => {
                    const r = node.getBoundingClientRect();
                    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                             width: r.width, scroll: node.scrollWidth, client: node.clientWidth,
                             text: node.textContent, title: node.title || "",
                             cls: node.className };
                };
                const list = document.getElementById("rows");
                return { id, row: box(row), list: box(list),
                         columns: Array.from(row.querySelectorAll(columns))
                             .filter((c) => c.parentElement === row).map(box) };
            })""",
            [ids, COLUMNS],
        )
    )


def column(row: dict[str, Any], name: str) -> dict[str, Any]:
    found = [c for c in row["columns"] if name in c["cls"].split()]
    assert len(found) == 1, (row["id"], name, row["columns"])
    return found[0]


def sample_rows(real: RealSession) -> list[str]:
    """The rows worth measuring: every snapshot and restore, every label, tool results and
    the rows with the longest ids and texts."""
    restore_notes = [
        e["id"] for e in real.entries if e["type"] == "note" and e.get("source") == "restore"
    ]
    tools = [e["id"] for e in real.entries if e.get("role") == "tool"][:12]
    longest = sorted(real.entries, key=lambda e: -len(e["id"]))[:6]
    first = [e["id"] for e in real.entries[:20]]
    return list(
        dict.fromkeys(
            [*real.snapshotted, *restore_notes, *tools, *(e["id"] for e in longest), *first]
        )
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_rows_keep_their_columns_whole_and_aligned(
    real: RealSession, show: Any, width: int
) -> None:
    shown: Shown = show(real.page)
    shown.page.set_viewport_size({"width": width, "height": 900})
    shown.page.reload()
    shown.page.wait_for_selector("body[data-ready='1']")
    ids = sample_rows(real)
    assert any(e.get("role") == "tool" for e in real.entries if e["id"] in ids)
    rows = measure(shown, ids)
    short = short_ids(real)
    lefts: dict[str, set[float]] = {"ts": set(), "lane": set(), "lane-right": set()}
    widths: dict[str, set[float]] = {"id": set(), "kind": set(), "lane": set()}
    for row in rows:
        box, listed = row["row"], row["list"]
        # nothing sticks out of the row or the list, and the list never scrolls sideways
        assert row["row"]["scroll"] <= row["row"]["client"], row
        assert listed["scroll"] <= listed["client"], (width, row["id"], listed)
        assert box["left"] >= listed["left"] - 0.5 and box["right"] <= listed["right"] + 0.5
        columns = row["columns"]
        for before, after in pairwise(columns):
            assert before["right"] <= after["left"] + 0.5, (width, row["id"], before, after)
        for c in columns:
            assert box["left"] - 0.5 <= c["left"] and c["right"] <= box["right"] + 0.5, c
        ident, kind, text = column(row, "id"), column(row, "kind"), column(row, "text")
        lane, ts = column(row, "lane"), column(row, "ts")
        # the short id, whole; the full id is the row's data
        assert ident["text"] == short(row["id"]) and ident["title"] == row["id"]
        assert ident["scroll"] <= ident["client"]
        assert kind["scroll"] <= kind["client"] or kind["text"].startswith("custom ")
        # the snapshot's commit and any restore in the lane, not cut
        assert lane["scroll"] <= lane["client"], (width, row["id"], lane)
        if row["id"] in real.snapshotted:
            commit = convgit_json(real.folder, "-s", real.session, "show", row["id"])
            assert commit["snapshot"]["commit"][:8] in lane["text"]
        # the text keeps the room: at least a third of the row
        assert text["width"] >= box["width"] / 3, (width, row["id"], text, box)
        lefts["ts"].add(round(ts["left"], 1))
        lefts["lane"].add(round(lane["left"], 1))
        lefts["lane-right"].add(round(lane["right"], 1))
        widths["id"].add(round(ident["width"], 1))
        widths["kind"].add(round(kind["width"], 1))
        widths["lane"].add(round(lane["width"], 1))
    # every row's time and lane at one x; ids and badges of one width, so texts line up
    for name, seen in [*lefts.items(), *widths.items()]:
        assert len(seen) == 1, (width, name, seen)


def tool_heads(real: RealSession) -> dict[str, str]:
    return {
        e["id"]: f"tool[{e['toolCallId']}]" + (" error" if e.get("isError") else "")
        for e in real.entries
        if e.get("role") == "tool"
    }


def test_tool_badges_say_tool_and_keep_the_call_id_in_the_title(
    real: RealSession, show: Any
) -> None:
    shown: Shown = show(real.page)
    heads = tool_heads(real)
    assert heads, real.agent
    ident, head = next(iter(heads.items()))
    badge = shown.row(ident).locator(".kind")
    assert badge.text_content() == ("tool error" if head.endswith(" error") else "tool")
    assert badge.get_attribute("title") == head
    shown.select(ident)  # the details say whose result it is, in full
    call = head.removeprefix("tool[").removesuffix(" error").removesuffix("]")
    assert call in shown.page.locator("#details").inner_text()


def test_ids_are_short_where_read_and_full_in_links_and_data(real: RealSession, show: Any) -> None:
    shown: Shown = show(real.page)
    short = short_ids(real)
    entry = real.snapshotted[2]
    shown.select(entry)
    details = shown.page.locator("#details")
    assert details.locator("h2 .id").inner_text() == short(entry)
    assert details.locator("h2 .id").get_attribute("title") == entry
    assert entry in details.locator(".facts").inner_text()  # the full id, once, to copy
    parent = next(e["parentId"] for e in real.entries if e["id"] == entry)
    link = details.locator(".facts a.entry-link").first
    assert link.inner_text() == short(parent)
    assert link.get_attribute("href") == "#" + parent
    timeline = details.locator(".timeline").inner_text()
    for snapped in real.snapshotted:
        assert f"snapshot of {short(snapped)}:" in timeline
    drawn = shown.page.locator("#rows .row").evaluate_all(
        "rows => rows.map(r => [r.dataset.entry, r.querySelector('.id').textContent])"
    )
    assert len(drawn) == len(real.entries)
    assert all(shown_id == short(ident) for ident, shown_id in drawn)
    assert any(len(short(ident)) < len(ident) for ident, _ in drawn)  # imported ids are long


def haystack(entry: dict[str, Any], short: str, real: RealSession) -> str:
    """What a search looks in, for one entry (the README's promise): its text (every string
    it holds but its references to other entries), its id and short id, its label, and its
    snapshot's commit and the files it changed."""

    def strings(value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        return []

    ident = entry["id"]
    found = [ident, short, entry.get("label", "")]
    found += [s for k, v in entry.items() if k not in REFERENCES for s in strings(v)]
    found += [real.commits.get(ident, ""), *real.paths.get(ident, [])]
    return "\n".join(found).lower()


def test_the_search_box_finds_text_ids_labels_and_file_names(real: RealSession, show: Any) -> None:
    shown: Shown = show(real.page)
    short = short_ids(real)
    box = shown.page.locator("#search")
    every = shown.page.locator("#rows .row:visible").count()
    shown.page.locator("#rows").focus()
    shown.page.keyboard.press("/")  # "/" goes to the search box, as in many viewers
    assert shown.page.evaluate("document.activeElement.id") == "search"
    reply = next(e for e in reversed(real.entries) if e["id"] == real.snapshotted[-1])
    word = max(re.findall(r"[A-Za-z]{6,}", orjson.dumps(reply["content"]).decode()), key=len)
    queries = {
        "start": real.labels["start"],  # a label
        short(real.snapshotted[2]): real.snapshotted[2],  # a short id
        real.snapshotted[1]: real.snapshotted[1],  # a full id
        "conversation_tree_renderer": real.snapshotted[1],  # a file name
        word.upper(): reply["id"],  # text, in any case
    }
    for query, wanted in queries.items():
        box.fill(query)
        shown.page.wait_for_selector("#rows.searching")
        expected = [
            e["id"] for e in real.entries if query.lower() in haystack(e, short(e["id"]), real)
        ]
        assert wanted in expected
        matched = shown.page.locator("#rows .row:visible")
        found = matched.evaluate_all("rs => rs.map(r => r.dataset.entry)")
        assert sorted(found) == sorted(expected), query
        count = shown.page.locator("#search-count").inner_text()
        assert count == f"{len(expected)} of {len(real.entries)} entries"
        marks = shown.page.locator(f'#rows [data-entry="{wanted}"] mark')
        shown_text = shown.row(wanted).inner_text().lower()
        if query.lower() in shown_text:  # highlighted where the row shows it
            assert marks.first.inner_text().lower() == query.lower()
    # a word in many rows, all over the session: the list is as long as the rows it keeps
    box.fill("assistant")
    shown.page.wait_for_selector("#rows.searching")
    kept = shown.page.locator("#rows .row.match").count()
    blocks = shown.page.locator("#rows .row.match").evaluate_all(
        "rs => new Set(rs.map(r => r.parentElement)).size"
    )
    assert blocks >= 2  # the page draws rows in blocks of 64: matches from several
    height = shown.page.locator("#rows .row.match").first.evaluate("r => r.offsetHeight")
    listed = shown.page.locator("#rows").evaluate("l => l.scrollHeight")
    assert kept * height <= listed <= kept * height + 64, (kept, height, listed)
    box.fill(short(real.snapshotted[0]))
    box.press("Enter")  # Enter opens the first match
    shown.page.wait_for_selector(f'#details[data-entry="{real.snapshotted[0]}"]')
    box.press("Escape")  # and Escape shows every row again
    shown.page.wait_for_selector("#rows:not(.searching)")
    assert shown.page.locator("#rows .row:visible").count() == every
    assert shown.page.locator("#rows mark").count() == 0


def test_the_page_opens_on_the_newest_reply_with_a_snapshot(real: RealSession, show: Any) -> None:
    shown: Shown = show(real.page)
    status = convgit_json(real.folder, "-s", real.session, "status")
    leaf = next(e for e in real.entries if e["id"] == status["leaf"])
    assert leaf.get("role") == "user"  # the leaf: not a reply, not where the page opens
    path = [e["id"] for e in convgit_json(real.folder, "-s", real.session, "log")["entries"]]
    newest = next(
        i
        for i in reversed(path)
        if i in real.snapshotted
        and next(e for e in real.entries if e["id"] == i).get("role") == "assistant"
    )
    assert newest == real.snapshotted[-1]
    assert shown.page.locator("#details").get_attribute("data-entry") == newest
    assert shown.row(newest).get_attribute("class") == "row on-path selected"
    in_view = shown.row(newest).evaluate(
        "r => { const b = r.getBoundingClientRect(), l = r.parentElement.closest('#rows')"
        ".getBoundingClientRect(); return b.top >= l.top && b.bottom <= l.bottom; }"
    )
    assert in_view


def test_an_address_with_an_id_or_label_opens_that_entry(real: RealSession, show: Any) -> None:
    short = short_ids(real)
    first, second = real.snapshotted[0], real.snapshotted[1]
    for fragment, wanted in [
        ("#" + second, second),  # the full id
        ("#" + short(first), first),  # the short id the page shows
        ("#start", real.labels["start"]),  # a label
    ]:
        shown: Shown = show(real.page, fragment)
        assert shown.page.locator("#details").get_attribute("data-entry") == wanted, fragment
    shown.page.evaluate(f"location.hash = {orjson.dumps(short(second)).decode()}")
    shown.page.wait_for_selector(f'#details[data-entry="{second}"]')
    for nothing in ("#no-such-entry", "#%E0%A4%A"):  # no entry; not even percent-encoding
        unknown: Shown = show(real.page, nothing)
        opened = unknown.page.locator("#details").get_attribute("data-entry")
        assert opened == real.snapshotted[-1], nothing


def test_the_snapshot_list_counts_the_files_each_snapshot_changed(
    real: RealSession, show: Any
) -> None:
    shown: Shown = show(real.page)
    short = short_ids(real)
    timeline = shown.page.locator("#details .timeline").inner_text()
    previous = None
    for entry in real.snapshotted:
        held = git(real.folder, "ls-tree", "-r", "--name-only", real.commits[entry]).splitlines()
        if previous is None:
            words = f"the first snapshot, {render.files(len(held))}"
        else:
            changed = convgit_json(real.folder, "-s", real.session, "diff", previous, entry)[
                "changes"
            ]
            assert len(changed) == real.changed[entry] != len(held)  # not the total
            words = f"{render.files(len(changed))} changed"
        assert f"◆ snapshot of {short(entry)}: {words}" in timeline, (words, timeline)
        lane = shown.row(entry).locator(".lane").get_attribute("title") or ""
        assert lane.endswith(f": {words}"), lane
        previous = entry


def test_the_screenshots_of_real_sessions_in_docs(
    real: RealSession, show: Any, samples: Path, request: pytest.FixtureRequest
) -> None:
    """docs/page-<agent>.png, listed in the README, made here at 800 px wide: the page as it
    opens on an imported session (see tests/pictures.py for when it is written)."""
    shown: Shown = show(real.page)
    shown.page.set_viewport_size({"width": 800, "height": 1100})
    shown.page.reload()  # opened at that width, as a reader would
    shown.page.wait_for_selector("body[data-ready='1']")
    source = source_digest(
        Path(__file__).with_name("real_sessions.py"), samples / real.agent / SAMPLES[real.agent]
    )
    write_screenshot(shown.page, f"page-{real.agent}.png", source, real.page.parent, request)
