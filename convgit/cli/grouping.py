"""``convgit -h`` lists the commands by task, as git's own ``-h`` does and as docs/guide.md's
"Commands by task" does, in the same groups and order, each with the first sentence of its help
whole (wrapped, never cut). A command in no group is listed last, under "Other", so none is
ever hidden by being left out here."""

from typing import Any

import typer.core

from convgit.cli import completing

GROUPS: list[tuple[str, list[str]]] = [
    ("Start a session and record turns", ["init", "user", "assistant", "tool", "append", "system"]),
    (
        "Read the conversation and both tracks",
        ["log", "tree", "show", "context", "status", "html", "search", "ui"],
    ),
    (
        "Move in the conversation (files untouched)",
        ["switch", "branches", "fork", "edit", "retry", "label", "name"],
    ),
    (
        "Files: snapshots, restore, compare",
        ["snapshot", "snapshots", "restore", "restores", "diff", "worktree", "run"],
    ),
    ("Sessions", ["sessions", "use"]),
    ("Agents", ["import", "export", "hooks", "hook", "recorder", "resume", "mcp"]),
    ("Keep the store", ["gc", "redact", "fsck", "repair"]),
    (
        "Working with others",
        ["share", "unshare", "push", "fetch", "pull", "attribution", "why", "blame"],
    ),
    ("Other", ["demo", "completion"]),
]


def first_sentence(text: str) -> str:
    """The first sentence of a command's help, whole, on one line."""
    flat = " ".join(text.split())
    at = flat.find(". ")
    return flat if at == -1 else flat[: at + 1]


class Grouped(typer.core.TyperGroup):
    """The app's group of commands, listed in ``GROUPS`` in its help; its options (``-s``)
    complete as the commands' arguments do."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            completing.attach(param)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        shown: dict[str, Any] = {}
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                shown[name] = command
        placed = {name for _, names in GROUPS for name in names}
        rest = sorted(set(shown) - placed)
        for title, names in GROUPS:
            listed = [n for n in names if n in shown] + (rest if title == "Other" else [])
            rows = [(name, first_sentence(shown[name].help or "")) for name in listed]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
