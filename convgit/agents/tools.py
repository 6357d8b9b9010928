"""Tool calls in convgit's words, so that a call one agent made is given to another as that
agent's own counterpart.

Each agent declares its tools (its ``writing`` part's ``TOOLS``, a ``ToolMap``): for each of five
kinds, ``write`` (a whole file), ``edit`` (replacements in a file), ``shell``, ``read`` and
``search`` (a pattern in files), the tool that does it and how its arguments say an ``Op`` (the
call in convgit's words) and back. A call is said again for another agent (``say``) when its
agent's map reads it and the other's can write it: Claude Code's ``Edit {file_path, old_string,
new_string}`` is pi's ``edit {path, edits}`` and Codex's ``apply_patch`` of one file. A call that
no map reads (a subagent's task, a web fetch, an MCP tool), or that the other agent's tools
cannot say (several edits for a tool of one, a patch of several files), has no counterpart:
``None``, and the writer gives it as text the model can read.

Paths are made absolute (against the session's folder) when read, and written as each tool
wants them (Codex's patches name them from the working folder).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

KINDS = ("write", "edit", "shell", "read", "search")


@dataclass(frozen=True)
class Edit:
    """One replacement: ``old`` by ``new`` (every match with ``every``)."""

    old: str
    new: str
    every: bool = False


@dataclass(frozen=True)
class Op:
    """A tool call in convgit's words. ``path``: the file (write, edit, read) or the folder
    searched (search; "" for the working folder). ``offset``: the first line read (from 1),
    ``limit``: how many."""

    kind: str
    path: str = ""
    content: str = ""
    edits: tuple[Edit, ...] = ()
    command: str = ""
    pattern: str = ""
    glob: str = ""
    offset: int | None = None
    limit: int | None = None


Reader = Callable[[Any, str], "Op | None"]  # (the tool's input, the working folder) -> Op
Writer = Callable[[Op, str], Any]  # (Op, the working folder) -> the tool's input, or None


@dataclass(frozen=True)
class Tool:
    """One of an agent's tools doing one kind: ``read`` its input into an ``Op`` (None: not
    read this way), ``write`` an ``Op`` as its input (None: it cannot say it). ``custom``: the
    input is a string (Codex's ``apply_patch``), kept in convgit as ``{"input": text}``."""

    name: str
    kind: str
    read: Reader | None = None
    write: Writer | None = None
    custom: bool = False


@dataclass(frozen=True)
class ToolMap:
    """An agent's tools, in the order they are tried when a call is said for it."""

    tools: tuple[Tool, ...] = field(default_factory=tuple)

    def names(self) -> frozenset[str]:
        return frozenset(tool.name for tool in self.tools)

    def kinds(self) -> frozenset[str]:
        """The kinds it can say."""
        return frozenset(t.kind for t in self.tools if t.write is not None)

    def read(self, name: str, input: Any, cwd: str) -> Op | None:
        """The call ``name(input)`` in convgit's words, when a tool of that name reads it."""
        for tool in self.tools:
            if tool.name == name and tool.read is not None:
                if (
                    tool.custom
                    and isinstance(input, Mapping)
                    and isinstance(input.get("input"), str)
                ):
                    input = input["input"]
                try:
                    found = tool.read(input, cwd)
                except (TypeError, ValueError, AttributeError, KeyError):
                    found = None
                if found is not None:
                    return found
        return None

    def write(self, op: Op, cwd: str) -> tuple[Tool, Any] | None:
        """The first of its tools that says ``op``, with the input it takes."""
        for tool in self.tools:
            if tool.kind == op.kind and tool.write is not None:
                said = tool.write(op, cwd)
                if said is not None:
                    return tool, ({"input": said} if tool.custom else said)
        return None


def say(
    name: str, input: Any, source: ToolMap, target: ToolMap, cwd: str
) -> tuple[Tool, Any] | None:
    """The call ``name(input)`` of the agent whose tools are ``source`` as a call of the agent
    whose tools are ``target``: its tool and input; None when it has no counterpart."""
    op = source.read(name, input, cwd)
    return None if op is None else target.write(op, cwd)


# -- pieces the maps are made of ----------------------------------------------------------------


def absolute(path: Any, cwd: str) -> str:
    """``path`` (a string) against ``cwd`` when relative; ValueError when it is none."""
    if not isinstance(path, str) or not path:
        raise ValueError("no path")
    return path if os.path.isabs(path) or not cwd else os.path.normpath(os.path.join(cwd, path))


def relative(path: str, cwd: str) -> str:
    """``path`` from ``cwd`` when it is below it, else as it is."""
    if cwd and os.path.isabs(path):
        inside = os.path.relpath(path, cwd)
        if not inside.startswith(".."):
            return inside
    return path


def text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("not text")
    return value


def number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def flag(value: Any) -> bool:
    return value is True


def one_edit(op: Op) -> Edit | None:
    """The edit of an ``edit`` op of exactly one replacement."""
    return op.edits[0] if len(op.edits) == 1 else None


def shell_words(command: Any) -> str:
    """A command given as a string, or as argv (``["bash", "-lc", "..."]``: the script)."""
    if isinstance(command, str):
        return command
    if isinstance(command, list) and all(isinstance(w, str) for w in command) and command:
        if len(command) == 3 and command[1] in ("-lc", "-c") and command[0].endswith("sh"):
            return str(command[2])
        return shlex.join(command)
    raise ValueError("no command")


def cat(op: Op) -> str:
    """A shell command that prints what a ``read`` op reads."""
    path = shlex.quote(op.path)
    if op.offset is None and op.limit is None:
        return f"cat {path}"
    first = op.offset or 1
    last = "$" if op.limit is None else str(first + op.limit - 1)
    return f"sed -n '{first},{last}p' {path}"


def grep(op: Op, cwd: str) -> str:
    """A shell command that finds what a ``search`` op looks for."""
    words = ["rg", "-n", op.pattern]
    if op.glob:
        words += ["-g", op.glob]
    if op.path:
        words.append(relative(op.path, cwd))
    return shlex.join(words)


# -- patches (Codex's apply_patch, GitHub Copilot CLI's for GPT models) ---------------------------

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, UPDATE = "*** Add File: ", "*** Update File: "


def read_patch(patch: Any, cwd: str) -> Op | None:
    """A patch of one file as a ``write`` (a file added) or an ``edit`` (each hunk one
    replacement: its context and removed lines by its context and added lines); None for a
    patch of several files, a deletion or a move."""
    if not isinstance(patch, str):
        return None
    lines = patch.strip("\n").split("\n")
    if lines and lines[0].strip() == BEGIN:
        lines = lines[1:]
    if lines and lines[-1].strip() == END:
        lines = lines[:-1]
    heads = [n for n, line in enumerate(lines) if line.startswith("*** ")]
    if len(heads) != 1 or heads[0] != 0:
        return None
    head, body = lines[0], lines[1:]
    if head.startswith(ADD):
        if not all(line.startswith("+") for line in body):
            return None
        content = "".join(line[1:] + "\n" for line in body)
        return Op("write", absolute(head[len(ADD) :].strip(), cwd), content=content)
    if not head.startswith(UPDATE):
        return None
    edits: list[Edit] = []
    old: list[str] = []
    new: list[str] = []

    def close() -> None:
        if old or new:
            edits.append(Edit("\n".join(old), "\n".join(new)))
        old.clear()
        new.clear()

    for line in body:
        if line.startswith("@@"):
            close()
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith(" ") or line == "":
            old.append(line[1:])
            new.append(line[1:])
        elif line.strip() == "*** End of File":
            continue
        else:
            return None
    close()
    if not edits:
        return None
    return Op("edit", absolute(head[len(UPDATE) :].strip(), cwd), edits=tuple(edits))


def write_patch(op: Op, cwd: str) -> str | None:
    """A ``write`` as a patch adding the file, an ``edit`` as a patch of one hunk per
    replacement (a replacement of every match cannot be said: None)."""
    path = relative(op.path, cwd)
    if op.kind == "write":
        body = "".join(f"+{line}\n" for line in op.content.splitlines())
        return f"{BEGIN}\n{ADD}{path}\n{body}{END}\n"
    if op.kind != "edit" or not op.edits or any(e.every for e in op.edits):
        return None
    hunks = ""
    for edit in op.edits:
        hunks += "@@\n"
        hunks += "".join(f"-{line}\n" for line in edit.old.split("\n"))
        hunks += "".join(f"+{line}\n" for line in edit.new.split("\n"))
    return f"{BEGIN}\n{UPDATE}{path}\n{hunks}{END}\n"


# -- the shapes most agents share ------------------------------------------------------------


def file_tools(
    *,
    path: str,
    write: str,
    content: str,
    edit: str,
    old: str,
    new: str,
    every: str | None,
) -> tuple[Tool, Tool]:
    """A write tool ``write {path, content}`` and an edit tool of one replacement
    ``edit {path, old, new[, every]}``, with the agent's names for each."""

    def read_write(args: Any, cwd: str) -> Op:
        return Op("write", absolute(args[path], cwd), content=text(args[content]))

    def write_write(op: Op, cwd: str) -> dict[str, Any]:
        return {path: op.path, content: op.content}

    def read_edit(args: Any, cwd: str) -> Op:
        replace = Edit(text(args[old]), text(args.get(new, "")), flag(args.get(every or "")))
        return Op("edit", absolute(args[path], cwd), edits=(replace,))

    def write_edit(op: Op, cwd: str) -> dict[str, Any] | None:
        found = one_edit(op)
        if found is None or (found.every and every is None):
            return None
        said: dict[str, Any] = {path: op.path, old: found.old, new: found.new}
        if found.every and every is not None:
            said[every] = True
        return said

    return (
        Tool(write, "write", read_write, write_write),
        Tool(edit, "edit", read_edit, write_edit),
    )


def shell_tool(name: str, key: str = "command", **more: str) -> Tool:
    """A shell tool ``name {key: command}`` (``more``: other arguments it requires, each given
    the command)."""

    def read(args: Any, cwd: str) -> Op:
        return Op("shell", command=shell_words(args[key]))

    def write(op: Op, cwd: str) -> dict[str, Any]:
        return {key: op.command, **{k: op.command for k in more.values()}}

    return Tool(name, "shell", read, write)


def search_tool(name: str, *, path: str, glob: str) -> Tool:
    """A search tool ``name {pattern, path?, glob?}`` with the agent's names for the folder and
    the file filter."""

    def read(args: Any, cwd: str) -> Op:
        where = args.get(path)
        if isinstance(where, list):  # several paths: the first is the one said
            where = where[0] if where else None
        return Op(
            "search",
            absolute(where, cwd) if where else "",
            pattern=text(args["pattern"]),
            glob=str(args.get(glob) or ""),
        )

    def write(op: Op, cwd: str) -> dict[str, Any]:
        said: dict[str, Any] = {"pattern": op.pattern}
        if op.path:
            said[path] = op.path
        if op.glob:
            said[glob] = op.glob
        return said

    return Tool(name, "search", read, write)


def read_tool(name: str, *, path: str, offset: str, limit: str, zero_based: bool = False) -> Tool:
    """A read tool ``name {path, offset?, limit?}`` (``zero_based``: its offset counts the first
    line as 0)."""
    shift = 1 if zero_based else 0

    def read(args: Any, cwd: str) -> Op:
        first = number(args.get(offset))
        return Op(
            "read",
            absolute(args[path], cwd),
            offset=None if first is None else first + shift,
            limit=number(args.get(limit)),
        )

    def write(op: Op, cwd: str) -> dict[str, Any]:
        said: dict[str, Any] = {path: op.path}
        if op.offset is not None:
            said[offset] = op.offset - shift
        if op.limit is not None:
            said[limit] = op.limit
        return said

    return Tool(name, "read", read, write)
