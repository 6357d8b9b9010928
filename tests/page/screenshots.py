"""The pictures of the page in docs/, made by the page tests (tests/pictures.py says when one is
written): the digest of what draws the page, and the screenshot taken."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests import pictures

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def source_digest(*extra: Path) -> str:
    """A digest of every file whose change can change how a page looks, and of ``extra``
    (what the picture's session is made from)."""
    package = ROOT / "convgit"
    drawn = sorted((package / "text" / "page").iterdir())
    drawn += [package / "text" / n for n in ("layout.py", "sessionpage.py", "render.py", "html.py")]
    drawn += [package / "cli" / "demo.py", package / "conversation" / "shortids.py"]
    digest = hashlib.sha256()
    for path in drawn:
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    for path in extra:  # files outside the project (samples) count by their name and bytes
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest() + "\n"


def write_screenshot(
    page: Any, name: str, source: str, scratch: Path, request: pytest.FixtureRequest
) -> Path:
    """Take the picture of ``page`` (a Playwright page) into ``scratch``, then check the one in
    docs/ is current (tests/pictures.py): ``pytest --pictures`` writes it when it is not."""
    shot = scratch / name
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pictures.keep(request, shot, source)
    assert (DOCS / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return shot
