"""docs/navigator.svg, the picture of `convgit ui` in the README beside the page's: textual's own
SVG screenshot of the navigator on the demo session, made here. As the page's pictures, it is
written by `pytest --pictures` when something that draws it changed (tests/pictures.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from convgit.navigator.app import Navigator
from tests.navigator.drive import Drive, drive, go_to, shown
from tests.pictures import keep
from tests.workspace.cli import convgit

ROOT = Path(__file__).resolve().parents[2]
PICTURE = ROOT / "docs" / "navigator.svg"


def drawn_by() -> str:
    """A digest of every file whose change can change the picture."""
    package = ROOT / "convgit"
    files = sorted((package / "navigator").glob("*.py"))
    files += [package / name for name in ("text/render.py", "text/readable.py", "cli/demo.py")]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest() + "\n"


def test_the_screenshot_of_the_navigator_in_docs(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    folder = tmp_path / "demo"
    convgit(tmp_path, "demo", "--dir", str(folder))
    entries = convgit(folder, "tree", "--json").json()["entries"]
    plan_a = next(e["id"] for e in entries if e.get("label") == "planA")
    pictures: list[str] = []

    async def picture(app: Navigator, pilot: Drive) -> None:
        await go_to(app, pilot, plan_a)
        assert "Plan A: add() now counts up" in shown(app, "#entry")
        assert "+++ b/calc.py" in shown(app, "#entry")
        pictures.append(app.export_screenshot(title="convgit ui"))

    drive(folder, picture, size=(150, 38))
    (svg,) = pictures
    assert svg.startswith("<svg") and "planA" in svg
    made = tmp_path / PICTURE.name
    made.write_text(svg)
    keep(request, made, drawn_by())
    assert PICTURE.read_text().startswith("<svg")
