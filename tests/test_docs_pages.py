"""The pages under docs/ are checked as the README is: every command is in the user guide, every
link between the pages lands on a file and a heading that exist, every `convgit COMMAND --option`
the pages write is a real command with real options, every command that takes --json has its
shape documented, the configuration page's keys and defaults are the code's, and the help texts
point at pages that hold what they point at. A renamed command, option, page or heading fails
here."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main

from convgit.cli import app

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]  # the guide and docs/technical/
GUIDE = DOCS / "guide.md"
ROOT_COMMAND = typer.main.get_command(app)


# -- the command line as the app declares it --


def _options(command: Any) -> set[str]:
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}


def _walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if path:
        yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _walk(sub, (*path, name))


COMMANDS = dict(_walk(ROOT_COMMAND))  # ("hooks", "install") -> its click command
GLOBAL = _options(ROOT_COMMAND) | {"-h", "--help"}
GLOBAL_WITH_VALUE = {
    o for p in ROOT_COMMAND.params if not getattr(p, "is_flag", False) for o in p.opts
}


# -- the pages as text: headings, links, code --


@dataclass(frozen=True)
class Page:
    path: Path
    text: str

    @property
    def name(self) -> str:
        return str(self.path.relative_to(ROOT))

    def lines_outside_code(self) -> Iterator[tuple[int, str]]:
        fenced = False
        for number, line in enumerate(self.text.split("\n"), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced:
                yield number, line

    def code_lines(self) -> Iterator[tuple[int, str]]:
        """Command lines in fenced blocks: those a reader would type (`$ ` lines, and every line
        of a ```sh block, such as the README's first)."""
        fence: str | None = None
        for number, line in enumerate(self.text.split("\n"), 1):
            stripped = line.strip()
            if stripped.startswith("```"):
                fence = stripped[3:] if fence is None else None
            elif fence is not None and stripped.startswith("$ "):
                yield number, stripped[2:]
            elif fence in ("sh", "bash", "shell"):
                yield number, stripped

    def inline_code(self) -> Iterator[tuple[int, str]]:
        for number, line in self.lines_outside_code():
            for span in re.findall(r"`([^`]+)`", line):
                yield number, span
        for number, line in self.code_lines():  # output lines quote commands in backticks too
            for span in re.findall(r"`([^`]+)`", line):
                yield number, span

    def anchors(self) -> set[str]:
        """The anchors GitHub gives this page's headings (a repeated one gets -1, -2, ...)."""
        seen: dict[str, int] = {}
        found = set()
        for _, line in self.lines_outside_code():
            if re.match(r"#{1,6} ", line):
                slug = _slug(line.lstrip("#"))
                count = seen.get(slug, 0)
                found.add(slug if count == 0 else f"{slug}-{count}")
                seen[slug] = count + 1
        return found

    def links(self) -> Iterator[tuple[int, str]]:
        for number, line in self.lines_outside_code():
            line = re.sub(r"`[^`]*`", "", line)
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                yield number, target


def _slug(title: str) -> str:
    text = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return text.replace(" ", "-")


def _page(path: Path) -> Page:
    return Page(path, path.read_text())


ALL = [_page(p) for p in PAGES]


# -- commands --


def _command_path(name: tuple[str, ...]) -> str:
    return " ".join(name)


@pytest.mark.parametrize("name", [_command_path(n) for n in COMMANDS], ids=str)
def test_every_command_is_in_the_guide(name: str) -> None:
    """The user guide (or, for what a newcomer runs first, the README) names every command."""
    text = GUIDE.read_text() + (ROOT / "README.md").read_text()
    assert re.search(rf"convgit {re.escape(name)}\b", text), (
        f"`convgit {name}` is not in docs/guide.md"
    )


def test_every_command_in_the_guide_has_its_row_in_the_table() -> None:
    """Each command of the app is a row of the guide's tables (a row starts `| `convgit NAME`)."""
    rows = [li for li in GUIDE.read_text().split("\n") if li.startswith("| `convgit ")]
    for name in COMMANDS:
        if len(name) == 1 and name[0] in {"hooks", "sessions"}:
            continue  # a group: its subcommands have the rows
        spelled = f"convgit {_command_path(name)}"
        assert any(re.search(rf"{re.escape(spelled)}\b", row) for row in rows), spelled


@dataclass(frozen=True)
class Usage:
    page: str
    line: int
    text: str


def _usages() -> Iterator[Usage]:
    """Every `convgit ...` command line the pages write: in inline code and in command lines of
    code blocks, each cut at a pipe, `;`, `&&`, a redirection or a comment."""
    for page in ALL:
        spans = [*page.inline_code(), *page.code_lines()]
        for number, span in spans:
            for segment in re.split(r"\|\||&&|(?<!\\)\||;|\$\(", span):
                found = re.search(r"(?:^|[\s(\"'])convgit((?:\s+[^\s]+)*)", segment)
                if found:
                    yield Usage(page.name, number, "convgit" + found.group(1))


def _tokens(text: str) -> list[str]:
    """The words after `convgit`, a quoted argument as one word, up to `--` or a comment."""
    out = []
    for raw in re.sub(r"'[^']*'|\"[^\"]*\"", "TEXT", text).split()[1:]:
        if raw == "--" or raw[0] in "#<>)\"'" or raw.startswith(("2>", "1>")):
            break
        out.extend(t for t in raw.replace("\\|", "|").strip("[]…,.;:").split("|") if t)
    return out


def _check(usage: Usage) -> str | None:
    """Why this command line is not the app's, or None when it is."""
    tokens = _tokens(usage.text)
    while tokens and tokens[0].startswith("-"):  # global options before the command
        option = tokens.pop(0).split("=", 1)[0]
        if option not in GLOBAL:
            return f"{option} is no global option"
        if option in GLOBAL_WITH_VALUE and "=" not in option and tokens:
            tokens.pop(0)
    if not tokens or not re.fullmatch(r"[a-z][a-z-]*", tokens[0]):
        return None  # `convgit` alone, or a placeholder such as COMMAND
    path: tuple[str, ...] = (tokens.pop(0),)
    if path not in COMMANDS:
        return f"`convgit {path[0]}` is no command"
    if tokens and (*path, tokens[0]) in COMMANDS:
        path = (*path, tokens.pop(0))
    options = _options(COMMANDS[path]) | GLOBAL
    if len(path) == 2:  # a group's own options come before its subcommand, as `sessions --trash`
        options |= _options(COMMANDS[path[:1]])
    for token in tokens:
        option = token.split("=", 1)[0]
        if option.startswith("-") and len(option) > 1 and option not in options:
            return f"`convgit {_command_path(path)}` takes no {option}"
    return None


USAGES = list(_usages())


def test_the_pages_write_many_command_lines() -> None:
    assert len(USAGES) > 300  # the parser finds them: a change that found none would pass below


@pytest.mark.parametrize("page", [p.name for p in ALL])
def test_every_command_line_on_a_page_is_a_real_command_with_real_options(page: str) -> None:
    wrong = [f"{u.page}:{u.line}: {u.text}: {why}" for u in USAGES if u.page == page
             for why in [_check(u)] if why]  # fmt: skip
    assert not wrong, "\n".join(wrong)


# -- links --


@pytest.mark.parametrize("page", [p.name for p in ALL])
def test_every_relative_link_lands_on_a_file_and_a_heading(page: str) -> None:
    source = next(p for p in ALL if p.name == page)
    wrong = []
    for number, target in source.links():
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        file, _, anchor = target.partition("#")
        path = (source.path.parent / file).resolve() if file else source.path
        if not path.exists():
            wrong.append(f"{page}:{number}: {target}: no file {file}")
        elif anchor and path.suffix == ".md" and anchor not in _page(path).anchors():
            wrong.append(f"{page}:{number}: {target}: no heading #{anchor} in {file or page}")
    assert not wrong, "\n".join(wrong)


def test_the_index_lists_every_page() -> None:
    index = DOCS / "README.md"
    linked = {target.split("#")[0] for _, target in _page(index).links()}
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")} - {"README.md"}
    assert pages <= linked, f"pages not in docs/README.md: {sorted(pages - linked)}"
    readme = {t.split("#")[0] for _, t in _page(ROOT / "README.md").links()}
    assert "docs/README.md" in readme and {f"docs/{p}" for p in pages} <= readme


def test_the_readme_keeps_what_a_newcomer_needs_and_no_more() -> None:
    text = (ROOT / "README.md").read_text()
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[:2] == ["Two tracks: branching is not rollback", "The demo (real output)"]
    assert len(text.split("\n")) < 300, "the README grows again: move the detail to a page of docs/"


# -- --json --


def _json_rows() -> dict[str, tuple[str, ...]]:
    text = (DOCS / "json.md").read_text()
    rows = re.findall(r"^\| `([a-z -]+)` \| `\{([^}]*)\}`", text, re.M)
    return {command: tuple(re.findall(r'"([A-Za-z_]+)"', keys)) for command, keys in rows}


def test_the_json_page_says_each_declared_shape_and_no_other() -> None:
    """Each row's keys are the shape ``convgit.schema.shapes`` declares for its command, in
    order, and every declared shape has its row."""
    from convgit.schema import shapes

    rows = _json_rows()
    assert sorted(rows) == sorted(shapes.SHAPES)
    for command, keys in rows.items():
        assert keys == shapes.keys(command), f"docs/json.md's row for `{command}`"


def test_every_command_that_takes_json_has_its_shape_documented() -> None:
    rows = _json_rows()
    documented = {tuple(w for w in row.split() if not w.startswith("-")) for row in rows}
    takes = {name for name, command in COMMANDS.items() if "--json" in _options(command)}
    assert takes <= documented, f"no row in docs/json.md for {sorted(takes - documented)}"


def test_every_row_of_the_json_page_is_a_command_with_json() -> None:
    for row in _json_rows():
        words = row.split()
        path = tuple(w for w in words if not w.startswith("-"))
        assert path in COMMANDS, f"docs/json.md: `{row}` is no command"
        options = _options(COMMANDS[path])
        assert "--json" in options and {w for w in words if w.startswith("-")} <= options, row


# -- configuration --


def _config_table() -> dict[str, str]:
    text = (DOCS / "configuration.md").read_text()
    return dict(re.findall(r"^\| `(\[[a-z]+\] [a-z_]+)` \| `?([^|`]+?)`? \|", text, re.M))


def test_the_configuration_page_documents_every_key_of_the_schema_and_no_other() -> None:
    """The table names each key of ``config.SCHEMA`` once, and no key the schema has not; the
    TOML example sets each key with a default to it (commented out: the keys with none)."""
    from convgit.store import config

    text = (DOCS / "configuration.md").read_text()
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    example = tomllib.loads(block)
    table = _config_table()
    declared = {f"[{s}] {k}": v for s, keys in config.SCHEMA.items() for k, v in keys.items()}
    assert sorted(table) == sorted(declared)
    shown = {f"[{section}] {key}" for section, keys in example.items() for key in keys}
    assert shown == {name for name, setting in declared.items() if setting.default is not None}
    assert all(f"# {name.split('] ')[1]} = " in block for name in set(declared) - shown)
    for name, setting in declared.items():
        section, key = name[1:].split("] ")
        if setting.default is None:
            assert table[name] == "none", name
        else:
            assert tomllib.loads(f"v = {table[name]}")["v"] == setting.default, name
            assert example[section][key] == setting.default, name


# -- help texts --


def _help_texts() -> Iterator[tuple[str, str]]:
    for name, command in [((), ROOT_COMMAND), *COMMANDS.items()]:
        where = _command_path(name) or "convgit"
        yield where, command.help or ""
        for param in command.params:
            yield f"{where} {param.name}", getattr(param, "help", None) or ""


def test_help_texts_send_the_reader_to_pages_that_say_it() -> None:
    """A help text that points at the documentation names a page that exists (the README, or a
    page of docs/), a section that page has, and a word that page says."""
    page = r"(the README|README|docs/(?:technical/)?[a-z-]+\.md)"
    wrong = []
    for where, text in _help_texts():
        text = " ".join(text.split())
        for named in re.findall(page, text):
            path = ROOT / "README.md" if "README" in named else ROOT / named
            if not path.exists():
                wrong.append(f"{where}: {named} does not exist")
        for named, section in re.findall(page + r', "([^"]+)"', text):
            found = _page(ROOT / "README.md" if "README" in named else ROOT / named)
            if not any(a.startswith(_slug(section)) for a in found.anchors()):
                wrong.append(f'{where}: {named} has no section "{section}"')
        for term, named in re.findall(r"see (\S+) in " + page, text):
            path = ROOT / "README.md" if "README" in named else ROOT / named
            if path.exists() and term not in path.read_text():
                wrong.append(f"{where}: {named} does not say {term}")
    assert not wrong, "\n".join(wrong)


# -- the code the pages name --


def _resolves(dotted: str) -> bool:
    """``convgit.a.b.name``: a module, or a name in one."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def _named_code(page: Page) -> Iterator[tuple[int, str]]:
    """The code a page names in backticks: `convgit/...` paths and `convgit.x.y` names, and
    paths relative to convgit/ (`session/files.py`; in the glossary also `name.py`)."""
    folders = {p.name for p in (ROOT / "convgit").iterdir() if p.is_dir()} - {"__pycache__"}
    for number, span in page.inline_code():
        for path in re.findall(r"(?:^|\s)(convgit/[\w/.<>-]*)", span):
            yield number, path
        for name in re.findall(r"(?:^|[\s(])(convgit(?:\.\w+)+)", span):
            yield number, name
        relative = re.fullmatch(r"([a-z_]+)(?:/[a-z_]+)*(?:\.py|/)", span)
        glossary = page.path.name == "glossary.md" and relative and relative.group(1) != "refs"
        if relative and (glossary or relative.group(1) in folders):
            yield number, f"convgit/{span}"


@pytest.mark.parametrize("page", [p.name for p in ALL])
def test_every_module_a_page_names_exists(page: str) -> None:
    """A module moved or renamed leaves no page pointing at its old name."""
    source = next(p for p in ALL if p.name == page)
    wrong = []
    for number, named in _named_code(source):
        if "/" in named:
            real = named.split("<", 1)[0].rstrip("/.")  # convgit/agents/<agent>/... -> its folder
            if not (ROOT / real).exists():
                wrong.append(f"{page}:{number}: {named} does not exist")
        elif not _resolves(named):
            wrong.append(f"{page}:{number}: {named} is no module or name of convgit")
    assert not wrong, "\n".join(wrong)


# The code names the layout pages (the glossary, the architecture) cite in backticks: a class or
# constant (`Track`, `RESERVED_IDS`), a member of one (`Tree.path`, `names.gc_ref`), a snake_case
# name (`built_on`). Each must be a name convgit's code defines or spells (a string it reads, as a
# config key or an event name); the names below are others' (git's, Python's, an SDK's, another
# project's), said beside convgit's.
LAYOUT_PAGES = ("glossary.md", "architecture.md")
FILE_KINDS = {"py", "toml", "md", "json", "jsonl", "sqlite"}
OTHERS_NAMES = {
    "GIT_INDEX_FILE",  # git's environment
    "MCPServer",  # the MCP SDK's server class
    "Agent",  # Entire's agent interface
    "YYYYMMDDTHHMMSSmmmZ",  # the shape of a saved state's time
    "Protocol",  # Python's typing
}


def _code_index() -> tuple[set[str], dict[str, set[str]]]:
    """Every name convgit's code defines or spells (classes, functions, assignments, attributes,
    parameters, string constants), and each class's and module's members by its name."""
    import ast

    names: set[str] = set()
    members: dict[str, set[str]] = {}
    for path in (ROOT / "convgit").rglob("*.py"):
        tree = ast.parse(path.read_text())
        module = path.stem if path.stem != "__init__" else path.parent.name
        members.setdefault(module, set())
        names.add(module)
        for node in tree.body:
            for target in _defined(node):
                members[module].add(target)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
                inside = members.setdefault(node.name, set())
                for sub in ast.walk(node):
                    inside.update(_defined(sub))
                    if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                        inside.add(sub.attr)  # self.x
            names.update(_defined(node))
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)
    return names, members


def _defined(node: Any) -> set[str]:
    import ast

    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def _cited_names(page: Page) -> Iterator[tuple[int, str]]:
    """The spans in backticks that look like a code name: `Name`, `Name.member`, `CONSTANT`,
    `snake_case` (a call's arguments dropped: `ConvgitError(message, hint)` cites the class)."""
    word = r"[A-Za-z_][A-Za-z0-9_]*"
    for number, span in page.inline_code():
        cited = re.sub(r"\(.*\)$", "", span)
        if not re.fullmatch(rf"{word}(\.{word})*", cited) or cited.startswith("convgit."):
            continue
        if cited.rsplit(".", 1)[-1] in FILE_KINDS or cited in ("None", "True", "False"):
            continue  # a file (the module paths are checked above), or Python's own
        if cited.split(".")[0] in sys.stdlib_module_names:
            continue
        first = cited.split(".")[0]
        if first[0].isupper() or "_" in first.strip("_") or "." in cited:
            yield number, cited


@pytest.mark.parametrize("page", LAYOUT_PAGES)
def test_every_code_name_the_layout_pages_cite_exists(page: str) -> None:
    """The glossary and the architecture name classes, constants and members of the code: a
    name renamed or taken out leaves neither page pointing at it (`TRASH_REFS` stayed in the
    architecture after it was gone)."""
    names, members = _code_index()
    source = next(p for p in ALL if p.path.name == page)
    wrong = []
    for number, cited in _cited_names(source):
        first, *rest = cited.split(".")
        if cited in OTHERS_NAMES or cited in names:
            continue
        if rest and rest[0] in members.get(first, ()):
            continue  # `Tree.path`, `names.gc_ref`: a member of that class or module
        if rest and first[0].islower() and all(part in names for part in rest):
            continue  # `session.moves.switch`: a value's members, each a name of the code
        wrong.append(f"{page}:{number}: {cited} is no name of convgit's code")
    assert not wrong, "\n".join(wrong)


def test_every_version_a_page_quotes_is_one_pyproject_allows() -> None:
    """A page that says which version of a dependency it ran (`typer 0.29.2`) quotes one the
    requirement in pyproject.toml admits: a figure measured on a version convgit excludes no
    longer says what convgit costs."""
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        declared += extra
    wanted = {r.name.lower(): r.specifier for r in map(Requirement, declared)}
    wrong = []
    for page in ALL:
        for number, line in enumerate(page.text.splitlines(), 1):
            for name, version in re.findall(r"\b([A-Za-z][\w-]*) v?(\d+(?:\.\d+)+)\b", line):
                allowed = wanted.get(name.lower())
                if allowed is not None and not allowed.contains(version, prereleases=True):
                    wrong.append(f"{page.name}:{number}: {name} {version}, pyproject: {allowed}")
    assert not wrong, "\n".join(wrong)


def test_the_navigator_page_lists_the_navigators_keys() -> None:
    """docs/navigator.md's table has a row for every key `convgit ui` answers, and no other."""
    from convgit.navigator.app import KEYS

    text = (DOCS / "navigator.md").read_text()
    rows = re.findall(r"^\| ((?:`[^`]+`[ ,]*(?:space)?)+) \|", text, re.M)
    documented = {key for row in rows for key in re.findall(r"`([^`]+)`", row)}
    documented |= {"?"} if "`?` lists these keys" in text else set()
    keys = {key for shown, _ in KEYS for key in re.split(r"[ ,]+", shown) if key != "space"}
    assert keys == documented, (
        f"only in the app: {keys - documented}; only in the page: {documented - keys}"
    )


@pytest.mark.parametrize("page", [p.name for p in ALL])
def test_no_link_hides_in_a_code_block(page: str) -> None:
    """Inside a code block a link is not one: it shows as brackets, and no test follows it."""
    source = next(p for p in ALL if p.name == page)
    outside = {number for number, _ in source.lines_outside_code()}
    wrong = [
        f"{page}:{number}: {line.strip()[:80]}"
        for number, line in enumerate(source.text.split("\n"), 1)
        if number not in outside and re.search(r"\]\([\w./#-]+\)", line)
    ]
    assert not wrong, "\n".join(wrong)


def _agents_named(usage: Usage) -> Iterator[tuple[str, str]]:
    """(agent, part) for each agent a command line names: `import AGENT`, `hooks install AGENT`,
    `hook AGENT`, `resume --agent AGENT`."""
    tokens = _tokens(usage.text)
    while tokens and tokens[0].startswith("-"):
        tokens.pop(0)
    words = [t for t in tokens if re.fullmatch(r"[a-z][a-z-]*", t) or t.startswith("-")]
    commands = {
        ("import",): "reading",
        ("hooks", "install"): "live",
        ("hooks", "uninstall"): "live",
    }
    commands[("hook",)] = "live"
    for path, part in commands.items():
        if tuple(words[: len(path)]) == path:
            rest = words[len(path) :]
            for word in rest[
                : next((i for i, w in enumerate(rest) if w.startswith("-")), len(rest))
            ]:
                if path[0] == "hooks" and word == "git":
                    continue  # git's own hooks (commit trailers), not an agent's
                yield word, part
    if words[:1] == ["resume"] and "--agent" in tokens:
        at = tokens.index("--agent")
        yield from ((w, "resume") for w in tokens[at + 1 :] if re.fullmatch(r"[a-z][a-z-]*", w))


def test_every_agent_a_command_line_names_has_that_part() -> None:
    """`convgit import pi`, `convgit hooks install claude-code`, `resume --agent codex`: the
    registry knows the agent, and it has the part the command asks for."""
    from convgit.agents import registry

    named = [(u, agent, part) for u in USAGES for agent, part in _agents_named(u)]
    assert len(named) > 10
    wrong = [
        f"{u.page}:{u.line}: {u.text}: {agent} has no {part}"
        for u, agent, part in named
        if agent not in registry.names(part)
    ]
    assert not wrong, "\n".join(wrong)


def _guide_usages() -> Iterator[tuple[str, list[str]]]:
    """Each command line of the guide's tables (their first cells, split at ` · `), as words."""
    guide = next(p for p in ALL if p.name == "docs/guide.md")
    for _, line in guide.lines_outside_code():
        if not line.startswith("| `convgit "):
            continue
        cell = line.split(" | ", 1)[0].lstrip("| ")
        for part in cell.split(" · "):
            code = part.strip().strip("`").replace("\\|", "|")
            if code.startswith("convgit "):
                yield code, code.split()[1:]


def test_the_guide_writes_no_argument_the_command_needs_in_brackets() -> None:
    """`convgit share SESSION`, not `[SESSION]`: what the command needs is never written as if
    it could be left out. Each placeholder of a guide's command line is matched with the
    command's arguments in order (option values aside). (A placeholder without brackets for an
    argument the parser may go without is fine: `switch REF` needs one unless --branch.)"""
    wrong = []
    for code, words in _guide_usages():
        path: tuple[str, ...] = (words.pop(0),)
        if words and (*path, words[0]) in COMMANDS:
            path = (*path, words.pop(0))
        command = COMMANDS.get(path)
        if command is None:
            continue
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        takes_value = {
            name
            for p in command.params
            if p.param_type_name == "option" and not p.is_flag
            for name in p.opts
        }
        placeholders, skip = [], False
        for word in words:
            if skip:
                skip = False
                continue
            bare = word.strip("[]").split("=", 1)[0]
            if bare.startswith("-"):
                skip = bare in takes_value and "=" not in word and not word.endswith("]")
                continue
            if re.fullmatch(r"\[?[A-Z][A-Z0-9_|]*(…|\.\.\.)?\]?", word):
                placeholders.append(word)
        for placeholder, argument in zip(placeholders, arguments, strict=False):
            if placeholder.startswith("[") and argument.required:
                wrong.append(f"`{code}`: {placeholder} ({argument.name} is required)")
    assert not wrong, "\n".join(wrong)


def test_the_guide_has_a_row_to_install_the_hooks_of_every_agent_that_has_them() -> None:
    from convgit.agents import registry

    written = {words[2] for _, words in _guide_usages() if words[:2] == ["hooks", "install"]}
    missing = set(registry.names("live")) - written
    assert not missing, f"no `convgit hooks install` row in docs/guide.md for {sorted(missing)}"


def test_the_indexes_name_every_agent_on_the_agents_line() -> None:
    from convgit.agents import registry

    for page in (ROOT / "README.md", ROOT / "docs" / "README.md"):
        line = next(x for x in page.read_text().splitlines() if x.startswith("* [Agents]("))
        missing = [a.title for a in registry.agents() if a.title not in line]
        assert not missing, f"{page.relative_to(ROOT)}'s Agents line lacks {missing}"


def test_the_retention_page_names_every_rule_gc_keeps_by() -> None:
    from convgit.upkeep.retention import HELD, SOFT

    page = (DOCS / "retention.md").read_text()
    missing = [rule for rule in (*HELD, *SOFT) if f'`"{rule}"`' not in page]
    assert not missing, f"docs/retention.md does not say what {missing} keeps"
    assert "not built yet" not in page.lower()
