"""`convgit mcp` driven by the MCP SDK's own client, over stdio, as an agent starts it: its tools
are read-only and say so, each answers from both tracks what the command line answers, a
mistake is the tool's error in one sentence, and after every call nothing has changed: no entry,
ref, snapshot record or file of the working tree."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from tests.search.oracle import turn
from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo, digest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"list_sessions", "search", "show_entry", "tree_around", "diff", "file_at",
         "restore_dry_run"}  # fmt: skip


def _calls(here: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[set[str], list[Any]]:
    """The server's tools (those read-only), and each call's result (is_error, text)."""

    async def run() -> tuple[set[str], list[Any]]:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "convgit", "mcp"], env=env, cwd=str(here)
        )
        async with Client(params) as client:
            listed = await client.list_tools()
            names = {t.name for t in listed.tools if t.annotations and t.annotations.read_only_hint}
            results = []
            for name, arguments in calls:
                done = await client.call_tool(name, arguments)
                results.append((done.is_error, done.content[0].text))  # type: ignore[union-attr]
            return names, results

    return anyio.run(run)


def _state(repo: GitRepo) -> tuple[object, ...]:
    store = repo.path / ".git" / "convgit" / "sessions"
    files = {p.name: p.read_bytes() for p in sorted(store.iterdir())}
    return digest(repo.path), repo.git("for-each-ref", "refs/convgit"), files


def test_the_sdks_client_reads_both_tracks_and_nothing_changes(repo: GitRepo) -> None:
    here = repo.path
    sid = convgit(here, "init", "--name", "calc work", "--json").json()["id"]
    turn(here, "make the calc overflow-safe", role="user")
    repo.write("calc.py", "x = 1\n")
    first = turn(here, "calc.py now guards the overflow")
    repo.write("calc.py", "x = 2\n")
    second = turn(here, "second version of calc")
    repo.write("calc.py", "x = 3, by hand\n")  # the working tree moved on since
    before = _state(repo)

    names, results = _calls(
        here,
        [
            ("search", {"words": ["overflow"]}),
            ("search", {"words": [], "file": "calc.py"}),
            ("show_entry", {"entry": first}),
            ("file_at", {"path": "calc.py", "entry": first}),
            ("diff", {"from_entry": first, "to_entry": second}),
            ("restore_dry_run", {"entry": first}),
            ("tree_around", {"entry": "@"}),
            ("list_sessions", {}),
            ("show_entry", {"entry": "no-such-entry"}),
        ],
    )
    assert names == TOOLS, "every tool, each read-only"
    errors = [error for error, _ in results]
    assert errors == [False] * 8 + [True]
    found, by_file, shown, at_first, diffed, dry, around, listed, wrong = (t for _, t in results)
    assert f"entry {first}" in found and "files: its snapshot changed calc.py" in found
    assert f"entry {second}" in by_file and f"entry {first}" in by_file
    assert "calc.py now guards the overflow" in shown and "context:" in shown
    assert "files: at this entry, its own snapshot" in shown
    assert at_first.endswith("\n\nx = 1\n") and "different now" in at_first
    assert diffed.split("\n\n", 1)[1] == convgit(here, "diff", first, second, "-p").stdout
    planned = convgit(here, "restore", first, "--dry-run", "--json").json()["changes"]
    assert [f"{c['status'][0].upper()} {c['path']}" for c in planned] == ["M calc.py"]
    assert "M calc.py" in dry and "nothing was changed" in dry
    assert "← context" in around and "context:" in around
    assert sid in listed and "calc work" in listed
    assert "no-such-entry" in wrong and "Traceback" not in wrong
    assert _state(repo) == before, "a tool wrote something"


def test_without_the_sdk_convgit_mcp_says_so_in_one_sentence(tmp_path: Path) -> None:
    """The SDK is an optional extra: missing, `convgit mcp` names the install, exit 1."""
    hidden = tmp_path / "no-sdk"
    (hidden / "mcp").mkdir(parents=True)
    (hidden / "mcp" / "__init__.py").write_text("raise ImportError('no SDK here', name='mcp')\n")
    env = {"PYTHONPATH": f"{hidden}{os.pathsep}{ROOT}"}
    done = convgit(tmp_path, "mcp", code=1, env=env)
    assert done.stderr.startswith("convgit: convgit mcp needs the MCP SDK")
    assert "pip install 'convgit[mcp]'" in done.stderr and "Traceback" not in done.stderr
