"""What a shell completes in an argument, by the name the help gives it (``notation``): a REF (A,
B) with the session's labels, ``@``, ``root`` and its entry ids; a SESSION with the store's
session ids and names (the trash's for ``sessions restore``); an AGENT with the agents convgit
knows (and ``git`` for ``hooks``); a SHELL with bash, zsh and fish. Each answer is a glance at
the store's files (``store.glance``): no session is loaded or checked, so a TAB answers at once
on a session of any size. A store that cannot be read completes nothing, silently: the shell
is no place for an error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SHELLS = ("bash", "zsh", "fish")
REFS = ("@", "root")  # the references every session has (``conversation.refs``)
IDS = 8  # an id is offered by its first characters, as the commands show it


def _location(ctx: Any) -> Any:
    from convgit.store.location import locate

    params = ctx.find_root().params
    return locate(params.get("directory") or ".", params.get("store"))


def _session(ctx: Any, location: Any) -> str | None:
    """The session the command would use: ``-s``'s (an id or a prefix of one), else the
    current one."""
    asked = ctx.find_root().params.get("session")
    if asked:
        found = [s for s in location.session_ids() if s.startswith(asked)]
        return found[0] if len(found) == 1 else None
    return str(location.current() or "") or None


def refs(ctx: Any, param: Any, incomplete: str) -> list[str]:
    """Labels, ``@`` and ``root``; entry ids once what is typed could begin one."""
    from convgit.store import glance

    location = _location(ctx)
    sid = _session(ctx, location)
    if sid is None:
        return []
    offered = [*glance.labels(location, sid), *REFS]
    if incomplete:
        ids = glance.ids_starting(location, sid, incomplete)
        offered += sorted({i[:IDS] if len(i) > IDS and len(incomplete) < IDS else i for i in ids})
    return [word for word in offered if word.startswith(incomplete)]


def sessions(ctx: Any, param: Any, incomplete: str) -> list[str]:
    """The store's session ids and names (the trash's, to ``sessions restore``)."""
    from convgit.store import glance

    location = _location(ctx)
    if ctx.info_name == "restore" and ctx.parent is not None and ctx.parent.info_name == "sessions":
        found: dict[str, str] = {}
        for sid in location.trashed_ids():
            found[sid] = glance.names(location.in_trash(sid)).get(sid, "")
    else:
        named = glance.names(location)
        found = {sid: named.get(sid, "") for sid in location.session_ids()}
    offered = [*found, *(n for n in found.values() if n and " " not in n)]
    return [word for word in offered if word.startswith(incomplete)]


def agents(ctx: Any, param: Any, incomplete: str) -> list[str]:
    """The agents convgit knows; ``git`` too for ``hooks``."""
    from convgit.agents import registry

    offered = [agent.name for agent in registry.agents()]
    if ctx.parent is not None and ctx.parent.info_name == "hooks":
        offered.append("git")
    return [word for word in offered if word.startswith(incomplete)]


def shells(ctx: Any, param: Any, incomplete: str) -> list[str]:
    return [word for word in SHELLS if word.startswith(incomplete)]


BY_NAME: dict[str, Callable[[Any, Any, str], list[str]]] = {
    "REF": refs,
    "A": refs,
    "B": refs,
    "SESSION": sessions,
    "AGENT": agents,
    "SHELL": shells,
}


def attach(param: Any) -> None:
    """Give ``param`` the completion its name calls for (none when it names nothing known)."""
    found = BY_NAME.get(str(param.metavar or ""))
    if found is not None and getattr(param, "_custom_shell_complete", None) is None:
        param._custom_shell_complete = _quiet(found)


def _quiet(complete: Callable[[Any, Any, str], list[str]]) -> Callable[[Any, Any, str], list[str]]:
    def answer(ctx: Any, param: Any, incomplete: str) -> list[str]:
        try:
            return complete(ctx, param, incomplete)
        except Exception:
            return []

    return answer
