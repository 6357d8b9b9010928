"""The reports of commands that act beyond one entry, in words: an import, what a request body
left out, a run on several snapshots, the hooks, a resume, the list of sessions, the branches
of a fork, a redaction. Values in, lines out, like ``convgit.text.render``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents import registry
from convgit.conversation.refs import saved_id
from convgit.text.render import SNAPSHOT_MARK, Styled, entry_line, summary

if TYPE_CHECKING:
    from convgit.agents.hooks import Change as HooksChange
    from convgit.agents.hooks import ScopeState
    from convgit.agents.importing import ImportResult
    from convgit.agents.resume import Resumed
    from convgit.conversation.branching import Fork
    from convgit.conversation.view import SessionView
    from convgit.session.runs import RunReport, RunRow


def import_words(result: ImportResult, title: str) -> list[str]:
    """What an import of one file did, what it kept without interpreting, and its notes."""
    new = len(result.new)
    entry_word = "entry" if new == 1 else "entries"
    head = (
        f"{Path(result.source).name}: {new} new {entry_word} in session {result.session}"
        f" ({title} session {result.agent_session_id}), {result.entries} in all"
    )
    if result.skipped:
        head += f"; {result.skipped} already there"
    lines = [head]
    kept = result.report.kept
    if kept:
        counted = sorted(kept.items(), key=lambda item: (-len(item[1]), item[0]))
        lines.append(
            "  kept, not interpreted: " + ", ".join(f"{len(ls)} {kind}" for kind, ls in counted)
        )
    for line, what in result.report.notes:
        lines.append(f"  {'line ' + str(line) if line is not None else 'the file'} {what}")
    return lines


def dropped_lines(dropped: list[dict[str, Any]], target: str) -> list[str]:
    """One line per kind of thing a context or request body left out, naming the entries."""
    groups: dict[tuple[str, str], list[str]] = {}
    for item in dropped:
        idents = groups.setdefault((item["what"], item["why"]), [])
        if item["entry"] is not None:
            idents.append(str(item["entry"]))
    lines = []
    for (what, why), idents in groups.items():
        where = ""
        if idents:
            more = f" and {len(idents) - 5} more" if len(idents) > 5 else ""
            where = f" (entr{'y' if len(idents) == 1 else 'ies'} {', '.join(idents[:5])}{more})"
        lines.append(f"convgit: not sent to {target}: {what}{where}: {why}")
    return lines


def run_lines(view: SessionView, report: RunReport) -> list[Styled]:
    """A row per REF of a run: its label (else the REF), entry, how the command ended, how
    long it took and the entry's first line; below it the last lines of the output and the
    path of the log that holds all of it."""
    heads: list[tuple[str, str, str, str, str]] = []
    for row in report.rows:
        outcome = row.outcome
        if row.entry is None:
            name, ident, what = row.ref, "files", "the files of the working tree"
        else:
            name = view.labels.get(row.entry) or row.ref
            ident = view.short_id(row.entry)
            what = summary(view.entries[row.entry], width=60)
        ended = "timed out" if outcome.timed_out else f"exit {outcome.exit_code}"
        heads.append((name, ident, ended, f"{outcome.seconds:.2f} s", what))
    widths = [max(len(head[column]) for head in heads) for column in range(4)]
    out: list[Styled] = []
    for row, (name, ident, ended, took, what) in zip(report.rows, heads, strict=True):
        outcome = row.outcome
        style = "yellow" if outcome.timed_out else "green" if outcome.exit_code == 0 else "red"
        line = Styled(name.ljust(widths[0]), style="bold").append("  ")
        line.append(ident.ljust(widths[1]), style="yellow").append("  ")
        line.append(ended.ljust(widths[2]), style=style).append("  ")
        line.append(took.rjust(widths[3])).append("  ").append(what, style="dim")
        out.append(line)
        indent = " " * (widths[0] + 2)
        out += [Styled(f"{indent}│ {text}") for text in outcome.tail or ("(no output)",)]
        noted = f" (recorded as note {row.note})" if row.note else ""
        out.append(Styled(f"{indent}log: {outcome.log}{noted}", style="dim"))
    return out


def run_failed_sentence(failed: Sequence[RunRow], total: int) -> str:
    """The sentence that ends a run whose commands did not all succeed."""
    said = ", ".join(
        f"{row.ref}: {'timed out' if row.outcome.timed_out else f'exit {row.outcome.exit_code}'}"
        for row in failed
    )
    return f"convgit: {len(failed)} of {total} commands failed ({said})."


def hooks_change_words(change: HooksChange, verb: str) -> list[str]:
    """What `convgit hooks install|uninstall` did to one settings file."""
    where = _shown_path(change.path)
    if verb == "install":
        events = ", ".join(change.events)
        head = (
            f"installed convgit's hooks in {where} ({len(change.events)} events: {events})"
            if change.changed
            else f"convgit's hooks are in {where} already; nothing changed"
        )
    else:
        head = (
            f"removed convgit's hooks from {where}; everything else in it is as it was"
            if change.changed
            else f"there are no convgit hooks in {where}; nothing changed"
        )
    lines = [head]
    if change.backup is not None:
        lines.append(f"the file as it was is kept as {_shown_path(change.backup)}")
    for folder in change.folders:
        lines.append(f"removed the empty folder {_shown_path(folder)} (the install made it)")
    return lines


def hooks_status_words(
    found: dict[str, list[ScopeState]], on_path: str | None, log: str, report: dict[str, Any]
) -> list[str]:
    """`convgit hooks status`: every settings file, convgit on PATH, and the hook log."""
    lines = []
    for agent, states in found.items():
        lines.append(f"{agent} hooks:")
        for state in states:
            words = state.state if state.problem is None else f"{state.state}: {state.problem}"
            if state.state == "out of date":
                on = ", ".join(state.events)
                words += (
                    f" (on {on}: an older version's events;"
                    f" `convgit hooks install {agent} --scope {state.scope}` updates it)"
                )
            lines.append(f"  {state.scope:<8}{_shown_path(state.path)}: {words}")
    lines.append(
        f"convgit on PATH: {on_path}"
        if on_path
        else "convgit on PATH: not found; the hooks do nothing until it is"
    )
    counted = f"{report['events']} events, {report['problems']} problems"
    lines.append(f"hook log: {_shown_path(Path(log))} ({counted})")
    if report["last"]:
        lines.append(f"  last: {report['last']}")
    if report["last_problem"] and report["last_problem"] != report["last"]:
        lines.append(f"  last problem: {report['last_problem']}")
    timed = []
    for way, words in (("recorder", "through the recorder"), ("hook", "without it")):
        found = report["timing"][way]
        if found["events"]:
            timed.append(f"{found['median_ms']} ms {words} (median of {found['events']})")
    if timed:
        lines.append(f"  an event's whole time, from the hook's start: {'; '.join(timed)}")
    return lines


def hook_failure_words(failures: list[dict[str, Any]]) -> list[str]:
    """What the hooks missed and no later event caught up (none: no line): the events that
    failed or ran no convgit, and the turns recorded without snapshots."""
    if not failures:
        return []
    events = [f for f in failures if f.get("kind") != "unrecorded"]
    turns = [f for f in failures if f.get("kind") == "unrecorded"]
    lines = []
    if events:
        lines.append(f"hook events that failed ({len(events)}), their turns not recorded yet:")
        lines += [f"  {_failure_line(f)}" for f in events[-5:]]
    if turns:
        count = sum(len(f.get("entries") or []) for f in turns)
        lines.append(f"turns recorded without snapshots ({count}):")
        lines += [f"  {_failure_line(f)}" for f in turns[-5:]]
    lines.append(f"  details in {_shown_path(Path(str(failures[-1]['log'])))}")
    lines.append(
        "  a later event of the same agent session catches up the turns it can;"
        " `convgit hooks dismiss` once you have seen them"
    )
    return lines


def _failure_line(failure: dict[str, Any]) -> str:
    when = str(failure["when"]).replace("T", " ").rstrip("Z")
    session = failure.get("agent_session_id")
    whose = f"{failure.get('agent')} {session}" if session else str(failure.get("agent"))
    return f"{when} UTC {failure['event']} ({whose}): {failure['problem']}"


def not_run_words(taken: list[dict[str, Any]]) -> list[str]:
    """What any command says, once, of hook events that ran no convgit since the last."""
    if not taken:
        return []
    count = len(taken)
    lines = [
        f"convgit: {count} hook event{'s' * (count != 1)} of an agent ran no convgit (its"
        " command found neither the convgit it names nor one on the PATH): their turns have no"
        " snapshots until a later event catches them up"
    ]
    lines += [f"  {_failure_line(f)}" for f in taken[-5:]]
    lines.append("  `convgit hooks status` says why; `convgit status` names them until then")
    return lines


def dismissed_words(dismissed: list[dict[str, Any]]) -> list[str]:
    """What `convgit hooks dismiss` did."""
    if not dismissed:
        return ["nothing to dismiss: no hook event or turn is named"]
    count = len(dismissed)
    lines = [f"dismissed {count} (no longer named; the hook log keeps every line):"]
    lines += [f"  {_failure_line(f)}" for f in dismissed]
    return lines


def resume_words(result: Resumed, shown: str, worktree: Path | None = None) -> list[str]:
    """What `convgit resume` wrote and where, and the command that continues there (``shown``:
    how the entry is listed; ``worktree``: the session's working tree, said when the file was
    written inside it)."""
    where = _shown_path(result.path)
    if not result.written:
        return [
            f"{result.title} reaches the path to {shown} in its own session"
            f" {result.agent_session_id} ({where}): nothing written",
            f"to continue there: {result.command}",
        ]
    lines = [
        f"wrote {registry.a(result.title)} session of the path to {shown}"
        f" ({result.lines} lines): {where}"
    ]
    if worktree is not None and result.path.resolve().is_relative_to(worktree):
        lines.append(
            "it is inside the working tree, beside the file the session was imported from:"
            " git sees a new file there, and the next snapshot holds it unless git ignores it"
        )
    lines.append(f"to continue there: {result.command.replace(str(result.path), where)}")
    return lines


def _shown_path(path: Path) -> str:
    """A path as a person would type it here: from the current folder when it is below it,
    else from the home folder, else whole."""
    for base, shown in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return shown + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


def session_lines(found: list[dict[str, Any]]) -> list[str]:
    """A line per session of ``list_sessions``: current mark, id, name, size, leaf, when it was
    created, and where it comes from (the session and entry it was forked from, the agent's
    session it mirrors)."""
    out = []
    for s in found:
        mark = "*" if s["current"] else " "
        name = f"  {s['name']}" if s.get("name") else ""
        count = s["entries"]
        facts = [f"{count} entr{'y' if count == 1 else 'ies'}", f"leaf {s['leaf']}"]
        if s.get("created"):
            facts.append(f"created {_when(str(s['created']))}")
        source = s.get("source")
        if isinstance(source, dict):
            facts.append(f"forked from {source.get('session')} at {source.get('entry')}")
        if s.get("agent"):
            facts.append(f"mirrors {s['agent']} session {s.get('agent_session_id')}")
        problem = f"  ({s['error']})" if s.get("error") else ""
        out.append(f"{mark} {s['id']}{name}  {', '.join(facts)}{problem}")
    return out


def _when(ts: str) -> str:
    """An ISO 8601 UTC time as a listing shows it: to the minute."""
    return ts[:16].replace("T", " ") + " UTC" if ts.endswith("Z") and len(ts) >= 16 else ts


def branch_lines(
    view: SessionView, fork: Fork, path: Sequence[str], ref: str | None = None
) -> list[Styled]:
    """``convgit branches``: the fork point (bold when on the active ``path``), then a row per
    branch: its number (``*`` where the active leaf is), first entry and newest deepest leaf,
    how many entries lead there, the leaf's first line, the branch's labels and its newest
    snapshot."""
    if fork.at is None and len(fork.branches) == 1:
        head = Styled("one branch, from the root: no fork above here", style="bold")
    elif fork.at is None:
        head = Styled("branches at the roots of the tree", style="bold")
    else:
        head = Styled("branches at ", style="bold").append_text(
            entry_line(view, fork.at, on_path=fork.at in set(path))
        )
    out = [head]
    for branch in fork.branches:
        line = Styled("* " if branch.active else "  ", style="bold green")
        line.append(f"{branch.number}  ", style="bold")
        line.append(view.short_id(branch.first), style="yellow")
        if branch.leaf != branch.first:
            line.append(" … ", style="dim").append(view.short_id(branch.leaf), style="yellow")
        count = f"{branch.length} entr{'y' if branch.length == 1 else 'ies'}"
        line.append(f"  {count}  ").append(summary(view.entries[branch.leaf], width=60))
        for label in branch.labels.values():
            line.append(f" [{label}]", style="cyan")
        if branch.snapshot is not None:
            line.append(f" {SNAPSHOT_MARK} {view.short_id(branch.snapshot)}", style="magenta")
        if branch.leaf == view.leaf:
            line.append(" ← context", style="bold green")
        out.append(line)
    if fork.branches:
        at = "" if ref is None else f"{ref} "
        out.append(Styled(f"`convgit switch {at}--branch N` goes to the end of branch N", "dim"))
    return out


def redact_lines(report: Any, described: str) -> list[str]:
    """What a redaction did (or would do): per session, the entries and other lines rewritten,
    the files of the store scrubbed, the snapshots rewritten and the page removed; then the run
    logs, what it did not cover, and how the old git objects go."""
    would = report.dry_run
    out = [] if report.sessions else ["no sessions here to redact"]
    for found in report.sessions:
        if not found.changed:
            out.append(f"session {found.session}: no match of {described}")
            continue
        verb = "would redact" if would else "redacted"
        count = found.matches + sum(found.files.values())
        where = [f"{count} in its records"] if count else []
        if found.snapshots:
            paths = len({p for ps in found.snapshots.values() for p in ps})
            saved = sum("/" in ref for ref in found.snapshots)
            kinds = [_count(len(found.snapshots) - saved, "snapshot")] * (
                saved < len(found.snapshots)
            )
            kinds += [_count(saved, "saved state")] * (saved > 0)
            where.append(f"{_count(paths, 'file')} in {' and '.join(kinds)}")
        if not where:
            where.append("only on its page")
        out.append(f"session {found.session}: {verb} matches of {described}: {', '.join(where)}")
        out += [f"  entry {e}: {', '.join(fields)}" for e, fields in found.entries.items()]
        out += [f"  line {n} of the session file" for n in found.lines]
        out += [f"  {name}: {_matches(n)}" for name, n in found.files.items()]
        for ref, paths in found.snapshots.items():
            what = "saved state" if "/" in ref else "snapshot of"
            out.append(f"  {what} {ref}: {', '.join(paths) or 'rewritten (its parent was)'}")
        if found.page is not None:
            out.append(
                f"  {'would remove' if would else 'removed'} the page {Path(found.page).name}"
                " (`convgit html` writes it again)"
            )
        if found.agent is not None:
            out.append(
                f"  it mirrors {found.agent}: that agent's own transcript still holds the text"
            )
    for path, n in report.runs.items():
        out.append(f"run log {path}: {'would redact' if would else 'redacted'} {_matches(n)}")
    out += [f"warning: {sentence}" for sentence in report.elsewhere]
    out += [
        f"warning: {path} in the working tree still holds a match (redact never changes your files)"
        for path in report.working_tree
    ]
    for copy in report.remotes:
        holds = "holds" if would else "still holds"
        out.append(
            f"warning: {copy.remote} {holds} session {copy.session} as it was before this"
            f" redaction ({len(copy.refs)} refs): `convgit push --replace --session"
            f" {copy.session} {copy.remote}` replaces it there (a forced push)"
        )
    if report.dropped and not would:
        out.append(
            f"dropped this clone's {len(report.dropped)} copies of shared history that held it"
            " (session commits, and what remotes had)"
        )
    if (report.rewrote_commits or report.dropped) and not would:
        out.append(
            "the old commits are unreachable now: `git gc --prune=now` removes them from the"
            " repository"
        )
    if would:
        out.append("dry run: nothing was changed")
    return out


def _matches(n: int) -> str:
    return f"{n} match{'es' if n != 1 else ''}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def gc_lines(report: Any) -> list[str]:
    """What ``convgit gc`` let go (or would, in a dry run), what it kept and why, the bytes."""
    would = report.dry_run
    lines: list[str] = []
    if report.settled:
        lines.append("finished a gc that was interrupted")
    gone = report.let_go
    kinds = {"snapshot": "snapshot", "replaced": "replaced snapshot", "saved": "saved state"}
    for item in sorted(gone, key=lambda i: (i.session, i.ts)):
        what = kinds.get(item.what, item.what)
        name = saved_id(item.commit) if item.what == "saved" else item.short
        lines.append(f"  {name}  {item.ts[:10]}  {what} (session {item.session})")
    counts = {kind: sum(1 for i in gone if i.what == kind) for kind in kinds}
    said = [f"{n} {kinds[k]}{'' if n == 1 else 's'}" for k, n in counts.items() if n]
    verb = "would let go" if would else "let go"
    lines.append(f"{verb} {', '.join(said) if said else 'nothing'}")
    if report.kept:
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(report.kept.items()))
        lines.append(f"kept {sum(report.kept.values())}: {why}")
    for sid, reason in sorted(report.skipped.items()):
        lines.append(f"session {sid} was not looked at: {reason}; all of it is kept")
    if would:
        lines.append(
            f"would free about {mib(report.bytes_freed)} of {mib(report.bytes_before)}"
            " (git's object folder)"
        )
    elif report.bytes_freed > 0:
        lines.append(
            f"freed {mib(report.bytes_freed)}: git's object folder went from"
            f" {mib(report.bytes_before)} to {mib(report.bytes_after)} in {report.seconds:.1f} s"
        )
    else:
        grew = f", it grew by {mib(-report.bytes_freed)}" if report.bytes_freed < 0 else ""
        lines.append(
            f"freed nothing: git's object folder is {mib(report.bytes_after)}{grew}"
            f" ({report.seconds:.1f} s)"
        )
    for why, count in sorted(report.left.items()):
        objects = f"{count} object{'' if count == 1 else 's'} nothing reaches"
        lines.append(f"{objects} {'would stay' if would else 'stayed'}: {why}")
    if not would and gone and report.bytes_freed <= 0 and not report.left:
        lines.append(
            "the snapshots let go held no file that a kept snapshot or your own history lacks"
            if report.objects == 0
            else "what was deleted took less room than the re-parented commits gc wrote"
        )
    if report.kept_over_budget is not None:
        lines.append(
            f"what the keep rules hold alone is {mib(report.kept_over_budget)}, over the budget"
            f" of {report.policy.max_mib:g} MiB (`[retention] max_mib` in config.toml)"
        )
    lines.append(f"policy: {report.policy.words}")
    return lines


def mib(count: int) -> str:
    """A number of bytes for people: KiB under a MiB, else MiB with one decimal."""
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KiB"
    return f"{count / (1024 * 1024):.1f} MiB"


def mirror_lines(mirrors: list[str]) -> list[str]:
    """A warning per remote a plain ``git push`` sends every ref of convgit's to."""
    return [
        f"warning: remote '{name}' is a mirror: `git push {name}` sends every session and"
        " snapshot of convgit's, shared or not (see docs/working-with-others.md)"
        for name in mirrors
    ]


def store_lines(store: dict[str, Any] | None, *, verbose: bool = True) -> list[str]:
    """The store's size and policy, as ``snapshots`` and ``status -v`` end (none outside git,
    where ``store`` is None); without ``verbose`` (``status``), only when the store is over the
    budget its policy sets or a gc was interrupted. Over it, whether ``convgit gc`` helps: it
    lets the oldest go, or (its dry run let nothing go) the rules must change first."""
    if store is None:
        return []
    from convgit.upkeep.retention import Policy

    policy = Policy(**store["policy"])
    over = policy.max_mib is not None and store["bytes"] > policy.max_mib * 1024 * 1024
    since = store.get("interrupted_gc")
    interrupted = [interrupted_gc_words(since)] if since else []
    if not verbose and not over:
        return interrupted
    last = f"; last gc {store['last_gc'][:10]}" if store.get("last_gc") else ""
    when = str(store.get("measured", ""))
    at = f" (measured {when[11:16]} UTC)" if when[:10] else ""
    budget = ""
    if over and policy.max_mib is not None:
        budget = f", over its budget of {policy.max_mib:g} MiB (`convgit gc` lets the oldest go)"
        if store.get("gc_lets_go") == 0:
            budget = (
                f", over its budget of {policy.max_mib:g} MiB, and `convgit gc` can let nothing go"
                " under the current rules (change `[retention]` in config.toml: a higher max_mib,"
                " fewer saved_days or keep_days; labels and active paths always stay)"
            )
    return [
        f"store:   {mib(store['bytes'])} of snapshots only convgit holds{at}{last}{budget}",
        f"         retention: {policy.words}",
        *interrupted,
    ]


def interrupted_gc_words(since: str) -> str:
    """The line that names a gc killed before it finished, and what finishes it."""
    return (
        f"gc:      a gc begun {since[:16].replace('T', ' ')} UTC was interrupted; nothing is lost,"
        " and `convgit gc` finishes it"
    )


def mcp_change_words(change: HooksChange, verb: str) -> list[str]:
    """What ``hooks install|uninstall AGENT --mcp`` did to the agent's configuration."""
    title = registry.title(change.agent) or change.agent
    if verb == "install":
        done = "registered" if change.changed else "was already registered"
        lines = [f"convgit's MCP server {done} in {change.path} ({title}, {change.scope})"]
        lines.append(f"{title} starts it as `convgit mcp`: read-only tools (docs/mcp.md)")
    else:
        done = "taken out of" if change.changed else "was not in"
        lines = [f"convgit's MCP server {done} {change.path} ({title}, {change.scope})"]
    if change.backup is not None:
        lines.append(f"the file as it was: {change.backup}")
    return lines


def recorder_words(recorder: dict[str, Any], index: str | None = None) -> list[str]:
    """The recorder of the working tree (``convgit.agents.live.recorder.status``) in a line,
    and how it took the last snapshot of the private index ``index``, when it took one; without
    ``index``, how it took its latest snapshot of any index, and that snapshot's number."""
    if not recorder["running"]:
        return [f"recorder: none: {recorder['why']}"]
    setting = recorder.get("setting")
    events = recorder["events"]
    said = [
        f"recorder: pid {recorder['pid']} since {recorder['since']}, convgit"
        f" {recorder['version']}, watcher {recorder['watcher']},"
        f" {events} event{'' if events == 1 else 's'}"
    ]
    if setting:
        said.append(f"  {'on' if setting['on'] else 'off'}: {setting['because']}")
    how = (recorder.get("snapshots") or {}).get(index) if index else None
    if how:
        said.append(f"  last snapshot: {how}")
    latest = recorder.get("latest_snapshot")
    if not index and latest:
        said.append(f"  latest snapshot (#{latest['number']}): {latest['how']}")
    return said
