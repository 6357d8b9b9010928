"""Fixtures for the page tests: a real headless Chromium (Debian's, driven by Playwright) that
lets no request leave a page, and the demo session built by the real ``convgit demo``."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.clirun import run
from tests.missing_tools import missing

CHROMIUM = os.environ.get("CONVGIT_CHROMIUM", "/usr/bin/chromium")
# Chromium's flags for this machine: no sandbox as root, and no background connections (the
# network is closed; Chromium would keep trying)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def run_convgit(
    cwd: Path, *args: str, code: int = 0, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("CONVGIT_")}
    ran = run(*args, cwd=cwd, env=env, input=input, code=code, timeout=300)
    return subprocess.CompletedProcess(list(args), ran.code, ran.stdout, ran.stderr)


def convgit_json(cwd: Path, *args: str, input: str | None = None) -> Any:
    return orjson.loads(run_convgit(cwd, *args, "--json", input=input).stdout)


def css_string(text: str) -> str:
    """``text`` as a quoted CSS string (for attribute selectors)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\a ").replace("\t", "\\9 ") + '"'


@dataclass
class Shown:
    """A page open in the browser, with every request it tried and every script error."""

    page: Any
    url: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def row(self, entry: str) -> Any:
        return self.page.locator(f'#rows [data-entry="{entry}"]')

    def select(self, entry: str) -> None:
        self.row(entry).locator(".text").click()
        self.page.wait_for_selector(f'#details[data-entry="{entry}"]')

    def file_box(self, path: str, within: str = "#details") -> Any:
        """The box of one file's diff, found by its path (any characters)."""
        return self.page.locator(f"{within} .file[data-path={css_string(path)}]")

    def compare(self, other: str) -> list[str]:
        """Choose ``other`` in "compare with…" and return the file list shown ("M calc.py")."""
        self.page.select_option("#compare", other)
        result = self.page.locator("#compare-result")
        if result.locator("#compare-files").count() == 0:
            return []
        return list(result.locator("#compare-files li").all_text_contents())


@pytest.fixture(scope="package")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the page tests, with a fresh profile. Closed when they end:
    Playwright's sync driver holds an asyncio loop running in this thread while it is open, and
    a later test's ``asyncio.run`` (the MCP client's) would find it."""
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        missing(f"Chromium ({CHROMIUM})", "apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1400, "height": 860},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def show(browser: Any) -> Iterator[Any]:
    """Open a page file: every request is recorded and only the file itself is let through;
    the test fails on any script error."""
    opened: list[Any] = []

    def open_page(path: Path, fragment: str = "") -> Shown:
        url = path.resolve().as_uri()
        page = browser.new_page()
        shown = Shown(page, url)

        def guard(route: Any) -> None:
            shown.requests.append(route.request.url)
            if route.request.url.split("#")[0] == url:
                route.continue_()
            else:
                route.abort()

        page.route("**/*", guard)
        page.on("pageerror", lambda error: shown.errors.append(str(error)))
        page.on(
            "console",
            lambda message: shown.errors.append(message.text) if message.type == "error" else None,
        )
        page.goto(url + fragment)
        page.wait_for_selector("body[data-ready='1']")
        opened.append(shown)
        return shown

    yield open_page
    for shown in opened:
        shown.page.close()
        assert shown.errors == [], shown.errors


@dataclass(frozen=True)
class Demo:
    folder: Path
    output: str
    page: Path
    labels: dict[str, str]  # label -> entry id
    status: dict[str, Any]
    entries: list[dict[str, Any]]


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """The demo session, built by `convgit demo --dir`, with the page it wrote."""
    folder = tmp_path_factory.mktemp("page-demo") / "demo"
    output = run_convgit(folder.parent, "demo", "--dir", str(folder)).stdout
    entries = convgit_json(folder, "tree")["entries"]
    sid = convgit_json(folder, "status")["session"]
    pages = folder / ".git" / "convgit" / "pages"
    return Demo(
        folder=folder,
        output=output,
        page=pages / f"{sid}.html",
        labels={e["label"]: e["id"] for e in entries if "label" in e},
        status=convgit_json(folder, "status"),
        entries=entries,
    )
