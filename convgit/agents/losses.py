"""What survives a handoff, as docs/handoff.md's tables say it: made from each agent's own
declarations (its writer's ``KEEPS`` and ``TOOLS``), never written by hand. A test checks that
the page holds exactly what ``markdown()`` makes; ``python -m convgit.agents.losses`` prints it.
"""

from __future__ import annotations

from convgit.agents import registry
from convgit.agents.handoff import Keeps
from convgit.agents.tools import KINDS, Edit, Op, ToolMap

BEGIN = "<!-- the tables below are made by `python -m convgit.agents.losses`: do not edit -->"
END = "<!-- end of the made tables -->"

_SEVERAL = Op("edit", "/w/a.txt", edits=(Edit("a", "b"), Edit("c", "d")))
_EVERY = Op("edit", "/w/a.txt", edits=(Edit("a", "b", every=True),))


def _yes(value: bool) -> str:
    return "kept" if value else "lost"


def _thinking(keeps: Keeps, own: bool) -> bool:
    return keeps.thinking == "all" or (keeps.thinking == "own" and own)


def _tools(tools: ToolMap, kind: str) -> str:
    return ", ".join(sorted({f"`{t.name}`" for t in tools.tools if t.kind == kind})) or "-"


def survives(source: str, target: str) -> tuple[list[str], list[str]]:
    """What of a path ``source`` recorded survives when written as ``target``'s session, and
    what does not: text, calls, results and the rest, in the words of the table."""
    mine = registry.agent(target, "writing").writing
    assert mine is not None
    keeps = mine().KEEPS
    own = source == target
    kept, lost = ["text", "calls", "results"], list[str]()
    for name, ok in (
        ("thinking", _thinking(keeps, own)),
        ("images", keeps.images),
        ("usage", keeps.usage),
        ("tool errors", keeps.errors),
        ("ids", keeps.ids and own),
    ):
        (kept if ok else lost).append(name)
    return kept, lost


def markdown() -> str:
    """The tables of docs/handoff.md, between ``BEGIN`` and ``END``."""
    agents = registry.names("writing")
    writers = {}
    for name in agents:
        loader = registry.agent(name, "writing").writing
        assert loader is not None
        writers[name] = loader()
    lines = [BEGIN, "", "What each agent's format keeps of a path another agent recorded:", ""]
    lines += [
        "| agent | thinking | images | usage | tool errors | ids of its own messages"
        " | several edits in one call | an edit of every match |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in agents:
        keeps, tools = writers[name].KEEPS, writers[name].TOOLS
        thinking = {"all": "kept", "own": "its own only", "none": "lost"}[keeps.thinking]
        several = "a call" if tools.write(_SEVERAL, "/w") is not None else "text"
        every = "a call" if tools.write(_EVERY, "/w") is not None else "text"
        lines.append(
            f"| {name} | {thinking} | {_yes(keeps.images)} | {_yes(keeps.usage)}"
            f" | {_yes(keeps.errors)} | {_yes(keeps.ids)} | {several} | {every} |"
        )
    lines += ["", "Each agent's tools a call of another agent's is written as:", ""]
    lines += ["| agent | " + " | ".join(KINDS) + " |", "|---|" + "---|" * len(KINDS)]
    for name in agents:
        tools = writers[name].TOOLS
        lines.append(f"| {name} | " + " | ".join(_tools(tools, k) for k in KINDS) + " |")
    lines += ["", "What is lost, for each ordered pair (from the row's agent to the column's):", ""]
    lines += ["| from \\ to | " + " | ".join(agents) + " |", "|---|" + "---|" * len(agents)]
    for source in agents:
        cells = []
        for target in agents:
            lost = survives(source, target)[1]
            cells.append(", ".join(lost) if lost else "nothing")
        lines.append(f"| {source} | " + " | ".join(cells) + " |")
    lines += ["", END]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
