"""One notation for what a command takes, in its help and usage line: every argument and every
option's value is an UPPERCASE name (``REF``, ``SESSION``, ``PATH``, ``N``), an optional
argument is ``[NAME]`` and one that repeats ``NAME...``, as git's manual pages write them."""

from typing import Any

import typer.core

from convgit.cli import completing


class Command(typer.core.TyperCommand):
    """A command whose arguments and option values are named in UPPERCASE: a parameter
    without a name of its own is called by its Python name, upper-cased (``ref`` is REF)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            takes_value = isinstance(param, typer.core.TyperArgument) or not getattr(
                param, "is_flag", True
            )
            if takes_value and param.metavar is None and param.name:
                param.metavar = param.name.rstrip("_").upper()
            completing.attach(param)  # a shell completes it by that name

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, typer.core.TyperArgument):
                name = str(param.metavar) + ("..." if param.nargs != 1 else "")
                pieces.append(name if param.required else f"[{name}]")
        return pieces
