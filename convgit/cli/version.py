"""``convgit --version``: the installed version, said before typer or any session is imported
(``convgit.__main__`` takes it there when ``--version`` comes among the global options)."""

# the global options before a command word, as ``program._global`` declares them
_FLAGS = frozenset({"--fsync", "--no-pager", "-P"})
_WITH_VALUE = frozenset({"--session", "-s", "--store", "-C"})


def asked(args: list[str]) -> bool:
    """Whether the typer app would print the version for ``args``: ``--version`` among the
    global options, before any command word, and nothing it does not know before it."""
    words = iter(args)
    for word in words:
        if word == "--version":
            return True
        if word in _WITH_VALUE:
            if next(words, None) is None:
                return False
        elif word.partition("=")[0] not in ("--session", "--store") and word not in _FLAGS:
            return False
    return False


def words() -> str:
    """``convgit X.Y.Z``, or that it runs from a source tree that was never installed."""
    return f"convgit {_beside() or _installed()}"


def _beside() -> str | None:
    """The version in the name of the ``convgit-X.Y.Z.dist-info`` folder beside the package
    that runs (an installed wheel's, named so by the wheel format), when there is exactly one:
    a look at one folder where ``importlib.metadata`` costs as much as typer's import."""
    import os

    import convgit

    folder = os.path.dirname(os.path.dirname(os.path.abspath(convgit.__file__)))
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    found = [n for n in names if n.startswith("convgit-") and n.endswith(".dist-info")]
    return found[0][len("convgit-") : -len(".dist-info")] if len(found) == 1 else None


def _installed() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("convgit")
    except PackageNotFoundError:
        return "(not installed)"


def run() -> int:
    """Print the version; the exit code (1: stdout refused it)."""
    from convgit.cli import output

    closed = output.occupy_closed_stdout()
    try:
        output.write_line(words())
    finally:
        output.flush(closed)
    return 0
