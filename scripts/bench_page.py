"""The page row of scripts/bench.py: a 10,000-entry session with 200 snapshots, its page
written by `convgit html`, then opened in headless Chromium until an entry clicked in the middle
of the tree shows its details; against a plain HTML file of the same entries' text (no script).
Needs Playwright (the dev extra) and Debian's chromium; without them the row is left out."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ENTRIES = 10_000
SNAPSHOTS = 200
CHROMIUM = os.environ.get("CONVGIT_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def records(entries: int) -> list[dict[str, Any]]:
    """Messages of ~300 bytes with a branch every 100 entries (as the load rows' sessions)."""
    out: list[dict[str, Any]] = []
    filler = "lorem ipsum dolor sit amet " * 8
    parent: str | None = None
    for n in range(entries):
        if n % 100 == 99 and n > 200:
            parent = out[n - 50]["id"]
        role = "user" if n % 2 == 0 else "assistant"
        ident = f"{n:08x}"
        out.append(
            {
                "type": "message",
                "id": ident,
                "parentId": parent,
                "role": role,
                "content": f"{role} turn {n}: {filler}",
            }
        )
        parent = ident
    return out


def make_page(bench: Any, root: Path) -> tuple[Path, Path, str, float]:
    """The page of the session, the plain file, the id of an entry in the middle of the tree,
    and the seconds `convgit html` took to write the page."""
    from convgit.session import Session

    repo = root / "page-repo"
    repo.mkdir()
    for k in range(200):
        (repo / f"mod{k % 10}").mkdir(exist_ok=True)
        (repo / f"mod{k % 10}" / f"file{k}.py").write_text(f"VALUE = {k}\n" * 20)
    env = {**bench.env, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}  # fmt: skip
    bench.run(["git", "init", "-q", "-b", "main"], repo)
    bench.run(["git", "add", "-A"], repo)
    bench.run(["git", "commit", "-q", "--no-verify", "-m", "generated"], repo, env=env)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(bench.env)  # the session is made in-process, with the bench's clean env
    try:
        session = Session.create(repo)
        batch = ENTRIES // SNAPSHOTS
        made = records(ENTRIES)
        for k in range(SNAPSHOTS):
            j = (k * 7) % 200
            changed = repo / f"mod{j % 10}" / f"file{j}.py"
            lines = changed.read_text().splitlines()
            lines[k % len(lines)] = f"VALUE = {k}  # turn {k}"
            changed.write_text("\n".join(lines) + "\n")
            session.append.records(made[k * batch : (k + 1) * batch])
        snapshots = len(session.track.sidecar.snapshots)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if snapshots != SNAPSHOTS:
        raise SystemExit(f"bench: the page session has {snapshots} snapshots, not {SNAPSHOTS}")
    page = root / "page.html"
    bench.convgit(repo, "html", "-o", str(page))  # a warm-up, as every row has
    written = bench.timed([*bench.cli, "html", "-o", str(page), "--force"], repo)
    plain = root / "plain.html"
    text = "\n".join(f"{r['id']} {r['role']}: {r['content']}" for r in made)
    plain.write_text(f"<!doctype html><meta charset=utf-8><pre>{text}</pre>\n")
    return page, plain, made[ENTRIES // 2]["id"], written


def demo_page_size(bench: Any, root: Path) -> int:
    folder = root / "page-demo"
    bench.convgit(root, "demo", "--dir", str(folder))
    pages = list((folder / ".git" / "convgit" / "pages").glob("*.html"))
    return pages[0].stat().st_size


def bench_page(bench: Any) -> None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        bench.notes.append("page row left out: Playwright is not installed (the dev extra)")
        return
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        bench.notes.append("page row left out: no Chromium (apt-get install chromium)")
        return
    print(f"generating a {ENTRIES:,}-entry session with {SNAPSHOTS} snapshots", file=sys.stderr)
    page, plain, middle, written = make_page(bench, bench.root)
    with sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            tempfile.mkdtemp(dir=bench.root), executable_path=CHROMIUM, headless=True, args=FLAGS
        )
        try:

            def ours() -> float:
                tab = context.new_page()
                start = time.perf_counter()
                tab.goto(page.as_uri(), wait_until="commit")  # the row is waited for below
                # a click event on the row as soon as it exists, as a person's click arrives
                # (Playwright's own click first waits for the row to stop moving)
                tab.locator(f'#rows [data-entry="{middle}"]').evaluate("row => row.click()")
                tab.wait_for_selector(f'#details[data-entry="{middle}"]')
                took = time.perf_counter() - start
                tab.close()
                return took

            def base() -> float:
                tab = context.new_page()
                start = time.perf_counter()
                tab.goto(plain.as_uri())
                tab.locator("pre").evaluate("p => p.click()")
                took = time.perf_counter() - start
                tab.close()
                return took

            a, b = bench.alternate(ours, base)
        finally:
            context.close()
    size = page.stat().st_size
    demo = demo_page_size(bench, bench.root)
    bench.add(
        "`convgit html` page: open in headless Chromium, click an entry, its details shown",
        f"{ENTRIES:,} entries, {SNAPSHOTS} snapshots", a, b,
        "a plain HTML file of the same entries' text", None, seconds=2.0,
        note=f"page {size / (1024 * 1024):.1f} MiB, written in {written * 1000:.0f} ms;"
        f" the demo's page {demo / 1024:.0f} KiB",
    )  # fmt: skip
