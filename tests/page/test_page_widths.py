"""The demo's page at 800, 1280 and 1920 pixels wide, in a real headless Chromium: every row of
the tree shows its text (never cut down to a letter beside a label and markers), its workspace
lane whole and nothing past the pane's edge; a saved state is named as the commands name it,
`saved:` and all."""

from __future__ import annotations

from typing import Any

import pytest

from tests.page.conftest import Demo, Shown

WIDTHS = (800, 1280, 1920)
TEXT = 90  # px: about 12 characters of the row's text, at least (or all of a shorter one)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_row_shows_its_text_its_marks_and_its_lane_at(
    width: int, demo: Demo, show: Any
) -> None:
    shown: Shown = show(demo.page)
    shown.page.set_viewport_size({"width": width, "height": 900})
    shown.page.wait_for_timeout(100)  # the layout after the resize
    rows = shown.page.evaluate(
        """() => {
          const pane = document.querySelector('#rows');
          return [...pane.querySelectorAll('.row')].map(row => {
            const text = row.querySelector('.text'), lane = row.querySelector('.lane');
            const marks = [...row.querySelectorAll('.mark, .label')];
            return {
              entry: row.dataset.entry,
              shown: text.clientWidth,
              whole: text.scrollWidth,
              laneCut: lane.scrollWidth > lane.clientWidth + 1,
              past: Math.max(...[...row.children].map(c => c.getBoundingClientRect().right))
                > pane.getBoundingClientRect().right + 1,
              marksCut: marks.some(m => m.scrollWidth > m.clientWidth + 1),
            };
          });
        }"""
    )
    assert rows
    for row in rows:
        assert row["shown"] >= min(row["whole"], TEXT), (width, row)
        assert not row["laneCut"] and not row["past"] and not row["marksCut"], (width, row)


def test_a_saved_state_is_named_with_its_prefix(demo: Demo, show: Any) -> None:
    shown: Shown = show(demo.page)
    plan_b = demo.labels["planB"]  # the restores to plan A and back happened at plan B
    shown.select(plan_b)
    details = shown.page.locator("#details").inner_text()
    saved = [line for line in details.splitlines() if "saved the previous state as" in line]
    assert saved and all("as saved:" in line for line in saved), saved
    assert "; saved the previous state as saved:" in shown.page.locator(".timeline").inner_text()
