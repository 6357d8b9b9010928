"""``convgit search``: the entries of every session of the store (or of every store, with
``--all-stores``) whose words hold the strings asked for, newest first. ``python -m convgit
search ...`` starts here without typer (``convgit.__main__``'s lean table), so a search costs
little more than Python's start; the typer command (``convgit -s SID search``, ``search
--help``) calls the same ``search``. Arguments this entry does not know go to the typer app,
which names the mistake."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from convgit.base import codec
from convgit.base.errors import ConvgitError, UsageError
from convgit.cli import output, pager
from convgit.text.found import search_lines as found_lines

DEFAULT_LIMIT = 20


@dataclass
class Asked:
    """A search as the command line asks it."""

    terms: list[str] = field(default_factory=list)
    agent: str | None = None
    sessions: list[str] = field(default_factory=list)
    file: str | None = None
    since: str | None = None
    until: str | None = None
    role: str | None = None
    branch: bool = False
    limit: str | None = None
    all_stores: bool = False
    reindex: bool = False
    json: bool = False


def search(asked: Asked, directory: Path, store: Path | None) -> None:
    """Run the search ``asked`` from ``directory`` (the store: ``store``, else the one found
    there) and print its results (``--json``: one object, docs/json.md)."""
    from convgit.search import query, stores, texts, times
    from convgit.store.location import locate

    limit = _positive(asked.limit) if asked.limit is not None else DEFAULT_LIMIT
    if asked.role is not None and asked.role not in texts.KINDS:
        raise UsageError(f"--role takes {', '.join(texts.KINDS)}, not {asked.role!r}.")
    if asked.agent is not None:
        from convgit.agents import registry

        if asked.agent not in registry.names():
            known = ", ".join(registry.names())
            raise UsageError(f"There is no agent {asked.agent!r}: --agent takes {known}.")
    filters = query.Filters(
        agent=asked.agent,
        since=None if asked.since is None else times.moment(asked.since, "--since"),
        until=None if asked.until is None else times.moment(asked.until, "--until", until=True),
        role=asked.role,
        branch=asked.branch,
    )
    nothing = not (asked.terms or asked.agent or asked.sessions or asked.file or asked.since)
    if nothing and not (asked.until or asked.role or asked.branch or asked.reindex):
        raise UsageError(
            "Give the words to search for, or a filter (--file, --agent, --since...).",
            'convgit search "the words"',
        )
    here = locate(directory, store)
    locations = stores.every_store(here) if asked.all_stores else [here]
    if not asked.all_stores and not here.sessions.is_dir():
        from convgit.store.sessions import no_session

        raise no_session(here, "There are no sessions here to search.")
    if here.sessions.is_dir():  # a store made before the list was kept joins it
        from convgit.store import userstore

        userstore.remember_store(here.root)
    cwd = directory.resolve()
    path = asked.file
    found = stores.search(
        locations,
        asked.terms,
        filters,
        sessions=asked.sessions,
        file=None if path is None else lambda location: stores.path_in(location, path, cwd),
        limit=limit,
        reindex=asked.reindex,
        many=asked.all_stores,
    )
    if asked.json:
        output.write_line(codec.dumps(found.to_json(asked.terms, filters)))
        return
    if nothing and not (asked.until or asked.role or asked.branch):  # --reindex alone
        for done in found.indexes:
            output.show(
                f"reindexed {done['store']}: {done['sessions']} sessions,"
                f" {done['entries']} entries, {done['snapshots']} snapshots"
            )
        return
    _show(found_lines(found.results, found.more, limit, pager.columns()))


def _show(lines: list[list[tuple[str, str]]]) -> None:
    """The lines, in colour on a terminal (through rich); else as plain text, without it."""
    import sys

    if sys.stdout.isatty() or pager.active():
        from convgit.text import render

        shown = []
        for spans in lines:
            line = render.Styled()
            for text, style in spans:
                line.append(text, style)
            shown.append(line)
        output.show(*shown)
        return
    output.write_line("\n".join("".join(text for text, _ in spans) for spans in lines))


def _positive(value: str) -> int:
    if not (value.isascii() and value.isdigit()) or int(value) == 0:
        raise UsageError(f"-n takes a positive whole number, not '{value}'.")
    return int(value)


_FLAGS = {"--branch": "branch", "--all-stores": "all_stores", "--reindex": "reindex"}
_VALUES = {
    "--agent": "agent",
    "--file": "file",
    "--since": "since",
    "--until": "until",
    "--role": "role",
    "--max-count": "limit",
    "-n": "limit",
}


def parsed(args: Sequence[str]) -> Asked | None:
    """The search these arguments ask for, or None for anything this entry does not take."""
    asked = Asked()
    words = iter(args)
    rest = False
    for word in words:
        if rest or not word.startswith("-") or word == "-":
            asked.terms.append(output.utf8(word))
        elif word == "--":
            rest = True
        elif word == "--json":
            asked.json = True
        elif word in _FLAGS:
            setattr(asked, _FLAGS[word], True)
        else:
            name, eq, value = word.partition("=")
            if name not in _VALUES and name != "--session":
                return None
            if not eq:
                given = next(words, None)
                if given is None:
                    return None
                value = given
            value = output.utf8(value)
            if name == "--session":
                asked.sessions.append(value)
            else:
                setattr(asked, _VALUES[name], value)
    return asked


def run(args: list[str]) -> int | None:
    """``convgit search ...`` without typer; the exit code, as every command's. None for
    arguments it does not take: the typer app says what is wrong with them."""
    asked = parsed(args)
    if asked is None:
        return None
    closed = output.occupy_closed_stdout()
    pager.start(["search", *args], "search", ())
    try:
        search(asked, Path("."), None)
    except ConvgitError as exc:
        output.error(exc)
        return exc.exit_code
    except OSError as exc:  # the file system refused: a full disk, a read-only folder
        output.error(output.os_error(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        output.flush(closed)
        pager.finish()
    return 0
