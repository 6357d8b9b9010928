"""``convgit completion bash|zsh|fish``: the script that makes a shell complete convgit's
commands and options. The shell runs convgit to ask (typer's machinery, ``typer.completion``,
through the ``_CONVGIT_COMPLETE`` variable); the script only names that variable."""

from typing import Annotated

import typer

from convgit.base.errors import UsageError
from convgit.cli.program import COMPLETE_VAR, PROGRAM, command, echo

SHELLS = ("bash", "zsh", "fish")


@command()
def completion(
    ctx: typer.Context,
    shell: Annotated[str, typer.Argument(help="bash, zsh or fish.")],
) -> None:
    """Print the script that completes convgit's commands in SHELL. Add to ~/.bashrc:
    eval "$(convgit completion bash)"; zsh: the same in ~/.zshrc; fish:
    convgit completion fish > ~/.config/fish/completions/convgit.fish"""
    if shell not in SHELLS:
        raise UsageError(f"convgit completes in bash, zsh or fish, not '{shell}'.")
    from typer.completion import get_completion_script

    echo(get_completion_script(prog_name=PROGRAM, complete_var=COMPLETE_VAR, shell=shell))
