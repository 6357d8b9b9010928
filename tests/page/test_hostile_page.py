"""Hostile content on the page: entry text, labels, the session name, file names and file
contents that look like markup, close the data's <script> element, or carry entities, very long
lines and non-ASCII text are shown as text, never run, and fetch nothing."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit.text import render
from tests.page.conftest import Shown, convgit_json, run_convgit
from tests.workspace.gitrepo import UserStateGuard, init_repo


class Listener:
    """An HTTP server on 127.0.0.1 that counts every request it gets (it should get none)."""

    def __init__(self) -> None:
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def listener() -> Iterator[Listener]:
    served = Listener()
    yield served
    served.close()


def hostile(url: str, tag: str) -> str:
    """Text that would run script, fetch or mangle the page if it were ever read as HTML."""
    return (
        f"<script>window.__pwned = '{tag}'</script>"
        f"</script><script>window.__pwned = '{tag} closed'</script>\n"
        f'<img src="{url}/{tag}.png" onerror="window.__pwned = \'{tag} img\'">'
        f'<link rel="stylesheet" href="{url}/{tag}.css"> <!-- {{{{script}}}} {{{{data}}}}\n'
        "&amp; &lt;b&gt; &#x3c;i&#x3e; \u2028 \u2029 ünïcödé ✓ 😀 עברית\n" + "x" * 20_000
    )


def test_hostile_content_is_shown_as_text_and_never_run(
    tmp_path: Path, show: Any, listener: Listener
) -> None:
    guard = UserStateGuard()
    repo = init_repo(tmp_path / "repo")
    guard.watch(repo.path)
    name = f"</title><script>window.__pwned = 'name'</script><img src={listener.url}/name.png>"
    run_convgit(repo.path, "init", "--name", name)
    user_text = hostile(listener.url, "user")
    user = convgit_json(repo.path, "user", user_text)["id"]
    evil_name = '<b>&amp;</b> "q" ü.py'
    evil_file = hostile(listener.url, "file") + "\n"
    repo.write(evil_name, evil_file)
    reply = convgit_json(repo.path, "assistant", hostile(listener.url, "reply"))["id"]
    label = "<img/src=x/onerror=window.__pwned=1>"
    run_convgit(repo.path, "label", reply, label)
    call = {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "text", "text": "<b>not bold</b>"},
            {"type": "tool_call", "id": "c1", "name": "<script>", "input": {"cmd": "</script>"}},
        ],
    }
    run_convgit(repo.path, "append", input=orjson.dumps(call).decode() + "\n")
    result = convgit_json(repo.path, "tool", "c1", hostile(listener.url, "tool"))["id"]
    page = tmp_path / "page.html"
    run_convgit(repo.path, "html", "-o", str(page))
    guard.verify()

    raw = page.read_text()
    assert raw.lower().count("</script") == 2  # the data's own end and the script's, no more
    assert "<!--" not in raw and raw.lower().count("<script") == 2

    shown: Shown = show(page)
    entries = {e["id"]: e for e in convgit_json(repo.path, "tree")["entries"]}
    for ident, entry in entries.items():
        shown.select(ident)
        row = shown.row(ident)
        # the kind in full is the badge's title (a tool result's badge says only "tool")
        kind, text = (
            row.locator(".kind").get_attribute("title"),
            row.locator(".text").text_content(),
        )
        assert (f"{kind}: {text}" if text else kind) == render.summary(entry)
    assert shown.page.evaluate("window.__pwned") is None
    assert (
        shown.page.title()
        == f"convgit · session {convgit_json(repo.path, 'status')['session']} · {name}"
    )
    assert shown.row(reply).locator(".label").text_content() == label

    shown.select(user)
    body = shown.page.locator("#details .body")
    assert body.text_content() == user_text
    wrapped = body.evaluate("b => b.scrollWidth <= b.clientWidth + 1")
    assert wrapped, "a very long line must wrap, not widen the page"
    assert shown.page.evaluate("document.documentElement.scrollWidth <= innerWidth + 1")

    shown.select(reply)
    box = shown.file_box(evil_name)
    assert box.count() == 1
    added = box.locator(".diff .add").all_text_contents()
    assert added == ["+" + line for line in evil_file.split("\n")[:-1]]

    shown.select(result)
    assert shown.page.locator("#details .body").text_content() == hostile(listener.url, "tool")
    tool_call = next(i for i, e in entries.items() if e.get("content") == call["content"])
    shown.select(tool_call)
    parts = shown.page.locator("#details .part").all_text_contents()
    assert parts[0] == "text<b>not bold</b>"
    assert parts[1] == 'tool call <script> (c1){\n  "cmd": "</script>"\n}'

    shown.page.wait_for_load_state("networkidle")
    assert shown.page.evaluate("window.__pwned") is None
    assert listener.hits == []
    assert {url.split("#")[0] for url in shown.requests} == {shown.url}
