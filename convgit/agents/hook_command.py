"""The shell command an agent's settings run for convgit's hook: which convgit it starts, and
how a handler is recognised as convgit's whatever convgit path the user gave it since.

The command names the convgit that installed it by its absolute path (the Python that runs
its hook's file, ``this_hook``, and the folder convgit is in), so it runs when ``convgit`` is
not on the PATH of the shell that started the agent; when that path is gone it falls back to
the ``convgit`` on the PATH, and when there is none the agent goes on, and the event is kept
for convgit to see (``not_run``: appended, with the agent's name and the time, to
``hooks-not-run`` in the repository's store, when it has one; ``convgit.agents.hook_failures``
reads it in at the next convgit command). ``--command`` chooses another program. A handler is
convgit's when every step of its command is a run of the hook, one of these guards or that
keeping, whichever convgit path it names; a command of the user's that does more (a pipe,
another program) is theirs.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent.parent  # this convgit's package folder
THIN = _PACKAGE / "agents" / "live" / "thin.py"  # the hook's own file (``this_hook``)
# when the convgit named is gone, the one on the PATH
FALLBACK = "command -v convgit >/dev/null 2>&1 && exec convgit"
_PREFIX = re.compile(r"((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)(.*)", re.DOTALL)
_STEP = re.compile(r"\s*(?:;|&&|\|\||\n)\s*")
_GUARDS = (
    re.compile(r"\[ -[xf] (?:'[^']*'|[^\s;|&]+) \]"),
    re.compile(r"command -v \S+(?: >/dev/null)?(?: 2>&1)?"),
    re.compile(r"exit 0|true|:"),
)


def this_convgit() -> str:
    """This convgit as shell words: this Python, started without ``site`` (``-S``: the
    ``.pth`` files of every installed package are not read, which is most of Python's start),
    running ``-m convgit`` with the folders of this convgit and of the hook's one dependency
    (orjson) first on its path. An editable install or a clone run from PYTHONPATH is found
    as well as an installed one."""
    import orjson

    folders: list[str] = []
    for folder in (_PACKAGE.parent, Path(orjson.__file__).resolve().parent.parent):
        if str(folder) not in folders:
            folders.append(str(folder))
    path = "PYTHONPATH=" + ":".join(shlex.quote(f) for f in folders)
    return f"{path}${{PYTHONPATH:+:$PYTHONPATH}} {shlex.quote(sys.executable)} -S -m convgit"


def this_hook() -> str:
    """This convgit's hook as shell words: ``this_convgit`` running the recorder's thin client
    from its file (``convgit/agents/live/thin.py``) instead of ``-m convgit``, which imports
    Python's module runner and convgit's package before the event reaches the recorder; the
    client runs convgit's own entry when the recorder does not take the event."""
    return this_convgit().removesuffix(" -m convgit") + f" {shlex.quote(str(THIN))}"


def not_run(agent: str) -> str:
    """The last step of the command: no convgit ran, so the event (stdin) is appended to
    ``hooks-not-run`` in the store of the repository the agent works in, under a line with the
    agent's name and the time, when that store exists (a teammate without convgit gets
    nothing); the agent goes on whatever happens (exit 0)."""
    from convgit.agents.hook_failures import NOT_RUN

    stamp = "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    keep = f'{{ echo "{agent} {stamp}"; cat; echo; }} >> "$d/convgit/{NOT_RUN}"'
    return (
        f'd=$(git rev-parse --git-common-dir 2>/dev/null) && [ -d "$d/convgit" ] && {keep}; exit 0'
    )


def command(agent: str, program: str | None = None) -> str:
    """The command a settings file runs for ``agent``'s hook: ``program`` (default: this
    convgit) when it is there, else the ``convgit`` on the PATH, else the event is kept for
    convgit to see (``not_run``)."""
    chosen = program or this_hook()
    found = _PREFIX.match(chosen)
    prefix, rest = (found[1], found[2]) if found else ("", chosen)
    run = f"{prefix}exec {rest} hook {agent}"
    words = _words(rest)
    if not words or "/" not in words[0]:  # a name the PATH finds: as given, guarded
        name = shlex.quote(words[0] if words else chosen)
        return f"command -v {name} >/dev/null 2>&1 && {run}; {not_run(agent)}"
    checks = [f"[ -x {shlex.quote(words[0])} ]"]
    if program is None:  # this convgit: its folder, and the hook's file in it, still there
        checks.append(f"[ -f {shlex.quote(str(THIN))} ]")
    return f"{' && '.join(checks)} && {run}; {FALLBACK} hook {agent}; {not_run(agent)}"


def named_gone(text: str) -> list[str]:
    """The files the installed command ``text`` names for its convgit (its ``[ -x ]`` and
    ``[ -f ]`` guards) that are gone: whatever the PATH, that convgit does not run."""
    gone = []
    for kind, quoted in re.findall(r"\[ -([xf]) ('[^']*'|[^\s;|&]+) \]", text):
        named = _words(quoted)
        if not named:
            continue
        path = named[0]
        there = os.access(path, os.X_OK) if kind == "x" else os.path.isfile(path)
        if not there:
            gone.append(path)
    return gone


def is_hook_command(text: str, agent: str) -> bool:
    """True when ``text`` is a command convgit installed for ``agent`` (any version, any
    convgit path): only runs of the hook and guards."""
    run = re.compile(
        r"(?:exec )?(?:(?:'[^']*'|[^\s;|&<>'])+ )+hook " + re.escape(agent) + r"(?: [^;|&<>]*)?"
    )
    runs = 0
    text = text.replace(not_run(agent), "exit 0")  # the keeping of an event no convgit ran
    for step in _STEP.split(text.strip()):
        if not step:
            continue
        if run.fullmatch(step) and "convgit" in step:
            runs += 1
        elif not any(guard.fullmatch(step) for guard in _GUARDS):
            return False
    return runs > 0


PROBE = "CONVGIT_HOOK_PROBE"  # set: the hook says which convgit it is, and does nothing


def would_run(text: str) -> str | None:
    """The convgit the installed command ``text`` starts in this shell (its package folder),
    found by running it with ``PROBE`` set; None when it starts none."""
    # no repository for the probe: an event no convgit ran would be kept in its store
    probe = {**os.environ, PROBE: "1", "GIT_DIR": os.devnull + "/none"}
    try:
        done = subprocess.run(
            ["sh", "-c", text],
            env=probe,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    said = done.stdout.strip()
    return said[len("convgit ") :] if said.startswith("convgit ") else None


def problem(text: str, agent: str, scope: str) -> str | None:
    """What keeps the installed command ``text`` from running convgit, in one sentence: none
    from this shell, or the convgit it names is gone, so that it runs only where a ``convgit``
    is on the PATH of the shell that starts the agent (which may not be this shell's); or an
    older convgit's command, which keeps no event when it finds no convgit (``not_run``)."""
    if would_run(text) is None:
        return f"its command would start no convgit from this shell: {text}"
    gone = named_gone(text)
    if gone:
        return (
            f"the convgit its command names is gone ({', '.join(gone)}): it runs only where a"
            " `convgit` is on the PATH of the shell that starts the agent, whatever this"
            " shell's PATH has; an event that finds none is not recorded;"
            f" `convgit hooks install {agent} --scope {scope}` names this convgit"
        )
    from convgit.agents.hook_failures import NOT_RUN

    if NOT_RUN not in text:
        return (
            "its command is an older convgit's: an event that finds no convgit to run is not"
            f" kept for `convgit status`; `convgit hooks install {agent} --scope {scope}` updates"
            " it"
        )
    return None


def _words(step: str) -> list[str]:
    try:
        return shlex.split(step)
    except ValueError:
        return []


# -- the handler of the agents whose settings take Claude Code's shape (Claude Code, Codex,
# Gemini CLI): ``{"hooks": {EVENT: [{"matcher": M, "hooks": [HANDLER]}]}}``


def handler(agent: str, program: str | None, timeout: int, **more: str) -> dict[str, Any]:
    """The handler convgit installs for every event of ``agent`` (``program``: the convgit to
    run, default the one running now; ``timeout`` in the agent's unit)."""
    return {"type": "command", **more, "command": command(agent, program), "timeout": timeout}


def is_handler(found: Any, agent: str) -> bool:
    """A handler convgit installed for ``agent`` (this version or another, whichever convgit
    path it names): its command only runs the hook, guarded or not. A command of the user's
    that runs the hook among other things is theirs."""
    if not isinstance(found, dict) or found.get("type", "command") != "command":
        return False
    text = found.get("command")
    return isinstance(text, str) and is_hook_command(text, agent)


Matchers = dict[str, str | None]  # event -> matcher (None: every one)


def events(always: Matchers, tool_events: Matchers, tool_snapshots: bool) -> Matchers:
    """The events to install, with their matchers: ``always``, and with ``[hooks]
    tool_snapshots``, ``tool_events`` over them."""
    return {**always, **tool_events} if tool_snapshots else dict(always)


def wanted(
    made: dict[str, Any], matchers: Matchers
) -> dict[str, tuple[str | None, dict[str, Any]]]:
    """Each event to install with its matcher and the handler ``made``."""
    return {event: (matcher, made) for event, matcher in matchers.items()}
