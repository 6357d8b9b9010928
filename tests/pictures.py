"""The pictures in docs/ that tests make (the page's PNGs, the navigator's SVG): a test draws its
picture into its own temporary folder, every run (the drawing works), and checks the one in docs/
was made from the code that draws it now (a digest of those files is kept beside it,
``NAME.source``). A run never writes into the checkout (tests/checkout.py checks it): when
something that draws a picture changed, the test fails and says the command that makes it again,
``pytest --pictures`` (the option of tests/conftest.py) on that test, which copies the new
picture and its digest into docs/. Its pixels change with ids and times: it is never compared."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
OPTION = "--pictures"


def add_option(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        action="store_true",
        help="write the pictures of docs/ that are older than the code that draws them",
    )


def keep(request: pytest.FixtureRequest, made: Path, source: str) -> None:
    """Check docs/ holds a picture made by what draws ``made`` now (``source``, its digest);
    with ``--pictures``, put ``made`` there when it does not."""
    target = DOCS / made.name
    made_from = target.with_name(made.name + ".source")
    if target.exists() and made_from.exists() and made_from.read_text() == source:
        return
    if request.config.getoption(OPTION):
        shutil.copyfile(made, target)
        made_from.write_text(source)
        return
    pytest.fail(
        f"docs/{made.name} is older than the code that draws it: make it again with "
        f"`pytest {OPTION} {request.node.nodeid}`",
        pytrace=False,
    )
