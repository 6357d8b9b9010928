"""The pictures of the page in docs/, made by the page tests: a picture is written again
whenever something that draws it changed since it was made (a digest of those files is kept
beside it, ``NAME.png.source``), so it stays current without changing on every run (its pixels
change with ids and times: it is written, never compared)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

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


def write_screenshot(page: Any, name: str, source: str, scratch: Path) -> Path:
    """Take the picture of ``page`` (a Playwright page): into docs/NAME when it is missing or
    what drew it changed, else into ``scratch`` (made all the same: the drawing works)."""
    target = DOCS / name
    made_from = target.with_name(name + ".source")
    current = target.exists() and made_from.exists() and made_from.read_text() == source
    shot = scratch / name if current else target
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))
    if not current:
        made_from.write_text(source)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return shot
