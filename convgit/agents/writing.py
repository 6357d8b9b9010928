"""Writing an agent's own session from any root-to-REF path of any session, whichever agents
recorded it: the path as the agent is given it (``prepare``), the agent's writer (its
``writing`` part), and the entries the agent's importer makes of what was written, each standing
for an entry of the path (``copies``), so that what the agent adds hangs below REF.

What the agent is given is what the model sees at REF (``replay``: a compaction's summary for
what it replaced, notes as user messages, each call followed at once by its result), each
message with the agent that wrote it (``agent_of``) and what produced it. A call of another
agent's tool is its counterpart among the target's tools (``tools``), or, with none, text the
model can read, its result a user message; another agent's parts the target has no place for are
left out, as its ``Keeps`` says (docs/handoff.md lists what survives each pair).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from convgit.agents import registry
from convgit.agents.handoff import Handoff, Native, Producer, Said
from convgit.agents.reading import Cursor, Known, kept_text
from convgit.agents.tools import Tool, say
from convgit.base import codec
from convgit.base.errors import RefusedError
from convgit.conversation import branching
from convgit.conversation.replay import MISSING_RESULT, replay

if TYPE_CHECKING:
    from convgit.agents.protocol import Writing, Written
    from convgit.agents.reading import Importer
    from convgit.conversation.tree import Tree
    from convgit.session import Session


def writer(agent: str) -> Writing:
    """The ``writing`` part of ``agent``; a RefusedError names the agents that have one."""
    unknown = "convgit cannot write a session of '{name}': it writes those of {known}."
    found = registry.agent(agent, "writing", unknown=unknown, error=RefusedError).writing
    assert found is not None
    return found()


def agent_of(entry: Mapping[str, Any], header: Mapping[str, Any]) -> str | None:
    """The agent that wrote ``entry``: the one it names (an agent session that continues
    another agent's), else the session's agent for an entry read from its files; None for an
    entry convgit wrote (a message typed into convgit, a note)."""
    named = entry.get("agent")
    if isinstance(named, str):
        return named
    if isinstance(entry.get("native"), dict):
        agent = header.get("agent")
        return agent if isinstance(agent, str) else registry.DEFAULT
    return None


def native_value(tree: Tree, entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The record the entry was made from, as its agent wrote it (the record holding it, for an
    entry made from part of one), decoded; None when there is none or it is no JSON object."""
    native = entry.get("native")
    if not isinstance(native, dict):
        return None
    raw = kept_text(native)
    holder = native.get("in")
    if raw is None and isinstance(holder, str):
        found = tree.entries.get(holder)
        if found is not None and isinstance(found.get("native"), dict):
            raw = kept_text(found["native"])
        elif holder in tree.kept:
            raw = kept_text(tree.kept[holder])
    if raw is None:
        return None
    try:
        value = codec.decode(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def prepare(session: Session, ref: str, target: str, agent_session: str) -> Handoff:
    """The path from the root to ``ref`` as ``target`` is given it. Refused when ``ref`` is
    inside a tool run (a call would be split from its result)."""
    tree = session.conversation.tree
    entry = session.conversation.resolve(ref)
    title = registry.title(target) or target
    refused = branching.refusal(tree, entry, f"Handing the path to {entry} to {title}")
    if refused is not None:
        raise refused
    header = tree.header or {}
    cwd = str(header.get("cwd") or "")
    context = replay(tree, entry)
    models = _models(tree, tree.path(entry))
    mine = writer(target).TOOLS
    names: dict[str, str] = {}  # call id -> its tool's name, as the target gets it
    texted: dict[str, str] = {}  # call id -> the name of a call given as text
    said: list[Said] = []
    later: list[Said] = []  # results given as text: after the reply's other results
    for message in context.messages:
        if message["role"] != "tool" and later:
            said += later
            later.clear()
        ident = str(message.get("id") or "")
        record = tree.entries.get(ident, {})
        agent = agent_of(record, header) if message.get("kind") is None else None
        role = message["role"]
        ts = str(record.get("ts") or "")
        parts = _parts(message.get("content"))
        if role == "tool":
            call = str(message["toolCallId"])
            if not ident:  # replay's placeholder for a call never answered
                ident = said[-1].entry if said else entry
            if call in texted:
                note = f"[The result of {texted[call]} (call {call})"
                note += ", an error" if message.get("isError") else ""
                words = "\n".join(str(p["text"]) for p in parts if p["type"] == "text")
                images = [p for p in parts if p["type"] == "image"]
                later.append(Said(ident, "user", [_text(f"{note}]:\n{words}"), *images], ts, agent))
                continue
            value = native_value(tree, record) if agent == target else None
            raw = kept_text(record["native"]) if value is not None else None
            said.append(
                Said(ident, "tool", parts, ts, agent, call=call, tool=names.get(call, ""),
                     error=bool(message.get("isError")), native=value, raw=raw)
            )  # fmt: skip
            continue
        value = native_value(tree, record)
        producer = None
        if role == "assistant":
            producer = _produced(agent, value) or models.get(ident)
            parts = _calls_for(parts, agent, target, mine, cwd, names, texted)
        own = value if agent == target else None
        raw = kept_text(record["native"]) if own is not None else None
        said.append(Said(ident, role, parts, ts, agent, producer=producer, native=own, raw=raw))
    said += later
    for number, one in enumerate(said):
        one.seed = f"{number}/{one.entry}"
    _unique_calls(said)
    path = [tree.entries[ident] for ident in tree.path(entry)]
    return Handoff(
        target, session.id, entry, cwd, said, agent_session, header, tree.kept,
        model=models.get(entry), created=str(path[0].get("ts") or ""), path=path,
    )  # fmt: skip


def _unique_calls(said: list[Said]) -> None:
    """A call id made again on the path (an agent that counts its calls per turn) gets a
    suffix, with its result: the agents' APIs and files tell calls apart by id alone."""
    seen: set[str] = set()
    renamed: dict[str, str] = {}
    for message in said:
        if message.role == "tool" and message.call in renamed:
            message.call, message.raw = renamed.pop(message.call), None
            continue
        for part in message.calls():
            ident = str(part["id"])
            if ident in seen:
                number = 2
                while f"{ident}-{number}" in seen:
                    number += 1
                part["id"] = renamed[ident] = f"{ident}-{number}"
                message.raw = None  # its record names the call as it was
            seen.add(str(part["id"]))


def _models(tree: Tree, path: list[str]) -> dict[str, Producer]:
    """The model in force at each entry of ``path`` (from the ``model`` entries above it)."""
    found: dict[str, Producer] = {}
    current: Producer | None = None
    for ident in path:
        record = tree.entries[ident]
        if record["type"] == "model":
            current = Producer(str(record["provider"]), str(record["model"]))
        if current is not None:
            found[ident] = current
    return found


def _produced(agent: str | None, value: dict[str, Any] | None) -> Producer | None:
    """What produced a reply, from the record its agent wrote (its own writer reads it)."""
    if agent is None or value is None or not registry.agent(agent).has("writing"):
        return None
    return writer(agent).produced(value)


def _parts(content: Any) -> list[dict[str, Any]]:
    """A message's content as the parts a writer knows: text, thinking, tool calls, images
    (one shape: ``mediaType`` and ``data``, or ``url``); an agent's own kinds are left out."""
    if isinstance(content, str):
        return [_text(content)] if content else []
    found: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            found.append(_text(part["text"]))
        elif kind in ("thinking", "tool_call"):
            found.append(dict(part))
        elif kind == "image":
            image = _image(part)
            if image is not None:
                found.append(image)
    return found


def _image(part: Mapping[str, Any]) -> dict[str, Any] | None:
    source = part.get("source")
    if isinstance(source, dict):  # the Anthropic shape some readers keep
        if source.get("type") == "base64" and isinstance(source.get("data"), str):
            return {"type": "image", "mediaType": source.get("media_type"), "data": source["data"]}
        if isinstance(source.get("url"), str):
            return {"type": "image", "url": source["url"]}
        return None
    if isinstance(part.get("data"), str):
        return {"type": "image", "mediaType": part.get("mediaType"), "data": part["data"]}
    if isinstance(part.get("url"), str):
        return {"type": "image", "url": part["url"]}
    return None


def image_data(part: Mapping[str, Any]) -> tuple[str, str] | None:
    """(media type, base64 data) of an image part, from a data URL too; None for a link."""
    if isinstance(part.get("data"), str):
        return str(part.get("mediaType") or "image/png"), str(part["data"])
    url = part.get("url")
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return head or "image/png", data
    return None


def image_url(part: Mapping[str, Any]) -> str | None:
    """An image part as a URL (a data URL for one held inline)."""
    if isinstance(part.get("url"), str):
        return str(part["url"])
    found = image_data(part)
    return None if found is None else f"data:{found[0]};base64,{found[1]}"


def say_call(name: str, given: Any, source: str, target: str, cwd: str) -> tuple[Tool, Any] | None:
    """The call ``name(given)`` of ``source``'s as ``target``'s counterpart (its tool and
    input), or None when it has none."""
    return say(name, given, writer(source).TOOLS, writer(target).TOOLS, cwd)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _calls_for(
    parts: list[dict[str, Any]],
    agent: str | None,
    target: str,
    mine: Any,
    cwd: str,
    names: dict[str, str],
    texted: dict[str, str],
) -> list[dict[str, Any]]:
    """The calls of a reply as the target's: its own as they are, another agent's as their
    counterparts, a call with none as text (its id in ``texted``)."""
    out: list[dict[str, Any]] = []
    theirs = None
    if agent is not None and agent != target and registry.agent(agent).has("writing"):
        theirs = writer(agent).TOOLS
    for part in parts:
        if part.get("type") != "tool_call":
            out.append(part)
            continue
        call, name, given = str(part["id"]), str(part["name"]), part.get("input", {})
        if agent == target or (agent is None and name in mine.names()):
            names[call] = name
            out.append(part)
            continue
        found = None if theirs is None else say(name, given, theirs, mine, cwd)
        if found is None:
            texted[call] = name
            out.append(_text(f"[A call of {name} (call {call}): {codec.dumps(given)}]"))
            continue
        tool, argument = found
        names[call] = tool.name
        out.append({"type": "tool_call", "id": call, "name": tool.name, "input": argument})
    return out


def replies(said: list[Said]) -> Iterator[list[Said]]:
    """The messages in runs: consecutive assistant messages (one reply, recorded block by
    block) together, every other message on its own."""
    run: list[Said] = []
    for message in said:
        if message.role == "assistant" and run and run[-1].role == "assistant":
            run.append(message)
            continue
        if run:
            yield run
        run = [message]
    if run:
        yield run


def result_text(message: Said) -> str:
    """A tool result's text (its images left to the writers that can hold them)."""
    return message.text() or ("" if message.parts else MISSING_RESULT if message.error else "")


# -- what the target's importer makes of it ------------------------------------------------------


def copies(native: Native, importer: Importer, ref: str) -> tuple[dict[str, str], list[str]]:
    """The entries ``importer`` makes of what was written, each with the entry of the path it
    stands for (the one whose record it was written from; one made of nothing written, the one
    before it), the entry the agent continues from standing for ``ref``; and the keys of the
    records it keeps of it."""
    batch = importer.parse(native.data, Cursor(), Known())
    texts: dict[str, bytes] = {}
    for record in batch.records:
        keeps = record if record.get("type") == "native" else record.get("native")
        if isinstance(keeps, dict) and isinstance(keeps.get("key"), str):
            text = kept_text(keeps)
            if text is not None:
                texts.setdefault(str(keeps["key"]), text)
    found: dict[str, str] = {}
    previous: str | None = None
    made = [r for r in batch.records if "parentId" in r]
    for record in made:
        found_native = record.get("native")
        holder: dict[str, Any] = found_native if isinstance(found_native, dict) else {}
        raw = kept_text(holder)
        if raw is None and isinstance(holder.get("in"), str):
            raw = texts.get(holder["in"])
        origin = native.origins.get(raw) if raw is not None else None
        if origin is None:
            origin = previous or next(iter(native.origins.values()), ref)
        found[str(record["id"])] = origin
        previous = origin
    leaf = batch.leaf if batch.leaf is not None else (made[-1]["id"] if made else None)
    if leaf is not None:
        found[str(leaf)] = ref
    kept = [str(r["key"]) for r in batch.records if r.get("type") == "native"]
    return found, kept


# -- resume and export ---------------------------------------------------------------------------


def written(
    session: Session, ref: str, agent: str, agent_session: str | None = None
) -> tuple[Handoff, Native]:
    """The path to ``ref`` written as ``agent``'s own session, under ``agent_session`` (default:
    a new session id)."""
    mine = writer(agent)
    handoff = prepare(session, ref, agent, agent_session or mine.new_session())
    if not handoff.said:
        raise RefusedError(
            f"The path to {handoff.ref} holds no message {registry.title(agent)} could be given.",
            "resume at a reply or a prompt",
        )
    return handoff, mine.write(handoff)


def hand_over(session: Session, ref: str, agent: str) -> Written:
    """What ``convgit resume REF --agent AGENT`` writes when the path is not the agent's own:
    the agent's session of the path, where the agent finds it, with the entries its import
    will make of it (``copies``)."""
    from convgit.agents.protocol import Written

    handoff, native = written(session, ref, agent)
    path, command = writer(agent).place(session, native)
    found, skip = copies(native, registry.importer(agent), handoff.ref)
    return Written(native.session, path, native.data, command, copies=found, skip=skip)


def export(session: Session, ref: str | None, agent: str) -> bytes:
    """``convgit export REF --format AGENT``: the path written as the agent's own session (a
    session that mirrors the agent's under the agent's own session id)."""
    header = session.conversation.header()
    own = header.get("agentSession") if header.get("agent") == agent else None
    return written(session, ref or "@", agent, own if isinstance(own, str) else None)[1].data


def data_of(part: Mapping[str, Any]) -> bytes:
    """An image part's bytes (empty for a link)."""
    found = image_data(part)
    return b"" if found is None else base64.b64decode(found[1], validate=False)
